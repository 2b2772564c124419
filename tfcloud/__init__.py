"""tfcloud: run a TensorFlow script or notebook as a distributed job, locally or on Vertex AI, in one call.

Importing tfcloud is cheap: TensorFlow, Google Cloud and Docker are imported only by the functions that need
them.
"""

from __future__ import annotations

from tfcloud._version import __version__
from tfcloud.api import remote, run
from tfcloud.backends.base import JobHandle, JobInfo, LogLine, ReplicaInfo
from tfcloud.errors import (
    BuildError,
    ConfigurationError,
    JobFailedError,
    OutcomeUnknownError,
    SubmitError,
    TfcloudError,
    ValidationError,
)
from tfcloud.machines import COMMON_MACHINE_CONFIGS, AcceleratorType, MachineConfig
from tfcloud.reporting import report
from tfcloud.sdk import Job, attach, build, list_jobs, submit, tune
from tfcloud.spec import DockerConfig
from tfcloud.states import JobState
from tfcloud.targets import LocalTarget, VertexTarget

__all__ = [
    "COMMON_MACHINE_CONFIGS",
    "AcceleratorType",
    "BuildError",
    "ConfigurationError",
    "DockerConfig",
    "Job",
    "JobFailedError",
    "JobHandle",
    "JobInfo",
    "JobState",
    "LocalTarget",
    "LogLine",
    "MachineConfig",
    "OutcomeUnknownError",
    "ReplicaInfo",
    "SubmitError",
    "TfcloudError",
    "ValidationError",
    "VertexTarget",
    "__version__",
    "attach",
    "build",
    "list_jobs",
    "remote",
    "report",
    "run",
    "submit",
    "tune",
]

