"""What the emulator keeps across restarts: Vertex AI jobs (CustomJobs, HyperparameterTuningJobs), persistent
resources and Cloud Builds, one JSON file each, under ``--data-dir``.

Without a directory nothing is kept (:meth:`Store.memory`): a restarted emulator starts empty, and its NOT_FOUND
answers say that jobs of an earlier run are gone. With one, every created job and each change of its state is
written (atomically: a temporary file, then a rename), and a new emulator on the same directory serves them again.
A job that had not ended when the emulator stopped cannot be resumed (its replicas died with the emulator): it
comes back FAILED, ``error.code`` 10 (ABORTED), with a message that says the emulator restarted; a build comes back
INTERNAL_ERROR ("Build or step failed due to an internal cause") saying the same; a persistent resource that was
changing state comes back ERROR (a RUNNING one stays RUNNING).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "RESTARTED_BUILD",
    "RESTARTED_MESSAGE",
    "RESTARTED_RESOURCE",
    "KeptJob",
    "Store",
    "Stores",
    "fail_build",
    "fail_resource",
    "fail_vertex_job",
    "open_stores",
]

logger = logging.getLogger("tfcloud.emulator")

RESTARTED_MESSAGE = ("The job had not ended when the emulator stopped; the emulator restarted and does not resume "
                     "jobs (their replicas stopped with it).")
RESTARTED_BUILD = ("The build had not ended when the emulator stopped; the emulator restarted and does not resume "
                   "builds.")
RESTARTED_RESOURCE = ("The resource was changing state when the emulator stopped; the emulator restarted and "
                      "does not resume it.")
_ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")
_BUILD_ENDED = ("SUCCESS", "FAILURE", "INTERNAL_ERROR", "TIMEOUT", "CANCELLED", "EXPIRED")


def fail_vertex_job(job: Any) -> bool:
    """End a Vertex AI job that had not ended (FAILED, code 10); False when it had."""
    from google.cloud.aiplatform_v1.types import JobState
    from google.rpc import status_pb2

    if job.state.name in _ENDED:
        return False
    now = dt.datetime.now(dt.timezone.utc)
    job.state = JobState.JOB_STATE_FAILED
    job.error = status_pb2.Status(code=10, message=RESTARTED_MESSAGE)
    job.update_time = now
    job.end_time = now
    return True


def fail_resource(resource: Any) -> bool:
    """A persistent resource that was changing (PROVISIONING, STOPPING, ...) is ERROR now; a RUNNING one stays (its
    VMs are notional); False when nothing changed."""
    from google.rpc import status_pb2

    if resource.state.name in ("RUNNING", "ERROR"):
        return False
    resource.state = type(resource).State.ERROR
    resource.error = status_pb2.Status(code=10, message=RESTARTED_RESOURCE)
    resource.update_time = dt.datetime.now(dt.timezone.utc)
    return True


def fail_build(build: Any) -> bool:
    """End a Cloud Build that had not ended (INTERNAL_ERROR); False when it had."""
    if build.status.name in _BUILD_ENDED:
        return False
    build.status = type(build).Status.INTERNAL_ERROR
    build.status_detail = RESTARTED_BUILD
    build.finish_time = dt.datetime.now(dt.timezone.utc)
    return True


class KeptJob(Protocol):
    """A service's record of one job (a dataclass): ``job``, the message, and plain fields (``str``, ``bool``,
    ``int``) that the service needs to serve it again; other fields (events, threads, replicas) are not kept."""

    job: Any


class Store:
    """Resources of one kind (``message_type``: ``aiplatform_v1.CustomJob``, ``HyperparameterTuningJob``,
    ``cloudbuild_v1.Build``) on disk under ``directory`` (None: kept nowhere). ``restart`` ends a resource that had
    not ended (:func:`fail_vertex_job`, :func:`fail_build`); ``noun`` names them in messages."""

    def __init__(self, directory: Path | None, message_type: Any = None, *,
                 restart: Callable[[Any], bool] = fail_vertex_job, noun: str = "jobs") -> None:
        self.directory = directory
        self._type = message_type
        self._restart = restart
        self._noun = noun
        self._started = dt.datetime.now(dt.timezone.utc)
        self._lock = threading.Lock()
        self.kept = 0  # how many jobs the last restore() served again
        self.failed_on_restart = 0  # of which had not ended
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    @classmethod
    def memory(cls, noun: str = "jobs") -> Store:
        return cls(None, None, noun=noun)

    def _path(self, name: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{re.sub(r'[^A-Za-z0-9._-]', '_', name)}.json"

    def save(self, kept: KeptJob) -> None:
        """Keep a job as it is now: its message, and its record's plain fields."""
        if self.directory is not None:
            plain = {item.name: getattr(kept, item.name) for item in dataclasses.fields(kept)  # type: ignore[arg-type]
                     if item.name != "job" and isinstance(getattr(kept, item.name), str | bool | int)}
            self.save_message(kept.job, plain)

    def save_message(self, job: Any, extra: Mapping[str, Any] | None = None) -> None:
        """Keep the message ``job`` (named by its ``name``) with ``extra``, JSON values the service needs back."""
        if self.directory is None:
            return
        record = {"job": type(job).to_json(job), "extra": dict(extra or {})}
        path = self._path(job.name)
        temporary = path.with_suffix(".tmp")
        with self._lock:
            temporary.write_text(json.dumps(record), encoding="utf-8")
            os.replace(temporary, path)

    def delete(self, name: str) -> None:
        if self.directory is not None:
            with self._lock:
                self._path(name).unlink(missing_ok=True)

    def restore(self) -> list[tuple[Any, dict[str, Any]]]:
        """Every kept resource, with its record's plain fields; one that had not ended is ended now (and written so)."""
        if self.directory is None:
            return []
        restored = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                job = self._type.from_json(record["job"])
            except (OSError, ValueError, KeyError) as exc:
                logger.warning("cannot read the kept job %s: %s", path, exc)
                continue
            if self._restart(job):
                self.failed_on_restart += 1
                self.save_message(job, record.get("extra", {}))
            restored.append((job, dict(record.get("extra", {}))))
        self.kept += len(restored)
        return restored

    def not_found(self, kind: str, name: str) -> str:
        """The NOT_FOUND message for ``name``: without a directory it says that earlier jobs are gone."""
        message = f'The {kind} "{name}" does not exist.'
        if self.directory is None:
            message += (f" This emulator started empty at {self._started:%Y-%m-%dT%H:%M:%SZ} and keeps no "
                        f"{self._noun} across restarts: earlier {self._noun} are gone with the restart (start it "
                        "with --data-dir DIR to keep them).")
        return message


@dataclass(frozen=True, kw_only=True)
class Stores:
    """One :class:`Store` per kind the emulator keeps, under ``directory`` (None: in memory only)."""

    directory: Path | None
    custom_jobs: Store
    tuning_jobs: Store
    persistent_resources: Store
    builds: Store

    @property
    def jobs_kept(self) -> int:
        """Vertex AI jobs served again from an earlier run (a tuning job's trial jobs included)."""
        return self.custom_jobs.kept + self.tuning_jobs.kept

    @property
    def jobs_failed_on_restart(self) -> int:
        """Of which had not ended, and are FAILED now."""
        return self.custom_jobs.failed_on_restart + self.tuning_jobs.failed_on_restart


def open_stores(directory: Path | None) -> Stores:
    """The stores under ``directory`` (``custom-jobs/``, ``tuning-jobs/``, ``persistent-resources/``, ``builds/``)."""
    from google.cloud.aiplatform_v1.types import CustomJob, HyperparameterTuningJob, PersistentResource
    from google.cloud.devtools.cloudbuild_v1.types import Build

    def under(name: str) -> Path | None:
        return directory / name if directory is not None else None

    return Stores(
        directory=directory,
        custom_jobs=Store(under("custom-jobs"), CustomJob),
        tuning_jobs=Store(under("tuning-jobs"), HyperparameterTuningJob),
        persistent_resources=Store(under("persistent-resources"), PersistentResource, restart=fail_resource,
                                   noun="persistent resources"),
        builds=Store(under("builds"), Build, restart=fail_build, noun="builds"),
    )
