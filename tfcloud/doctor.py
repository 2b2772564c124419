"""What this machine can do, before the first (paid) job: ``tfcloud doctor`` (SkyPilot's ``sky check``).

Each :class:`Check` is one line: what was looked at, what was found, and, when something is missing, the command
that fixes it. A check is ``needed`` when the chosen target cannot run a job without it; :func:`can_run` is
whether every needed check passed (``tfcloud doctor`` exits 0 then, 2 otherwise). Nothing here creates,
uploads or builds anything: the Docker engine is pinged, a Ray dashboard asked its version, and the Google
credentials looked for as files (no network call to Google).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfcloud.settings import Settings
    from tfcloud.targets import GoogleCloud
    from tfcloud.where import Resolved

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
#: The extras each built-in target needs to run a job (local: a job with a TensorFlow strategy).


@dataclass(frozen=True, kw_only=True)
class Check:
    """One line of ``tfcloud doctor``: ``ok`` True (fine), False (missing or broken) or None (not set, and not
    needed); ``needed``: the chosen target cannot run without it."""

    name: str
    ok: bool | None
    found: str
    fix: str = ""
    needed: bool = False

    def to_dict(self) -> dict[str, object]:
        return {"check": self.name, "ok": self.ok, "found": self.found, "fix": self.fix, "needed": self.needed}


def can_run(found: list[Check]) -> bool:
    """Whether every check the chosen target needs passed."""
    return all(check.ok for check in found if check.needed)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def doctor(target: str | None = None, *, ray_address: str | None = None) -> tuple[str, list[Check]]:
    """The target chosen (``target``, else the ``target`` setting) and every check for it."""
    from tfcloud.settings import resolve_settings
    from tfcloud.where import resolve

    settings = resolve_settings({"target": target})
    # the Ray target's address as a job would get it: --ray, else TFCLOUD_RAY_ADDRESS, the config files, RAY_ADDRESS
    ray = resolve("ray", {"ray_address": ray_address}).target.given().get("ray_address")
    return settings.target, checks(settings.target, settings, ray_address=str(ray) if ray else None)


def checks(target: str, settings: Settings, *, environ: dict[str, str] | None = None,
           ray_address: str | None = None) -> list[Check]:
    """Every check, in the order ``tfcloud doctor`` prints them, for a job on ``target`` (``ray_address``: the
    Ray target's, resolved as a job's)."""
    from tfcloud.targets import get as target_class

    env = dict(os.environ if environ is None else environ)
    cls = target_class(target)
    value = cls.from_options({})  # the target as a job gets it with no options: what it needs is its own to say
    needed_extras = {extra for _, extra in (*cls.needs, *value.needs_for(strategy_runs_tensorflow=True))}
    if value.pushes_image:
        needed_extras.add("docker")
    found = [_extra(name, modules, needed=name in needed_extras) for name, modules in EXTRAS.items()]
    found.append(_docker(settings, needed=value.pushes_image))
    from tfcloud.errors import TfcloudError

    try:
        google = _google_target(cls)
    except TfcloudError as exc:  # a bad project, region, bucket or emulator in a variable or file: a row to fix
        google = None
        found.append(Check(name="Google Cloud settings", ok=False if cls.gcloud_defaults else None,
                           found=exc.message, fix=exc.hint or "", needed=cls.gcloud_defaults))
    else:
        found += _google(google, env, needed=cls.gcloud_defaults)
    found.append(_ray(ray_address, needed=cls.option("ray_address") is not None))
    found.append(_tensorflow(google.target.google() if google is not None else None))
    return found


def _extra(name: str, modules: tuple[str, ...], *, needed: bool) -> Check:
    absent = [m for m in modules if not _installed(m)]
    if not absent:
        return Check(name=f"extra {name}", ok=True, found="installed", needed=needed)
    return Check(name=f"extra {name}", ok=False if needed else None, found=f"not installed ({absent[0]} missing)",
                 fix=f'pip install "tfcloud[{name}]"', needed=needed)


def _docker(settings: Settings, *, needed: bool) -> Check:
    """The Docker engine the image builds run on: ping it (a few seconds at most)."""
    name = "Docker engine"
    if not _installed("docker"):
        return Check(name=name, ok=False if needed else None, found="not checked: the docker extra is missing",
                     fix='pip install "tfcloud[docker]"', needed=needed)
    from tfcloud.builders.docker import DockerBuilder
    from tfcloud.errors import TfcloudError

    where = settings.docker_host or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        with DockerBuilder(docker_host=settings.docker_host, timeout=5) as builder:
            version = builder.api.version().get("Version", "?")
    except TfcloudError as exc:
        return Check(name=name, ok=False if needed else None, found=exc.message,
                     fix="Start Docker, or point DOCKER_HOST (or TFCLOUD_DOCKER_HOST) at a running engine; "
                         "or build with Cloud Build: --image-build-bucket BUCKET.", needed=needed)
    except Exception as exc:  # the docker SDK's and requests' own errors: unreachable all the same
        return Check(name=name, ok=False if needed else None, found=f"unreachable at {where}: {exc}",
                     fix="Start Docker, or point DOCKER_HOST (or TFCLOUD_DOCKER_HOST) at a running engine; "
                         "or build with Cloud Build: --image-build-bucket BUCKET.", needed=needed)
    return Check(name=name, ok=True, found=f"Docker {version} at {where}", needed=needed)


def _google_target(cls: Any) -> Resolved | None:
    """The target whose jobs reach Google Cloud, as a job would get it (its project, region, bucket and emulator
    from the variables, config files and gcloud's configuration): the chosen one when it reads gcloud's
    configuration, else the first built-in target that does; None: none does."""
    import tfcloud.targets as targets
    from tfcloud.where import resolve

    google = cls if cls.gcloud_defaults else next((c for c in targets.builtin_targets() if c.gcloud_defaults), None)
    return resolve(google.name, {}) if google is not None else None


def _google(found: Resolved | None, env: dict[str, str], *, needed: bool) -> list[Check]:
    """Credentials (as files: no call to Google), project and region (and where they came from), the staging
    bucket and the image registry."""
    rows: list[Check] = []
    google = found.target.google() if found is not None else None
    if found is None or google is None:
        return rows
    settings = found.settings
    if google.emulator_host:
        rows.append(Check(name="Google credentials", ok=True, found=f"not needed: the emulator at "
                                                                    f"{google.emulator_host}", needed=needed))
    else:
        rows.append(_credentials(env, needed=needed))
    source = settings.sources.get("project")
    if google.project:
        rows.append(Check(name="project", ok=True, found=f"{google.project} (from {source or 'the default'})",
                          needed=needed))
    else:
        rows.append(Check(name="project", ok=False if needed else None, found="not set",
                          fix="gcloud config set project PROJECT, or TFCLOUD_PROJECT=PROJECT, or --project PROJECT",
                          needed=needed))
    region_source = settings.sources.get("region") or "the default"
    rows.append(Check(name="region", ok=True, found=f"{google.region} (from {region_source})", needed=needed))
    if google.staging_bucket:
        rows.append(Check(name="staging bucket", ok=True, found=google.staging_bucket))
    else:
        rows.append(Check(name="staging bucket", ok=None, found="not set: jobs get no output directory "
                                                                 "(AIP_MODEL_DIR)",
                          fix="TFCLOUD_STAGING_BUCKET=gs://BUCKET (or staging_bucket in [tool.tfcloud])"))
    repository = found.target.repository(settings)
    if repository:
        origin = "image_repository" if settings.image_repository else "from the project and region"
        rows.append(Check(name="image registry", ok=True, found=f"{repository} ({origin})",
                          needed=needed))
    else:
        rows.append(Check(name="image registry", ok=False if needed else None,
                          found="none: it follows from the project", fix="set the project (above), or "
                          "TFCLOUD_IMAGE_REPOSITORY=REGION-docker.pkg.dev/PROJECT/REPO", needed=needed))
    return rows


def _credentials(env: dict[str, str], *, needed: bool) -> Check:
    name = "Google credentials"
    given = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if given:
        if Path(given).is_file():
            return Check(name=name, ok=True, found=f"{given} (GOOGLE_APPLICATION_CREDENTIALS)", needed=needed)
        return Check(name=name, ok=False if needed else None,
                     found=f"GOOGLE_APPLICATION_CREDENTIALS names {given}, which is not a file",
                     fix="point GOOGLE_APPLICATION_CREDENTIALS at a key file, or unset it and run "
                         "gcloud auth application-default login", needed=needed)
    base = Path(env.get("CLOUDSDK_CONFIG") or Path("~/.config/gcloud").expanduser())
    adc = base / "application_default_credentials.json"
    if adc.is_file():
        return Check(name=name, ok=True, found=f"{adc} (gcloud's application default credentials)", needed=needed)
    return Check(name=name, ok=False if needed else None, found="none found (no GOOGLE_APPLICATION_CREDENTIALS, no "
                 "application default credentials)", fix="gcloud auth application-default login", needed=needed)


def _ray(address: str | None, *, needed: bool) -> Check:
    """A Ray cluster's dashboard, asked its version (a few seconds at most)."""
    name = "Ray address"
    if not address:
        return Check(name=name, ok=False if needed else None, found="not set",
                     fix="--ray http://HEAD:8265, or TFCLOUD_RAY_ADDRESS (or RAY_ADDRESS)", needed=needed)
    import json
    import urllib.error
    import urllib.request

    url = address.rstrip("/") + "/api/version"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # the user's own address
            version = json.loads(response.read().decode("utf-8", errors="replace")).get("ray_version", "?")
    except (OSError, ValueError, urllib.error.URLError) as exc:
        return Check(name=name, ok=False if needed else None, found=f"{address} unreachable: {exc}",
                     fix="start the cluster (ray start --head --dashboard-host 0.0.0.0), or fix the address",
                     needed=needed)
    return Check(name=name, ok=True, found=f"{address} (Ray {version})", needed=needed)


def _tensorflow(google: GoogleCloud | None) -> Check:
    """The installed TensorFlow against the images a job would use: the official image of the same version
    (built jobs), and Vertex AI's newest prebuilt not newer than it (jobs without a build)."""
    from tfcloud.dockerfile import installed_tensorflow_version
    from tfcloud.prebuilt import prebuilt_training_image

    version = installed_tensorflow_version()
    prebuilt = prebuilt_training_image(version, device="cpu", region=google.region if google else "us-central1")
    if version is None:
        return Check(name="TensorFlow", ok=None, found=f"not installed: built images need --parent-image; "
                                                       f"prebuilt images run TensorFlow {prebuilt.version}",
                     fix='pip install "tfcloud[tensorflow]"')
    minor = ".".join(version.split(".")[:2])
    same = "the same" if minor == prebuilt.version else f"TensorFlow {prebuilt.version}, older"
    return Check(name="TensorFlow", ok=True, found=f"{version}: built images use tensorflow/tensorflow:{version}; "
                                                   f"prebuilt ones (no build) run {same}")
