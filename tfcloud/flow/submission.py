"""What this machine knows of a job it submitted: its plan in brief (the strategy and why, the pools, the image,
where each setting came from), kept in the state dir beside the job's stage timeline (:mod:`tfcloud.records.timeline`),
so that ``tfcloud ui`` shows a job's plan later, from any process.

The record is a nicety, as the timeline is: a job submitted from another machine has none, and a record that
cannot be read counts as none (:func:`load`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ValidationError
from tfcloud.records.files import write_private_json

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.job.spec import JobSpec
    from tfcloud.targets import Option, Target

__all__ = ["Rerun", "latest", "load", "record_path", "rerun", "save", "summary"]

_RECORD_DIR = "submissions"


def summary(spec: JobSpec, target: Target, settings: Settings, *, image: str | None = None,
            request: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The plan of a submitted job, JSON-ready: ``entry_point``, ``args``, ``target``, ``strategy``,
    ``strategy_reason``, ``pools`` (role, replicas, machine type, accelerator), ``image`` (its URI, for an image
    target), ``labels``, ``secrets`` (by reference), ``env_names`` (never values), ``data`` (each data set's
    name, variable and source), ``request`` (what the target sent, :meth:`Target.request`: Vertex AI's
    CustomJob) and ``sources`` (setting → where its value came from: a flag, ``TFCLOUD_*``, a file): the facts
    the plan shows, kept for the dashboard."""
    from tfcloud.job.secretrefs import shown_env_names

    pools = []
    for pool in spec.pools:
        machine = pool.machine
        accelerator = "-" if machine.accelerator_count == 0 else \
            f"{machine.accelerator_count} x {machine.accelerator_type.name}"
        pools.append({"role": pool.role.value, "replicas": pool.replica_count, "machine_type": machine.machine_type,
                      "accelerator": accelerator})
    values = {**{name: getattr(settings, name) for name in settings.sources if hasattr(settings, name)},
              **settings.job_defaults}
    return {
        "entry_point": str(spec.entry_point),
        "args": list(spec.entry_point_args),
        "target": target.name,
        "strategy": spec.strategy.tf_class,
        "strategy_reason": spec.strategy_reason,
        "pools": pools,
        "image": image,
        "labels": dict(spec.job_labels),
        "secrets": dict(spec.secrets),
        "env_names": shown_env_names(spec.env),
        "data": [{"name": d.name, "variable": d.var, "source": d.source} for d in spec.data],
        "request": _without_env_values(request) if request is not None else None,
        "sources": {name: {"value": _plain(values.get(name)), "from": origin}
                    for name, origin in sorted(settings.sources.items())},
        "rerun": rerun(spec, target).to_dict(),
    }


def _without_env_values(value: Any) -> Any:
    """``value`` (a request) with each container environment variable's value left out (``env: [{name,
    value}]``): the record shows names, never values, as every view of a job does."""
    if isinstance(value, Mapping):
        return {k: ([{**e, "value": "(not shown)"} if isinstance(e, Mapping) and "value" in e else e for e in v]
                    if k == "env" and isinstance(v, list) else _without_env_values(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_env_values(v) for v in value]
    return value


def _plain(value: object) -> object:
    return value if value is None or isinstance(value, str | int | float | bool) else str(value)


def record_path(state_dir: Path, job_id: str) -> Path:
    """Where the record of ``job_id`` is kept: in a local job's directory (``<state dir>/jobs/<id>/plan.json``),
    else ``<state dir>/submissions/<id>.json``."""
    safe = job_id.replace("/", "_")
    job_dir = state_dir / "jobs" / safe
    if job_dir.is_dir():
        return job_dir / "plan.json"
    return state_dir / _RECORD_DIR / f"{safe}.json"


def save(path: Path, record: Mapping[str, Any]) -> None:
    """Write ``record`` to ``path`` (directory 0700, file 0600; replaced atomically)."""
    write_private_json(path, record)


def load(path: Path) -> dict[str, Any] | None:
    """The record at ``path``; None when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("pools"), list) else None


def latest(state_dir: Path) -> str | None:
    """The id of the job this machine submitted last (any target: a local job's directory, or the record kept
    of a cloud job, whichever is newest), or None when it has submitted none."""
    found: list[tuple[float, str]] = []
    for job_dir in _entries(state_dir / "jobs"):
        if job_dir.is_dir():
            marker = job_dir / "job.json"
            found.append(((marker if marker.exists() else job_dir).stat().st_mtime, job_dir.name))
    for record in _entries(state_dir / _RECORD_DIR):
        if record.suffix == ".json":
            try:
                data = json.loads(record.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            job_id = data.get("job_id") if isinstance(data, dict) else None
            found.append((record.stat().st_mtime, job_id if isinstance(job_id, str) else record.stem))
    return max(found)[1] if found else None


def _entries(directory: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError:
        return []


@dataclass(frozen=True, kw_only=True)
class Rerun:
    """The command that submits a job again: ``head`` (``tfcloud submit ENTRY`` and every option that shaped
    the job), ``args`` (the script's own arguments, after ``--``) and ``not_reproduced`` (what the command
    line cannot say: a custom machine config; each with why)."""

    head: tuple[str, ...]
    args: tuple[str, ...]
    not_reproduced: tuple[str, ...] = ()

    @property
    def argv(self) -> list[str]:
        return [*self.head, *(["--", *self.args] if self.args else [])]

    def to_dict(self) -> dict[str, Any]:
        return {"head": list(self.head), "args": list(self.args), "not_reproduced": list(self.not_reproduced)}


def rerun(spec: JobSpec, target: Target) -> Rerun:
    """The one place a job becomes the command line that submits it again (the dashboard's Rerun, the JSON
    plan's ``rerun``): the target and each of its options the job was given, the cluster (counts, machines by
    their catalog names, the strategy when one was asked for), requirements, labels, env, secrets by reference,
    data sets, the image options, the build context and the display name. Values that came from the
    environment or a config file are written out as flags, so the command does not depend on them."""
    from tfcloud.flow.validate import default_display_name
    from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS
    from tfcloud.job.secretrefs import RESERVED_ENV
    from tfcloud.job.spec import Role, Strategy
    from tfcloud.job.strategy import EXPLICIT
    from tfcloud.targets import BUILTIN
    head = ["tfcloud", "submit", str(spec.entry_point), "--target", target.name]
    missing: list[str] = []
    for name, value in _target_words(target).items():  # a built-in target's options are flags; a plug-in's -o
        option = target.option(name)
        assert option is not None
        if target.name in BUILTIN and option.cli_flag:
            head += option.cli_args(value)
        else:
            head += ["-o", f"{name}={value}"]
    flag_of = {Role.CHIEF: "--chief-config", Role.WORKER: "--worker-config", Role.PS: "--ps-config"}
    count_of = {Role.WORKER: "--worker-count", Role.PS: "--ps-count"}
    for pool in spec.pools:
        if pool.role in count_of and pool.replica_count:
            head += [count_of[pool.role], str(pool.replica_count)]
        if pool.role is Role.EVALUATOR:
            head.append("--evaluator")
            continue
        known = next((n for n, c in COMMON_MACHINE_CONFIGS.items() if c == pool.machine), None)
        if known is not None:
            head += [flag_of[pool.role], known]
        else:
            missing.append(f"the {pool.role.value} machine ({pool.machine!r}): not a catalog name, which is all "
                           "the command line takes; tfcloud.run() takes it as a MachineConfig")
    if spec.strategy is Strategy.NONE:
        head += ["--strategy", "none"]
    elif spec.strategy_reason == EXPLICIT:
        head += ["--strategy", spec.strategy.value]
    if spec.requirements_txt is not None:
        head += ["-r", str(spec.requirements_txt)]
    for flag, pairs in (("--label", spec.job_labels), ("--env", spec.env), ("--secret", spec.secrets)):
        for key, value in pairs.items():
            if flag != "--env" or key not in RESERVED_ENV:  # tfcloud's own (the secrets' references)
                head += [flag, f"{key}={value}"]
    for data in spec.data:
        head += ["--data", f"{data.name}={data.source}"]
    docker = spec.docker_config
    for flag, value in (("--image", docker.image), ("--parent-image", docker.parent_image),
                        ("--cache-from", docker.cache_from), ("--image-build-bucket", docker.image_build_bucket)):
        if isinstance(value, str) and value:
            head += [flag, value]
    if spec.context_dir is not None:
        head += ["--context", str(spec.context_dir)]
    if spec.display_name != default_display_name(spec.entry_point):
        head += ["--display-name", spec.display_name]
    return Rerun(head=tuple(head), args=tuple(spec.entry_point_args), not_reproduced=tuple(missing))


def _target_words(target: Target) -> dict[str, Any]:
    """The target's given options as the command line takes them (a bool as itself, the rest as text; an enum
    field as the choice that gives it), less those another given option implies (``--spot`` sets
    ``scheduling``)."""
    import enum

    given: dict[str, Any] = {}
    for name, value in target.given().items():
        option = target.option(name)
        if option is None:
            continue
        if isinstance(value, bool):
            given[name] = value if option.type is bool else ("true" if value else "false")
        elif isinstance(value, enum.Enum):
            given[name] = next((c for c in option.choices if _converts(option, c) == value),
                               str(value.value).lower().replace("_", "-"))
        else:
            given[name] = value if option.type in (int, float) else str(value)
    for name in list(given):
        rest = {k: v for k, v in given.items() if k != name}
        try:
            without = type(target).from_options(rest)
        except ValidationError:  # the option is needed (its absence breaks a rule): keep it
            continue
        option = target.option(name)
        assert option is not None
        if getattr(without, option.attribute) == getattr(target, option.attribute):
            del given[name]
    return given


def _converts(option: Option, text: str) -> object:
    try:
        return option.convert(text)
    except ValidationError:  # not this choice
        return None
