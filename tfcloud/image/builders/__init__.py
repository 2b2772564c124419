"""Image builders: one small interface for the local Docker engine and Cloud Build.

A builder answers two questions: does this (content-addressed) tag exist already, and: build this context
under this tag. :func:`tfcloud.image.containerize.containerize` asks the first before the second, so resubmitting
unchanged code costs one look-up. Builders are plain objects made by the caller (no registry, no globals):

- :class:`tfcloud.image.builders.docker.DockerBuilder`: the Docker engine at ``DOCKER_HOST`` (docker SDK).
- :class:`tfcloud.google.staging.cloudbuild.CloudBuildBuilder`: Cloud Build, with the context staged in GCS.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tfcloud.image.context import BuildContext
from tfcloud.image.dockerfile import DOCKERFILE_PATH
from tfcloud.job.artifacts import ImageRef

__all__ = ["DOCKERFILE_PATH", "LOG_TAIL_LINES", "Builder", "log_tail"]

#: How many log lines a :class:`~tfcloud.errors.BuildError` shows.
LOG_TAIL_LINES = 25


@runtime_checkable
class Builder(Protocol):
    """Builds a context into an image. ``tag`` is a full reference: ``<repository>/<name>:<tag>``."""

    def exists(self, tag: str, *, pushed: bool = True) -> bool:
        """Whether ``tag`` exists: in its registry when ``pushed``, else wherever the builder keeps images."""
        ...

    def build(self, context: BuildContext, tag: str, *, push: bool = True,
              cache_from: str | None = None) -> ImageRef:
        """Build ``context`` (its Dockerfile at :data:`DOCKERFILE_PATH`) as ``tag``; push it when ``push``.

        Raises :class:`~tfcloud.errors.BuildError` naming the failing step with its last log lines."""
        ...

    def close(self) -> None:
        """Release the builder's clients."""
        ...


def log_tail(lines: list[str], n: int = LOG_TAIL_LINES) -> str:
    """The last ``n`` non-empty lines, joined."""
    kept = [line.rstrip() for line in lines if line.strip()]
    return "\n".join(kept[-n:])
