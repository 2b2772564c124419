"""tfcloud's offline Google Cloud: Vertex AI CustomJobs and HyperparameterTuningJobs, Cloud Build, Cloud Logging
and Cloud Storage on 127.0.0.1, served to the real Google client libraries over their real wire protocol.

``import tfcloud.emulator`` is light: grpc, google-cloud and docker are imported when an :class:`Emulator`
starts. See ``docs/emulator.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfcloud.emulator._common import JobTimings
    from tfcloud.emulator.faults import Faults
    from tfcloud.emulator.server import Emulator, EmulatorSettings

__all__ = ["Emulator", "EmulatorSettings", "Faults", "JobTimings"]

_LAZY = {
    "Emulator": "tfcloud.emulator.server",
    "EmulatorSettings": "tfcloud.emulator.server",
    "Faults": "tfcloud.emulator.faults",
    "JobTimings": "tfcloud.emulator._common",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tfcloud.emulator' has no attribute {name!r}")
