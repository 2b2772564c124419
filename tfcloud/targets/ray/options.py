"""The Ray target's options, checked: what :class:`~tfcloud.targets.RayTarget` holds beside the address.

(Transitional: these move into the target's option specs when the plug-in registry lands.)
"""

from __future__ import annotations

from pathlib import PurePosixPath

from tfcloud.errors import ValidationError
from tfcloud.targets._values import RayTarget

__all__ = ["output_dir", "ray_target"]

_EXPECTED = ("a path every node of the Ray cluster reaches (an absolute path on a shared filesystem, such as "
             "/mnt/shared/out) or a Cloud Storage URI such as gs://my-bucket/outputs")


def output_dir(value: object) -> str | None:
    """``--output-dir`` for Ray: a ``gs://`` URI (its bucket is checked with every target's) or an absolute
    POSIX path, kept as given (it names a place on the nodes, not on this machine: nothing is resolved here)."""
    if value is None:
        return None
    text = str(value) if isinstance(value, str | PurePosixPath) else None
    if text is not None and text.startswith("gs://") and len(text) > len("gs://"):
        return text
    if not text or "\0" in text or not text.startswith("/") or text.startswith("//"):
        raise ValidationError("base_output_dir", _EXPECTED, value,
                              hint="A relative path means nothing to the cluster's nodes; give the shared "
                                   "directory's absolute path.")
    return str(PurePosixPath(text))


def ray_target(*, max_restarts: int | None, output_dir: str | None) -> RayTarget:
    """The spec's Ray target from checked options (the address comes from the settings at submit)."""
    return RayTarget(max_restarts=max_restarts or 0, output_dir=output_dir)
