"""Small values shared by the services; no third-party imports."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

__all__ = ["JobTimings", "job_record", "project_number"]


def project_number(project: str) -> str:
    """The stable number the emulator gives a project id (a number is its own)."""
    if project.isdigit():
        return project
    return str(100000000000 + int(hashlib.sha256(project.encode()).hexdigest(), 16) % 900000000000)


@dataclass(frozen=True, kw_only=True)
class JobTimings:
    """How long a job (or build) waits in each early state, and how long workers may outlive a successful
    chief before they are stopped; ``stop_grace``: SIGTERM → SIGKILL. ``pending`` is the provisioning of a job's
    VMs (a job on a persistent resource skips it); ``resource_provisioning``: a persistent resource's."""

    queued: float = 0.2
    pending: float = 0.2
    resource_provisioning: float = 0.2
    finish_grace: float = 10.0
    stop_grace: float = 3.0


def job_record(job: Any) -> dict[str, Any]:
    """A Vertex AI job (CustomJob, HyperparameterTuningJob) as the List filters read it."""
    return {
        "display_name": job.display_name, "displayName": job.display_name,
        "state": job.state.name,
        "create_time": job.create_time, "createTime": job.create_time,
        "update_time": job.update_time, "updateTime": job.update_time,
        "labels": dict(job.labels),
        "_text": job.display_name,
    }
