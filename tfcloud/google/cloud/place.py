"""Where a target reaches Google Cloud (:class:`GoogleCloud`: project, region, emulator, staging bucket): a value
below the spec and the targets, which the stages that call Google for a target receive
(``Target.google()``; :mod:`tfcloud.targets._base` re-exports it)."""

from __future__ import annotations

__all__ = ["GoogleCloud"]


class GoogleCloud:
    """Where a target reaches Google Cloud: its ``project`` (None: none was found), ``region``, the tfcloud
    emulator's ``emulator_host`` (None: Google itself) and ``staging_bucket`` (None: none set)."""

    __slots__ = ("emulator_host", "project", "region", "staging_bucket")

    def __init__(self, *, project: str | None, region: str, emulator_host: str | None = None,
                 staging_bucket: str | None = None) -> None:
        self.project = project
        self.region = region
        self.emulator_host = emulator_host
        self.staging_bucket = staging_bucket

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoogleCloud) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in self.__slots__))

    def __repr__(self) -> str:
        return "GoogleCloud(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    @property
    def bucket(self) -> str | None:
        """The staging bucket's bare name (no ``gs://``)."""
        return self.staging_bucket.removeprefix("gs://").rstrip("/") if self.staging_bucket else None
