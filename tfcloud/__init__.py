"""tfcloud: run a TensorFlow script or notebook as a distributed job, locally or on Vertex AI, in one call.

Importing tfcloud is cheap: the names below are loaded on first use (PEP 562), and TensorFlow, Google Cloud
and Docker are imported only by the functions that need them.
"""

import importlib

from tfcloud._public import PUBLIC as _LAZY  # each public name -> the module that defines it
from tfcloud._version import __version__

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs more than the rest of this module
if TYPE_CHECKING:
    from typing import Any

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
    from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS, AcceleratorType, MachineConfig
    from tfcloud.google.vertex import VertexTarget
    from tfcloud.job.spec import DockerConfig
    from tfcloud.job.states import JobState
    from tfcloud.runtime.datamount import data
    from tfcloud.runtime.reporting import report
    from tfcloud.sdk import Job, attach, build, list_jobs, submit, tune
    from tfcloud.targets import Option, Target
    from tfcloud.targets.local import LocalTarget
    from tfcloud.targets.ray import RayTarget
    from tfcloud.ui import ui



def __getattr__(name: str) -> "Any":
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tfcloud' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


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
    "Option",
    "OutcomeUnknownError",
    "RayTarget",
    "ReplicaInfo",
    "SubmitError",
    "Target",
    "TfcloudError",
    "ValidationError",
    "VertexTarget",
    "__version__",
    "attach",
    "build",
    "data",
    "list_jobs",
    "remote",
    "report",
    "run",
    "submit",
    "tune",
    "ui",
]
