"""Records the dashboard shows as unreadable rather than dropping or dressing up: a local job whose ``job.json``
is missing or corrupt (the local target leaves it out of its listing, since it cannot be attached to), and one
whose ``status.json`` is corrupt (the local target reports it failed with exit code 1, so that it stays listable
and removable; the pages say "unreadable", with why, and show no exit code it never had).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfcloud import JobInfo

__all__ = ["record_problem", "unreadable_local_jobs"]


def record_problem(info: JobInfo) -> str | None:
    """Why a job's record of where it stands cannot be read (a local job's ``status.json`` corrupt), or None. The
    local target reports such a job failed with exit code 1, so that it stays listable and removable; the pages
    show it as unreadable instead, with why, and no exit code it never had."""
    message = info.message or ""
    if "status.json" in message and (message.endswith(" is corrupt") or " cannot be read: " in message):
        return message
    return None


_PLANS: dict[str, tuple[tuple[int, int], str | None]] = {}


def unreadable_local_jobs(home: Path | None = None) -> list[dict[str, Any]]:
    """The local jobs whose ``job.json`` is missing or corrupt (the local target leaves them out: they cannot be
    attached to), each with why, newest first; read again only when the file changes."""
    import json

    from tfcloud.statedir import default_state_dir, jobs_dir

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
