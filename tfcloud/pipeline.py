"""The orchestrator: spec → entry point → launcher → (build context → image) → backend → handle.

Each stage is a function of its input; :func:`submit` calls them in order. Nothing here prints or exits:
the SDK facade (:mod:`tfcloud.api`) and the CLI decide what people see.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tfcloud.artifacts import PreparedJob
from tfcloud.backends import get_backend
from tfcloud.launcher import LAUNCHER_NAME, render_launcher
from tfcloud.settings import Settings
from tfcloud.spec import EntryPointKind, JobSpec, Target

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.artifacts import ImageRef
    from tfcloud.backends.base import JobHandle
    from tfcloud.builders import Builder

__all__ = ["EntryPoint", "build_image", "make_builder", "prepare", "prepare_entry_point", "submit"]


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
    from tfcloud.notebook import convert_notebook

    converted = convert_notebook(spec.entry_point)
    script = workspace / f"tfcloud_notebook_{spec.entry_point.stem}.py"
    script.write_text(converted.script, encoding="utf-8")
    return EntryPoint(script=script, requirements=converted.requirements, notes=converted.notes)


def launcher_script_path(spec: JobSpec, entry: EntryPoint, *, in_image: bool | None = None) -> str:
    """How the launcher names the script: next to it in an image (and for a converted notebook, which the
    backend copies next to the launcher); by absolute path for a local run of the user's own script.
    ``in_image``: whether the replicas run from the image (default: every target but local)."""
    if entry.script != spec.entry_point:
        return entry.script.name
    if not (spec.target is not Target.LOCAL if in_image is None else in_image):
        return str(spec.entry_point)
    return spec.entry_point.relative_to(spec.build_root).as_posix()


def prepare(spec: JobSpec, workspace: Path, *, in_image: bool | None = None) -> tuple[PreparedJob, EntryPoint]:
    """Stages 1-2: the entry point and the launcher, written into ``workspace`` (a temporary directory)."""
    entry = prepare_entry_point(spec, workspace)
    launcher = workspace / LAUNCHER_NAME
    launcher.write_text(render_launcher(spec, script=launcher_script_path(spec, entry, in_image=in_image)),
                        encoding="utf-8")
    job = PreparedJob(spec=spec, workdir=spec.workdir, launcher=launcher, script=entry.script,
                      requirements=entry.requirements)
    return job, entry


def make_builder(spec: JobSpec, settings: Settings, *, console: Console | None = None,
                 build_logs: bool = False) -> Builder:
    """Cloud Build when ``docker_config.image_build_bucket`` is set, else the Docker engine. ``build_logs``:
    print the build's log as it comes (else only its progress, and its tail on failure)."""
    if spec.docker_config.image_build_bucket:
        from tfcloud.builders.cloudbuild import CloudBuildBuilder
        from tfcloud.errors import ConfigurationError

        if not settings.project:
            raise ConfigurationError(
                "Cloud Build needs a Google Cloud project.",
                hint="Pass --project, or set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT.")
        return CloudBuildBuilder(project=settings.project, bucket=spec.docker_config.image_build_bucket,
                                 endpoint=settings.emulator_host, console=console, stream_logs=build_logs)
    from tfcloud.builders.docker import DockerBuilder

    return DockerBuilder(docker_host=settings.docker_host, console=console, stream_logs=build_logs)


def build_image(job: PreparedJob, settings: Settings, *, console: Console | None = None,
                push: bool = True, build_logs: bool = False, repository: str | None = None) -> ImageRef:
    """Stages 3-4: build context → image (Docker engine, or Cloud Build when a build bucket is set)."""
    from tfcloud.containerize import containerize

    builder = make_builder(job.spec, settings, console=console, build_logs=build_logs)
    try:
        return containerize(job, builder=builder, repository=repository or _repository(job.spec, settings),
                            push=push,
                            console=console, context_dir=job.spec.context_dir)
    finally:
        close = getattr(builder, "close", None)
        if close is not None:
            close()


def _repository(spec: JobSpec, settings: Settings) -> str:
    from tfcloud.errors import ConfigurationError

    if spec.docker_config.image:
        return spec.docker_config.image.rsplit(":", 1)[0].rsplit("/", 1)[0]
    repo = settings.repository
    if repo is None:
        raise ConfigurationError(
            "No image repository: tfcloud does not know where to push the image.",
            hint="Pass --project (or set TFCLOUD_PROJECT), or set TFCLOUD_IMAGE_REPOSITORY "
                 "(e.g. us-central1-docker.pkg.dev/my-project/tfcloud).",
        )
    return repo


def submit(spec: JobSpec, settings: Settings, *, console: Console | None = None,
           build_logs: bool = False, container: bool = False) -> JobHandle:
    """Run every stage for ``spec`` and submit it; temporary files are removed before returning.
    ``console`` receives build progress (the stages themselves print nothing else). ``container``: a local
    job's replicas run from the image, built into the local Docker engine (not pushed)."""
    local_image = container and spec.target is Target.LOCAL
    with tempfile.TemporaryDirectory(prefix="tfcloud-") as tmp:
        job, _ = prepare(spec, Path(tmp), in_image=True if local_image else None)
        if spec.target is not Target.LOCAL:
            job = replace(job, image=build_image(job, settings, console=console, build_logs=build_logs))
        elif local_image:
            job = replace(job, image=build_image(job, settings, console=console, build_logs=build_logs, push=False,
                                                 repository=_local_repository(spec, settings)))
        options = {"container": True} if local_image else {}
        backend = get_backend(spec.target, settings=settings, **options)
        return backend.submit(job)


def _local_repository(spec: JobSpec, settings: Settings) -> str:
    """Where a ``--container`` image is named: the image's own repository when set, else ``tfcloud-local``."""
    if spec.docker_config.image or settings.image_repository:
        return _repository(spec, settings)
    return "tfcloud-local"
