"""tfcloud's own job state, and the one table that maps every vendor's states onto it."""

from __future__ import annotations

import enum

__all__ = ["STATE_TABLE", "JobState", "to_job_state"]


class JobState(enum.Enum):
    """A job's (or a replica's) state, the same for every target: each vendor's states reach it through
    :data:`STATE_TABLE`. ``tfcloud list --state`` and :func:`tfcloud.sdk.list_jobs` take its values."""

    QUEUED = "queued"
    PROVISIONING = "provisioning"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"

    @property
    def is_final(self) -> bool:
        """True for the states a job never leaves: succeeded, failed, cancelled."""
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


#: (source, vendor state name) → JobState, for every source a target reads a job's state from: "vertex"
#: (aiplatform_v1.JobState names), "process" (local replicas, and the local target's containers: the supervisor
#: records them as processes), "ray" (ray.job_submission.JobStatus values), "vertex-trial" (a
#: HyperparameterTuningJob's Trial.State names: an INFEASIBLE trial failed, or ended without reporting the
#: study's metric).
STATE_TABLE: dict[tuple[str, str], JobState] = {
    ("vertex", "JOB_STATE_UNSPECIFIED"): JobState.UNKNOWN,
    ("vertex", "JOB_STATE_QUEUED"): JobState.QUEUED,
    ("vertex", "JOB_STATE_PENDING"): JobState.PROVISIONING,
    ("vertex", "JOB_STATE_RUNNING"): JobState.RUNNING,
    ("vertex", "JOB_STATE_SUCCEEDED"): JobState.SUCCEEDED,
    ("vertex", "JOB_STATE_FAILED"): JobState.FAILED,
    ("vertex", "JOB_STATE_CANCELLING"): JobState.CANCELLING,
    ("vertex", "JOB_STATE_CANCELLED"): JobState.CANCELLED,
    ("vertex", "JOB_STATE_PAUSED"): JobState.QUEUED,
    ("vertex", "JOB_STATE_EXPIRED"): JobState.FAILED,
    ("vertex", "JOB_STATE_UPDATING"): JobState.RUNNING,
    ("vertex", "JOB_STATE_PARTIALLY_SUCCEEDED"): JobState.FAILED,
    ("vertex-trial", "STATE_UNSPECIFIED"): JobState.UNKNOWN,
    ("vertex-trial", "REQUESTED"): JobState.QUEUED,
    ("vertex-trial", "ACTIVE"): JobState.RUNNING,
    ("vertex-trial", "STOPPING"): JobState.CANCELLING,
    ("vertex-trial", "SUCCEEDED"): JobState.SUCCEEDED,
    ("vertex-trial", "INFEASIBLE"): JobState.FAILED,
    ("process", "starting"): JobState.PROVISIONING,
    ("process", "running"): JobState.RUNNING,
    ("process", "succeeded"): JobState.SUCCEEDED,
    ("process", "failed"): JobState.FAILED,
    ("process", "stopping"): JobState.CANCELLING,
    ("process", "cancelled"): JobState.CANCELLED,
    ("process", "exited"): JobState.UNKNOWN,  # a replica: the exit code decides (to_job_state)
    ("ray", "PENDING"): JobState.PROVISIONING,
    ("ray", "RUNNING"): JobState.RUNNING,
    ("ray", "SUCCEEDED"): JobState.SUCCEEDED,
    ("ray", "FAILED"): JobState.FAILED,
    ("ray", "STOPPED"): JobState.CANCELLED,
}


def to_job_state(source: str, state: str, *, exit_code: int | None = None) -> JobState:
    """Map a vendor state to :class:`JobState`; an exited replica is decided by its exit code."""
    if source == "process" and state == "exited" and exit_code is not None:
        return JobState.SUCCEEDED if exit_code == 0 else JobState.FAILED
    return STATE_TABLE.get((source, state), JobState.UNKNOWN)
