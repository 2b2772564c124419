"""The local job supervisor: one detached process per local job that runs its replicas and decides the outcome.

Started by :class:`tfcloud.targets.local.backend.LocalBackend` as ``python -I supervisor.py JOB_DIR`` in its own
session. It uses the standard library only (it runs by path, without importing tfcloud), reads
``JOB_DIR/job.json`` and:

- starts each replica in its own process group (the kernel kills it if the supervisor dies: ``PR_SET_PDEATHSIG``),
  stdin from ``/dev/null``;
- pumps each replica's stdout and stderr until EOF into ``logs/<replica>.log`` (the bytes as printed) and
  ``lines.jsonl`` (one JSON object per line: time, replica, stream, text; in the order lines arrived);
- decides the outcome by the chief, as Vertex AI and Kubeflow's TFJob do, with heartbeats (:data:`HEARTBEAT_VAR`,
  :data:`SILENT_S`), cancels (SIGTERM, SIGINT, SIGHUP) and ``max_restarts``: docs/local.md, "Who decides the
  outcome", says each rule. Stopping a replica: SIGTERM (and SIGCONT) to its group, SIGKILL after ``stop_grace_s``;
- writes ``status.json`` atomically on every change; the final state only once every replica has been reaped and
  every pipe read to EOF, so a reader that sees a final state has every line.

Exit codes follow the shell: a replica killed by signal N exited with 128 + N.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from tfcloud.replicas.linepump import SMALL_READ, LinePump, Pipe, stderr_last, widen
    from tfcloud.replicas.stacks import STACKS_DIR, STACKS_VAR, dump, is_stopped
else:  # run by path (python -I supervisor.py JOB_DIR): tfcloud is not importable; its sibling is, from here
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from linepump import SMALL_READ, LinePump, Pipe, stderr_last, widen
    from stacks import STACKS_DIR, STACKS_VAR, dump, is_stopped

STATUS_FILE = "status.json"
JOB_FILE = "job.json"
LINES_FILE = "lines.jsonl"
LOG_DIR = "logs"
HEARTBEAT_DIR = "heartbeats"
#: The variable that tells a replica's launcher which file to touch (templates/launcher.py.j2).
HEARTBEAT_VAR = "TFCLOUD_HEARTBEAT_FILE"
#: How often the launcher touches it.
BEAT_INTERVAL_S = 1.0
#: A replica without a heartbeat for this long, when another replica fails, is taken as the cause. TensorFlow's
#: collectives fail a survivor 10-20 s after a peer stopped; a replica that is only slow (loading TensorFlow's
#: libraries holds the GIL, which its beating thread needs, for seconds on a loaded machine) must not be blamed:
#: at 5 s, two parallel test runs on two cores blamed a worker still starting.
SILENT_S = 8.0

_TICK_S = 0.05
_CHECK_S = 0.01
#: The buffers of lines.jsonl and the log files: written out every _CHECK_S, or when full. A write larger than
#: this (a read of a pipe that held many lines) goes to the file at once, without a copy into the buffer.
_BUFFER_BYTES = 16 * 1024
_EOF_WAIT_S = 2.0  # after every replica ended: how long to wait for pipes held open by escaped processes
_CANCEL_EXIT_CODE = 130


def exit_code_of(returncode: int) -> int:
    """A Popen return code as a shell exit code: killed by signal N → 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name} (exit code {exit_code_of(returncode)})"
    return f"exited with code {returncode}"


def open_private(path: Path, mode: str = "ab", buffering: int = -1) -> Any:
    """Open a job file for writing, readable by its owner only (0600): logs hold what the script printed."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode.startswith("a") else os.O_TRUNC)
    encoding = None if "b" in mode else "utf-8"
    return open(os.open(path, flags, 0o600), mode, buffering=buffering, encoding=encoding)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open_private(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def _process_state(pid: int) -> str | None:
    """The kernel's one-letter state of ``pid`` (R, S, T, Z ...), or None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:][:1].decode() or None


def blame_lines(name: str, pid: int, path: Path, *, wait_s: float = 2.0) -> list[str]:
    """``tfcloud`` lines with the stacks of replica ``name`` (process ``pid``, its launcher's stacks file ``path``),
    or why it showed none: what the watchdog logs when it blames that replica."""
    if is_stopped(pid):
        return [f"tfcloud: {name} is stopped (SIGSTOP or a debugger): it cannot show its stacks."]
    text = dump(pid, path, wait_s=wait_s)
    if text is None:
        return [f"tfcloud: {name} did not show its stacks (its launcher was not ready, or it did not answer)."]
    return [f"tfcloud: the stacks of {name} when it was blamed:", *text.rstrip("\n").splitlines()]


class _Replica:
    def __init__(self, name: str, role: str, env: dict[str, str]) -> None:
        self.name = name
        self.role = role
        self.env = env
        self.log: IO[bytes] | None = None
        self.reset()

    def reset(self) -> None:
        """Forget the last process (a restart starts a new one)."""
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid: int | None = None
        self.returncode: int | None = None
        self.stop_sent: float | None = None
        self.kill_sent = False
        self.pipes: list[Pipe] = []

    @property
    def running(self) -> bool:
        return self.proc is not None and self.returncode is None

    def info(self) -> dict[str, Any]:
        state = "starting" if self.proc is None else "running" if self.returncode is None else "exited"
        return {
            "role": self.role,
            "pid": self.pid,
            "state": state,
            "exit_code": None if self.returncode is None else exit_code_of(self.returncode),
            "stopped_by_tfcloud": self.stop_sent is not None,
        }


def _pdeathsig() -> Any:
    """A preexec function that asks the kernel to SIGKILL the child when the supervisor dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the supervisor died before prctl took effect
            os._exit(1)

    return preexec


def _keep_freed_memory() -> None:
    """glibc's malloc keeps freed blocks up to 4 MiB for reuse (a read of a pipe, 256 KiB, is made and freed
    again: unmapped, each would cost page faults). :func:`tfcloud.view.heap.keep_freed_memory`'s settings, which
    this
    module may not import (it runs by path)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            mallopt = ctypes.CDLL(None).mallopt
            mallopt(-3, 4 << 20)  # M_MMAP_THRESHOLD
            mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD


class Supervisor:
    def __init__(self, job_dir: Path) -> None:
        self.job_dir = job_dir
        self.job: dict[str, Any] = json.loads((job_dir / JOB_FILE).read_text(encoding="utf-8"))
        self.replicas = [_Replica(r["name"], r["role"], dict(r["env"])) for r in self.job["replicas"]]
        self.chief = self.replicas[0]
        self.stop_grace_s = float(self.job.get("stop_grace_s", 5.0))
        self.finish_grace_s = float(self.job.get("finish_grace_s", 10.0))
        self.liveness_timeout_s = float(self.job.get("liveness_timeout_s") or 0.0)
        self.stop_on_chief_end = set(self.job.get("stop_on_chief_end", ["ps"]))
        self.max_restarts = int(self.job.get("max_restarts", 0))
        self.attempt = 1
        self.restarts: list[dict[str, Any]] = []
        self.state = "starting"
        self.exit_code: int | None = None
        self.failed_replica: str | None = None
        self.message = ""
        self.cancel_requested = False
        self.cancelled = False
        self.finish_deadline: float | None = None
        self.started_at = time.time()
        self.ended_at: float | None = None
        self.selector = selectors.DefaultSelector()
        (job_dir / LOG_DIR).mkdir(mode=0o700, exist_ok=True)
        self.lines: IO[bytes] = open_private(job_dir / LINES_FILE, "ab", buffering=_BUFFER_BYTES)
        self.pump = LinePump(self.lines, self.selector)

    # -- status ------------------------------------------------------------------------------------------
    def write_status(self) -> None:
        write_json_atomic(self.job_dir / STATUS_FILE, {
            "job_id": self.job["job_id"],
            "state": "running" if self.state in ("finishing", "restarting") else self.state,
            "phase": self.state,
            "exit_code": self.exit_code if self.state in ("succeeded", "failed", "cancelled") else None,
            "failed_replica": self.failed_replica,
            "message": self.message,
            "supervisor_pid": os.getpid(),
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "attempt": self.attempt,
            "max_restarts": self.max_restarts,
            "restarts": self.restarts,
            "replicas": {r.name: r.info() for r in self.replicas},
        })

    # -- signals -----------------------------------------------------------------------------------------
    def _on_signal(self, signum: int, frame: object) -> None:
        self.cancel_requested = True

    # -- replicas ----------------------------------------------------------------------------------------
    def start(self) -> None:
        preexec = _pdeathsig()
        argv = [str(a) for a in self.job["argv"]]
        for r in self.replicas:
            if self.cancel_requested:
                break
            if r.log is None:
                r.log = open_private(self.job_dir / LOG_DIR / f"{r.name}.log", "ab", buffering=_BUFFER_BYTES)
            env = {**os.environ, **r.env, "TFCLOUD_ATTEMPT": str(self.attempt), **self.heartbeat_env(r),
                   **self.stacks_env(r)}
            try:
                r.proc = subprocess.Popen(
                    argv, cwd=self.job["cwd"], env=env, stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                    preexec_fn=preexec, close_fds=True,
                )
            except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument or the environment
                self.fail(r, 127, f"{r.name} could not be started: {exc}")
                break
            r.pid = r.proc.pid
            for stream, fileobj in (("stdout", r.proc.stdout), ("stderr", r.proc.stderr)):
                assert fileobj is not None
                os.set_blocking(fileobj.fileno(), False)
                if stream == "stdout":
                    widen(fileobj.fileno())
                pipe = Pipe(r, stream, fileobj)
                r.pipes.append(pipe)
                self.selector.register(fileobj, selectors.EVENT_READ, pipe)
        if self.state == "starting":
            self.state = "running"
        self.write_status()

    # -- liveness ----------------------------------------------------------------------------------------
    def heartbeat_env(self, r: _Replica) -> dict[str, str]:
        """The replica's heartbeat file, made fresh (its age counts from the start), as its environment."""
        if not self.liveness_timeout_s:
            return {}
        path = self.job_dir / HEARTBEAT_DIR / r.name
        path.parent.mkdir(mode=0o700, exist_ok=True)
        open_private(path, "ab").close()
        os.utime(path)
        return {HEARTBEAT_VAR: str(path)}

    def stacks_env(self, r: _Replica) -> dict[str, str]:
        """Where ``r``'s launcher writes its stacks (:mod:`stacks`): the file of an earlier attempt removed, so it
        appears again only once the new process can take the signal."""
        path = self.job_dir / STACKS_DIR / r.name
        path.parent.mkdir(mode=0o700, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return {STACKS_VAR: str(path)}

    def blamed_stacks(self, r: _Replica) -> list[str]:
        """The lines that say where ``r`` is, for the watchdog that blames it (asked before it is stopped)."""
        if r.pid is None:
            return []
        return blame_lines(r.name, r.pid, self.job_dir / STACKS_DIR / r.name)

    def heartbeat_age(self, r: _Replica) -> float | None:
        """Seconds since ``r`` last beat (None: liveness is off, or no heartbeat file)."""
        if not self.liveness_timeout_s:
            return None
        try:
            return max(0.0, time.time() - (self.job_dir / HEARTBEAT_DIR / r.name).stat().st_mtime)
        except OSError:
            return None

    def silent(self, threshold: float, *, or_stopped: bool = False) -> tuple[_Replica, float] | None:
        """The running replica whose heartbeat is oldest, when it is at least ``threshold`` seconds old (with
        ``or_stopped``: or younger, when its process is stopped: SIGSTOP, a debugger)."""
        found: tuple[_Replica, float] | None = None
        for r in self.replicas:
            age = self.heartbeat_age(r) if r.running else None
            if age is None or (age < threshold and not (or_stopped and r.pid is not None and is_stopped(r.pid))):
                continue
            if found is None or age > found[1]:
                found = (r, age)
        return found

    def fail_exited(self, r: _Replica) -> None:
        """``r`` exited non-zero: the job fails by it, or by a replica that went silent before (or is stopped: a
        survivor's collective can fail sooner than :data:`SILENT_S` after a peer was stopped)."""
        assert r.returncode is not None
        code = exit_code_of(r.returncode)
        silent = self.silent(SILENT_S, or_stopped=True)
        if silent is not None and silent[0] is not r:
            quiet, age = silent
            stacks = self.blamed_stacks(quiet)
            self.fail(quiet, 1, f"{quiet.name} sent no heartbeat for {age:.0f} s (stopped or hung); {r.name} "
                                f"{describe_exit(r.returncode)} after losing it.")
            for line in stacks:
                self._line("tfcloud", "stderr", line)
            return
        self.fail(r, code, f"{r.name} {describe_exit(r.returncode)}.")

    def _line(self, replica: str, stream: str, text: str) -> None:
        """One line of tfcloud's own (a failed attempt, a restart) with the replicas' (the Ray driver's go to its
        log instead)."""
        self.pump.line(replica, stream, text)

    def flush(self) -> None:
        """Write out what waits for ``lines.jsonl`` and the replicas' log files."""
        if self.pump.dirty:
            self.lines.flush()
            for r in self.replicas:
                if r.log is not None:
                    r.log.flush()
            self.pump.dirty = False

    def _signal_group(self, r: _Replica, sig: int) -> None:
        if r.pid is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(r.pid, sig)

    def stop(self, r: _Replica) -> None:
        """SIGTERM (and SIGCONT, for a stopped process) to the replica's group; SIGKILL follows later."""
        if r.stop_sent is not None or r.proc is None:
            return
        r.stop_sent = time.monotonic()
        self._signal_group(r, signal.SIGTERM)
        self._signal_group(r, signal.SIGCONT)

    def stop_all(self) -> None:
        for r in self.replicas:
            if r.running:
                self.stop(r)

    def fail(self, r: _Replica, code: int, message: str) -> None:
        if len(self.restarts) < self.max_restarts and not self.cancel_requested:
            # Restart the whole cluster once every replica is gone (see run()).
            self.state = "restarting"
            self.restarts.append({"attempt": self.attempt, "replica": r.name, "exit_code": code,
                                  "message": message, "at": time.time()})
            self._line("tfcloud", "stderr", f"tfcloud: attempt {self.attempt} failed: {message} Restarting the "
                                            f"cluster (restart {len(self.restarts)} of {self.max_restarts}).")
            self.stop_all()
            self.write_status()
            return
        self.state = "stopping"
        self.exit_code = code if code != 0 else 1
        self.failed_replica = r.name
        self.message = message
        self.stop_all()
        self.write_status()

    # -- the outcome -------------------------------------------------------------------------------------
    def _stop_cancelled(self) -> None:
        """The job was cancelled (running or between two attempts): stop every replica and say so."""
        self.state = "stopping"
        self.exit_code = _CANCEL_EXIT_CODE
        self.message = "The job was cancelled."
        self.cancelled = True
        self.stop_all()
        self.write_status()

    def decide(self, now: float) -> None:
        if self.state == "restarting" and self.cancel_requested:
            self._stop_cancelled()
        if self.state == "running":
            if self.cancel_requested:
                self._stop_cancelled()
                return
            chief = self.chief
            if chief.returncode is not None:
                if chief.returncode == 0:
                    self.exit_code = 0
                    self.message = "The chief succeeded."
                    self.finish_deadline = now + self.finish_grace_s
                    for r in self.replicas:
                        if r.running and r.role in self.stop_on_chief_end:
                            self.stop(r)
                    self.state = "finishing"
                else:
                    self.fail_exited(chief)
                return
            for r in self.replicas[1:]:
                if r.returncode is not None and r.returncode != 0:
                    self.fail_exited(r)
                    return
            if self.liveness_timeout_s:
                silent = self.silent(self.liveness_timeout_s)
                if silent is not None:
                    stacks = self.blamed_stacks(silent[0])
                    self.fail(silent[0], 1, f"{silent[0].name} sent no heartbeat for {self.liveness_timeout_s:.0f} s "
                                            "(stopped or hung).")
                    for line in stacks:
                        self._line("tfcloud", "stderr", line)
        elif self.state == "finishing":
            assert self.finish_deadline is not None
            if self.cancel_requested or now >= self.finish_deadline:
                self.stop_all()
        # stopping (and finishing): SIGKILL whatever outlived its grace period.
        for r in self.replicas:
            if r.running and r.stop_sent is not None and not r.kill_sent and now - r.stop_sent >= self.stop_grace_s:
                r.kill_sent = True
                self._signal_group(r, signal.SIGKILL)

    def reap(self) -> bool:
        changed = False
        for r in self.replicas:
            if r.running:
                assert r.proc is not None
                rc = r.proc.poll()
                if rc is not None:
                    r.returncode = rc
                    changed = True
        return changed

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        self.write_status()
        self.start()
        eof_deadline: float | None = None
        checked = 0.0
        while True:
            ready = sorted((key.data for key, _ in self.selector.select(timeout=_TICK_S)), key=stderr_last)
            read = sum(self.pump.drain(pipe) for pipe in ready)
            if 0 < read < SMALL_READ:
                # A replica writes a line at a time (its launcher line-buffers): let a few gather, rather than
                # a turn of this loop (and a write to lines.jsonl) per line. Lines still show within ms.
                self.pump.gather()
            now = time.monotonic()
            if read and now - checked < _CHECK_S:
                # Lines are coming (a pipe holds 16 lines of 2 kB: a turn every few of them): what was read is
                # written out, and the replicas' processes and heartbeats looked at, every _CHECK_S meanwhile.
                continue
            checked = now
            self.flush()
            if self.reap():
                self.decide(now)
                self.write_status()
            else:
                self.decide(now)
            if all(not r.running for r in self.replicas):
                if self.state == "restarting":
                    self.restart()
                    continue
                if eof_deadline is None:
                    # Whatever a replica left in its group goes now: no process outlives the job.
                    for r in self.replicas:
                        self._signal_group(r, signal.SIGKILL)
                    eof_deadline = now + _EOF_WAIT_S
                if not self.selector.get_map() or now >= eof_deadline:
                    break
        return self.finish()

    def restart(self) -> None:
        """Every replica of the failed attempt is gone: kill what they left, start them all again."""
        for r in self.replicas:
            self._signal_group(r, signal.SIGKILL)
            r.reset()
        self.attempt += 1
        self.state = "starting"
        self._line("tfcloud", "stderr", f"tfcloud: attempt {self.attempt} of {self.max_restarts + 1}: starting "
                                        f"{len(self.replicas)} replica(s) again.")
        self.start()

    def finish(self) -> int:
        for key in list(self.selector.get_map().values()):
            self.selector.unregister(key.fileobj)
        self.lines.flush()
        self.lines.close()
        for r in self.replicas:
            if r.log is not None:
                r.log.close()
        if self.cancelled:
            self.state = "cancelled"
        elif self.state == "finishing":
            self.state = "succeeded"
        elif self.state in ("stopping", "running", "starting"):
            if self.exit_code is None:  # every replica ended without the chief deciding: cannot happen
                self.exit_code = 1
                self.message = "The job ended without an outcome."
            self.state = "failed"
        self.ended_at = time.time()
        self.write_status()
        return 0

    def abort(self, exc: BaseException) -> None:
        """The supervisor itself failed: kill every replica group and record why."""
        for r in self.replicas:
            self._signal_group(r, signal.SIGKILL)
            if r.proc is not None:
                with contextlib.suppress(Exception):
                    r.proc.wait(timeout=5)
                    r.returncode = r.proc.returncode
        self.state = "failed"
        self.exit_code = 1
        self.message = f"The tfcloud supervisor failed: {exc!r}"
        self.ended_at = time.time()
        self.write_status()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: _supervisor.py JOB_DIR\n")
        return 2
    _keep_freed_memory()
    supervisor = Supervisor(Path(argv[1]))
    try:
        return supervisor.run()
    except BaseException as exc:
        traceback.print_exc()
        supervisor.abort(exc)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
