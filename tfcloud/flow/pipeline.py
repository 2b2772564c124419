"""The orchestrator: spec and target → entry point → launcher → (build context → image, or package) → backend.

Each stage is a function of its input: the spec (what runs) and, where the stage depends on it, the target it runs
on (a :class:`~tfcloud.targets.Target` value: whether files ship, where images and data go), passed side by side;
:func:`submit` calls them in order. Nothing here prints or exits:
the SDK (:mod:`tfcloud.sdk`) and the CLI decide what people see. Layers only import downwards::

    cli → sdk / api → pipeline, plan → stages (notebook, launcher, containerize, builders) and backends
        → artifacts, spec, targets, states, errors
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from tfcloud.config.value import Settings
from tfcloud.entry.launcher import LAUNCHER_NAME, render_launcher
from tfcloud.errors import ConfigurationError
from tfcloud.job.artifacts import PreparedJob, launcher_script_path
from tfcloud.job.spec import EntryPointKind, JobSpec

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.backends.base import Backend, JobHandle
    from tfcloud.image.builders import Builder
    from tfcloud.job.artifacts import ImageRef, PackageRef
    from tfcloud.records.timeline import Recorder
    from tfcloud.targets._base import Target

__all__ = ["EntryPoint", "build_image", "image_repository", "make_builder", "prepare", "prepare_entry_point",
           "stage_package", "submit"]


@dataclass(frozen=True, kw_only=True)
class EntryPoint:
    """The script a job runs, after conversion: the user's script, or one written from a notebook."""

    script: Path
    requirements: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def prepare_entry_point(spec: JobSpec, workspace: Path) -> EntryPoint:
    """Stage 1: a script for the launcher to run. A notebook is converted into ``workspace``."""
    if spec.entry_point_kind is EntryPointKind.SCRIPT:
        return EntryPoint(script=spec.entry_point)
    from tfcloud.entry.notebook import convert_notebook

    converted = convert_notebook(spec.entry_point)
    script = workspace / f"tfcloud_notebook_{spec.entry_point.stem}.py"
    script.write_text(converted.script, encoding="utf-8")
    return EntryPoint(script=script, requirements=converted.requirements, notes=converted.notes)


def prepare(spec: JobSpec, target: Target, workspace: Path) -> tuple[PreparedJob, EntryPoint]:
    """Stages 1-2: the entry point and the launcher, written into ``workspace`` (a temporary directory); the
    launcher names its script as the replicas of ``target`` find it."""
    entry = prepare_entry_point(spec, workspace)
    in_image = target.ships_files
    root = spec.build_root if in_image else spec.workdir
    launcher = workspace / LAUNCHER_NAME
    script = launcher_script_path(entry.script, root, in_image=in_image)
    launcher.write_text(render_launcher(spec, script=script), encoding="utf-8")
    job = PreparedJob(spec=spec, workdir=spec.workdir, launcher=launcher, script=entry.script,
                      requirements=entry.requirements)
    return job, entry


def make_builder(spec: JobSpec, target: Target, settings: Settings, *, console: Console | None = None,
                 build_logs: bool = False, recorder: Recorder | None = None) -> Builder:
    """Cloud Build when ``docker_config.image_build_bucket`` is set, else the Docker engine. ``build_logs``:
    print the build's log as it comes (else only its progress, and its tail on failure)."""
    if spec.docker_config.image_build_bucket:
        from tfcloud.errors import ConfigurationError
        from tfcloud.google.staging.cloudbuild import CloudBuildBuilder

        google = target.google()
        if google is None or not google.project:
            raise ConfigurationError(
                "Cloud Build needs a Google Cloud project.",
                hint="Pass --project (with --vertex), or set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT.")
        from tfcloud.google.cloud.gcloud import RetryPolicy

        return CloudBuildBuilder(project=google.project, bucket=spec.docker_config.image_build_bucket,
                                 endpoint=google.emulator_host, console=console, stream_logs=build_logs,
                                 retry=RetryPolicy.from_setting(settings.retry_deadline))
    from tfcloud.image.builders.docker import DockerBuilder
    from tfcloud.records.statedir import locks_dir, state_dir

    lock_dir = locks_dir(state_dir(settings)) if settings.state_dir else None
    return DockerBuilder(docker_host=settings.docker_host, console=console, stream_logs=build_logs,
                         lock_dir=lock_dir, recorder=recorder)


def build_image(job: PreparedJob, target: Target, settings: Settings, *, console: Console | None = None,
                push: bool = True, build_logs: bool = False, repository: str | None = None,
                recorder: Recorder | None = None) -> ImageRef:
    """Stages 3-4: build context → image (Docker engine, or Cloud Build when a build bucket is set).
    ``recorder`` marks the context, build and push stages as they begin."""
    from tfcloud.config.extras import require_extras
    from tfcloud.image.containerize import containerize

    require_extras(build=True, image_build_bucket=job.spec.docker_config.image_build_bucket)
    builder = make_builder(job.spec, target, settings, console=console, build_logs=build_logs, recorder=recorder)
    try:
        return containerize(job, builder=builder, repository=repository or _repository(job.spec, target, settings),
                            push=push,
                            console=console, context_dir=job.spec.context_dir, recorder=recorder)
    finally:
        builder.close()


def stage_package(job: PreparedJob, target: Target, settings: Settings, *, console: Console | None = None,
                  build_logs: bool = False, recorder: Recorder | None = None) -> tuple[ImageRef, PackageRef]:
    """The package stage (``--no-build``): the job's base image (:mod:`tfcloud.google.staging.baseimage`: TensorFlow
    and the requirements; looked up, and built and pushed only when the registry lacks it), then the job's files as a
    source distribution in the staging bucket (:mod:`tfcloud.google.staging.package`), uploaded only when that content
    is not there yet. ``recorder`` marks the ``context`` stage (both are planned), ``build`` (the base image) and
    ``push`` (the package is uploaded)."""
    from tfcloud.google.cloud.gcloud import Clients, RetryPolicy
    from tfcloud.google.staging.baseimage import ensure_base_image, plan_base_image
    from tfcloud.google.staging.package import plan_package, upload_package

    if recorder is not None:
        recorder.begin("context")
    google = target.google()
    if google is None or not google.bucket or not google.project:
        raise ConfigurationError("--no-build uploads the job's package to a staging bucket: none is set.",
                                 hint="Set TFCLOUD_STAGING_BUCKET (staging_bucket= in run()) and a project.")
    base = plan_base_image(job, repository=_repository(job.spec, target, settings))
    plan = plan_package(job, context_dir=job.spec.context_dir)
    if recorder is not None:
        recorder.begin("build")
    image = ensure_base_image(base, console=console, builder=lambda: make_builder(
        job.spec, target, settings, console=console, build_logs=build_logs))
    if recorder is not None:
        recorder.begin("push")
    clients = Clients(endpoint=google.emulator_host, region=google.region)
    try:
        package = upload_package(plan, storage=clients.storage(google.project), bucket=google.bucket,
                                 console=console, policy=RetryPolicy.from_setting(settings.retry_deadline))
    finally:
        clients.close()
    return image, package


def stage_data(job: PreparedJob, target: Target, settings: Settings, *, console: Console | None = None) -> PreparedJob:
    """The data stage (``--data``, :mod:`tfcloud.job.datasets`): each local data set shipped to the target's data
    store (not for a target that reads them in place), and each data set's ``TFCLOUD_DATA_<NAME>`` added to the
    job's environment."""
    from tfcloud.job.datasets import stage_data as ship
    from tfcloud.job.datasets import store_for

    spec = job.spec
    if target.runs_here:
        env = {d.var: d.source for d in spec.data}
    else:
        store = store_for(spec.data, target=target.name, in_place=False, store=target.data_store(settings))
        local = [d for d in spec.data if not d.remote]
        storage = None
        clients = None
        if local and store is not None and store.startswith("gs://"):
            from tfcloud.google.cloud.gcloud import Clients

            google = target.google()  # a target that is not Google's (Ray) reaches Cloud Storage itself
            clients = (Clients(endpoint=google.emulator_host, region=google.region) if google is not None
                       else Clients())
            storage = clients.storage((google.project if google else None) or "tfcloud")
        try:
            from tfcloud.records.statedir import state_dir

            env, _ = ship(spec.data, store or "", storage=storage, console=console,
                          hash_cache=state_dir(settings) / "data-hashes.json")
        finally:
            if clients is not None:
                clients.close()
    return replace(job, spec=replace(spec, env=MappingProxyType({**spec.env, **env})))


def _repository(spec: JobSpec, target: Target, settings: Settings) -> str:

    if spec.docker_config.image:
        return spec.docker_config.image.rsplit(":", 1)[0].rsplit("/", 1)[0]
    repo = target.repository(settings)
    if repo is None:
        raise ConfigurationError(
            "No image repository: tfcloud does not know where to push the image.",
            hint="Pass --project (or set TFCLOUD_PROJECT), or set TFCLOUD_IMAGE_REPOSITORY "
                 "(e.g. us-central1-docker.pkg.dev/my-project/tfcloud).",
        )
    return repo


def submit(spec: JobSpec, target: Target, settings: Settings, backend: Backend, *, console: Console | None = None,
           build_logs: bool = False, recorder: Recorder | None = None) -> tuple[JobHandle, ImageRef | None]:
    """Run every stage for ``spec`` on ``target`` and submit it to ``backend`` (the target's): the job's handle, and
    its image for a container target. Temporary files are removed before returning. ``console`` receives build progress
    (the stages themselves print nothing else); ``recorder`` marks each stage as it begins
    (tfcloud.records.timeline)."""
    target.check_service(spec, settings)  # before anything is built or uploaded
    with tempfile.TemporaryDirectory(prefix="tfcloud-") as tmp:
        job, _ = prepare(spec, target, Path(tmp))
        if spec.data:  # first: data never waits for a build, and a bad store fails before one
            job = stage_data(job, target, settings, console=console)
        if target.container:
            # A local --container job's image goes into the local engine only (not pushed).
            pushed = target.pushes_image
            job = replace(job, image=build_image(
                job, target, settings, console=console, build_logs=build_logs, push=pushed,
                repository=None if pushed else _local_repository(spec, target, settings), recorder=recorder))
        elif target.packaged:
            image, package = stage_package(job, target, settings, console=console, build_logs=build_logs,
                                           recorder=recorder)
            job = replace(job, image=image, package=package)
        if recorder is not None:
            recorder.begin("submit")
        handle = backend.submit(job)
        if recorder is not None:
            recorder.end()
        return handle, job.image


def image_repository(spec: JobSpec, target: Target, settings: Settings) -> str:
    """Where the job's image is named: a local ``--container`` job's in the local engine, else the registry it
    is pushed to. Raises :class:`~tfcloud.errors.ConfigurationError` when there is none."""
    return (_repository(spec, target, settings) if target.pushes_image
            else _local_repository(spec, target, settings))


def _local_repository(spec: JobSpec, target: Target, settings: Settings) -> str:
    """Where a local ``--container`` image is named: the image's own repository when set, else
    ``tfcloud-local``."""
    if spec.docker_config.image or settings.image_repository:
        return _repository(spec, target, settings)
    return "tfcloud-local"
