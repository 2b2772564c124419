"""The dry-run plan: what a submission would do, computed without credentials, TensorFlow, Docker or a network.

Besides the strategy, the pools and the launcher, a plan shows, for a target that runs an image, the image
it would build (:class:`ImagePlan`: the content-addressed tag, the base image, the build context's files and
what was kept out of it and why, the Dockerfile), a converted notebook's script, and warnings read from the
script itself (:func:`script_warnings`): Keras-3-only APIs under a strategy that routes Keras to tf-keras, and
a strategy the script builds itself while tfcloud chooses one too.

For people, a plan is plain text (``str(plan)``, IPython's pretty printer: :func:`plan_text`) or HTML tables
(a notebook's ``_repr_html_``: :func:`plan_html`); ``tfcloud submit --dry-run`` prints the same facts on the
console, the generated files only with ``--show-files`` (:func:`generated_files` names them).
"""

from __future__ import annotations

import ast
import html
import json
import shlex
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.config.value import Settings
from tfcloud.errors import ConfigurationError
from tfcloud.flow.pipeline import image_repository, prepare
from tfcloud.job.datasets import describe
from tfcloud.job.secretrefs import env_warnings
from tfcloud.job.spec import EntryPointKind, JobSpec, Strategy
from tfcloud.job.strategy import EXPLICIT

if TYPE_CHECKING:
    from tfcloud.flow.submission import Rerun
    from tfcloud.google.catalog.prices import JobPrice
    from tfcloud.job.artifacts import PreparedJob
    from tfcloud.targets._base import Target

__all__ = ["ContextEntry", "ImagePlan", "PackagePlanView", "Plan", "PoolRow", "generated_files", "make_plan",
           "plan_html", "plan_rows", "plan_text", "price_of", "script_warnings"]

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
    cache_from: str | None = None  # an image the build takes its layer cache from

    @property
    def tag(self) -> str:
        return self.uri.rsplit(":", 1)[-1] if ":" in self.uri.rsplit("/", 1)[-1] else ""

    def to_dict(self) -> dict[str, object]:
        return {
            "uri": self.uri, "tag": self.tag, "base_image": self.base_image, "builder": self.builder,
            "cache_from": self.cache_from,
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
class PackagePlanView:
    """The package a ``--no-build`` job would upload, computed without uploading it, and the base image every
    pool runs it on (:mod:`tfcloud.google.staging.baseimage`: its tag computed, nothing built)."""

    uri: str
    module: str
    size: int  # the archive's bytes
    base_image: str  # the image URI
    tensorflow: str  # the TensorFlow the base image carries (and every replica runs)
    image_reason: str
    context_root: str
    files: tuple[ContextEntry, ...]
    kept_out: tuple[tuple[str, str], ...]

    def lines(self) -> list[str]:
        """What the text plan prints (user paths escaped by the caller's printer)."""
        from tfcloud.image.context import format_size, shown

        own = [f for f in self.files if not f.generated]
        out = [f"Package: {self.uri} ({format_size(self.size)}; uploaded only if it is not there)",
               f"Package runs: python -m {self.module} (the launcher; nothing is installed at start)",
               f"Base image (every pool): {self.base_image}",
               f"Base image: {self.image_reason}"]
        out.append(f"Package files from {shown(self.context_root)}: {len(own)} of the job's own, "
                   f"{len(self.files) - len(own)} generated (launcher, requirements, tfcloud's runtime)")
        out += [f"  {shown(f.path)}  {format_size(f.size)}" for f in own[:40]]
        out += [f"  kept out: {shown(path)} ({reason}; secret deny-list)" for path, reason in self.kept_out]
        return out

    def to_dict(self) -> dict[str, object]:
        return {"uri": self.uri, "module": self.module, "size": self.size,
                "base_image": self.base_image, "tensorflow": self.tensorflow,
                "image_reason": self.image_reason, "context_root": self.context_root,
                "files": [{"path": f.path, "size": f.size, "generated": f.generated} for f in self.files],
                "kept_out": [{"path": p, "reason": r} for p, r in self.kept_out]}


@dataclass(frozen=True, kw_only=True, repr=False)
class Plan:
    """What ``run(dry_run=True)`` returns and ``tfcloud submit --dry-run`` prints: the job (``spec``) and where it
    would run (``target``: the target value, with its options)."""

    spec: JobSpec
    target: Target
    strategy: str
    strategy_reason: str
    pools: tuple[PoolRow, ...]
    launcher: str
    command: tuple[str, ...]
    requirements: tuple[str, ...]
    notes: tuple[str, ...]
    #: setting or job default -> {"value": ..., "from": where it came from} (tfcloud.flow.settings); what was left
    #: at tfcloud's default is not listed
    sources: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    data: tuple[Mapping[str, object], ...] = ()  # --data: each data set, and what submitting uploads
    endpoint: str = ""
    image: ImagePlan | None = None
    package: PackagePlanView | None = None  # --no-build: the package instead of an image
    price: JobPrice | None = None  # Vertex AI: the hourly list price (tfcloud.google.catalog.prices)
    script: str | None = None  # a converted notebook's script
    #: The request the target's backend sends to start the job (Vertex AI: the CustomJob, as Google receives it);
    #: None: the target sends no one request (``Target.request``).
    request: Mapping[str, Any] | None = None

    @property
    def args(self) -> tuple[str, ...]:
        return self.spec.entry_point_args

    def __str__(self) -> str:
        return plan_text(self)

    def __repr__(self) -> str:
        replicas = sum(p.replicas for p in self.pools)
        return (f"<Plan for {self.spec.entry_point.name}: {self.target.name}, {self.strategy}, "
                f"{replicas} replica(s); print() it for the whole plan>")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's pretty printer
        printer.text(str(self))

    def _repr_html_(self) -> str:  # a notebook shows the plan as tables
        return plan_html(self)

    @property
    def env_names(self) -> list[str]:
        """The names of the variables ``--env`` sets (never their values; the secrets' carrier left out: the
        secrets are listed by reference)."""
        from tfcloud.job.secretrefs import shown_env_names

        return shown_env_names(self.spec.env)

    @property
    def rerun(self) -> Rerun:
        """The command that submits this job again (:func:`tfcloud.flow.submission.rerun`; env values included, so
        it is kept out of :meth:`to_dict`, which names env variables only)."""
        from tfcloud.flow.submission import rerun

        return rerun(self.spec, self.target)

    @property
    def command_line(self) -> str:
        """The replica's command as a shell would take it (each argument quoted as needed)."""
        return shlex.join(self.command)

    def to_dict(self) -> dict[str, object]:
        return {
            "entry_point": str(self.spec.entry_point),
            "target": self.target.name,
            "target_options": {name: self.target.option(name).shown(value)  # type: ignore[union-attr]
                               for name, value in self.target.given().items()},
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
            "secrets": dict(self.spec.secrets),
            "data": [dict(d) for d in self.data],
            "env": self.env_names,  # the names only: values may be secrets
            "display_name": self.spec.display_name,
            "sources": {name: dict(source) for name, source in self.sources.items()},
            "endpoint": self.endpoint,
            "image": None if self.image is None else self.image.to_dict(),
            "package": None if self.package is None else self.package.to_dict(),
            "price": None if self.price is None else _price_dict(self.price),
            "script": self.script,
            "request": None if self.request is None else dict(self.request),
        }


def _price_dict(price: JobPrice) -> dict[str, object]:
    from tfcloud.google.catalog.prices import PRICE_DATE, PRICE_SOURCE

    return {"region": price.region, "capacity": price.capacity, "per_hour_usd": price.per_hour,
            "at_most_per_hour_usd": price.at_most_per_hour, "charged": price.capacity != "persistent-resource",
            "billing": price.billing(), "basis": price.basis, "excludes": list(price.excludes),
            "compute_engine_spot_per_hour_usd": price.compute_engine_spot_per_hour, "sources": list(price.sources()),
            "ceiling_usd": price.ceiling, "timeout_s": price.timeout_s, "on_demand_as_ceiling": price.fallback,
            "pools": [{"role": p.role, "replicas": p.replicas, "per_hour_usd": p.per_hour, "missing": p.missing}
                      for p in price.pools],
            "missing": list(price.missing), "table_date": PRICE_DATE, "source": PRICE_SOURCE}


def _pool_rows(spec: JobSpec, target: Target) -> tuple[PoolRow, ...]:
    rows = []
    for pool in spec.pools:
        m = pool.machine
        accel = "-" if m.accelerator_count == 0 else f"{m.accelerator_count} x {m.accelerator_type.name}"
        if m.tpu_hosts > 1:
            accel += f" per host, {m.tpu_topology} slice on {m.tpu_hosts} hosts"
        elif m.tpu_topology:
            accel += f" ({m.tpu_topology})"
        machine = target.describe_machine(m)
        rows.append(PoolRow(role=pool.role.value, replicas=pool.replica_count, machine_type=machine,
                            accelerator=accel))
    return tuple(rows)


def make_plan(spec: JobSpec, target: Target, *, settings: Settings | None = None) -> Plan:
    """Run the pure stages (entry point, launcher, and for an image target the build context, Dockerfile and
    tag) in a temporary directory and describe the rest. ``settings``: where the job would go (the image
    repository, the emulator); default: none configured."""
    settings = settings or Settings()
    notes: list[str] = []
    image = None
    with tempfile.TemporaryDirectory(prefix="tfcloud-plan-") as tmp:
        job, entry = prepare(spec, target, Path(tmp))
        launcher = job.launcher.read_text(encoding="utf-8")
        notebook_script = Path(entry.script).read_text(encoding="utf-8") \
            if spec.entry_point_kind is EntryPointKind.NOTEBOOK else None
        warnings = script_warnings(Path(entry.script), spec, source=notebook_script) + env_warnings(spec.env)
        if target.container:
            image = _image_plan(job, target, settings, notes, warnings)
        package = _package_plan(job, target, settings, warnings) if target.packaged else None
    notes[:0] = list(entry.notes)
    if image is not None and spec.has_tpu and not spec.docker_config.parent_image:
        from tfcloud.google.catalog.prebuilt import tensorflow_tpu_release
        from tfcloud.image.dockerfile import installed_tensorflow_version

        notes.append("TPU image: " + tensorflow_tpu_release(installed_tensorflow_version()).reason)
    if image is not None or package is not None:
        from tfcloud.image.dockerfile import tpu_pod_base

        if (pod := tpu_pod_base(spec)) is not None:
            notes.append("TPU Pod: " + pod.reason)
    if spec.strategy.needs_tf_keras:
        notes.append("Keras is routed to tf-keras in every replica (Keras 3 cannot fit under this strategy).")
    notes += target.notes(spec)
    if spec.strategy is Strategy.PARAMETER_SERVER:
        notes.append("Under ParameterServerStrategy, model.fit needs steps_per_epoch.")
    data, data_warnings = describe(spec.data, in_place=target.runs_here, store=target.data_store(settings))
    warnings += data_warnings  # what the deny-list kept out of a data set, links that leave it
    requirements = list(job.requirements)
    if spec.requirements_txt is not None:
        requirements.insert(0, f"-r {spec.requirements_txt}")
    return Plan(
        spec=spec,
        target=target,
        strategy=spec.strategy.tf_class,
        strategy_reason=spec.strategy_reason,
        pools=_pool_rows(spec, target),
        launcher=launcher,
        command=("python", "tfcloud_launcher.py", *spec.entry_point_args),
        requirements=tuple(requirements),
        notes=tuple(notes),
        warnings=tuple(warnings),
        data=tuple(data),
        endpoint=target.endpoint(settings),
        image=image,
        package=package,
        price=price_of(spec, target, settings),
        script=notebook_script,
        request=_request(spec, target, image, package),
    )


def _request(spec: JobSpec, target: Target, image: ImagePlan | None,
             package: PackagePlanView | None) -> dict[str, Any] | None:
    """What the target's backend would send (the image's planned tag, or the package on its base image)."""
    from tfcloud.job.artifacts import PackageRef

    ref = None if package is None else PackageRef(uri=package.uri, module=package.module, digest="",
                                                    size=package.size)
    image_uri = package.base_image if package is not None else image.uri if image is not None else None
    if image_uri is None and target.pushes_image:  # no image planned (nothing to name in the request)
        return None
    return target.request(spec, image_uri=image_uri, package=ref)


def price_of(spec: JobSpec, target: Target, settings: Settings) -> JobPrice | None:
    """The job's hourly list price, as its target knows it (:mod:`tfcloud.google.catalog.prices`); None: it bills
    nothing."""
    return target.price(spec, settings)


def _package_plan(job: PreparedJob, target: Target, settings: Settings, warnings: list[str]) -> PackagePlanView:
    """The ``--no-build`` part of the plan: the package (made in memory, not uploaded) and its base image (the
    tag computed, nothing looked up or built); what the upload would warn of goes to ``warnings``."""
    from tfcloud.google.staging.baseimage import plan_base_image
    from tfcloud.google.staging.package import PACKAGE_MODULE, plan_package

    spec = job.spec
    planned = plan_package(job, context_dir=spec.context_dir)
    warnings += planned.warnings()
    google = target.google()
    bucket = (google.bucket if google is not None else None) or "STAGING_BUCKET"
    ctx = planned.context
    generated = {f.path for f in ctx.files if f.data is not None}
    base = plan_base_image(job, repository=target.repository(settings) or "REPOSITORY")
    return PackagePlanView(
        uri=f"gs://{bucket}/{planned.object_name()}", module=PACKAGE_MODULE,
        size=planned.measure().size,  # written to nowhere: never held in memory
        base_image=base.uri, tensorflow=base.tensorflow, image_reason=base.reason(),
        context_root=str(ctx.root),
        files=tuple(ContextEntry(path=f.path, size=f.size, generated=f.path in generated) for f in ctx.files),
        kept_out=tuple((s.path, s.reason) for s in ctx.secrets))


def _image_plan(job: PreparedJob, target: Target, settings: Settings, notes: list[str],
                warnings: list[str]) -> ImagePlan | None:
    """The image part of the plan (the tag computed, nothing built); None, with a note, when it cannot be. The
    context's size over the bound the build warns at goes to ``warnings``."""
    from tfcloud.image.containerize import plan_image

    spec = job.spec
    try:
        repository = image_repository(spec, target, settings)
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
    warnings += filter(None, [ctx.size_warning()])  # what is kept out or dropped, the image's rows say
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
        cache_from=spec.docker_config.cache_from,
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


# --- the plan for people: plain text (str(plan), IPython) and HTML (a notebook) ---------------------------------
def _listed(row: Mapping[str, object], key: str) -> list[Any]:
    """A list in a data set's plan row (:func:`tfcloud.job.datasets.describe`); none for a ``gs://`` one."""
    value = row.get(key)
    return value if isinstance(value, list) else []


def plan_rows(plan: Plan, *, python: bool = False) -> list[tuple[str, str]]:
    """(label, value) for each fact of the plan after its pools, in the order the console shows them
    (``python``: hints in Python's terms, for a notebook)."""
    spec = plan.spec
    rows = [("Each replica runs", plan.command_line),
            ("Script args", json.dumps(list(plan.args)) if plan.args else "(none)")]
    if spec.job_labels:
        rows.append(("Labels", ", ".join(f"{k}={v}" for k, v in spec.job_labels.items())))
    rows += [("Secret", f"{name} from {ref}") for name, ref in plan.spec.secrets.items()]
    if plan.env_names:
        rows.append(("Env", ", ".join(plan.env_names) + " (values not shown)"))
    from tfcloud.image.context import format_size
    from tfcloud.image.context import shown as shown_path

    for d in plan.data:
        size = "" if d["files"] is None else f": {d['files']} files, {format_size(int(str(d['size'])))}"
        rows.append(("Data", f"{d['name']} = {d['source']}{size} (${d['variable']}); uploads {d['upload']}"))
        rows += [("Data", f"  kept out: {shown_path(str(k['path']))} ({k['reason']}; secret deny-list)")
                 for k in _listed(d, "kept_out")]
        rows += [("Data", f"  let in: {shown_path(str(k['path']))} ({k['reason']}; a `!path` line in its "
                          ".dockerignore)") for k in _listed(d, "let_in")]
        rows += [("Data", f"  link outside its directory, followed: {shown_path(str(p))}")
                 for p in _listed(d, "outside_links")]
        rows += [("Data", f"  link to nothing, left out: {shown_path(str(p))}") for p in _listed(d, "dangling_links")]
    rows += [("Requirement", r) for r in plan.requirements]
    if plan.endpoint:
        rows.append(("Runs on", plan.endpoint))
    rows += [("Note", n) for n in plan.notes]
    for name, source in plan.sources.items():
        value = source["value"]
        shown = ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value
        rows.append(("Setting", f"{name} = {shown} (from {source['from']})"))
    rows += [("Warning", w) for w in plan.warnings]
    for line in plan.price.lines() if plan.price is not None else ():
        label, _, value = line.partition(": ")
        rows.append((label, value))
    for line in plan.package.lines() if plan.package is not None else ():
        if not line.startswith(" "):  # the package's facts; its file list is in to_dict()
            label, _, value = line.partition(": ")
            rows.append((label, value))
    if plan.image is not None:
        from tfcloud.image.context import format_size

        image = plan.image
        rows += [("Image", f"{image.uri} (nothing built)"), ("Base image", image.base_image),
                 ("Builder", image.builder),
                 ("Build context", f"{image.context_root}: {len(image.files)} files, "
                                   f"{format_size(image.total_size)}")]
    rows.append(("Generated", generated_files(plan, python=python)))
    return rows


def generated_files(plan: Plan, *, python: bool = False) -> str:
    """One line naming the files tfcloud generates for the job and where to see them whole (``python``: as a
    notebook or script user reads them, ``plan.launcher``; else the CLI's ``--show-files`` too)."""
    generated = [("tfcloud_launcher.py", plan.launcher)]
    if plan.script is not None:
        generated.append((f"{plan.spec.entry_point.name} as a script", plan.script))
    attributes = "plan.launcher" + (", plan.script" if plan.script is not None else "")
    return (", ".join(f"{name} ({text.count(chr(10))} lines)" for name, text in generated)
            + (f"; shown by {attributes}" if python else f"; shown by --show-files ({attributes} in Python)"))


def _pools(plan: Plan) -> list[list[str]]:
    return [["role", "replicas", "machine type", "accelerator"],
            *([p.role, str(p.replicas), p.machine_type, p.accelerator] for p in plan.pools)]


def plan_text(plan: Plan) -> str:
    """The plan as plain text: what it runs where, the pools as aligned columns, then :func:`plan_rows`."""
    spec = plan.spec
    lines = [f"Plan for {spec.entry_point} (target: {plan.target.name}; nothing submitted)",
             f"Strategy: {plan.strategy} ({plan.strategy_reason})"]
    table = _pools(plan)
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table]
    lines += [f"{label}: {value}" for label, value in plan_rows(plan)]
    return "\n".join(lines)


def plan_html(plan: Plan) -> str:
    """The plan as an HTML fragment for a notebook: a heading, the pools table and a table of the rest."""
    esc = html.escape
    spec = plan.spec
    pools = _pools(plan)
    head = "".join(f"<th>{esc(c)}</th>" for c in pools[0])
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in pools[1:])
    facts = "".join(f"<tr><th style='text-align:left'>{esc(label)}</th><td style='text-align:left'>"
                    f"<code>{esc(value)}</code></td></tr>" for label, value in plan_rows(plan, python=True))
    return (f"<div><p><b>Plan</b> for <code>{esc(str(spec.entry_point))}</code> (target: "
            f"{esc(plan.target.name)}; nothing submitted)<br>Strategy: <b>{esc(plan.strategy)}</b> "
            f"({esc(plan.strategy_reason)})</p><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<table>{facts}</table></div>")
