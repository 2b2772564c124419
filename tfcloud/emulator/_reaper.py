"""Nothing the emulator starts outlives it, whatever ends it (SIGKILL included).

Two guards, because either alone has a gap:

- :func:`guarded_argv`: on Linux a local process (a replica, a build step) starts through a tiny launcher that asks
  the kernel for ``PR_SET_PDEATHSIG`` = SIGKILL and then ``exec``s the real command, so it dies with the emulator's
  thread that started it (each job's and build's thread outlives its processes). It covers the direct child only.
- :class:`Reaper`: one helper process per emulator, in a session of its own, that the emulator tells over a pipe
  which process groups and containers it owns (``+pg PID`` / ``-pg PID``, ``+ct ID`` / ``-ct ID``). When the pipe
  closes (the emulator ended, however it ended) the reaper SIGKILLs every process group still listed (a replica's
  own children included) and removes every container still listed, then exits. Containers also carry the label
  ``tfcloud.emulator.instance=ID``; the reaper removes any container with its label that it was not told about.
- :func:`remove_orphans`: containers also carry their emulator's host name and PID (:func:`owner_labels`); an
  emulator starting on an engine removes those whose emulator, on this host, is gone (what is left when the reaper
  was killed with the emulator).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Sequence
from typing import Any

__all__ = ["INSTANCE_LABEL", "Reaper", "guarded_argv", "owner_labels", "remove_orphans"]

logger = logging.getLogger("tfcloud.emulator")

#: The label every replica container carries: the emulator instance that started it.
INSTANCE_LABEL = "tfcloud.emulator.instance"
#: ... and the host name and process id of that emulator.
HOST_LABEL = "tfcloud.emulator.host"
PID_LABEL = "tfcloud.emulator.pid"

# PR_SET_PDEATHSIG is 1 (linux/prctl.h). The launcher exits at once if its parent already died (the race between
# fork and prctl), then becomes the command.
_LAUNCHER = (
    "import ctypes,os,signal,sys\n"
    "ctypes.CDLL(None,use_errno=True).prctl(1,signal.SIGKILL,0,0,0)\n"
    "os.getppid()==int(sys.argv[1]) or os._exit(137)\n"
    "os.execvp(sys.argv[2],sys.argv[2:])\n"
)

_REAPER = r"""
import os, signal, sys
groups, containers = set(), set()
docker_host, label = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    op, kind, value = line[0], line[1:3], line[4:].strip()
    target = groups if kind == "pg" else containers
    (target.add if op == "+" else target.discard)(value)
for group in groups:
    try:
        os.killpg(int(group), signal.SIGKILL)
    except (ProcessLookupError, PermissionError, ValueError):
        pass
if docker_host:
    try:
        import docker
        client = docker.DockerClient(base_url=docker_host)
        found = {c.id for c in client.containers.list(all=True, filters={"label": label})}
        for container in found | containers:
            try:
                client.api.remove_container(container, force=True)
            except Exception:
                pass
        client.close()
    except Exception as exc:
        print(f"tfcloud emulator reaper: cannot remove containers: {exc}", file=sys.stderr)
"""


def owner_labels(instance: str) -> dict[str, str]:
    """The labels of a container this emulator (``instance``) starts."""
    return {INSTANCE_LABEL: instance, HOST_LABEL: socket.gethostname(), PID_LABEL: str(os.getpid())}


def _gone(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError, OverflowError):
        return False
    return False


def remove_orphans(client: Any) -> int:
    """Remove the containers (on the engine ``client`` talks to) that an emulator of this host started and that
    outlived it; how many. A container whose emulator runs, or ran on another host, is left alone."""
    removed = 0
    for container in client.containers.list(all=True, filters={"label": INSTANCE_LABEL}):
        labels = container.labels or {}
        if labels.get(HOST_LABEL) == socket.gethostname() and _gone(labels.get(PID_LABEL, "")):
            try:
                container.remove(force=True)
            except Exception as exc:
                logger.warning("cannot remove the orphaned replica container %s: %s", container.name, exc)
            else:
                removed += 1
    return removed


def guarded_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` started so that it dies with the thread that starts it (Linux); ``argv`` itself elsewhere."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), *argv]


class Reaper:
    """The helper process that cleans up after the emulator; ``docker_host``: where its containers run."""

    def __init__(self, docker_host: str | None = None) -> None:
        self.instance = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._process = subprocess.Popen(
            [sys.executable, "-c", _REAPER, docker_host or "", f"{INSTANCE_LABEL}={self.instance}"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True, text=True)

    def _tell(self, line: str) -> None:
        with self._lock:
            stdin = self._process.stdin
            if stdin is None or stdin.closed:
                return
            try:
                stdin.write(line + "\n")
                stdin.flush()
            except (BrokenPipeError, ValueError) as exc:
                logger.warning("the emulator's reaper is gone: %s", exc)

    def own_group(self, pgid: int) -> None:
        self._tell(f"+pg {pgid}")

    def release_group(self, pgid: int) -> None:
        self._tell(f"-pg {pgid}")

    def own_container(self, container_id: str) -> None:
        self._tell(f"+ct {container_id}")

    def release_container(self, container_id: str) -> None:
        self._tell(f"-ct {container_id}")

    def close(self) -> None:
        """Let the reaper clean up what is left and exit (what happens on its own when the emulator dies)."""
        with self._lock:
            if self._process.stdin is not None:
                with contextlib.suppress(OSError):
                    self._process.stdin.close()
        try:
            self._process.wait(30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
