"""What this machine can do, before the first (paid) job: ``tfcloud doctor`` (SkyPilot's ``sky check``).

Each :class:`Check` is one line: what was looked at, what was found, and, when something is missing, the command
that fixes it. A check is ``needed`` when the chosen target cannot run a job without it; :func:`can_run` is
whether every needed check passed (``tfcloud doctor`` exits 0 then, 2 otherwise).

The lines: the installed extras; the build path a job on the chosen target takes (the builder: the Docker
engine, or Cloud Build with the ``image_build_bucket`` setting or ``--image-build-bucket``; and the TensorFlow
and parent image its images are built on, :func:`tfcloud.image.dockerfile.default_base_image`, the one a ``--no-build``
job's base image also starts from); then, as SkyPilot loops over its clouds, each target's own checks (its
``doctor_checks``: Vertex AI's credentials, project, region and one cheap call to its endpoint; Ray's address),
the chosen target's needed. Nothing here creates, uploads or builds anything.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tfcloud.targets._doctor import Check

if TYPE_CHECKING:
    from tfcloud.flow.settings import Settings
    from tfcloud.targets import Target

__all__ = ["EXTRAS", "Check", "can_run", "checks", "doctor"]

#: Each extra of ``pip install "tfcloud[...]"`` (pyproject.toml) and the packages that say it is installed.
EXTRAS: dict[str, tuple[str, ...]] = {
    "tensorflow": ("tensorflow", "tf_keras"),
    "cloud": ("google.cloud.aiplatform_v1", "google.cloud.devtools.cloudbuild_v1", "google.cloud.logging_v2",
              "google.cloud.storage"),
    "docker": ("docker",),
    "ray": ("ray",),
    "notebook": ("nbformat", "IPython"),
    "tune": ("optuna", "matplotlib"),
    "ui": ("starlette", "uvicorn"),
    "emulator": ("gcp_storage_emulator", "psutil"),
}
#: The fix a line gives for the builder: the flags named are ``tfcloud doctor``'s own (and ``submit``'s).
BUILDER_FIX = ("Start Docker, or point DOCKER_HOST (or TFCLOUD_DOCKER_HOST) at a running engine; or build with "
               "Cloud Build: --image-build-bucket BUCKET (or TFCLOUD_IMAGE_BUILD_BUCKET).")


def can_run(found: list[Check]) -> bool:
    """Whether every check the chosen target needs passed."""
    return all(check.ok for check in found if check.needed)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def doctor(target: str | None = None, *, place: Mapping[str, object] | None = None,
           image_build_bucket: str | None = None) -> tuple[str, list[Check]]:
    """The target chosen (``target``, else the ``target`` setting) and every check for it. ``place``: the chosen
    target's place options, as every job verb takes them (``project=``, ``ray_address=``; ``target_options=``
    by name; its job options are refused); ``image_build_bucket``: build with Cloud Build (else the setting's)."""
    from tfcloud.flow.settings import resolve_settings

    settings = resolve_settings({"target": target, "image_build_bucket": image_build_bucket},
                                given_as={"image_build_bucket": "--image-build-bucket"})
    given = {k: v for k, v in (place or {}).items() if v is not None}
    found = None
    if set(given) - {"given_as"}:  # what the call gave is checked as every verb checks it (exit 2), once
        from tfcloud.flow.where import resolve

        found = resolve(settings.target, given, place_only=True)
    return settings.target, checks(settings.target, settings, places={settings.target: given},
                                   resolved={settings.target: found} if found is not None else None)


def checks(target: str, settings: Settings, *, environ: Mapping[str, str] | None = None,
           places: Mapping[str, Mapping[str, object]] | None = None,
           resolved: Mapping[str, Any] | None = None) -> list[Check]:
    """Every check, in the order ``tfcloud doctor`` prints them, for a job on ``target``. ``places``: options
    given for a target by name (``{"ray": {"ray_address": ...}}``); the rest come from the settings.
    ``resolved``: a target's place already resolved from them (:func:`tfcloud.flow.where.resolve`), not
    resolved again."""
    import tfcloud.targets as targets

    env = dict(os.environ if environ is None else environ)
    cls = targets.get(target)
    value = cls.from_options({})  # the target as a job gets it with no options: what it needs is its own to say
    builds = value.pushes_image or value.packaged
    cloud_build = bool(settings.image_build_bucket) and builds
    needed_extras = {extra for _, extra in (*cls.needs, *value.needs_for(strategy_runs_tensorflow=True))}
    if cloud_build:
        needed_extras.add("cloud")
    elif value.pushes_image:
        needed_extras.add("docker")
    found = [_extra(name, modules, needed=name in needed_extras) for name, modules in EXTRAS.items()]
    found += _builder(settings, needed=builds, cloud_build=cloud_build, pushes=value.pushes_image)
    found.append(_tensorflow())
    others = [c for c in targets.builtin_targets() if c is not cls]
    for each in (cls, *others):
        found += _target_checks(each, (places or {}).get(each.name, {}), env, needed=each is cls,
                                resolved=(resolved or {}).get(each.name))
    found += _clashes(target)
    return found


def _clashes(chosen: str) -> list[Check]:
    """A line per target name that two installed packages register (:func:`tfcloud.targets.clashes`)."""
    import tfcloud.targets as targets

    rows = []
    for name, packages in sorted(targets.clashes().items()):
        plugins = [p for p in packages if p != "tfcloud"]
        if name in targets.BUILTIN:  # the built-in target runs: a line to clean up, never one that stops a job
            rows.append(Check(name=f"target {name}", ok=False,
                              found=f"built in, and also added by {' and '.join(plugins)}: the built-in {name!r} "
                                    "target runs, the plug-in's never does",
                              fix=f"Uninstall the plug-in: pip uninstall {' '.join(plugins)}"))
        else:
            rows.append(Check(name=f"target {name}", ok=False,
                              found=f"added by {' and '.join(plugins)}: neither runs (--target {name} exits 2 "
                                    "naming both)",
                              fix="Uninstall all but one: pip uninstall " + " or ".join(plugins),
                              needed=name == chosen))
    return rows


def _target_checks(cls: type[Target], given: Mapping[str, object], env: dict[str, str], *,
                   needed: bool, resolved: Any = None) -> list[Check]:
    """The lines ``cls`` declares (its ``doctor_checks``), for its value as a job would get it: ``given``, then
    the variables, config files and gcloud's configuration. A bad setting there is a line to fix."""
    if cls.doctor_checks is None:
        return []
    import tfcloud.targets as targets
    from tfcloud.errors import TfcloudError
    from tfcloud.flow.where import resolve

    try:
        found = resolved or resolve(cls.name, {k: v for k, v in given.items() if v is not None}, place_only=True)
    except TfcloudError as exc:
        return [Check(name=f"{cls.title or cls.name} settings", ok=False if needed else None, found=exc.message,
                      fix=exc.hint or "", needed=needed)]
    with targets.plugin_errors(cls, f"doctor checks ({cls.doctor_checks})"):
        run = targets.load(cls.doctor_checks)
    rows: list[Check] = run(found.target, found.settings, needed=needed, environ=env)
    return rows


def _extra(name: str, modules: tuple[str, ...], *, needed: bool) -> Check:
    absent = [m for m in modules if not _installed(m)]
    if not absent:
        return Check(name=f"extra {name}", ok=True, found="installed", needed=needed)
    return Check(name=f"extra {name}", ok=False if needed else None, found=f"not installed ({absent[0]} missing)",
                 fix=f'pip install "tfcloud[{name}]"', needed=needed)


def _builder(settings: Settings, *, needed: bool, cloud_build: bool, pushes: bool) -> list[Check]:
    """Who builds the job's images: Cloud Build with the bucket (``image_build_bucket``), else the Docker engine.
    With Cloud Build, the engine is not needed (its line says so)."""
    if not cloud_build:
        return [_docker(settings, needed=needed and pushes)]
    source = settings.sources.get("image_build_bucket") or "image_build_bucket"
    return [Check(name="image builder", ok=True, found=f"Cloud Build, sources staged in "
                                                       f"gs://{settings.image_build_bucket} (from {source})",
                  needed=needed),
            _docker(settings, needed=False, instead="not needed: Cloud Build builds the images")]


def _docker(settings: Settings, *, needed: bool, instead: str = "") -> Check:
    """The Docker engine the image builds run on: ping it (a few seconds at most). ``instead``: why it is not
    needed (said when it does not answer)."""
    name = "Docker engine"
    if not _installed("docker"):
        return Check(name=name, ok=False if needed else None,
                     found=instead or "not checked: the docker extra is missing",
                     fix="" if instead else 'pip install "tfcloud[docker]"', needed=needed)
    from tfcloud.errors import TfcloudError
    from tfcloud.image.builders.docker import DockerBuilder

    where = settings.docker_host or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        with DockerBuilder(docker_host=settings.docker_host, timeout=5) as builder:
            version = builder.api.version().get("Version", "?")
    except TfcloudError as exc:
        failed = exc.message
    except Exception as exc:  # the docker SDK's and requests' own errors: unreachable all the same
        failed = f"unreachable at {where}: {exc}"
    else:
        return Check(name=name, ok=True, found=f"Docker {version} at {where}", needed=needed)
    if instead:
        return Check(name=name, ok=None, found=f"{instead} ({failed})")
    return Check(name=name, ok=False if needed else None, found=failed, fix=BUILDER_FIX, needed=needed)


def _tensorflow() -> Check:
    """The TensorFlow a job's images carry and the parent image they are built on: the installed TensorFlow's
    official image (:func:`tfcloud.image.dockerfile.default_base_image`), for a built image and for a ``--no-build``
    job's base image (:mod:`tfcloud.google.staging.baseimage`) alike."""
    from tfcloud.google.staging.baseimage import BASE_IMAGE_NAME
    from tfcloud.image.dockerfile import default_base_image, installed_tensorflow_version

    version = installed_tensorflow_version()
    if version is None:
        return Check(name="TensorFlow", ok=None, found="not installed: a job's image then needs a parent image "
                                                       "(submit's --parent-image)",
                     fix='pip install "tfcloud[tensorflow]"')
    parent = default_base_image(gpu=False, tensorflow_version=version)
    gpu = default_base_image(gpu=True, tensorflow_version=version)
    return Check(name="TensorFlow", ok=True,
                 found=f"{version}: images are built on {parent} ({gpu} for GPUs), and build-free jobs "
                       f"(--no-build) run {BASE_IMAGE_NAME} built on the same, TensorFlow {version}")
