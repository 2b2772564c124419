"""The ``echo`` target: runs the job's chief on this machine, at once, and keeps its output (a plug-in example)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from tfcloud.backends.base import JobInfo, LogLine, ReplicaInfo
from tfcloud.errors import JobNotFoundError
from tfcloud.states import JobState
from tfcloud.targets import Option, Target


@dataclass(frozen=True, kw_only=True)
class EchoTarget(Target):
    """Where the job runs, and the options it takes: each becomes a keyword of run() and `-o NAME=VALUE`."""

    name: ClassVar[str] = "echo"
    title: ClassVar[str] = "Echo"
    options: ClassVar[tuple[Option, ...]] = (
        Option(name="greeting", help="The first line the job's log shows.", example="hello"),
        Option(name="repeat", type=int, help="How often the greeting is said.", example=2),
    )
    id_prefix: ClassVar[str | None] = "echo-"
    cancel_on_interrupt: ClassVar[bool] = True
    queues: ClassVar[bool] = False
    backend: ClassVar[str] = "tfcloud_echo:EchoBackend"

    greeting: str = "hello"
    repeat: int = 1


class EchoBackend:
    """Runs the chief's launcher to its end inside ``submit`` (the job's files exist only until it returns)."""

    _ids = itertools.count()

    def __init__(self, *, target: EchoTarget, settings: Any = None) -> None:
        self.target = target

    def submit(self, job: Any) -> EchoJob:
        job_id = f"echo-{os.getpid()}-{next(self._ids)}"
        started = time.time()
        done = subprocess.run([sys.executable, str(job.launcher), *job.spec.entry_point_args], cwd=job.workdir,
                              env={**os.environ, "TFCLOUD_REMOTE": "1", "TFCLOUD_JOB_ID": job_id},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        lines = [self.target.greeting] * self.target.repeat + done.stdout.splitlines()
        return EchoJob(job_id, lines, done.returncode, started)

    def attach(self, job_id: str) -> EchoJob:
        raise JobNotFoundError(f"The echo target keeps no jobs: {job_id} is gone.")

    def list(self, *, state: JobState | None = None, limit: int | None = None) -> list[JobInfo]:
        return []

    def close(self) -> None:
        pass


class EchoJob:
    def __init__(self, job_id: str, lines: list[str], code: int, started: float) -> None:
        self.job_id, self.lines, self.code, self.started = job_id, lines, code, started

    def info(self) -> JobInfo:
        state = JobState.SUCCEEDED if self.code == 0 else JobState.FAILED
        return JobInfo(job_id=self.job_id, target="echo", state=state, exit_code=self.code,
                       replicas=(ReplicaInfo(name="chief-0", state=state, exit_code=self.code),),
                       failed_replica=None if self.code == 0 else "chief-0", created=self.started,
                       started=self.started, ended=time.time())

    def logs(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
             since: float | None = None) -> Iterator[LogLine]:
        shown = self.lines if tail is None else self.lines[-tail:]
        yield from (LogLine(replica="chief-0", text=text) for text in shown)

    def wait(self, timeout: float | None = None) -> JobInfo:
        return self.info()

    def cancel(self) -> None:
        pass
