"""What the emulator keeps across restarts: Vertex AI jobs (CustomJobs, HyperparameterTuningJobs), one JSON file
each, under ``--data-dir``.

Without a directory nothing is kept (:meth:`JobStore.memory`): a restarted emulator starts empty, and its NOT_FOUND
answers say that jobs of an earlier run are gone. With one, every created job and each change of its state is
written (atomically: a temporary file, then a rename), and a new emulator on the same directory serves them again.
A job that had not ended when the emulator stopped cannot be resumed (its replicas died with the emulator): it
comes back FAILED, ``error.code`` 10 (ABORTED), with a message that says the emulator restarted.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

__all__ = ["RESTARTED_MESSAGE", "JobStore", "KeptJob"]

logger = logging.getLogger("tfcloud.emulator")

RESTARTED_MESSAGE = ("The job had not ended when the emulator stopped; the emulator restarted and does not resume "
                     "jobs (their replicas stopped with it).")
_ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")


class KeptJob(Protocol):
    """A service's record of one job (a dataclass): ``job``, the message, and plain fields (``str``, ``bool``,
    ``int``) that the service needs to serve it again; other fields (events, threads, replicas) are not kept."""

    job: Any


class JobStore:
    """Jobs of one kind (``message_type``: ``aiplatform_v1.CustomJob``, ``HyperparameterTuningJob``) on disk under
    ``directory`` (None: kept nowhere)."""

    def __init__(self, directory: Path | None, message_type: Any = None) -> None:
        self.directory = directory
        self._type = message_type
        self._started = dt.datetime.now(dt.timezone.utc)
        self._lock = threading.Lock()
        self.kept = 0  # how many jobs the last restore() served again
        self.failed_on_restart = 0  # of which had not ended
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    @classmethod
    def memory(cls) -> JobStore:
        return cls(None, None)

    def _path(self, name: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{name.rsplit('/', 1)[-1]}.json"

    def save(self, kept: KeptJob) -> None:
        """Keep a job as it is now: its message, and its record's plain fields."""
        if self.directory is not None:
            plain = {item.name: getattr(kept, item.name) for item in dataclasses.fields(kept)  # type: ignore[arg-type]
                     if item.name != "job" and isinstance(getattr(kept, item.name), str | bool | int)}
            self._write(kept.job, plain)

    def _write(self, job: Any, extra: Mapping[str, Any]) -> None:
        record = {"job": type(job).to_json(job), "extra": dict(extra)}
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
        """Every kept job, with its record's plain fields; a job that had not ended is FAILED now (and written so)."""
        from google.cloud.aiplatform_v1.types import JobState
        from google.rpc import status_pb2

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
            if job.state.name not in _ENDED:
                now = dt.datetime.now(dt.timezone.utc)
                job.state = JobState.JOB_STATE_FAILED
                job.error = status_pb2.Status(code=10, message=RESTARTED_MESSAGE)
                job.update_time = now
                job.end_time = now
                self.failed_on_restart += 1
                self._write(job, record.get("extra", {}))
            restored.append((job, dict(record.get("extra", {}))))
        self.kept += len(restored)
        return restored

    def not_found(self, kind: str, name: str) -> str:
        """The NOT_FOUND message for ``name``: without a directory it says that earlier jobs are gone."""
        message = f'The {kind} "{name}" does not exist.'
        if self.directory is None:
            message += (f" This emulator started empty at {self._started:%Y-%m-%dT%H:%M:%SZ} and keeps no jobs "
                        "across restarts: earlier jobs are gone with the restart (start it with --data-dir DIR "
                        "to keep them).")
        return message
