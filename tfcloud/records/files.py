"""Private state files: JSON written atomically, readable by its owner only (a study's record, a job's stage
timeline, a Vertex study's rerun command). The local supervisor keeps a copy of its own
(``backends/_supervisor.write_json_atomic``): it runs by path, without importing tfcloud."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["write_private_json"]


def write_private_json(path: Path, data: Mapping[str, Any]) -> None:
    """Replace ``path`` with ``data`` as JSON, atomically: through a temporary file of this process's own (0600),
    removed if the write fails. The parent directory is made (0700) when missing."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
