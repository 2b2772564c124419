"""What this machine knows of a job it submitted: its plan in brief (the strategy and why, the pools, the image,
where each setting came from), kept in the state dir beside the job's stage timeline (:mod:`tfcloud.timeline`),
so that ``tfcloud ui`` shows a job's plan later, from any process.

The record is a nicety, as the timeline is: a job submitted from another machine has none, and a record that
cannot be read counts as none (:func:`load`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud._files import write_private_json

if TYPE_CHECKING:
    from tfcloud.settings_value import Settings
    from tfcloud.spec import JobSpec

__all__ = ["latest", "load", "record_path", "save", "summary"]

_RECORD_DIR = "submissions"


def summary(spec: JobSpec, settings: Settings, *, image: str | None = None) -> dict[str, Any]:
    """The plan of a submitted job, JSON-ready: ``entry_point``, ``args``, ``target``, ``strategy``,
    ``strategy_reason``, ``pools`` (role, replicas, machine type, accelerator), ``image`` (its URI, for an image
    target), ``labels`` and ``sources`` (setting → where its value came from: a flag, ``TFCLOUD_*``, a file)."""
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
        "target": spec.target.name,
        "strategy": spec.strategy.tf_class,
        "strategy_reason": spec.strategy_reason,
        "pools": pools,
        "image": image,
        "labels": dict(spec.job_labels),
        "sources": {name: {"value": _plain(values.get(name)), "from": origin}
                    for name, origin in sorted(settings.sources.items())},
    }


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
