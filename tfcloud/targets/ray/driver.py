"""The driver of a tfcloud job on Ray: the program Ray's Jobs API runs (``python -m tfcloud.targets.ray.driver``).

It reads the plan the client shipped in the job's working directory (:data:`PLAN_FILE`), reserves one
placement-group bundle per replica (the replica's CPUs and GPUs; ``SPREAD`` over the nodes), starts one
:class:`ReplicaProcess` actor in each bundle, asks each for its node's address and a free port there, builds
every replica's ``TF_CONFIG`` from those addresses (:func:`tfcloud.replicas.plan_replicas`) and runs the
launcher in each actor as a child process.

The outcome rules are the local backend's, reused: :class:`RaySupervisor` is the local
:class:`~tfcloud.replicas.supervisor.Supervisor` with the processes behind actors (the chief's exit code is
the job's; parameter servers, and workers under ParameterServerStrategy, are stopped when the chief ends;
when one replica fails the rest are stopped; SIGTERM from ``ray job stop`` cancels: 130). Liveness too: each
actor gives its replica a heartbeat file on its own node and reports the beat's age with every poll; an actor
that stops answering polls (its process frozen) ages with it, and is killed once its replica was stopped.

Recovery (docs/ray.md): every replica gets ``AIP_MODEL_DIR``, ``AIP_CHECKPOINT_DIR`` and
``AIP_TENSORBOARD_LOG_DIR`` under the plan's ``output_dir`` (or, without one, under a directory of the same path
on each node, :func:`default_output_dir`), so the launcher's ``fit`` backs up and resumes. With ``max_restarts``
a failed attempt (a replica failed, or its node was lost) re-runs the whole cluster: every replica is stopped,
the placement group is made again on the nodes alive then (waiting while they cannot hold it, even on a cluster
without an autoscaler: a lost node may come back) and every replica starts with a new ``TF_CONFIG`` and
``TFCLOUD_ATTEMPT`` one higher (:meth:`RaySupervisor.restart`).

Everything goes to the driver's stdout, which is the Ray job's log, one line per replica line:

    [chief-0@1795431374.452] a line the chief printed on stdout (at that time, epoch seconds)
    [worker-1:err@1795431374.460] a line worker-1 printed on stderr
    [tfcloud@1795431374.470] what the driver itself says
    [tfcloud:status] {"state": ..., "exit_code": ..., "failed_replica": ..., "replicas": {...}}

:func:`parse_line` reads them back (the client's ``logs``/``info``). This module imports Ray only in the
functions that run inside the Ray job, so the client can use :func:`parse_line` without it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfcloud.replicas import supervisor as sup
from tfcloud.replicas.stacks import STACKS_VAR

__all__ = ["PLAN_FILE", "STACKS_PREFIX", "STACKS_REQUEST_VAR", "RaySupervisor", "ReplicaProcess", "format_line", "main",
           "node_stacks", "parse_line", "parse_timed_line", "stacks_main"]

#: The plan, relative to the job's working directory.
PLAN_FILE = ".tfcloud/ray_job.json"
STATUS_PREFIX = "[tfcloud:status] "
#: The line of ``tfcloud stacks``'s helper job (:func:`stacks_main`) with {replica: stacks} as JSON.
STACKS_PREFIX = "[tfcloud:stacks] "
#: The variable that gives :func:`stacks_main` its request: {"job_id": ..., "replicas": {name: node_id}}.
STACKS_REQUEST_VAR = "TFCLOUD_STACKS_REQUEST"
#: How long :func:`stacks_main` waits for a replica's node to answer.
_NODE_ANSWER_S = 30.0
DRIVER = "tfcloud"  # the replica name of the driver's own lines

_LINE = re.compile(r"^\[(?P<r>[a-z]+-\d+|tfcloud)(?P<e>:err)?(?:@(?P<t>\d+(?:\.\d+)?))?\] ?(?P<x>.*)$", re.DOTALL)
_TICK_S = 0.1
_POLL_WAIT_S = 1.0  # how long one round waits for the actors' answers (a frozen actor answers never)
_PLACEMENT_NOTICE_S = 30.0
#: The variables whose directories the actor creates on its node before the replica starts.
AIP_DIRS = ("AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR")


def default_output_dir(job_id: str, session_dir: str | None = None) -> str:
    """Where the ``AIP_*`` directories go without ``--output-dir``: the same path on every node, in the Ray
    session's directory (``/tmp/ray/session_...``; the temporary directory without one). Only a one-node cluster
    keeps them together (docs/ray.md)."""
    base = os.path.join(session_dir, "tfcloud") if session_dir else os.path.join(tempfile.gettempdir(), "tfcloud-ray")
    return os.path.join(base, job_id, "output")


def _session_dir() -> str | None:
    """This Ray session's directory on the head (Ray keeps no public name for it), or None."""
    try:
        import ray._private.worker

        node: Any = getattr(ray._private.worker, "_global_node", None)
        return str(node.get_session_dir_path())
    except Exception:  # another Ray version: the temporary directory instead
        return None


def format_line(replica: str, text: str, stream: str = "stdout", at: float | None = None) -> str:
    """One job-log line; ``at``: when the replica printed it (epoch seconds)."""
    return f"[{replica}{':err' if stream == 'stderr' else ''}{'' if at is None else f'@{at:.3f}'}] {text}"


def parse_timed_line(raw: str) -> tuple[str, str, str, float | None] | None:
    """``(replica, stream, text, time)`` of a job-log line (time None when the line has none), or None for a
    line the driver did not write (Ray's own lines, a traceback of the driver) and for status lines."""
    if raw.startswith(STATUS_PREFIX):
        return None
    m = _LINE.match(raw)
    if m is None:
        return None
    return m["r"], "stderr" if m["e"] else "stdout", m["x"], None if m["t"] is None else float(m["t"])


def parse_line(raw: str) -> tuple[str, str, str] | None:
    """``(replica, stream, text)`` of a job-log line (:func:`parse_timed_line` without the time)."""
    parsed = parse_timed_line(raw)
    return None if parsed is None else parsed[:3]


def parse_status(raw: str) -> dict[str, Any] | None:
    if not raw.startswith(STATUS_PREFIX):
        return None
    try:
        status: dict[str, Any] = json.loads(raw[len(STATUS_PREFIX):])
    except ValueError:
        return None
    return status


def _say(text: str) -> None:
    sys.stdout.write(format_line(DRIVER, text, at=time.time()) + "\n")
    sys.stdout.flush()


class ReplicaProcess:
    """A Ray actor (threaded): one replica's process on the node of its bundle."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.lines: list[tuple[str, str, float]] = []
        self.lock = threading.Lock()
        self.readers: list[threading.Thread] = []
        self.heartbeat: Path | None = None
        self.stacks: Path | None = None  # where the launcher writes its stacks on SIGUSR1 (tfcloud.replicas.stacks)

    def where(self) -> dict[str, Any]:
        """This node's address, a free port on it, and the node's id."""
        import ray

        ip = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((ip, 0))
            port = s.getsockname()[1]
        return {"ip": ip, "port": port, "node_id": ray.get_runtime_context().get_node_id(),
                "host": socket.gethostname()}

    def start(self, argv: Sequence[str], env: dict[str, str]) -> int:
        """Run ``python ARGV`` (in the job's working directory, this actor's) with ``env`` added, and the
        cluster's hosts kept away from any proxy (a proxy makes TensorFlow's collectives hang silently)."""
        env = {**os.environ, **env}
        for name in AIP_DIRS:  # tfcloud's own choice on this node (a shared path, or the node's directory)
            if name in env and "://" not in env[name]:
                os.makedirs(env[name], exist_ok=True)
        if sup.HEARTBEAT_VAR in env:  # liveness: the replica beats into a fresh file on this node
            if self.heartbeat is None:
                self.heartbeat = Path(tempfile.mkdtemp(prefix="tfcloud-beat-")) / "heartbeat"
            self.heartbeat.touch()
            os.utime(self.heartbeat)
            env[sup.HEARTBEAT_VAR] = str(self.heartbeat)
        if self.stacks is None:
            self.stacks = Path(tempfile.mkdtemp(prefix="tfcloud-stacks-")) / "stacks"
        self.stacks.unlink(missing_ok=True)  # it appears again once the new process can take the signal
        env[STACKS_VAR] = str(self.stacks)
        cluster = json.loads(env.get("TF_CONFIG") or "{}").get("cluster", {})
        hosts = {a.rsplit(":", 1)[0] for addresses in cluster.values() for a in addresses} | {"127.0.0.1", "localhost"}
        for name in ("no_proxy", "NO_PROXY", "no_grpc_proxy"):
            given = [h.strip() for h in env.get(name, "").split(",") if h.strip()]
            env[name] = ",".join(given + sorted(hosts - set(given)))
        self.proc = subprocess.Popen(
            [sys.executable, *argv], env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=sup._pdeathsig(), close_fds=True,
        )
        for stream, fileobj in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            reader = threading.Thread(target=self._pump, args=(stream, fileobj), daemon=True)
            reader.start()
            self.readers.append(reader)
        return self.proc.pid

    def _pump(self, stream: str, fileobj: Any) -> None:
        for raw in iter(fileobj.readline, b""):
            text = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
            with self.lock:
                self.lines.append((stream, text, time.time()))
        fileobj.close()

    def poll(self) -> tuple[list[tuple[str, str, float]], int | None, bool, float | None]:
        """The lines printed since the last poll (stream, text, time), the Popen return code (None while it
        runs), whether both pipes reached their end, and the seconds since the replica's last heartbeat (None
        without liveness)."""
        with self.lock:
            lines, self.lines = self.lines, []
        rc = None if self.proc is None else self.proc.poll()
        eof = self.proc is not None and not any(r.is_alive() for r in self.readers)
        beat = None
        if self.heartbeat is not None:
            with contextlib.suppress(OSError):
                beat = max(0.0, time.time() - self.heartbeat.stat().st_mtime)
            if rc is not None and eof:
                shutil.rmtree(self.heartbeat.parent, ignore_errors=True)
                self.heartbeat = None
        if self.stacks is not None and rc is not None and eof:
            shutil.rmtree(self.stacks.parent, ignore_errors=True)
            self.stacks = None
        return lines, rc, eof, beat

    def blamed_stacks(self, name: str) -> list[str]:
        """The watchdog's lines with this replica's stacks (:func:`tfcloud.replicas.supervisor.blame_lines`)."""
        if self.proc is None or self.proc.poll() is not None or self.stacks is None:
            return []
        return sup.blame_lines(name, self.proc.pid, self.stacks)

    def signal(self, signum: int) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signum)


class RaySupervisor(sup.Supervisor):
    """The local supervisor's outcome rules over replicas that run in Ray actors."""

    def __init__(self, job_dir: Path, actors: Sequence[Any], argv: Sequence[str],
                 nodes: Sequence[dict[str, Any]], *, cluster: Placement | None = None) -> None:
        super().__init__(job_dir)
        self.actors = {r.name: a for r, a in zip(self.replicas, actors, strict=True)}
        self.argv = list(argv)
        self.nodes = {r.name: n for r, n in zip(self.replicas, nodes, strict=True)}
        self.eof: set[str] = set()
        self._last_status = ""
        #: replica -> (heartbeat age its actor last reported, when: monotonic); the age grows while none answers
        self.beats: dict[str, tuple[float, float]] = {}
        self.polls: dict[str, tuple[Any, float]] = {}  # replica -> (its poll in flight, sent: monotonic)
        self.cluster = cluster  # places the replicas again for a restart
        if self.liveness_timeout_s:  # each actor makes the file on its node (ReplicaProcess.start)
            for r in self.replicas:
                r.env[sup.HEARTBEAT_VAR] = ""

    def write_status(self) -> None:
        super().write_status()
        status = json.loads((self.job_dir / sup.STATUS_FILE).read_text(encoding="utf-8"))
        for name, replica in status["replicas"].items():
            replica["node_id"] = self.nodes[name]["node_id"]
            replica["address"] = f"{self.nodes[name]['ip']}:{self.nodes[name]['port']}"
        status["output_dir"] = self.job.get("output_dir")
        text = json.dumps(status, separators=(",", ":"))
        if text != self._last_status:
            self._last_status = text
            sys.stdout.write(STATUS_PREFIX + text + "\n")
            sys.stdout.flush()

    def start(self) -> None:
        import ray

        self.beats.clear()  # each replica's age counts from this start (its actor makes its file fresh)
        started = []
        for r in self.replicas:
            if self.cancel_requested:
                break
            started.append((r, self.actors[r.name].start.remote(
                self.argv, {**r.env, "TFCLOUD_ATTEMPT": str(self.attempt)})))
        for r, ref in started:
            try:
                ray.get(ref)
            except Exception as exc:  # the actor or its process could not start
                self.fail(r, 127, f"{r.name} could not be started: {exc}")
                continue
            # The process stands behind its actor; r.pid stays None (decide() reads /proc for pids of this
            # machine, and the replica may run on another).
            r.proc = self.actors[r.name]
        if self.state == "starting":
            self.state = "running"
        self.write_status()

    def _signal_group(self, r: sup._Replica, sig: int) -> None:
        if r.proc is not None:
            self.actors[r.name].signal.remote(int(sig))

    def _on_signal(self, signum: int, frame: object) -> None:
        super()._on_signal(signum, frame)
        if self.cluster is not None:  # a restart waiting for nodes stops waiting
            self.cluster.cancelled.set()

    def _line(self, replica: str, stream: str, text: str) -> None:
        """The supervisor's own lines (a failed attempt, a restart) go to the job's log with the replicas'."""
        sys.stdout.write(format_line(replica, text, stream, at=time.time()) + "\n")
        sys.stdout.flush()

    def restart(self) -> None:
        """Every replica of the failed attempt is gone: place the whole cluster again on the nodes alive now
        (waiting while they cannot hold it), give every replica its new ``TF_CONFIG`` and start them all."""
        assert self.cluster is not None
        for r in self.replicas:
            self._signal_group(r, signal.SIGKILL)
            r.reset()
        self.eof.clear()
        self.polls.clear()  # the old actors' (they go with the old placement group)
        self.attempt += 1
        self.state = "starting"
        self._line(DRIVER, "stderr", f"tfcloud: attempt {self.attempt} of {self.max_restarts + 1}: placing "
                                     f"{len(self.replicas)} replica(s) again on the nodes that are alive.")
        self.write_status()
        nodes = self.cluster.place(refuse=False)
        if nodes is None:  # cancelled while waiting for the nodes
            self.state = "stopping"
            self.exit_code = sup._CANCEL_EXIT_CODE
            self.message = "The job was cancelled."
            self.cancelled = True
            return
        envs = self.cluster.envs(nodes)
        self.actors = {r.name: a for r, a in zip(self.replicas, self.cluster.actors, strict=True)}
        self.nodes = {r.name: n for r, n in zip(self.replicas, nodes, strict=True)}
        beat = {sup.HEARTBEAT_VAR: ""} if self.liveness_timeout_s else {}  # each actor makes a fresh file
        for r in self.replicas:
            r.env = {**envs[r.name], **beat}
        self.start()

    def blamed_stacks(self, r: sup._Replica) -> list[str]:
        """The stacks of the replica the watchdog blames, from its actor (on the replica's node)."""
        import ray

        if r.proc is None:
            return []
        pending = self.polls.get(r.name)
        if pending is not None and time.monotonic() - pending[1] > _POLL_WAIT_S + 1.0:  # its actor is not answering
            return [f"tfcloud: {r.name}'s actor does not answer (its Ray worker stopped or hung): no stacks."]
        try:
            lines: list[str] = ray.get(self.actors[r.name].blamed_stacks.remote(r.name), timeout=3)
        except Exception as exc:  # a frozen actor (it cannot answer), a dead node
            return [f"tfcloud: {r.name}'s actor did not answer for its stacks ({type(exc).__name__})."]
        return lines

    def heartbeat_age(self, r: sup._Replica) -> float | None:
        if not self.liveness_timeout_s or r.name not in self.beats:
            return None
        age, at = self.beats[r.name]
        return age + time.monotonic() - at

    def reap(self) -> bool:
        import ray

        live = [r for r in self.replicas if r.proc is not None and r.name not in self.eof]
        if not live:
            return False
        for r in live:
            if r.name not in self.polls:
                self.polls[r.name] = (self.actors[r.name].poll.remote(), time.monotonic())
        ready, _ = ray.wait([self.polls[r.name][0] for r in live], num_returns=len(live), timeout=_POLL_WAIT_S)
        changed = False
        for r in live:
            ref, sent = self.polls[r.name]
            if ref not in ready:
                if not r.kill_sent:
                    continue  # no answer yet: its heartbeat ages (heartbeat_age), liveness decides
                ray.kill(self.actors[r.name])  # a frozen actor cannot pass SIGKILL on: it goes, its process too
            del self.polls[r.name]
            try:
                lines, rc, eof, beat = ray.get(ref)
            except ray.exceptions.RayActorError as exc:  # its node or actor died: the replica with it
                if not r.kill_sent:
                    _say(f"{r.name}'s actor died ({type(exc).__name__}); its node may be gone.")
                lines, rc, eof, beat = [], -signal.SIGKILL, True, None
            if beat is not None:
                self.beats[r.name] = (beat, sent)
            for stream, text, at in lines:
                sys.stdout.write(format_line(r.name, text, stream, at) + "\n")
            if rc is not None and r.returncode is None:
                r.returncode = rc
                changed = True
            if eof and rc is not None:
                self.eof.add(r.name)
        sys.stdout.flush()
        return changed

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        self.write_status()
        self.start()
        eof_deadline: float | None = None
        while True:
            changed = self.reap()
            now = time.monotonic()
            self.decide(now)
            if changed:
                self.write_status()
            if all(not r.running for r in self.replicas):
                if self.state == "restarting":  # the last lines of the failed attempt first (or 2 s)
                    eof_deadline = eof_deadline or now + sup._EOF_WAIT_S
                    if all(r.name in self.eof for r in self.replicas if r.proc is not None) or now >= eof_deadline:
                        eof_deadline = None
                        self.restart()
                    time.sleep(_TICK_S)
                    continue
                if eof_deadline is None:
                    for r in self.replicas:  # whatever a replica left in its group goes now
                        self._signal_group(r, signal.SIGKILL)
                    eof_deadline = now + sup._EOF_WAIT_S
                if all(r.name in self.eof for r in self.replicas if r.proc is not None) or now >= eof_deadline:
                    break
            time.sleep(_TICK_S)
        return self.finish()


class NeverFits(Exception):
    """The cluster can never hold the job's replicas, and no autoscaler can add nodes (the message says why)."""


def _cluster_now(autoscaler: bool | None) -> Any:
    """What the cluster holds now, as Ray tells the driver (every alive node's total; what is free in all)."""
    import ray

    from tfcloud.targets.ray.capacity import Cluster

    totals = tuple({r: float(n["Resources"].get(r, 0.0)) for r in ("CPU", "GPU")}
                   for n in ray.nodes() if n.get("Alive"))  # type: ignore[no-untyped-call]
    free = ray.available_resources()  # type: ignore[no-untyped-call]
    return Cluster(totals=totals, free=({r: float(free.get(r, 0.0)) for r in ("CPU", "GPU")},),
                   autoscaler=autoscaler)


def _wait_for_placement(pg: Any, plan: dict[str, Any], cancelled: threading.Event, *, refuse: bool = True) -> bool:
    """Wait until the placement group is ready (False: cancelled meanwhile). Each time the cluster is looked at
    (after a second, then every 30 s) a job it can never hold raises :class:`NeverFits` when no autoscaler can
    add nodes (unless not ``refuse``: a restart after a lost node waits for one to join); else the driver says
    what it waits for."""
    import ray

    from tfcloud.targets.ray.capacity import describe_asks, format_resources, never_fits, shortfall

    names = [str(r["name"]) for r in plan["replicas"]]
    bundles = [dict(r["resources"]) for r in plan["replicas"]]
    autoscaler = plan.get("autoscaler")
    ready = pg.ready()
    start = time.monotonic()
    notice = start - _PLACEMENT_NOTICE_S + 1.0  # the first look: after a second
    while not cancelled.is_set():
        done, _ = ray.wait([ready], timeout=1.0)
        if done:
            return True
        if time.monotonic() - notice < _PLACEMENT_NOTICE_S:
            continue
        notice = time.monotonic()
        cluster = _cluster_now(autoscaler)
        why = shortfall(names, bundles, cluster.totals, strategy=plan.get("placement_strategy", "SPREAD"))
        if why is not None and autoscaler is False and refuse:
            raise NeverFits(never_fits("The Ray cluster", names, bundles, cluster, why))
        asked = {r: sum(b.get(r, 0.0) for b in bundles) for r in ("CPU", "GPU")}
        pending = "the autoscaler may add nodes" if autoscaler else \
            "other jobs hold the rest" if why is None else "no node can hold it now"
        _say(f"waiting ({notice - start:.0f} s) for the cluster to hold {describe_asks(names, bundles)}: "
             f"{format_resources(asked)} in all, {format_resources({r: cluster.total_free(r) for r in asked})} "
             f"free of {format_resources({r: cluster.total(r) for r in asked})}; {pending} (`ray status` shows "
             "what is pending).")
    return False


class Placement:
    """The job's placement group and its actors, one per bundle; made again for each attempt. ``cancelled``:
    set by a signal, ends a wait for the nodes."""

    def __init__(self, plan: dict[str, Any], cancelled: threading.Event) -> None:
        from tfcloud.replicas import aip_env

        self.plan = plan
        self.cancelled = cancelled
        self.bundles = [dict(r["resources"]) for r in plan["replicas"]]
        self.pg: Any = None
        self.actors: list[Any] = []
        self.output_dir = str(plan.get("output_dir") or default_output_dir(str(plan["job_id"]), _session_dir()))
        # The job's own env (the runtime environment's, so this process's too) may set any of them itself.
        self.aip = {k: v for k, v in aip_env(self.output_dir).items() if k not in os.environ}

    def place(self, *, refuse: bool = True) -> list[dict[str, Any]] | None:
        """Reserve one bundle per replica on the nodes alive now (waiting while they cannot hold them), start
        an actor in each; return where each runs (:meth:`ReplicaProcess.where`), or None when cancelled.
        :class:`NeverFits` when the cluster can never hold them (``refuse``; see :func:`_wait_for_placement`)."""
        import ray
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        self.release()
        self.pg = placement_group(self.bundles, strategy=self.plan.get("placement_strategy", "SPREAD"))
        _say(f"reserving {len(self.bundles)} bundle(s) for {', '.join(r['name'] for r in self.plan['replicas'])}.")
        if not _wait_for_placement(self.pg, self.plan, self.cancelled, refuse=refuse):
            return None
        actor_class = ray.remote(ReplicaProcess)
        for i, bundle in enumerate(self.bundles):
            self.actors.append(actor_class.options(
                num_cpus=bundle.get("CPU", 0), num_gpus=bundle.get("GPU", 0), max_concurrency=4,
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=self.pg, placement_group_bundle_index=i),
            ).remote())
        nodes: list[dict[str, Any]] = ray.get([a.where.remote() for a in self.actors])
        for r, n in zip(self.plan["replicas"], nodes, strict=True):
            _say(f"{r['name']} runs on node {n['node_id'][:12]} ({n['host']}, {n['ip']}:{n['port']}).")
        return nodes

    def envs(self, nodes: Sequence[dict[str, Any]]) -> dict[str, dict[str, str]]:
        """Each replica's variables on these nodes: its ``TF_CONFIG`` (from their addresses) and the ``AIP_*``
        directories."""
        from tfcloud.job.spec import Role
        from tfcloud.replicas import plan_replicas

        replicas = plan_replicas([(Role(r["role"]), int(r["index"])) for r in self.plan["replicas"]],
                                 [f"{n['ip']}:{n['port']}" for n in nodes])
        return {r.name: {**self.aip, **r.env()} for r in replicas}

    def release(self) -> None:
        """Kill the actors (and with them the replicas' processes) and give the bundles back."""
        import ray
        from ray.util.placement_group import remove_placement_group

        for actor in self.actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self.actors = []
        if self.pg is not None:
            with contextlib.suppress(Exception):
                remove_placement_group(self.pg)
            self.pg = None


def main() -> int:
    import ray

    cancelled = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: cancelled.set())
    plan: dict[str, Any] = json.loads(Path(PLAN_FILE).read_text(encoding="utf-8"))
    ray.init(log_to_driver=False, logging_level=logging.WARNING)
    cluster = Placement(plan, cancelled)
    try:
        try:
            nodes = cluster.place()
        except NeverFits as exc:
            _say(str(exc))
            sys.stdout.write(STATUS_PREFIX + json.dumps({"state": "failed", "exit_code": 2, "message": str(exc)})
                             + "\n")
            return 2
        if nodes is None:
            _say("cancelled while waiting for resources.")
            sys.stdout.write(STATUS_PREFIX + json.dumps({"state": "cancelled", "exit_code": 130,
                                                         "message": "The job was cancelled."}) + "\n")
            return 130
        envs = cluster.envs(nodes)
        with tempfile.TemporaryDirectory(prefix="tfcloud-ray-") as tmp:
            job_dir = Path(tmp)
            sup.write_json_atomic(job_dir / sup.JOB_FILE, {
                **{k: v for k, v in plan.items() if k != "replicas"},
                "output_dir": cluster.output_dir,
                "replicas": [{"name": r["name"], "role": r["role"], "env": envs[r["name"]]}
                             for r in plan["replicas"]],
            })
            supervisor = RaySupervisor(job_dir, cluster.actors, plan["argv"], nodes, cluster=cluster)
            supervisor.cancel_requested = cancelled.is_set()
            try:
                supervisor.run()
            except BaseException as exc:
                supervisor.abort(exc)
                raise
        return int(supervisor.exit_code if supervisor.exit_code is not None else 1)
    finally:
        cluster.release()
        sys.stdout.flush()


# -- `tfcloud stacks` (python -m tfcloud.targets.ray.driver stacks) ------------------------------------------------
def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode("utf-8", "replace").partition("=") for item in raw.split(b"\0") if item)
    return {k: v for k, _, v in pairs}


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return 0
    return int(stat[stat.rfind(b")") + 2:].split()[1])


def node_stacks(job_id: str, name: str) -> str:
    """On the node the replica runs on (a Ray task pinned there): find replica ``name`` of ``job_id`` among this
    node's processes (its launcher: ``TFCLOUD_JOB_ID`` and ``TFCLOUD_REPLICA`` in its environment, a parent
    without them: the actor's Ray worker), signal it and return the stacks it wrote (:func:`tfcloud.replicas.stacks.
    dump`), or a line that says why there are none."""
    from tfcloud.replicas.stacks import DUMP_WAIT_S, dump, is_stopped

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        env = _environ(pid)
        if env.get("TFCLOUD_JOB_ID") != job_id or env.get("TFCLOUD_REPLICA") != name or STACKS_VAR not in env:
            continue
        if _environ(_parent(pid)).get("TFCLOUD_REPLICA") == name:  # a process the replica started
            continue
        found.append((int(env.get("TFCLOUD_ATTEMPT") or 0), pid, env[STACKS_VAR]))
    if not found:
        return "(no process of it on its node: it has just ended, or is being restarted)"
    _, pid, path = max(found)  # the newest attempt's
    if is_stopped(pid):
        return "(stopped: SIGSTOP or a debugger holds it; it shows its stacks once it continues)"
    text = dump(pid, path)
    return text.rstrip("\n") if text is not None else \
        f"(no stacks: its launcher is not ready yet, or it did not answer within {DUMP_WAIT_S:g} s)"


def stacks_main() -> int:
    """``tfcloud stacks`` on Ray (:meth:`tfcloud.targets.ray.backend.RayJob.stacks` submits it as a Ray job): for
    each replica of the request (:data:`STACKS_REQUEST_VAR`), a task pinned to its node (no CPU, so a full node
    takes it too) runs :func:`node_stacks` there; prints {replica: stacks} as one :data:`STACKS_PREFIX` line."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    request = json.loads(os.environ[STACKS_REQUEST_VAR])
    ray.init(log_to_driver=False, logging_level=logging.WARNING)
    task = ray.remote(num_cpus=0, max_retries=0)(node_stacks)
    refs = {name: task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)).remote(
        str(request["job_id"]), name) for name, node_id in request["replicas"].items()}
    found: dict[str, str] = {}
    for name, ref in refs.items():
        try:
            found[name] = str(ray.get(ref, timeout=_NODE_ANSWER_S))
        except Exception as exc:  # its node is gone, or did not answer in time
            found[name] = f"(its node did not answer: {type(exc).__name__})"
    sys.stdout.write(STACKS_PREFIX + json.dumps(found) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(stacks_main() if sys.argv[1:] == ["stacks"] else main())
