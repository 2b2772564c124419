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

import ast
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tfcloud._public import PUBLIC
from tfcloud.entry.launcher import LAUNCHER_NAME
from tfcloud.image.builders import Builder
from tfcloud.image.context import DEFAULT_WARN_SIZE, BuildContext, collect_context
from tfcloud.image.dockerfile import (
    DOCKERFILE_PATH,
    REQUIREMENTS_DIR,
    TFCLOUD_PYTHON_DIR,
    default_base_image,
    render_dockerfile,
    tensorflow_tpu_requirement,
    tf_keras_requirement,
    tpu_pod_base,
)
from tfcloud.image.tags import content_digest, image_name, image_uri, split_image
from tfcloud.job.artifacts import ImageRef, PreparedJob, script_beside_launcher
from tfcloud.job.datasets import data_excludes

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.records.timeline import Recorder

__all__ = [
    "RUNTIME_ROOTS",
    "Plan",
    "containerize",
    "generated_files",
    "plan_image",
    "requirements_files",
    "runtime_modules",
    "runtime_package_files",
    "tfcloud_package_files",
]

logger = logging.getLogger("tfcloud")

# Parts of tfcloud a job never needs inside its image (Ray's driver gets the rest: targets/ray/backend.py).
_PACKAGE_SKIP = {"emulator", "testing", "__pycache__"}

#: What a job uses of tfcloud inside its image: ``import tfcloud`` with every public name it serves (loaded on
#: first use: the modules of ``tfcloud._public.PUBLIC``; ``remote()``, the no-op ``run()``, ``report()``) and the
#: hyperparameter-tuning helpers a trial calls (``tfcloud.job.study``). The image carries these modules and what
#: they import when imported (:func:`runtime_modules`); the CLI, the builders, the backends, the emulator and
#: the templates run on the submitting machine only. A module a runtime function imports lazily belongs here.
RUNTIME_ROOTS = ("tfcloud", "tfcloud.job.study", *sorted(set(PUBLIC.values())))


def tfcloud_package_files() -> dict[str, bytes]:
    """tfcloud's whole package (sources and templates), keyed by path under ``.tfcloud/python/`` (Ray's
    driver runs tfcloud's supervisor on the cluster, so it needs more than an image)."""
    from tfcloud.entry.templates import template_dir

    pkg = Path(__file__).resolve().parents[1]  # the package: this module is in tfcloud/image
    out: dict[str, bytes] = {}
    for path in sorted(pkg.rglob("*")):
        rel = path.relative_to(pkg)
        if not path.is_file() or _PACKAGE_SKIP.intersection(rel.parts) or rel.parts[0] in ("_templates", "_docs"):
            continue
        if path.suffix in (".py", ".typed"):
            out[f"{TFCLOUD_PYTHON_DIR}/tfcloud/{rel.as_posix()}"] = path.read_bytes()
    for path in sorted(template_dir().glob("*.j2")):
        out[f"{TFCLOUD_PYTHON_DIR}/tfcloud/_templates/{path.name}"] = path.read_bytes()
    return out


def runtime_package_files() -> dict[str, bytes]:
    """The part of tfcloud a job's image carries (:data:`RUNTIME_ROOTS` and what they import), keyed by path
    under ``.tfcloud/python/``."""
    pkg = Path(__file__).resolve().parents[1]  # the package: this module is in tfcloud/image
    return {f"{TFCLOUD_PYTHON_DIR}/tfcloud/{path.relative_to(pkg).as_posix()}": path.read_bytes()
            for path in runtime_modules()}


def _module_file(pkg: Path, name: str) -> Path | None:
    parts = name.split(".")[1:]
    base = pkg.joinpath(*parts)
    for candidate in (base.with_name(base.name + ".py") if parts else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def _imports_at_import_time(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """The tfcloud modules ``module`` imports when it is imported: its top-level imports (also inside ``if``,
    ``try``, ``with`` and class bodies), not those in functions or under ``if TYPE_CHECKING:``."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                test = ast.unparse(node.test)
                if test not in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, (ast.Try, ast.With, ast.ClassDef)):
                visit(node.body)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
                visit(getattr(node, "orelse", []))
                visit(getattr(node, "finalbody", []))
    visit(tree.body)
    return {name for name in found if name == "tfcloud" or name.startswith("tfcloud.")}


def runtime_modules(roots: tuple[str, ...] = RUNTIME_ROOTS) -> list[Path]:
    """The files of ``roots`` and of every tfcloud module they import at import time (and the packages that
    hold them), found by reading their sources: nothing is imported."""
    pkg = Path(__file__).resolve().parents[1]  # the package: this module is in tfcloud/image
    seen: dict[str, Path] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(pkg, name)
        if path is None:
            continue  # `from tfcloud.x import SomeClass`: a name, not a module
        seen[name] = path
        parent = name.rpartition(".")[0]
        if parent:
            todo.append(parent)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        todo.extend(_imports_at_import_time(tree, name, path.name == "__init__.py"))
    typed = pkg / "py.typed"
    return sorted({*seen.values(), *([typed] if typed.is_file() else [])})


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What :func:`containerize` will build: the context, the Dockerfile, the base image and the tag."""

    context: BuildContext
    dockerfile: str
    base_image: str
    uri: str
    digest: str


def requirements_files(job: PreparedJob) -> dict[str, bytes]:
    """The requirements the image installs, by their path in the context: the requirements file (plus the
    entry point's own, e.g. a notebook's ``%pip install`` lines) as :data:`REQUIREMENTS_PATH`, and every file
    it includes (``-r``/``-c``) beside it, the include lines pointing at those copies."""
    from tfcloud.entry.requirements import bundle_requirements

    req = job.spec.requirements_txt
    files = bundle_requirements(Path(req) if req is not None else None, job.requirements)
    return {f"{REQUIREMENTS_DIR}/{name}": data for name, data in files.items()}


def generated_files(job: PreparedJob, root: Path) -> dict[str, bytes]:
    """What tfcloud adds to the job's own files under ``root``, by path: the launcher, the script when it lies
    outside ``root`` (a converted notebook), the requirements (:func:`requirements_files`) and tfcloud's runtime
    package. An image's build context and a ``--no-build`` package carry the same."""
    generated: dict[str, bytes] = {LAUNCHER_NAME: Path(job.launcher).read_bytes()}
    script = Path(job.script).resolve()
    if script_beside_launcher(script, root):
        generated[script.name] = script.read_bytes()
    generated.update(requirements_files(job))
    generated.update(runtime_package_files())
    return generated


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
    generated = generated_files(job, root)
    requirements = {path: data for path, data in generated.items() if path.startswith(f"{REQUIREMENTS_DIR}/")}
    # TensorFlow on a multi-host TPU slice: Vertex AI's TPU Pod base image, the launcher as CMD.
    pod = tpu_pod_base(spec, tensorflow_version)
    base_image = spec.docker_config.parent_image or (pod.value if pod else default_base_image(
        gpu=spec.has_gpu, tensorflow_version=tensorflow_version, tpu=spec.has_tpu
    ))
    # A TPU job on the default base gets TensorFlow for TPU VMs with libtpu; a parent_image brings its own.
    tpu_tf = tensorflow_tpu_requirement(tensorflow_version) \
        if spec.has_tpu and not spec.docker_config.parent_image else None
    tf_keras = tf_keras_requirement(tensorflow_version) if spec.strategy.needs_tf_keras else None
    dockerfile = render_dockerfile(base_image=base_image, requirements=bool(requirements), tf_keras=tf_keras,
                                   tensorflow_tpu=tpu_tf, cmd=pod is not None)
    generated[DOCKERFILE_PATH] = dockerfile.encode()
    context = collect_context(root, generated=generated, exclude=data_excludes(spec.data, root))
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
