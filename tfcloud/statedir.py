"""The state directory: where tfcloud keeps what it knows on this machine (local jobs, studies, stage
timelines, build locks, Vertex AI rerun records). ``state_dir`` setting / ``TFCLOUD_HOME``; default
``~/.local/state/tfcloud``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcloud.settings import Settings

__all__ = ["state_dir"]


def state_dir(settings: Settings | None = None) -> Path:
    """The state directory the settings name (``state_dir``), else ``$TFCLOUD_HOME``, else the default."""
    if settings is not None and settings.state_dir:
        return Path(settings.state_dir).expanduser()
    return Path(os.environ.get("TFCLOUD_HOME") or "~/.local/state/tfcloud").expanduser()
