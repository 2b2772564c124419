"""The state directory: what tfcloud keeps on this machine between commands, and the one place its layout is
written down. Its root is the ``state_dir`` setting (``TFCLOUD_HOME``, or ``state_dir`` in ``[tool.tfcloud]``),
else ``~/.local/state/tfcloud``::

    jobs/<job id>/                 a local job's directory (:mod:`tfcloud.targets.local.backend`)
    jobs/<job id>/timeline.json    the stages its submission measured (:mod:`tfcloud.records.timeline`)
    timelines/<job id>.json        the same for a job that runs elsewhere (Vertex AI, Ray)
    studies/<study id>/            a local study: its record and its tuner's files (:mod:`tfcloud.targets.local.tuning`)
    vertex-studies/<name>.json     how to rerun a Vertex AI study's trials (:mod:`tfcloud.google.vertex.tuning`)
    locks/build-<sha256>.lock      one Docker build per tag at a time (:mod:`tfcloud.image.builders.docker`)
    targets/<name>/                what a plug-in target keeps of its jobs (:func:`target_dir`)

Everyone that writes there takes its paths from the functions below; none of them creates anything.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from tfcloud.config.value import Settings

__all__ = [
    "DEFAULT",
    "build_lock",
    "check_state_dir",
    "default_state_dir",
    "job_dir",
    "jobs_dir",
    "locks_dir",
    "rerun_record",
    "source_of",
    "state_dir",
    "state_path",
    "studies_dir",
    "study_dir",
    "target_dir",
    "timeline_record",
    "unreadable_jobs",
]

#: The state dir when no setting names one.
DEFAULT = "~/.local/state/tfcloud"
_ENV = "TFCLOUD_HOME"
_EXPECTED = "a directory you can write to (tfcloud keeps local jobs there)"
_HINT = "Set TFCLOUD_HOME (or state_dir in [tool.tfcloud]) to a directory you can write to."


def state_dir(settings: Settings | None = None) -> Path:
    """The state dir the settings name (``settings.state_dir``), else :func:`default_state_dir`."""
    if settings is not None and settings.state_dir:
        return state_path(settings.state_dir, source=settings.sources.get("state_dir", "state_dir"))
    return default_state_dir()


def default_state_dir() -> Path:
    """The state dir of a caller that holds no settings: ``$TFCLOUD_HOME``, else ``~/.local/state/tfcloud``."""
    value = os.environ.get(_ENV)
    return state_path(value, source=_ENV) if value else Path(DEFAULT).expanduser()


def source_of(settings: Settings | None) -> str:
    """Where the state dir :func:`state_dir` gives comes from (:attr:`Settings.sources`): ``TFCLOUD_HOME``,
    ``given``, a config file, or ``state_dir`` for the default."""
    if settings is not None and settings.state_dir:
        return settings.sources.get("state_dir", "given")
    return _ENV if os.environ.get(_ENV) else "state_dir"


def _field(source: str) -> str:
    """``TFCLOUD_HOME`` when the value came from that variable; ``state_dir`` (the setting) otherwise."""
    return _ENV if source == _ENV else "state_dir"


def _hint(source: str, extra: str = "") -> str:
    where = f" (it is set in {source})" if source not in (_ENV, "state_dir", "given") else ""
    return f"{extra}{_HINT}{where}"


def state_path(value: str | Path, *, source: str = _ENV) -> Path:
    """``value`` (a setting's text) as a path, ``~`` expanded; a :class:`ValidationError` naming ``source``
    (``TFCLOUD_HOME``, ``state_dir``, or the config file it came from) when it cannot be one."""
    if "\0" in str(value):
        raise ValidationError(_field(source), _EXPECTED, str(value), hint=_hint(source))
    try:
        return Path(value).expanduser()
    except RuntimeError:  # "~nosuchuser/...", or no home directory at all
        raise ValidationError(_field(source), _EXPECTED, str(value),
                              hint=_hint(source, "No such home directory. ")) from None


def check_state_dir(path: Path, *, source: str | None = None) -> None:
    """The state dir must be a directory this user can create and write: a :class:`ValidationError` (exit 2)
    naming the setting it came from (``source``: ``TFCLOUD_HOME``, ``state_dir`` or a config file; default:
    ``TFCLOUD_HOME`` when set) before anything runs, not an error half-way through a submission."""
    source = source or (_ENV if os.environ.get(_ENV) else "state_dir")
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        what = "is not a directory" if not existing.is_dir() else "is not writable"
        raise ValidationError(_field(source), _EXPECTED, str(path), hint=_hint(source, f"{existing} {what}. "))


def jobs_dir(home: Path) -> Path:
    """Where local jobs keep their directories."""
    return home / "jobs"


def job_dir(home: Path, job_id: str) -> Path:
    """A local job's directory."""
    return jobs_dir(home) / job_id


def studies_dir(home: Path) -> Path:
    """Where local studies keep their directories."""
    return home / "studies"


def study_dir(home: Path, study_id: str) -> Path:
    """A local study's directory (its record, ``study.json``, and its tuner's files)."""
    return studies_dir(home) / study_id


def timeline_record(home: Path, job_id: str) -> Path:
    """Where the recorded stages of ``job_id`` are kept: in a local job's directory
    (``jobs/<id>/timeline.json``), else ``timelines/<id>.json``."""
    safe = job_id.replace("/", "_")
    local = job_dir(home, safe)
    if local.is_dir():
        return local / "timeline.json"
    return home / "timelines" / f"{safe}.json"


def target_dir(settings: Settings | None, name: str) -> Path:
    """Where target ``name`` (a plug-in: the built-in ones have their places above) keeps what it needs to find
    its jobs again from another process (``tfcloud status``, ``list``, ``logs``): ``targets/<name>/``."""
    return state_dir(settings) / "targets" / name


def rerun_record(home: Path, name: str) -> Path:
    """Where the rerun command of the Vertex AI study ``name`` (its resource name) is kept."""
    return home / "vertex-studies" / (name.replace("/", "_") + ".json")


def locks_dir(home: Path) -> Path:
    """Where build locks are kept."""
    return home / "locks"


def build_lock(locks: Path, tag: str) -> Path:
    """The file whose exclusive ``flock`` a build of ``tag`` holds, in ``locks`` (:func:`locks_dir`)."""
    import hashlib  # here: OpenSSL's start-up would cost every `tfcloud status`

    return locks / f"build-{hashlib.sha256(tag.encode()).hexdigest()[:32]}.lock"


_PLANS: dict[str, tuple[tuple[int, int], str | None]] = {}


def unreadable_jobs(home: Path | None = None) -> list[dict[str, Any]]:
    """The jobs in the state directory whose ``job.json`` is missing or corrupt (the local target leaves them out
    of its listing: they cannot be attached to; ``LocalTarget.unreadable`` names this function), each with why, as
    the dashboard shows them, newest first; read again only when the file changes."""
    import json

    root = jobs_dir(home or default_state_dir())
    found = []
    try:
        dirs = [d for d in root.iterdir() if d.is_dir()]
    except OSError:
        return []
    for job_dir in dirs:
        plan = job_dir / "job.json"
        try:
            stat = plan.stat()
            key = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            key = (0, -1)
        except OSError as exc:
            found.append({"kind": "unreadable", "job_id": job_dir.name, "why": f"job.json: {exc}", "created": 0.0})
            continue
        cached = _PLANS.get(str(plan))
        if cached is None or cached[0] != key:
            why: str | None = None
            if key == (0, -1):
                why = "its job.json is missing"
            else:
                try:
                    data = json.loads(plan.read_text(encoding="utf-8"))
                    if not isinstance(data, dict) or not isinstance(data.get("job_id"), str) \
                            or not isinstance(data.get("replicas"), list):
                        why = "its job.json is not a job's plan"
                except (OSError, ValueError) as exc:
                    why = f"its job.json cannot be read: {exc}"
            cached = _PLANS[str(plan)] = (key, why)
        if cached[1]:
            created = key[0] / 1e9 if key[0] else 0.0
            found.append({"kind": "unreadable", "job_id": job_dir.name, "why": cached[1], "created": created})
    return sorted(found, key=lambda row: row["created"] or 0.0, reverse=True)
