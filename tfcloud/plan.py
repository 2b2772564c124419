"""The dry-run plan: what a submission would do, computed without credentials, TensorFlow, Docker or a network.

Besides the strategy, the pools and the launcher, a plan shows, for a target that runs an image, the image
it would build (:class:`ImagePlan`: the content-addressed tag, the base image, the build context's files and
what was kept out of it and why, the Dockerfile), a converted notebook's script, and warnings read from the
script itself (:func:`script_warnings`): Keras-3-only APIs under a strategy that routes Keras to tf-keras, and
a strategy the script builds itself while tfcloud chooses one too.
"""

from __future__ import annotations

import ast
import shlex
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tfcloud.errors import ConfigurationError
from tfcloud.pipeline import image_repository, prepare
from tfcloud.settings import Settings
from tfcloud.spec import EntryPointKind, JobSpec, Strategy
from tfcloud.strategy import EXPLICIT

if TYPE_CHECKING:
    from tfcloud.artifacts import PreparedJob

__all__ = ["ContextEntry", "ImagePlan", "Plan", "PoolRow", "make_plan", "script_warnings"]

#: Stands for the registry in a planned tag when none is configured yet.
NO_REPOSITORY = "REPOSITORY"


@dataclass(frozen=True, kw_only=True)
class PoolRow:
    role: str
    replicas: int
    machine_type: str
    accelerator: str


@dataclass(frozen=True, kw_only=True)
class ContextEntry:
    """One file of the build context: its path, its size, and whether tfcloud generated it."""

    path: str
    size: int
    generated: bool = False


@dataclass(frozen=True, kw_only=True)
class ImagePlan:
    """The image a container job would run, computed without building it (``tfcloud build --dry-run``)."""

    uri: str
    base_image: str
    builder: str
    context_root: str
    files: tuple[ContextEntry, ...]
    total_size: int
    kept_out: tuple[tuple[str, str], ...]  # (path, why): the secret deny-list
    let_in: tuple[tuple[str, str], ...]  # (path, why): on the deny-list, let in by a `!path` line
    dropped_links: tuple[str, ...]
    dockerfile: str

    @property
    def tag(self) -> str:
        return self.uri.rsplit(":", 1)[-1] if ":" in self.uri.rsplit("/", 1)[-1] else ""

    def to_dict(self) -> dict[str, object]:
        return {
            "uri": self.uri, "tag": self.tag, "base_image": self.base_image, "builder": self.builder,
            "context": {
                "root": self.context_root, "file_count": len(self.files), "total_size": self.total_size,
                "files": [{"path": f.path, "size": f.size, "generated": f.generated} for f in self.files],
                "kept_out": [{"path": p, "reason": r} for p, r in self.kept_out],
                "let_in": [{"path": p, "reason": r} for p, r in self.let_in],
                "dropped_links": list(self.dropped_links),
            },
            "dockerfile": self.dockerfile,
        }


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What ``run(dry_run=True)`` returns and ``tfcloud submit --dry-run`` prints."""

    spec: JobSpec
    strategy: str
    strategy_reason: str
    pools: tuple[PoolRow, ...]
    launcher: str
    command: tuple[str, ...]
    requirements: tuple[str, ...]
    notes: tuple[str, ...]
    #: setting or job default -> {"value": ..., "from": where it came from} (tfcloud.settings); what was left
    #: at tfcloud's default is not listed
    sources: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    endpoint: str = ""
    image: ImagePlan | None = None
    script: str | None = None  # a converted notebook's script

    @property
    def args(self) -> tuple[str, ...]:
        return self.spec.entry_point_args

    @property
    def command_line(self) -> str:
        """The replica's command as a shell would take it (each argument quoted as needed)."""
        return shlex.join(self.command)

    def to_dict(self) -> dict[str, object]:
        return {
            "entry_point": str(self.spec.entry_point),
            "target": self.spec.target.name,
            "strategy": self.strategy,
            "strategy_reason": self.strategy_reason,
            "pools": [vars(p) for p in self.pools],
            "command": list(self.command),
            "command_line": self.command_line,
            "args": list(self.args),
            "requirements": list(self.requirements),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "labels": dict(self.spec.job_labels),
            "sources": {name: dict(source) for name, source in self.sources.items()},
            "endpoint": self.endpoint,
            "image": None if self.image is None else self.image.to_dict(),
            "script": self.script,
        }


def _pool_rows(spec: JobSpec) -> tuple[PoolRow, ...]:
    rows = []
    for pool in spec.pools:
        m = pool.machine
        accel = "-" if m.accelerator_count == 0 else f"{m.accelerator_count} x {m.accelerator_type.name}"
        if m.tpu_hosts > 1:
            accel += f" per host, {m.tpu_topology} slice on {m.tpu_hosts} hosts"
        elif m.tpu_topology:
            accel += f" ({m.tpu_topology})"
        machine = spec.target.describe_machine(m)
        rows.append(PoolRow(role=pool.role.value, replicas=pool.replica_count, machine_type=machine,
                            accelerator=accel))
    return tuple(rows)


def make_plan(spec: JobSpec, *, settings: Settings | None = None) -> Plan:
    """Run the pure stages (entry point, launcher, and for an image target the build context, Dockerfile and
    tag) in a temporary directory and describe the rest. ``settings``: where the job would go (the image
    repository, the emulator); default: none configured."""
    settings = settings or Settings()
    notes: list[str] = []
    image = None
    with tempfile.TemporaryDirectory(prefix="tfcloud-plan-") as tmp:
        job, entry = prepare(spec, Path(tmp))
        launcher = job.launcher.read_text(encoding="utf-8")
        notebook_script = Path(entry.script).read_text(encoding="utf-8") \
            if spec.entry_point_kind is EntryPointKind.NOTEBOOK else None
        warnings = script_warnings(Path(entry.script), spec, source=notebook_script)
        if spec.target.container:
            image = _image_plan(job, settings, notes)
    notes[:0] = list(entry.notes)
    if spec.strategy.needs_tf_keras:
        notes.append("Keras is routed to tf-keras in every replica (Keras 3 cannot fit under this strategy).")
    notes += spec.target.notes(spec)
    if spec.strategy is Strategy.PARAMETER_SERVER:
        notes.append("Under ParameterServerStrategy, model.fit needs steps_per_epoch.")
    requirements = list(entry.requirements)
    if spec.requirements_txt is not None:
        requirements.insert(0, f"-r {spec.requirements_txt}")
    return Plan(
        spec=spec,
        strategy=spec.strategy.tf_class,
        strategy_reason=spec.strategy_reason,
        pools=_pool_rows(spec),
        launcher=launcher,
        command=("python", "tfcloud_launcher.py", *spec.entry_point_args),
        requirements=tuple(requirements),
        notes=tuple(notes),
        warnings=tuple(warnings),
        endpoint=_endpoint(spec, settings),
        image=image,
        script=notebook_script,
    )


def _endpoint(spec: JobSpec, settings: Settings) -> str:
    return spec.target.endpoint(settings)


def _image_plan(job: PreparedJob, settings: Settings, notes: list[str]) -> ImagePlan | None:
    """The image part of the plan (the tag computed, nothing built); None, with a note, when it cannot be."""
    from tfcloud.containerize import plan_image

    spec = job.spec
    try:
        repository = image_repository(spec, settings)
    except ConfigurationError as exc:
        repository = NO_REPOSITORY
        notes.append(f"{exc.message} The image's tag has {NO_REPOSITORY} in its place."
                     + (f" {exc.hint}" if exc.hint else ""))
    try:
        planned = plan_image(job, repository=repository, context_dir=spec.context_dir)
    except ConfigurationError as exc:
        notes.append(f"No image can be planned: {exc.message}" + (f" {exc.hint}" if exc.hint else ""))
        return None
    ctx = planned.context
    generated = {f.path for f in ctx.files if f.data is not None}
    bucket = spec.docker_config.image_build_bucket
    builder = f"Cloud Build (sources staged in gs://{bucket.removeprefix('gs://')})" if bucket else \
        f"the Docker engine at {settings.docker_host}" if settings.docker_host else "the local Docker engine"
    return ImagePlan(
        uri=planned.uri, base_image=planned.base_image, builder=builder, context_root=str(ctx.root),
        files=tuple(ContextEntry(path=f.path, size=f.size, generated=f.path in generated) for f in ctx.files),
        total_size=ctx.total_size,
        kept_out=tuple((s.path, s.reason) for s in ctx.secrets),
        let_in=tuple((s.path, s.reason) for s in ctx.let_in),
        dropped_links=ctx.outside_links,
        dockerfile=planned.dockerfile,
    )


# --- what the script itself says -------------------------------------------------------------------------------
#: Parts of Keras 3 that tf-keras does not have: whole modules, and functions of ``keras.backend``.
KERAS3_MODULES = frozenset({"ops", "random", "src", "tree", "quantizers", "dtype_policies"})
KERAS3_BACKEND = frozenset({"is_float_dtype", "is_int_dtype", "result_type", "standardize_dtype"})
#: The strategies a script may build itself (``tf.distribute.*Strategy``).
STRATEGY_CLASSES = frozenset({"MirroredStrategy", "MultiWorkerMirroredStrategy", "OneDeviceStrategy",
                              "ParameterServerStrategy", "TPUStrategy", "CentralStorageStrategy"})


def _keras3_api(dotted: str) -> str | None:
    """``keras.ops.sum`` → ``keras.ops``; ``tensorflow.keras.random`` → ``keras.random``; else None."""
    parts = dotted.split(".")
    if parts[:2] == ["tensorflow", "keras"]:
        parts = parts[1:]
    if parts[0] != "keras" or len(parts) < 2:
        return None
    if parts[1] in KERAS3_MODULES:
        return f"keras.{parts[1]}"
    if parts[1] == "backend" and len(parts) > 2 and parts[2] in KERAS3_BACKEND:
        return f"keras.backend.{parts[2]}"
    return None


def _scan(tree: ast.AST) -> tuple[dict[str, int], dict[str, int]]:
    """The Keras-3-only APIs and the ``tf.distribute`` strategies a script uses, each with its first line."""
    aliases: dict[str, str] = {}  # local name -> dotted module or object
    keras3: dict[str, int] = {}
    strategies: dict[str, int] = {}

    def dotted(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = dotted(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def found(table: dict[str, int], name: str | None, line: int) -> None:
        if name is not None and (name not in table or line < table[name]):
            table[name] = line

    for node in ast.walk(tree):  # imports first: aliases hold for the whole file
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                found(keras3, _keras3_api(alias.name), node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                aliases[alias.asname or alias.name] = full
                found(keras3, _keras3_api(full), node.lineno)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = dotted(node)
            if name is not None:
                found(keras3, _keras3_api(name), node.lineno)
        elif isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is not None and name.rsplit(".", 1)[-1] in STRATEGY_CLASSES \
                    and (name.startswith("tensorflow.") or "." not in name or ".distribute." in name):
                found(strategies, name.rsplit(".", 1)[-1], node.lineno)
    return keras3, strategies


def script_warnings(script: Path, spec: JobSpec, *, source: str | None = None) -> list[str]:
    """Warnings about the script under this spec (empty when it cannot be read or parsed):

    - it uses Keras-3-only APIs (``keras.ops``, ``keras.random``, ``keras.src``...) while the strategy routes
      Keras to tf-keras (:attr:`Strategy.needs_tf_keras`), which lacks them;
    - it builds its own ``tf.distribute`` strategy while tfcloud chooses one too (``auto``)."""
    try:
        tree = ast.parse(source if source is not None else script.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return []
    keras3, strategies = _scan(tree)
    name = spec.entry_point.name
    out = []
    if keras3 and spec.strategy.needs_tf_keras:
        used = ", ".join(f"{api} (line {line})" for api, line in sorted(keras3.items(), key=lambda kv: kv[1]))
        out.append(f"{name} uses Keras-3-only APIs: {used}. Under {spec.strategy.tf_class} Keras is routed to "
                   "tf-keras (Keras 3 cannot fit there), which lacks them: the job would fail. Use TensorFlow's "
                   "own ops (tf.math, tf.random...) instead, or run on one machine (no --worker-count or "
                   "--ps-count), where Keras 3 is used as it is.")
    if strategies and spec.strategy is not Strategy.NONE and spec.strategy_reason != EXPLICIT:
        used = ", ".join(f"tf.distribute.{cls} (line {line})"
                         for cls, line in sorted(strategies.items(), key=lambda kv: kv[1]))
        out.append(f"{name} builds its own strategy: {used}, while the strategy is auto and tfcloud sets up "
                   f"{spec.strategy.tf_class} as well. To keep the script's own, pass --strategy none "
                   "(distribution_strategy=None in run()); to keep tfcloud's, remove it from the script and "
                   "use tf.distribute.get_strategy().")
    return out
