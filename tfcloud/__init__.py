"""tfcloud: run a TensorFlow script or notebook as a distributed job, locally or on Vertex AI, in one call.

Importing tfcloud is cheap: TensorFlow, Google Cloud and Docker are imported only by the functions that need
them.
"""

from __future__ import annotations

from tfcloud._version import __version__
from tfcloud.api import remote, run
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
from tfcloud.spec import DockerConfig

__all__ = [
    "COMMON_MACHINE_CONFIGS",
    "AcceleratorType",
    "BuildError",
    "ConfigurationError",
    "DockerConfig",
    "JobFailedError",
    "MachineConfig",
    "OutcomeUnknownError",
    "SubmitError",
    "TfcloudError",
    "ValidationError",
    "__version__",
    "remote",
    "run",
]


