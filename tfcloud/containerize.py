"""The containerize stage: a prepared job in, an image reference out.

1. Collect the build context from the job's directory (or ``context_dir``), plus the generated files: the
   launcher (``tfcloud_launcher.py``), the script when it lives outside the context (a converted notebook),
   the merged requirements, tfcloud's own package and the Dockerfile, all under ``.tfcloud/``.
2. Render the Dockerfile (base image: the user's, else the official TensorFlow image for the installed
   version; ``-gpu`` when a pool has a GPU).
3. Compute the content-addressed tag; when the builder finds it, stop there (one look-up).
4. Else build, and push when ``push``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tfcloud.artifacts import ImageRef, PreparedJob, script_beside_launcher
from tfcloud.builders import Builder
from tfcloud.context import DEFAULT_WARN_SIZE, BuildContext, collect_context
from tfcloud.dockerfile import (
    DOCKERFILE_PATH,
    REQUIREMENTS_PATH,
    TFCLOUD_PYTHON_DIR,
    default_base_image,
    render_dockerfile,
    tensorflow_tpu_requirement,
    tf_keras_requirement,
)
from tfcloud.errors import ValidationError
from tfcloud.images import content_digest, image_name, image_uri, split_image
from tfcloud.launcher import LAUNCHER_NAME

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.timeline import Recorder

__all__ = ["Plan", "containerize", "plan_image", "tfcloud_package_files"]

logger = logging.getLogger("tfcloud")

# Parts of tfcloud a job never needs inside its image.
_PACKAGE_SKIP = {"emulator", "testing", "__pycache__"}


def tfcloud_package_files() -> dict[str, bytes]:
    """tfcloud's own package (sources and templates), keyed by path under ``.tfcloud/python/``."""
    from tfcloud.templates import template_dir

    pkg = Path(__file__).resolve().parent
    out: dict[str, bytes] = {}
    for path in sorted(pkg.rglob("*")):
        rel = path.relative_to(pkg)
        if not path.is_file() or _PACKAGE_SKIP.intersection(rel.parts) or rel.parts[0] == "_templates":
            continue
        if path.suffix in (".py", ".typed"):
            out[f"{TFCLOUD_PYTHON_DIR}/tfcloud/{rel.as_posix()}"] = path.read_bytes()
    for path in sorted(template_dir().glob("*.j2")):
        out[f"{TFCLOUD_PYTHON_DIR}/tfcloud/_templates/{path.name}"] = path.read_bytes()
    return out


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What :func:`containerize` will build: the context, the Dockerfile, the base image and the tag."""

    context: BuildContext
    dockerfile: str
    base_image: str
    uri: str
    digest: str


def _requirements(job: PreparedJob) -> bytes | None:
    parts: list[str] = []
    req = job.spec.requirements_txt
    if req is not None:
        try:
            parts.append(Path(req).read_text(encoding="utf-8").rstrip("\n"))
        except OSError as exc:
            raise ValidationError("requirements_txt", "a readable requirements file", str(req)) from exc
    if job.requirements:
        parts.append("# found in the entry point (e.g. a notebook's %pip install lines)")
        parts.extend(job.requirements)
    if not parts:
        return None
    return ("\n".join(parts) + "\n").encode()


def plan_image(
    job: PreparedJob,
    *,
    repository: str,
    context_dir: Path | None = None,
    tensorflow_version: str | None = None,
    build_args: Mapping[str, str] | None = None,
) -> Plan:
    """Everything up to the tag, without touching a builder (``tfcloud build --dry-run`` can show it)."""
    spec = job.spec
    root = Path(context_dir or job.workdir).resolve()
    generated: dict[str, bytes] = {LAUNCHER_NAME: Path(job.launcher).read_bytes()}
    script = Path(job.script).resolve()
    if script_beside_launcher(script, root):
        generated[script.name] = script.read_bytes()
    requirements = _requirements(job)
    if requirements is not None:
        generated[REQUIREMENTS_PATH] = requirements
    generated.update(tfcloud_package_files())
    base_image = spec.docker_config.parent_image or default_base_image(
        gpu=spec.has_gpu, tensorflow_version=tensorflow_version, tpu=spec.has_tpu
    )
    # A TPU job on the default base gets TensorFlow for TPU VMs with libtpu; a parent_image brings its own.
    tpu_tf = tensorflow_tpu_requirement(tensorflow_version) \
        if spec.has_tpu and not spec.docker_config.parent_image else None
    tf_keras = tf_keras_requirement(tensorflow_version) if spec.strategy.needs_tf_keras else None
    dockerfile = render_dockerfile(base_image=base_image, requirements=requirements is not None, tf_keras=tf_keras,
                                   tensorflow_tpu=tpu_tf)
    generated[DOCKERFILE_PATH] = dockerfile.encode()
    context = collect_context(root, generated=generated)
    digest = content_digest(context, dockerfile=dockerfile, base_image=base_image, build_args=build_args)
    if spec.docker_config.image:
        repo, tag = split_image(spec.docker_config.image)
        uri = spec.docker_config.image if tag else f"{repo}:{digest[:16]}"
    else:
        uri = image_uri(repository, image_name(spec.entry_point.stem), digest)
    return Plan(context=context, dockerfile=dockerfile, base_image=base_image, uri=uri, digest=digest)


def containerize(
    job: PreparedJob,
    *,
    builder: Builder,
    repository: str,
    push: bool = True,
    console: Console | None = None,
    context_dir: Path | None = None,
    warn_size: int = DEFAULT_WARN_SIZE,
    tensorflow_version: str | None = None,
    recorder: Recorder | None = None,
) -> ImageRef:
    """Build (or find) the job's image and return its reference. See the module docstring. ``recorder``
    marks the ``context`` and ``build`` stages (the builder marks ``push``)."""
    if recorder is not None:
        recorder.begin("context")
    plan = plan_image(job, repository=repository, context_dir=context_dir, tensorflow_version=tensorflow_version)
    ctx = plan.context
    _say(console, f"Build context {ctx.root}: {ctx.summary()}")
    for warning in ctx.warnings(warn_size=warn_size):  # once: on the console if there is one, else logged
        if console is None:
            logger.warning(warning)
        else:
            _say(console, warning, style="yellow")
    if recorder is not None:
        recorder.begin("build")
    if builder.exists(plan.uri, pushed=push):
        _say(console, f"Image {plan.uri} is up to date: nothing to build.")
        return ImageRef(uri=plan.uri, built=False)
    ref = builder.build(ctx, plan.uri, push=push, cache_from=job.spec.docker_config.cache_from)
    _say(console, f"Image {ref.uri} {'built' if ref.built else 'reused'}{' and pushed' if push else ''}.")
    return ref


def _say(console: Console | None, message: str, *, style: str | None = None) -> None:
    if console is not None:
        console.print(message, style=style, markup=False, highlight=False)
