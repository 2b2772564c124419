"""Stage artifacts: the values one stage hands to the next.

``spec → entry point → launcher → (build context → image, or package) → backend``: :class:`PreparedJob` is what
the stages before the backend produced (the launcher, the script it runs, the image or the package);
:class:`ImageRef` is what a builder returns, :class:`PackageRef` what the package stage uploaded. All are plain
values; nothing here imports a backend or a builder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tfcloud.job.spec import JobSpec

__all__ = ["ImageRef", "PackageRef", "PreparedJob", "launcher_script_path", "script_beside_launcher"]


@dataclass(frozen=True, kw_only=True)
class ImageRef:
    """A built (or reused) container image."""

    uri: str  # repository:tag, e.g. localhost:5000/tfcloud/train:3f2a9c...
    digest: str | None = None
    built: bool = True  # False when an existing image was reused


@dataclass(frozen=True, kw_only=True)
class PackageRef:
    """A job's files as a Python source distribution in Cloud Storage (``--no-build``), named by the digest of
    its content: ``uri`` (``gs://BUCKET/tfcloud/packages/tfcloud_job-0.0.0+DIGEST.tar.gz``), the module each
    replica runs with ``python -m``, the package's size, and how many bytes this submission uploaded (0: the
    same package was there already)."""

    uri: str
    module: str
    digest: str
    size: int
    uploaded: int = 0


@dataclass(frozen=True, kw_only=True)
class PreparedJob:
    """What the stages before the backend produced for one job.

    ``workdir`` is the directory replicas start in (the entry point's directory for local runs);
    ``launcher`` is the rendered launcher file; ``script`` is what the launcher runs (the user's script, or
    the script converted from a notebook); ``requirements`` are extra requirements found along the way
    (e.g. a notebook's ``%pip install`` lines). ``image`` is set for container backends, ``package`` for a
    job that runs from a Python package instead (``--no-build``).
    """

    spec: JobSpec
    workdir: Path
    launcher: Path
    script: Path
    requirements: tuple[str, ...] = ()
    image: ImageRef | None = None
    package: PackageRef | None = None


def script_beside_launcher(script: Path, root: Path) -> bool:
    """The layout rule, in one place: the script a launcher runs is copied next to the launcher when it lies
    outside ``root`` (the image's build context; for a local run, the entry point's directory), as a script
    converted from a notebook does; otherwise it stays where it is."""
    return not script.resolve().is_relative_to(root.resolve())


def launcher_script_path(script: Path, root: Path, *, in_image: bool) -> str:
    """How the launcher names its script under :func:`script_beside_launcher`'s rule: by file name when it is
    copied next to the launcher; else by its path relative to ``root`` in an image, by its absolute path in a
    local run."""
    if script_beside_launcher(script, root):
        return script.name
    return script.resolve().relative_to(root.resolve()).as_posix() if in_image else str(script)
