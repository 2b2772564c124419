"""The local jobs the local target keeps but cannot attach to (``LocalTarget.unreadable``): those whose
``job.json`` is missing or corrupt. The local backend leaves them out of its listing; the dashboard shows them as
unreadable, with why, rather than dropping them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["unreadable_jobs"]

_PLANS: dict[str, tuple[tuple[int, int], str | None]] = {}


def unreadable_jobs(home: Path | None = None) -> list[dict[str, Any]]:
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
