"""Small values shared by the services; no third-party imports."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = ["JobTimings", "project_number"]


def project_number(project: str) -> str:
    """The stable number the emulator gives a project id (a number is its own)."""
    if project.isdigit():
        return project
    return str(100000000000 + int(hashlib.sha256(project.encode()).hexdigest(), 16) % 900000000000)


@dataclass(frozen=True, kw_only=True)
class JobTimings:
    """How long a job (or build) waits in each early state, and how long workers may outlive a successful
    chief before they are stopped; ``stop_grace``: SIGTERM → SIGKILL."""

    queued: float = 0.2
    pending: float = 0.2
    finish_grace: float = 10.0
    stop_grace: float = 3.0
