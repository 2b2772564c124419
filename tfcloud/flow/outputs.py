"""A job's outputs: the base directory its ``AIP_*`` variables point under, what is in it, a local copy of it.

- a local job: ``output_dir`` in its ``job.json`` (the job's ``output/`` directory, or ``--output-dir``);
- a Vertex AI job: the CustomJob's ``base_output_directory`` (``gs://...``), read through google-cloud-storage
  (``STORAGE_EMULATOR_HOST`` reaches the emulator's storage);
- a Ray job: its ``--output-dir`` (a path the nodes share, or ``gs://...``), else the directory the driver chose
  on the nodes (readable here when this machine is the cluster's one node).

``tfcloud artifacts JOB`` lists or downloads them; ``tfcloud tensorboard JOB`` runs TensorBoard on ``logs/``.
On Cloud Storage, the listing and every download share one retry deadline (``TFCLOUD_RETRY_DEADLINE``,
:class:`tfcloud.google.cloud.gcloud.StorageDeadline`); storage that keeps failing ends in exit 3 with the command that
looks.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ConfigurationError, OutcomeUnknownError, ValidationError

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.backends.base import JobInfo
    from tfcloud.google.cloud.gcloud import RetryPolicy, StorageDeadline

__all__ = ["Artifact", "check_download_dir", "download_artifacts", "job_output_dir", "list_artifacts",
           "tensorboard_command"]


@dataclass(frozen=True, kw_only=True)
class Artifact:
    """One file a job wrote under its output directory: its path relative to it (``model/model.keras``)."""

    path: str
    size: int


def job_output_dir(info: JobInfo) -> str:
    """The base output directory of a job (its :class:`JobInfo`); ConfigurationError when it has none."""
    base = info.output_dir
    if not base:
        raise ConfigurationError(
            f"Job {info.job_id} has no output directory, so it has no artifacts.",
            hint="Submit with --output-dir gs://BUCKET/PATH (or set a staging bucket) to get AIP_MODEL_DIR, "
                 "AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR.")
    return str(base)


def _bucket(base: str) -> tuple[str, str]:
    bucket, _, prefix = base.removeprefix("gs://").partition("/")
    return bucket, prefix.rstrip("/") + "/" if prefix else ""


def _storage_client() -> Any:
    from tfcloud.errors import require
    from tfcloud.google.cloud import storage

    require("google.cloud.storage", feature="Reading a job's artifacts on Cloud Storage", extra="cloud")
    return storage.client()


def _unknown(message: str, hint: str | None) -> OutcomeUnknownError:
    return OutcomeUnknownError(message, hint=hint)


def _deadline(base: str, policy: RetryPolicy | None) -> StorageDeadline:
    """Every storage call of one listing or download, bounded by the retry deadline together
    (``TFCLOUD_RETRY_DEADLINE``); a listing Cloud Storage never answered is exit 3, with the command that looks."""
    from tfcloud.flow.settings import resolve_settings
    from tfcloud.google.cloud.gcloud import RetryPolicy, StorageDeadline

    if policy is None:  # the retry_deadline setting (TFCLOUD_RETRY_DEADLINE, [tool.tfcloud]), as for every call
        policy = RetryPolicy.from_setting(resolve_settings().retry_deadline)
    return StorageDeadline(policy, uri=base, failed=_unknown, staging=False,
                           hint=f"Look with `gcloud storage ls --recursive {base.rstrip('/')}/`, then try again.")


@contextlib.contextmanager
def _blobs(base: str, policy: RetryPolicy | None) -> Iterator[tuple[list[Any], StorageDeadline]]:
    """The objects under ``base`` (a ``gs://`` URI), listed under one deadline, with the client open (and that
    deadline, for the downloads that follow)."""
    bucket, prefix = _bucket(base)
    client = _storage_client()
    deadline = _deadline(base, policy)
    try:
        blobs = deadline.call(lambda retry, timeout: [
            b for b in client.list_blobs(bucket, prefix=prefix, retry=retry, timeout=timeout)
            if not b.name.endswith("/")], what=f"Listing {base}")
        yield blobs, deadline
    finally:
        client.close()


def list_artifacts(base: str, *, policy: RetryPolicy | None = None) -> list[Artifact]:
    """Every file under ``base`` (a directory or ``gs://`` URI), sorted by path. ``policy``: the retry deadline
    for Cloud Storage (:class:`~tfcloud.google.cloud.gcloud.RetryPolicy`; when None, the ``retry_deadline``
    setting's)."""
    if base.startswith("gs://"):
        _, prefix = _bucket(base)
        with _blobs(base, policy) as (blobs, _):
            return sorted((Artifact(path=b.name[len(prefix):], size=int(b.size or 0)) for b in blobs),
                          key=lambda a: a.path)
    root = Path(base)
    if not root.is_dir():
        return []
    return sorted((Artifact(path=p.relative_to(root).as_posix(), size=p.stat().st_size)
                   for p in root.rglob("*") if p.is_file()), key=lambda a: a.path)


_DOWNLOAD_EXPECTED = "a directory to copy the artifacts into (new, or an existing one you can write to)"


def check_download_dir(value: object, field: str = "--download") -> Path:
    """``tfcloud artifacts --download DIR``, checked before anything is copied: not an existing file, and
    the directory (or the nearest one above it that exists) writable by this user."""
    from tfcloud.config.usertext import refuse_control as check_text

    check_text(field, str(value) if isinstance(value, Path) else value)
    if not isinstance(value, str | Path) or not str(value) or "\0" in str(value):
        raise ValidationError(field, _DOWNLOAD_EXPECTED, value)
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise ValidationError(field, _DOWNLOAD_EXPECTED, str(value), hint=f"{path} is a file: name a directory.")
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        what = "is not a directory" if not existing.is_dir() else "is not writable"
        raise ValidationError(field, _DOWNLOAD_EXPECTED, str(value), hint=f"{existing} {what}.")
    return path


def _target(destination: Path, relative: str) -> Path:
    """Where one artifact goes; a :class:`ValidationError` when a file of the destination is in the way."""
    target = destination / relative
    for above in reversed(target.relative_to(destination).parents[:-1]):
        if (destination / above).exists() and not (destination / above).is_dir():
            raise ValidationError("--download", _DOWNLOAD_EXPECTED, str(destination),
                                  hint=f"{destination / above} is a file where the artifacts have a directory.")
    if target.is_dir():
        raise ValidationError("--download", _DOWNLOAD_EXPECTED, str(destination),
                              hint=f"{target} is a directory where the artifacts have a file.")
    return target


def _same(blob: Any, target: Path) -> bool:
    """Whether ``target`` holds ``blob``'s bytes already: the same size, and the same MD5 where the store gives
    one (a composite object has none: its size decides)."""
    try:
        if target.stat().st_size != blob.size:
            return False
    except OSError:
        return False
    if not blob.md5_hash:
        return True
    digest = hashlib.md5(usedforsecurity=False)
    with open(target, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return bool(base64.b64encode(digest.digest()).decode() == blob.md5_hash)


def download_artifacts(base: str, destination: Path, *, policy: RetryPolicy | None = None,
                       console: Console | None = None, fetched: list[Path] | None = None) -> list[Path]:
    """Copy every file under ``base`` into ``destination`` (same relative paths); return the files there now.
    The destination and every target are checked before the first file is copied (:func:`check_download_dir`).
    ``policy``: the retry deadline for Cloud Storage, shared by the listing and every download.

    From ``gs://`` it resumes: a file already in ``destination`` with the object's size and MD5 is not fetched
    again, and each object is fetched into a ``.part`` file renamed when complete (an interrupted download
    leaves no half file under the real name). ``console``: a progress bar (bytes, rate) while fetching;
    ``fetched``: filled with the files fetched now."""
    destination = check_download_dir(destination)
    written: list[Path] = []
    if base.startswith("gs://"):
        from tfcloud.job.datasets import transfer_progress

        _, prefix = _bucket(base)
        with _blobs(base, policy) as (blobs, deadline):
            pairs = [(blob, _target(destination, blob.name[len(prefix):])) for blob in blobs]
            todo = [(blob, target) for blob, target in pairs if not _same(blob, target)]
            with transfer_progress(console, sum(blob.size or 0 for blob, _ in todo),
                                   f"Downloading from {base}") as advance:
                for blob, target in todo:
                    _make_parent(target)
                    part = target.with_name(f".{target.name}.part")
                    deadline.call(_downloader(blob, part), what=f"Copying gs://{blob.bucket.name}/{blob.name}")
                    os.replace(part, target)
                    advance(blob.size or 0)
                    if fetched is not None:
                        fetched.append(target)
        return [target for _, target in pairs]
    copies = [(Path(base) / a.path, _target(destination, a.path)) for a in list_artifacts(base)]
    for source, target in copies:
        _make_parent(target)
        try:
            shutil.copy2(source, target)
        except OSError as exc:
            raise ConfigurationError(f"Could not copy {source} to {target}: {exc.strerror or exc}.") from None
        written.append(target)
    return written


def _downloader(blob: Any, target: Path) -> Callable[[Any, float], None]:
    def download(retry: Any, timeout: float) -> None:
        blob.download_to_filename(str(target), retry=retry, timeout=timeout)

    return download


def _make_parent(target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"Could not create {target.parent}: {exc.strerror or exc}.") from None


def tensorboard_command(base: str, *, port: int | None = None) -> list[str]:
    """The TensorBoard command line for the job's ``logs/`` (AIP_TENSORBOARD_LOG_DIR); ConfigurationError when
    TensorBoard is not installed."""
    executable = shutil.which("tensorboard")
    if executable is None:
        raise ConfigurationError("TensorBoard is not installed.",
                                 hint='Install it with: python -m pip install tensorboard')
    command = [executable, "--logdir", base.rstrip("/") + "/logs/"]
    if port is not None:
        command += ["--port", str(port)]
    return command
