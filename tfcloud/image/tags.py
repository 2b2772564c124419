"""Content-addressed image tags and image names.

The tag is a digest of everything that determines the image: the Dockerfile, the context's files (paths,
modes, contents), the base image and the build arguments. The same inputs give the same tag, so a builder can
ask "does this tag exist?" and skip the build and the upload when it does (:func:`tfcloud.image.containerize`).

Names: ``<repository>/<name>:<digest[:16]>``; the repository is ``localhost:5000/tfcloud`` against a local
registry, ``{region}-docker.pkg.dev/{project}/tfcloud`` on Google Cloud (:func:`artifact_registry`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from tfcloud.errors import ValidationError
from tfcloud.image.context import BuildContext

__all__ = [
    "TAG_LENGTH",
    "artifact_registry",
    "content_digest",
    "image_name",
    "image_uri",
    "split_image",
]

#: Hex characters of the digest kept in the tag.
TAG_LENGTH = 16

_NAME_OK = re.compile(r"[^a-z0-9._-]+")


def content_digest(
    context: BuildContext,
    *,
    dockerfile: str,
    base_image: str,
    build_args: Mapping[str, str] | None = None,
) -> str:
    """sha256 (hex) of the Dockerfile, the context's files, the base image and the build arguments."""
    h = hashlib.sha256(b"tfcloud-image-v1\n")
    h.update(f"dockerfile\0{hashlib.sha256(dockerfile.encode()).hexdigest()}\n".encode())
    h.update(f"context\0{context.digest()}\n".encode())
    h.update(f"base\0{base_image}\n".encode())
    for key in sorted(build_args or {}):
        h.update(f"arg\0{key}\0{(build_args or {})[key]}\n".encode())
    return h.hexdigest()


def image_name(entry_point_stem: str) -> str:
    """A valid repository path component from an entry point's name (``My Train.py`` -> ``my-train``)."""
    name = _NAME_OK.sub("-", entry_point_stem.lower()).strip("-._")
    return name or "job"


def image_uri(repository: str, name: str, digest: str) -> str:
    """``<repository>/<name>:<digest[:16]>``."""
    repository = repository.rstrip("/")
    if not repository:
        raise ValidationError("repository", "an image repository like localhost:5000/tfcloud", repository)
    return f"{repository}/{name}:{digest[:TAG_LENGTH]}"


def artifact_registry(*, project: str, region: str, repository: str = "tfcloud") -> str:
    """The Artifact Registry repository tfcloud pushes to on Google Cloud."""
    return f"{region}-docker.pkg.dev/{project}/{repository}"


def split_image(uri: str) -> tuple[str, str | None]:
    """``host:5000/a/b:tag`` -> (``host:5000/a/b``, ``tag``); no tag -> (uri, None). Digests stay in the name."""
    if "@" in uri:
        return uri, None
    last = uri.rsplit("/", 1)[-1]
    if ":" in last:
        repo, tag = uri.rsplit(":", 1)
        return repo, tag
    return uri, None
