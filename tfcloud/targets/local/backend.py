"""The local backend: the job's cluster as processes on 127.0.0.1, one per replica, through the same launcher.

``submit`` checks the job's requirements against the current environment, makes the job's directory,
plans the cluster (a free port and a ``TF_CONFIG`` per replica) and starts a detached supervisor
(:mod:`tfcloud.replicas.supervisor`) that runs the replicas, keeps their logs and decides the outcome.
The handle only reads the job's files and signals the supervisor, so ``attach(job_id)`` works the same from
another process (``tfcloud status JOB``, ``tfcloud logs JOB -f``, ``tfcloud cancel JOB``).

A job's directory, ``<state dir>/jobs/<job id>/`` (:mod:`tfcloud.records.statedir`)::

    job.json             the plan: command, working directory, replicas and their TF_CONFIG
    status.json          state, exit code, failing replica, per-replica pid and exit code (written atomically)
    lines.jsonl          every line of every replica in arrival order: {"t", "r", "s", "x"}
    logs/chief-0.log     what each replica printed, stdout and stderr, byte for byte
    logs/worker-0.log
    supervisor.log       the supervisor's own output (empty unless something went wrong)
    stacks/chief-0       each replica's stacks, appended by its launcher on SIGUSR1 (``tfcloud stacks``)
    timeline.json        the stages the submission measured (:mod:`tfcloud.records.timeline`)
    tfcloud_launcher.py  the launcher every replica runs
    output/model/        AIP_MODEL_DIR, as on Vertex AI (``base_output_dir`` instead of ``output/``, when given)
    output/checkpoints/  AIP_CHECKPOINT_DIR: Keras ``fit`` backs up here and resumes after a restart
    output/logs/         AIP_TENSORBOARD_LOG_DIR

With ``max_restarts`` the supervisor restarts the whole cluster when a replica dies (docs/recovery.md). On a
machine with GPUs the replicas split them (``CUDA_VISIBLE_DEVICES``, :func:`split_gpus`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from tfcloud.backends.base import JobInfo, LogBatch, LogLine, ReplicaInfo, select_lines
from tfcloud.errors import ConfigurationError, JobNotFoundError, SubmitError
from tfcloud.job.artifacts import PreparedJob, script_beside_launcher
from tfcloud.job.jobids import make_job_id
from tfcloud.job.states import JobState, to_job_state
from tfcloud.records.statedir import check_state_dir, jobs_dir, source_of, state_dir, state_path
from tfcloud.records.statedir import job_dir as job_path
from tfcloud.replicas import aip_env, loopback_env, plan_cluster, split_gpus, stop_on_chief_end, visible_gpus
from tfcloud.replicas import supervisor as sup
from tfcloud.replicas.stacks import DUMP_WAIT_S, STACKS_DIR, dump, is_stopped

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.targets.local.value import LocalOptions

__all__ = ["LocalBackend", "LocalJob"]

_POLL_S = 0.05
_READ_BYTES = 128 * 1024  # read lines.jsonl 128 KiB at a time
#: After a read of lines.jsonl that brought less than this, wait this long before the next: the lines that come
#: meanwhile are read (and written to the terminal) together, not a few at a time with a look at the status each.
_GATHER_BYTES = 64 * 1024
_GATHER_S = 0.01
#: While following, a read that found nothing new waits :data:`_GATHER_S`, then twice as long after each further
#: empty read, up to this: a quiet job is looked at 10 times a second, and a job that talks again (or whose
#: supervisor had not yet written out its last lines) is read again within ms, not a tenth of a second later.
_IDLE_S = 0.1
_START_TIMEOUT_S = 60.0  # a job whose supervisor never recorded itself in this time never will
#: Marks the end of one read of ``lines.jsonl`` while following (never shown).
_READ_END = LogBatch(replica="", texts=())
_STATES = ("starting", "running", "succeeded", "failed", "stopping", "cancelled")


class LocalBackend:
    """Runs jobs as local processes. Options: ``settings`` (its ``state_dir``) or ``home`` (the state dir,
    which wins; without either: :func:`tfcloud.records.statedir.default_state_dir`), ``stop_grace_s`` (SIGTERM to
    SIGKILL), ``finish_grace_s`` (how long workers may run on after the chief succeeded). The job's :class:`LocalTarget`
    says the rest: ``container`` (each replica runs the job's image on the Docker engine, ``settings.docker_host``
    or ``DOCKER_HOST``, on the host network: :mod:`tfcloud.targets.local.container`), ``max_restarts``,
    ``liveness_timeout`` (how long a replica may go without a heartbeat before the job fails) and
    ``output_dir``."""

    def __init__(self, *, target: LocalOptions | None = None, settings: Settings | None = None,
                 home: str | Path | None = None, stop_grace_s: float = 5.0, finish_grace_s: float = 10.0) -> None:
        if home is not None:
            self.home, self._source = state_path(home, source="given"), "given"
        else:
            self.home, self._source = state_dir(settings), source_of(settings)
        self.stop_grace_s = stop_grace_s
        self.finish_grace_s = finish_grace_s
        self.docker_host = settings.docker_host if settings is not None else None
        from tfcloud.targets.local.value import LocalOptions

        self.target = target if target is not None else LocalOptions()

    @property
    def jobs_dir(self) -> Path:
        return jobs_dir(self.home)

    def submit(self, job: PreparedJob) -> LocalJob:
        """Check requirements, write the job's directory, start the supervisor; return at once."""
        from tfcloud.entry.requirements import ensure_requirements

        if os.name != "posix":
            raise ConfigurationError("Local runs need a POSIX system (Linux or macOS): they use process groups.")
        spec = job.spec
        target = self.target
        if target.container and job.image is None:
            raise SubmitError("A --container job needs its image; the pipeline builds it before submitting.")
        if not target.container:  # an image installs its requirements itself
            ensure_requirements(spec.requirements_txt, job.requirements)
        if not job.launcher.is_file():
            raise SubmitError(f"The launcher {job.launcher} does not exist.")
        if not job.script.is_file():
            raise SubmitError(f"The script {job.script} does not exist.")

        job_id = make_job_id(spec)
        job_dir = job_path(self.home, job_id)
        check_state_dir(self.home, source=self._source)
        try:
            self.jobs_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            job_dir.mkdir(mode=0o700)  # private: the logs hold whatever the script printed
        except OSError as exc:
            raise ConfigurationError(f"Cannot create the job directory {job_dir}: {exc.strerror or exc}.",
                                     hint=f"The state dir is set by {self._source}. Set TFCLOUD_HOME (or "
                                          "state_dir in [tool.tfcloud]) to a directory you can write to.") from exc

        from tfcloud.entry.launcher import LAUNCHER_NAME

        # The layout rule (tfcloud.job.artifacts.script_beside_launcher): the user's script stays where it is, a
        # converted notebook is copied next to the launcher. Both go into the job directory, since the
        # orchestrator's temporary directory is removed when submit returns.
        launcher = job_dir / LAUNCHER_NAME
        extra_env: dict[str, str] = {}
        workdir = job.workdir.resolve()
        text = job.launcher.read_text(encoding="utf-8")
        if script_beside_launcher(job.script, workdir):
            shutil.copyfile(job.script, job_dir / job.script.name)
            # The entry point's directory stays importable for the copied script.
            extra_env["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(workdir), os.environ.get("PYTHONPATH", "")) if p)
        launcher.write_text(text, encoding="utf-8")
        for written in (launcher, job_dir / job.script.name):
            if written.exists():
                written.chmod(0o600)

        replicas = plan_cluster(spec)
        gpu_env = split_gpus(replicas, visible_gpus({**os.environ, **spec.env}))
        output = target.output_dir or str(job_dir / "output")
        aip = aip_env(output)
        if "://" not in output:
            for path in aip.values():
                Path(path).mkdir(parents=True, exist_ok=True)
        plan: dict[str, Any] = {
            "job_id": job_id,
            "display_name": spec.display_name,
            "labels": dict(spec.job_labels),
            "entry_point": str(spec.entry_point),
            "strategy": spec.strategy.value,
            "cwd": str(spec.build_root.resolve()),  # as in the image: its work dir holds the build root
            "argv": [sys.executable, str(launcher), *spec.entry_point_args],
            "replicas": [{"name": r.name, "role": r.role.value, "env": {**r.env(), **gpu_env.get(r.name, {})}}
                         for r in replicas],
            "output_dir": output,
            "max_restarts": target.max_restarts,
            "stop_grace_s": self.stop_grace_s,
            "finish_grace_s": self.finish_grace_s,
            "liveness_timeout_s": target.liveness_timeout,
            "stop_on_chief_end": stop_on_chief_end(spec),
            "submitted_at": time.time(),
        }
        if target.container:
            from tfcloud.targets.local import container as _container

            assert job.image is not None
            plan["argv"] = [sys.executable, "-I", _container.__file__, str(job_dir)]
            plan["args"] = list(spec.entry_point_args)
            plan["container"] = {
                "image": job.image.uri,
                "docker_host": self.docker_host or os.environ.get("DOCKER_HOST"),
                "env": {**aip, **spec.env, **loopback_env(spec.env), "TFCLOUD_JOB_ID": job_id},
                "mounts": [] if "://" in output else [output],
            }
        sup.write_json_atomic(job_dir / sup.JOB_FILE, plan)
        sup.write_json_atomic(job_dir / sup.STATUS_FILE, {
            "job_id": job_id, "state": "starting", "exit_code": None, "failed_replica": None, "message": "",
            "supervisor_pid": None, "started_at": None, "ended_at": None,
            "replicas": {r.name: {"role": r.role.value, "pid": None, "state": "starting", "exit_code": None}
                         for r in replicas},
        })
        env = {
            **os.environ,
            **aip,
            **spec.env,
            **extra_env,
            **loopback_env({**os.environ, **spec.env}),
            "PYTHONUNBUFFERED": "1",
            "TFCLOUD_JOB_ID": job_id,
        }
        try:
            with sup.open_private(job_dir / "supervisor.log", "wb") as log:
                process = subprocess.Popen(
                    [sys.executable, "-I", sup.__file__, str(job_dir)],
                    cwd=str(job_dir), env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True, close_fds=True,
                )
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the environment
            sup.write_json_atomic(job_dir / sup.STATUS_FILE, {
                "job_id": job_id, "state": "failed", "exit_code": 1, "failed_replica": None,
                "message": f"The supervisor could not be started: {exc}", "supervisor_pid": None,
                "started_at": None, "ended_at": time.time(), "replicas": {}})
            raise SubmitError(f"Cannot start the local job's supervisor: {exc}") from exc
        return LocalJob(job_dir, process=process)

    def attach(self, job_id: str) -> LocalJob:
        """The handle of an existing local job (from any process)."""
        job_dir = job_path(self.home, job_id)
        if "/" in job_id or not (job_dir / sup.JOB_FILE).is_file():
            recent = ", ".join(self.job_ids()[-3:]) or "none"
            raise JobNotFoundError(f"No local job `{job_id}` in {self.jobs_dir}.",
                                   hint=f"The most recent local jobs: {recent}.")
        return LocalJob(job_dir)

    def job_ids(self) -> list[str]:
        """The ids of the local jobs kept in the state dir, oldest first (a job whose job.json is unreadable
        is left out: it cannot be attached to)."""
        try:
            if not self.jobs_dir.is_dir():
                return []
            dirs = [d for d in self.jobs_dir.iterdir() if _read_plan(d) is not None]
            return [d.name for d in sorted(dirs, key=lambda d: (d / sup.JOB_FILE).stat().st_mtime)]
        except OSError as exc:
            raise ConfigurationError(f"Cannot read the local jobs in {self.jobs_dir}: {exc.strerror or exc}.",
                                     hint=f"The state dir is set by {self._source}. Set TFCLOUD_HOME (or "
                                          "state_dir in [tool.tfcloud]) to a directory you can read.") from exc

    def list(self, *, state: JobState | None = None, limit: int | None = None) -> list[JobInfo]:
        """The local jobs, newest first (only those in ``state``; at most ``limit``)."""
        rows: list[JobInfo] = []
        for job_id in reversed(self.job_ids()):
            if limit is not None and len(rows) >= limit:
                break
            try:
                info = LocalJob(job_path(self.home, job_id)).info()
            except (JobNotFoundError, OSError, ValueError):  # removed or half-written meanwhile
                continue
            if state is None or info.state is state:
                rows.append(info)
        return rows

    def close(self) -> None:
        """Nothing to release: a local backend holds no clients."""


class LocalJob:
    """The handle of a local job. Reads the job's files; signals its supervisor to cancel."""

    def __init__(self, job_dir: Path, *, process: subprocess.Popen[bytes] | None = None) -> None:
        self.job_dir = job_dir
        self._process = process
        self._cancel_requested = False
        plan = _read_plan(job_dir)
        if plan is None:
            raise JobNotFoundError(f"Local job {job_dir.name} cannot be read: its {sup.JOB_FILE} is missing or "
                                   "corrupt.", hint=f"Remove {job_dir} if it is no longer needed.")
        self._plan: dict[str, Any] = plan

    def __repr__(self) -> str:
        return f"LocalJob({self.job_id!r})"

    # -- what the job is ----------------------------------------------------------------------------------
    @property
    def job_id(self) -> str:
        return str(self._plan["job_id"])

    @property
    def log_dir(self) -> Path:
        return self.job_dir / sup.LOG_DIR

    @property
    def lines_file(self) -> Path:
        """Every replica's lines, as the supervisor wrote them (:class:`~tfcloud.backends.base.LinesFile`)."""
        return self.job_dir / sup.LINES_FILE

    @property
    def replica_names(self) -> list[str]:
        return [str(r["name"]) for r in self._plan["replicas"]]

    def log_file(self, replica: str) -> Path:
        return self.log_dir / f"{replica}.log"

    # -- where it stands ----------------------------------------------------------------------------------
    def info(self) -> JobInfo:
        """Where the job stands, from ``status.json`` (checked: a dead supervisor's job is failed)."""
        status = self._status()
        state = to_job_state("process", str(status["state"]))
        code = status.get("exit_code")
        replicas = tuple(_replica_info(name, r) for name, r in status.get("replicas", {}).items())
        return JobInfo(
            job_id=self.job_id, target="local", state=state, display_name=self._plan.get("display_name"),
            replicas=replicas, exit_code=None if code is None or not state.is_final else int(code),
            failed_replica=status.get("failed_replica"), message=status.get("message") or None,
            created=self._plan.get("submitted_at"), started=status.get("started_at"),
            ended=status.get("ended_at") if state.is_final else None, output_dir=self._plan.get("output_dir"),
            labels=_labels(self._plan.get("labels")))

    def raw_status(self) -> dict[str, Any]:
        """``status.json`` as it is now, with pids (for tests and tools); checked like :meth:`info`."""
        return self._status()

    def _status(self) -> dict[str, Any]:
        """``status.json`` as it is now (checked: a dead supervisor's job is failed, its replicas killed)."""
        info = self._read_status()
        if info["state"] in ("succeeded", "failed", "cancelled"):
            self._reap()
            return info
        pid = info.get("supervisor_pid") or (self._process.pid if self._process is not None else None)
        if pid is not None and not self._supervisor_alive(int(pid)):
            info = self._read_status()  # it may have written its final status just before exiting
            if info["state"] not in ("succeeded", "failed", "cancelled"):
                info = self._repair(info, int(pid))
        elif pid is None and self._never_started():
            info = self._repair(info, 0)
        return info

    def _state(self) -> JobState:
        return to_job_state("process", str(self._status()["state"]))

    @property
    def replicas(self) -> dict[str, dict[str, Any]]:
        """Per replica, as the supervisor records it: role, pid, state, exit_code (for tests and tools)."""
        replicas: dict[str, dict[str, Any]] = self._status()["replicas"]
        return replicas

    def stacks(self, *, replica: str | None = None) -> dict[str, str]:
        """Every thread's stack of each running replica (:class:`~tfcloud.backends.base.Stacks`): its launcher
        writes them to ``stacks/<replica>`` on SIGUSR1 (a ``--container`` replica's process passes the signal
        to its container)."""
        found: dict[str, str] = {}
        for name, recorded in self.replicas.items():
            pid = recorded.get("pid")
            if (replica is not None and name != replica) or recorded.get("state") != "running" \
                    or not isinstance(pid, int) or isinstance(pid, bool):
                continue
            if is_stopped(pid):
                found[name] = "(stopped: SIGSTOP or a debugger holds it; it shows its stacks once it continues)"
                continue
            text = dump(pid, self.job_dir / STACKS_DIR / name)
            found[name] = text.rstrip("\n") if text is not None else \
                "(no stacks: its launcher is not ready yet, or it did not answer within " \
                f"{DUMP_WAIT_S:g} s)"
        return found

    def tail(self, replica: str, n: int = 20) -> list[str]:
        """The last ``n`` lines ``replica`` printed."""
        from tfcloud.view.logview import last_lines

        return last_lines(self.log_file(replica), n)

    # -- logs ---------------------------------------------------------------------------------------------
    def logs(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
             since: float | None = None) -> Iterator[LogLine]:
        """Every line so far (in the order they arrived); with ``follow``, then new lines until the job is
        final and every replica's output has been read to its end. ``since``/``tail`` select among the lines
        there already (every line carries the time the supervisor read it)."""
        for batch in self.log_batches(follow=follow, replica=replica, tail=tail, since=since):
            yield from batch.lines()

    def log_batches(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
                    since: float | None = None) -> Iterator[LogBatch]:
        """:meth:`logs` as it reads them: the lines of one read of a replica's pipe at a time
        (:class:`~tfcloud.backends.base.BatchedLogs`)."""
        from tfcloud.targets.local.linesfile import group

        batches = self._batches(follow=follow, replica=replica)
        if tail is None and since is None:
            yield from (batch for batch in batches if batch is not _READ_END)
            return
        first: list[LogLine] = []
        for batch in batches:
            if batch is _READ_END:  # what was there when the read began: select among it, then stream the rest
                break
            first.extend(batch.lines())
        selected = [(ln.replica, ln.stream, ln.timestamp, ln.text)
                    for ln in select_lines(first, tail=tail, since=since)]
        yield from (LogBatch(replica=r, texts=texts, stream=s, timestamp=t) for r, s, t, texts in group(selected))
        for batch in batches:
            if batch is not _READ_END and (since is None or batch.timestamp is None or batch.timestamp >= since):
                yield batch

    def _batches(self, *, follow: bool, replica: str | None) -> Iterator[LogBatch]:
        """The lines of ``lines.jsonl``, read to its end (128 KiB at a time: the client's memory stays flat, and
        no read is so large that its strings cost page faults), then :data:`_READ_END` (only with follow). A
        round that brought little is followed by a short pause, so that lines gather; rounds that bring nothing
        pause longer and longer, up to :data:`_IDLE_S`."""
        from tfcloud.targets.local.linesfile import parse_runs

        path = self.lines_file
        partial = b""
        f: BinaryIO | None = None
        idle = _GATHER_S
        try:
            while True:
                final = (not follow) or self._state().is_final  # decided before reading: then nothing is missed
                if f is None:
                    with contextlib.suppress(FileNotFoundError):
                        f = open(path, "rb")  # noqa: SIM115 (kept open between reads; closed below)
                got = 0
                while f is not None:
                    data = f.read(_READ_BYTES)
                    got += len(data)
                    cut = data.rfind(b"\n") + 1
                    if cut:
                        whole, partial = partial + data[:cut], data[cut:]
                        for name, stream, when, texts in parse_runs(whole):
                            if replica is None or name == replica:
                                yield LogBatch(replica=name, texts=texts, stream=stream, timestamp=when)
                    else:
                        partial += data
                    if len(data) < _READ_BYTES:
                        break
                if final:
                    return
                yield _READ_END
                if got:
                    idle = _GATHER_S
                    if got < _GATHER_BYTES:
                        self._pause(_GATHER_S)
                else:
                    self._pause(idle)
                    idle = min(idle * 2, _IDLE_S)
        finally:
            if f is not None:
                f.close()

    # -- waiting and stopping -----------------------------------------------------------------------------
    def wait(self, timeout: float | None = None) -> JobInfo:
        """Block until the job is final (or ``timeout`` seconds passed); return its info then."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            info = self.info()
            if info.state.is_final:
                return info
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return info
            if self._process is not None and self._process.poll() is None:
                # The supervisor exits right after writing the final status: wait on it, no polling.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=1.0 if remaining is None else min(remaining, 1.0))
            else:
                time.sleep(_POLL_S if remaining is None else min(_POLL_S, remaining))

    def cancel(self) -> None:
        """Ask the supervisor to stop every replica (SIGTERM, then SIGKILL); returns at once (``wait`` follows)."""
        info = self._read_status()
        if info["state"] in ("succeeded", "failed", "cancelled"):
            return
        self._cancel_requested = True
        pid = info.get("supervisor_pid") or (self._process.pid if self._process is not None else None)
        if pid is not None and self._supervisor_alive(int(pid)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGTERM)
        elif pid is not None or self._never_started():
            self._repair(info, int(pid or 0))

    def _never_started(self) -> bool:
        """No supervisor was ever recorded, and long enough has passed that none is coming."""
        submitted = self._plan.get("submitted_at")
        return self._process is None and (not isinstance(submitted, int | float)
                                          or time.time() - submitted > _START_TIMEOUT_S)

    # -- internals ----------------------------------------------------------------------------------------
    def _pause(self, seconds: float) -> None:
        """Sleep up to ``seconds``; wake early when our own supervisor exits (the job is final then)."""
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=seconds)
        else:
            time.sleep(min(seconds, _POLL_S))

    def _read_status(self) -> dict[str, Any]:
        """``status.json`` (written atomically, so never half-written). Missing: the job is starting;
        unreadable or corrupt: the job is reported failed, with why (it stays listable and removable)."""
        path = self.job_dir / sup.STATUS_FILE
        blank: dict[str, Any] = {"job_id": self.job_id, "state": "starting", "exit_code": None, "failed_replica": None,
                 "message": "", "supervisor_pid": None, "started_at": None, "ended_at": None, "replicas": {}}
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return blank
        except (OSError, ValueError) as exc:
            return {**blank, "state": "failed", "exit_code": 1, "message": f"{path} cannot be read: {exc}"}
        replicas = info.get("replicas", {}) if isinstance(info, dict) else None
        if not isinstance(info, dict) or info.get("state") not in _STATES or not isinstance(replicas, dict) \
                or not all(isinstance(r, dict) for r in replicas.values()):
            return {**blank, "state": "failed", "exit_code": 1, "message": f"{path} is corrupt"}
        return info

    def _reap(self) -> None:
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)

    def _supervisor_alive(self, pid: int) -> bool:
        if self._process is not None and self._process.pid == pid:
            return self._process.poll() is None
        state = sup._process_state(pid)
        if state is None:
            return not Path("/proc/self").exists() and pid_alive(pid)
        if state in ("Z", "X"):
            return False
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        return str(self.job_dir).encode() in cmdline

    def _repair(self, info: dict[str, Any], pid: int) -> dict[str, Any]:
        """The supervisor is gone without a final status: kill what is left of the replicas, record it."""
        for replica in info.get("replicas", {}).values():
            rpid = replica.get("pid") if isinstance(replica, dict) else None
            if rpid and replica.get("state") == "running":
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(int(rpid), signal.SIGKILL)
        cancelled = self._cancel_requested
        info = {
            **info,
            "state": "cancelled" if cancelled else "failed",
            "exit_code": 130 if cancelled else 1,
            "message": "The job was cancelled." if cancelled else
            f"The tfcloud supervisor (pid {pid}) ended before the job did; see {self.job_dir / 'supervisor.log'}."
            if pid else f"The tfcloud supervisor never started; see {self.job_dir / 'supervisor.log'}.",
            "ended_at": time.time(),
        }
        sup.write_json_atomic(self.job_dir / sup.STATUS_FILE, info)
        return info


def _read_plan(job_dir: Path) -> dict[str, Any] | None:
    """``job.json``, or None when it is missing, unreadable or not a job plan."""
    try:
        plan = json.loads((job_dir / sup.JOB_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(plan, dict) or not isinstance(plan.get("job_id"), str) \
            or not isinstance(plan.get("replicas"), list) \
            or not all(isinstance(r, dict) and isinstance(r.get("name"), str) for r in plan["replicas"]):
        return None
    return plan


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts: signal 0 was refused, not missed)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _labels(recorded: object) -> dict[str, str]:
    """The job's labels as ``job.json`` keeps them (a job from before labels were kept has none)."""
    if not isinstance(recorded, Mapping):
        return {}
    return {str(k): str(v) for k, v in recorded.items()}


def _replica_info(name: str, recorded: Mapping[str, Any]) -> ReplicaInfo:
    """A replica as the supervisor recorded it; one that tfcloud stopped (the job was over) is cancelled."""
    code = None if recorded.get("exit_code") is None else int(recorded["exit_code"])
    state = to_job_state("process", str(recorded.get("state")), exit_code=code)
    if state is JobState.FAILED and recorded.get("stopped_by_tfcloud"):
        state = JobState.CANCELLED
    pid = recorded.get("pid")
    return ReplicaInfo(name=name, state=state, exit_code=code,
                       pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None)
