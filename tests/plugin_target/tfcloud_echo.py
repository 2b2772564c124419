"""The ``echo`` target: runs the job's chief on this machine, at once, and keeps its output (a plug-in example).

It keeps each job as one JSON file in the state dir's ``targets/echo/`` (:func:`tfcloud.records.statedir.target_dir`),
so that every command finds it again: ``tfcloud status/logs/cancel/artifacts echo-...``, ``list --target echo``, the
dashboard. Its tuner (:class:`EchoTuner`) runs a study's trials as echo jobs through the ``submit_trial`` tfcloud
passes it (the Tuner protocol, :class:`tfcloud.targets.Tuner`): the plug-in never runs tfcloud's stages itself."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from tfcloud.backends.base import JobInfo, LogLine, ReplicaInfo
from tfcloud.errors import JobNotFoundError, UnsupportedOptionError
from tfcloud.job.states import JobState
from tfcloud.job.study import ParamKind, StudyInfo, StudySpec, TrialInfo, trial_args
from tfcloud.records.statedir import target_dir
from tfcloud.targets import Option, SubmitTrial, Target


@dataclass(frozen=True, kw_only=True)
class EchoTarget(Target):
    """Where the job runs, and the options it takes: each becomes a keyword of run() and `-o NAME=VALUE`.

    Its two halves: the *place* (``place=True``: how it is reached, here which shelf of the state dir keeps its
    jobs; every verb takes it, ``status``/``logs``/``list``... too) and the *job setup* (the rest: what one job
    does there; only ``submit``, ``plan``, ``build`` and ``tune`` take it, the other verbs refuse it)."""

    name: ClassVar[str] = "echo"
    title: ClassVar[str] = "Echo"
    options: ClassVar[tuple[Option, ...]] = (
        Option(name="shelf", place=True, example="spare",
               help="The shelf of the state dir its jobs are kept on (default: the echo target's own)."),
        Option(name="greeting", help="The first line the job's log shows.", example="hello"),
        Option(name="repeat", type=int, help="How often the greeting is said.", example=2),
    )
    id_prefix: ClassVar[str | None] = "echo-"
    cancel_on_interrupt: ClassVar[bool] = True
    queues: ClassVar[bool] = False
    backend: ClassVar[str] = "tfcloud_echo:EchoBackend"
    tuner: ClassVar[str | None] = "tfcloud_echo:EchoTuner"

    shelf: str | None = None  # its place
    greeting: str = "hello"  # its job setup
    repeat: int = 1

    def check_job(self, spec: Any, *, intent: str, settings: Any) -> None:
        """It runs the chief alone, in this Python: a job option it would not act on is refused."""
        for pool in spec.pools:
            if pool.role.value != "chief":
                option = {"worker": "worker_count", "ps": "ps_count", "evaluator": "evaluator_count"}[pool.role.value]
                raise UnsupportedOptionError(option, pool.replica_count, target=self.name, takers=[])
        if spec.requirements_txt is not None:
            raise UnsupportedOptionError("requirements_txt", str(spec.requirements_txt), target=self.name, takers=[])


class EchoBackend:
    """Runs the chief's launcher to its end inside ``submit``; its record (lines, outcome, labels) stays."""

    def __init__(self, *, target: EchoTarget, settings: Any = None) -> None:
        self.target = target
        self.home = target_dir(settings, "echo") / (target.shelf or "")

    def submit(self, job: Any) -> EchoJob:
        spec = job.spec
        job_id = f"echo-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        output = self.home / job_id / "output"
        (output / "model").mkdir(parents=True)
        started = time.time()
        env = {**os.environ, **spec.env, "TFCLOUD_REMOTE": "1", "TFCLOUD_JOB_ID": job_id,
               "AIP_MODEL_DIR": str(output / "model")}
        done = subprocess.run([sys.executable, str(job.launcher), *spec.entry_point_args], cwd=job.workdir, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        record = {"job_id": job_id, "lines": [self.target.greeting] * self.target.repeat + done.stdout.splitlines(),
                  "code": done.returncode, "started": started, "ended": time.time(), "output_dir": str(output),
                  "labels": dict(spec.job_labels), "display_name": spec.display_name}
        (self.home / job_id / "job.json").write_text(json.dumps(record), encoding="utf-8")
        return EchoJob(record)

    def attach(self, job_id: str) -> EchoJob:
        path = self.home / job_id / "job.json"
        if not path.is_file():
            raise JobNotFoundError(f"No echo job `{job_id}` in {self.home}.")
        return EchoJob(json.loads(path.read_text(encoding="utf-8")))

    def list(self, *, state: JobState | None = None, limit: int | None = None) -> list[JobInfo]:
        found = [self.attach(p.parent.name).info() for p in self.home.glob("*/job.json")]
        found = sorted((i for i in found if state is None or i.state is state), key=lambda i: -(i.created or 0))
        return found[:limit]

    def close(self) -> None:
        pass


class EchoJob:
    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record
        self.job_id: str = record["job_id"]

    def info(self) -> JobInfo:
        code = self.record["code"]
        state = JobState.SUCCEEDED if code == 0 else JobState.FAILED
        return JobInfo(job_id=self.job_id, target="echo", state=state, exit_code=code,
                       display_name=self.record["display_name"], labels=self.record["labels"],
                       replicas=(ReplicaInfo(name="chief-0", state=state, exit_code=code),),
                       failed_replica=None if code == 0 else "chief-0", created=self.record["started"],
                       started=self.record["started"], ended=self.record["ended"],
                       output_dir=self.record["output_dir"])

    def logs(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
             since: float | None = None) -> Iterator[LogLine]:
        lines = self.record["lines"]
        shown = lines if tail is None else lines[-tail:]
        yield from (LogLine(replica="chief-0", text=text) for text in shown)

    def wait(self, timeout: float | None = None) -> JobInfo:
        return self.info()

    def cancel(self) -> None:
        """Nothing to stop: the job ended inside ``submit``."""


class EchoTuner:
    """Studies whose trials are echo jobs, one after another: trial n takes each parameter's n-th value (a range's
    low end), and ``submit_trial`` (tfcloud's: every stage of a submission) runs it. Its studies are not kept."""

    def __init__(self, settings: Any, *, target: Any = None) -> None:
        self.settings = settings

    def start(self, study: StudySpec, spec: Any, *, job: Any = None, rerun_flags: Sequence[str] = (),
              submit_trial: SubmitTrial) -> tuple[EchoStudy, tuple[str, ...]]:
        trials = []
        for n in range(study.max_trials):
            params = {p.name: p.values[n % len(p.values)] if p.kind in (ParamKind.CATEGORICAL, ParamKind.DISCRETE)
                      else (int(p.low or 0) if p.kind is ParamKind.INTEGER else float(p.low or 0))
                      for p in study.params}
            trial = replace(spec, entry_point_args=(*spec.entry_point_args, *trial_args(study, params)))
            info = submit_trial(trial).info()
            trials.append(TrialInfo(trial_id=str(n + 1), params=params, state=info.state, job_id=info.job_id,
                                    started=info.started, ended=info.ended))
        state = JobState.SUCCEEDED if all(t.state is JobState.SUCCEEDED for t in trials) else JobState.FAILED
        return EchoStudy(StudyInfo(study_id=f"echo-study-{secrets.token_hex(2)}", target="echo", state=state,
                                   study=study, trials=tuple(trials))), tuple(rerun_flags)

    def attach(self, study_id: str) -> tuple[EchoStudy, str, tuple[str, ...], tuple[str, ...]]:
        raise JobNotFoundError(f"No echo study `{study_id}`: echo studies are not kept.")

    def list(self, *, limit: int | None = 50) -> list[StudyInfo]:
        return []

    def close(self) -> None:
        pass


class EchoStudy:
    def __init__(self, info: StudyInfo) -> None:
        self._info = info
        self.study_id = info.study_id

    def info(self) -> StudyInfo:
        return self._info

    def wait(self, timeout: float | None = None) -> StudyInfo:
        return self._info

    def cancel(self) -> None:
        """Nothing to stop: its trials ended inside ``start``."""
