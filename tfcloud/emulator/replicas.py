"""Replicas: what a CustomJob's worker pools run, as local processes or as containers on a Docker engine.

:func:`replica_environment` is the environment Vertex AI gives each replica (``CLUSTER_SPEC``,
``TF_CONFIG``, ``AIP_*`` directories), a pure function tested as a value. A runner starts one
:class:`Launch` and returns a :class:`Replica`; each line the replica writes is handed to a callback with
its stream (``"stdout"``/``"stderr"``). The job runner (:mod:`tfcloud.emulator.jobs`) decides when replicas
end; a runner only knows how to start, poll and stop them.

Neither outlives the emulator (:mod:`tfcloud.emulator._reaper`): processes die with it (a parent-death signal,
and the reaper kills their process groups), containers carry its instance label and the reaper removes them.

- :class:`ProcessRunner` runs ``command + args`` from the pool's container spec as a local process in its
  own process group, with the emulator's environment plus the replica's (so a venv's python works); a
  command that starts with ``python``/``python3`` (a ``python_package_spec`` pool's ``python -m MODULE``) runs
  with the replicas' Python (default: the emulator's own).
- :class:`DockerRunner` runs the pool's image on the configured engine with host networking, the container
  spec's ``command`` as entrypoint and ``args`` as command, and only the replica's environment.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from tfcloud.emulator._reaper import Reaper, guarded_argv, owner_labels, remove_orphans
from tfcloud.emulator.webaccess import ShellCommand

__all__ = [
    "DockerRunner",
    "Launch",
    "LineSink",
    "ProcessRunner",
    "Replica",
    "Runner",
    "free_port",
    "replica_environment",
]

logger = logging.getLogger("tfcloud.emulator")

LineSink = Callable[[str, str], None]  # (stream, line)

#: Vertex AI's pool order → TensorFlow task type.
TF_TASK_TYPES = ("chief", "worker", "ps", "evaluator")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def replica_environment(*, cluster: Mapping[int, Sequence[str]], pool: int, index: int,
                        job_spec: Mapping[str, Any], base_output_directory: str = "",
                        project: str = "", job_id: str = "", local_output_root: str = "") -> dict[str, str]:
    """The variables Vertex AI sets in one replica.

    ``cluster`` maps each non-empty pool index to its replicas' ``host:port`` addresses; ``job_spec`` is the
    CustomJobSpec as a dict (what Vertex puts under ``"job"``). ``local_output_root``: the ``AIP_*``
    directories of a ``gs://BUCKET/PATH`` base become ``LOCAL_OUTPUT_ROOT/BUCKET/PATH`` (TensorFlow's gfile
    cannot reach the storage emulator, so a replica that writes checkpoints needs a real directory).
    """
    cluster_spec = {
        "cluster": {f"workerpool{p}": list(addresses) for p, addresses in sorted(cluster.items())},
        "environment": "cloud",
        "task": {"type": f"workerpool{pool}", "index": index},
        "job": dict(job_spec),
    }
    tf_cluster = {TF_TASK_TYPES[p]: list(addresses) for p, addresses in sorted(cluster.items()) if p != 3}
    tf_config = {
        "cluster": tf_cluster,
        "task": {"type": TF_TASK_TYPES[pool], "index": index, "trial": ""},
        "environment": "cloud",
        "job": dict(job_spec),
    }
    env = {
        "CLUSTER_SPEC": json.dumps(cluster_spec),
        "TF_CONFIG": json.dumps(tf_config),
        "CLOUD_ML_PROJECT_ID": project,
        "CLOUD_ML_JOB_ID": job_id,
    }
    if base_output_directory:
        base = base_output_directory.rstrip("/")
        if local_output_root and base.startswith("gs://"):
            base = f"{local_output_root.rstrip('/')}/{base.removeprefix('gs://')}"
        env["AIP_MODEL_DIR"] = f"{base}/model/"
        env["AIP_CHECKPOINT_DIR"] = f"{base}/checkpoints/"
        env["AIP_TENSORBOARD_LOG_DIR"] = f"{base}/logs/"
    return env


@dataclass(frozen=True, kw_only=True)
class Launch:
    """One replica to start."""

    task_name: str  # "workerpool1-0"
    image: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    name: str = ""  # a container name, unique per emulator
    fault: tuple[int, str] | None = None  # (exit code, message): exit at start instead of running
    mounts: tuple[str, ...] = ()  # host directories a container sees at the same path (local_output_root)
    gcs_root: str | None = None  # the host directory that stands for /gcs (Cloud Storage FUSE), if any


class Replica(Protocol):
    task_name: str

    def poll(self) -> int | None: ...

    def stop(self, grace: float = 3.0) -> None: ...

    def kill(self) -> None:
        """SIGKILL, at once (a preempted VM)."""

    def drain(self, timeout: float = 5.0) -> None:
        """Wait until every line the replica wrote has been handed on, then release resources."""


class Runner(Protocol):
    def start(self, launch: Launch, sink: LineSink) -> Replica: ...

    def shell(self, launch: Launch) -> ShellCommand | None:
        """How to run bash in ``launch``'s replica environment (``enable_web_access``); None without bash."""

    def close(self) -> None: ...


def _pump(stream: IO[bytes], name: str, sink: LineSink) -> None:
    with stream:
        for raw in iter(stream.readline, b""):
            sink(name, raw.decode("utf-8", "replace").rstrip("\r\n"))


class _ProcessReplica:
    def __init__(self, task_name: str, process: subprocess.Popen[bytes], sink: LineSink,
                 reaper: Reaper | None = None) -> None:
        self.task_name = task_name
        self._process = process
        self._reaper = reaper
        if reaper is not None:
            reaper.own_group(process.pid)
        assert process.stdout is not None and process.stderr is not None
        self._pumps = [
            threading.Thread(target=_pump, args=(process.stdout, "stdout", sink), daemon=True),
            threading.Thread(target=_pump, args=(process.stderr, "stderr", sink), daemon=True),
        ]
        for pump in self._pumps:
            pump.start()

    def poll(self) -> int | None:
        return self._process.poll()

    def _signal(self, number: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, number)

    def stop(self, grace: float = 3.0) -> None:
        if self._process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self._process.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self._process.wait()
        self._signal(signal.SIGKILL)  # what the replica itself started

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def drain(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        for pump in self._pumps:
            pump.join(max(0.0, deadline - time.monotonic()))
        self._signal(signal.SIGKILL)
        if self._reaper is not None:
            self._reaper.release_group(self._process.pid)
            self._reaper = None


class ProcessRunner:
    """Replicas as local processes. Images are ignored: ``command + args`` run as given. Call :meth:`start` from a
    thread that outlives the replica (the job's own): on Linux the replica dies with that thread.

    ``entrypoints`` maps an image URI to the command to run when a pool's container spec gives none (what the
    image's ENTRYPOINT would have done).
    """

    def __init__(self, *, entrypoints: Mapping[str, Sequence[str]] | None = None,
                 workdir: str | None = None, python: str | None = None, reaper: Reaper | None = None) -> None:
        import sys

        self._reaper = reaper
        self._entrypoints = {image: tuple(command) for image, command in (entrypoints or {}).items()}
        self._workdir = workdir
        self._python = python or sys.executable

    def start(self, launch: Launch, sink: LineSink) -> Replica:
        import sys

        command = launch.command or self._entrypoints.get(launch.image, ())
        if launch.fault is not None:
            code, message = launch.fault
            argv = [sys.executable, "-c", f"import sys; sys.stderr.write({message!r} + '\\n'); sys.exit({code})"]
        elif not command:
            raise ReplicaStartError(
                f"The replica {launch.task_name} cannot start: its container spec gives no command and the "
                f"emulator knows no entrypoint for image {launch.image!r} (pass entrypoints= to run it as a "
                "local process, or configure a Docker engine).")
        else:
            argv = [*command, *launch.args]
            if launch.gcs_root:  # no /gcs on this machine: its stand-in
                argv = [launch.gcs_root + a[4:] if a.startswith("/gcs/") else a for a in argv]
            if argv[0] in ("python", "python3"):  # an executor image's python: the replicas' own here
                argv[0] = self._python
        env = self._env(launch)
        try:
            process = subprocess.Popen(
                guarded_argv(argv), env=env, cwd=self._workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise ReplicaStartError(f"The replica {launch.task_name} cannot start: {exc}.") from exc
        return _ProcessReplica(launch.task_name, process, sink, self._reaper)

    def _env(self, launch: Launch) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", "CLUSTER_SPEC")}
        env.update(launch.env)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def shell(self, launch: Launch) -> ShellCommand | None:
        """bash (reading its script from the connection) with the replica's variables, in its directory."""
        import shutil

        bash = shutil.which("bash")
        return None if bash is None else ShellCommand(argv=[bash, "-s"], env=self._env(launch), cwd=self._workdir)

    def close(self) -> None:
        pass


class ReplicaStartError(Exception):
    """A replica could not be started; the message is what the job's ``error`` says."""


class _ContainerReplica:
    def __init__(self, task_name: str, container: Any, sink: LineSink, reaper: Reaper | None = None) -> None:
        self.task_name = task_name
        self._container = container
        self._reaper = reaper
        if reaper is not None:
            reaper.own_container(container.id)
        self._code: int | None = None
        self._done = threading.Event()
        self._pumps = [
            threading.Thread(target=self._follow, args=("stdout", sink), daemon=True),
            threading.Thread(target=self._follow, args=("stderr", sink), daemon=True),
        ]
        for pump in self._pumps:
            pump.start()
        threading.Thread(target=self._wait, daemon=True).start()

    def _follow(self, stream: str, sink: LineSink) -> None:
        buffered = b""
        try:
            for chunk in self._container.logs(stdout=stream == "stdout", stderr=stream == "stderr",
                                              stream=True, follow=True):
                buffered += chunk
                *lines, buffered = buffered.split(b"\n")
                for line in lines:
                    sink(stream, line.decode("utf-8", "replace").rstrip("\r"))
        except Exception as exc:  # the engine went away: the job runner sees the exit code
            logger.debug("log stream of %s ended: %s", self.task_name, exc)
        if buffered:
            sink(stream, buffered.decode("utf-8", "replace"))

    def _wait(self) -> None:
        try:
            self._code = int(self._container.wait()["StatusCode"])
        except Exception as exc:
            logger.debug("waiting for %s failed: %s", self.task_name, exc)
            self._code = 137
        self._done.set()

    def poll(self) -> int | None:
        return self._code if self._done.is_set() else None

    def stop(self, grace: float = 3.0) -> None:
        if not self._done.is_set():
            try:
                self._container.stop(timeout=max(1, int(grace)))
            except Exception as exc:
                logger.debug("stopping %s: %s", self.task_name, exc)
            self._done.wait(grace + 5)

    def kill(self) -> None:
        if not self._done.is_set():
            try:
                self._container.kill()
            except Exception as exc:
                logger.debug("killing %s: %s", self.task_name, exc)

    def drain(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        for pump in self._pumps:
            pump.join(max(0.0, deadline - time.monotonic()))
        try:
            self._container.remove(force=True)
        except Exception as exc:
            logger.debug("removing %s: %s", self.task_name, exc)
        else:
            if self._reaper is not None:
                self._reaper.release_container(self._container.id)
                self._reaper = None


class DockerRunner:
    """Replicas as containers on the engine at ``docker_host`` (host network, no ``--rm``: wait, then remove)."""

    def __init__(self, docker_host: str, reaper: Reaper | None = None) -> None:
        import docker

        from tfcloud.errors import ConfigurationError

        self._reaper = reaper
        self._docker_host = docker_host

        try:
            self.client = docker.DockerClient(base_url=docker_host)
        except docker.errors.DockerException as exc:
            raise ConfigurationError(f"Cannot reach the Docker engine at {docker_host}: {exc}",
                                     hint="Start it, or leave out --docker-host (and DOCKER_HOST) to run "
                                          "replicas as local processes.") from exc
        try:
            removed = remove_orphans(self.client)
        except docker.errors.DockerException as exc:
            logger.warning("cannot look for orphaned replica containers on %s: %s", docker_host, exc)
        else:
            if removed:
                logger.warning("removed %d replica containers left by an emulator that is gone", removed)

    def start(self, launch: Launch, sink: LineSink) -> Replica:
        import docker.errors

        entrypoint: list[str] | None = list(launch.command) or None
        command: list[str] | None = list(launch.args) or None
        if launch.fault is not None:
            code, message = launch.fault
            entrypoint, command = ["/bin/sh", "-c", f"echo {json.dumps(message)} >&2; exit {code}"], None
        env = dict(launch.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        try:
            container = self.client.containers.run(
                launch.image, command=command, entrypoint=entrypoint, environment=env,
                labels=owner_labels(self._reaper.instance) if self._reaper is not None else {},
                network_mode="host", detach=True, name=launch.name or None,
                volumes={**{path: {"bind": path, "mode": "rw"} for path in launch.mounts},
                         **({launch.gcs_root: {"bind": "/gcs", "mode": "rw"}} if launch.gcs_root else {})})
        except docker.errors.DockerException as exc:
            raise ReplicaStartError(f"The replica {launch.task_name} cannot start: {exc}") from exc
        return _ContainerReplica(launch.task_name, container, sink, self._reaper)

    def shell(self, launch: Launch) -> ShellCommand | None:
        """``docker exec -i CONTAINER bash -s`` (the docker CLI; without it, or without a container name, None)."""
        import shutil

        docker = shutil.which("docker")
        if docker is None or not launch.name:
            return None
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "DOCKER_CONFIG", "DOCKER_CERT_PATH",
                                                             "DOCKER_TLS_VERIFY")}
        return ShellCommand(argv=[docker, "-H", self._docker_host, "exec", "-i", launch.name, "bash", "-s"], env=env)

    def close(self) -> None:
        self.client.close()
