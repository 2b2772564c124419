"""Records the dashboard shows as unreadable rather than dropping or dressing up: a job a target keeps but
cannot attach to (:attr:`tfcloud.targets.Target.unreadable`: a local job whose ``job.json`` is missing or
corrupt, :func:`tfcloud.records.statedir.unreadable_jobs`), and a local job whose ``status.json`` is corrupt (the local
target reports it failed with exit code 1, so that it stays listable and removable; the pages say "unreadable",
with why, and show no exit code it never had).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcloud import JobInfo

__all__ = ["record_problem"]


def record_problem(info: JobInfo) -> str | None:
    """Why a job's record of where it stands cannot be read (a local job's ``status.json`` corrupt), or None. The
    local target reports such a job failed with exit code 1, so that it stays listable and removable; the pages
    show it as unreadable instead, with why, and no exit code it never had."""
    message = info.message or ""
    if "status.json" in message and (message.endswith(" is corrupt") or " cannot be read: " in message):
        return message
    return None
