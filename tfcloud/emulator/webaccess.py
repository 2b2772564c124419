"""The emulator's interactive shells (``job_spec.enable_web_access``): one loopback endpoint per replica.

Vertex AI gives each node of a job with ``enable_web_access`` an HTTPS URI that opens a bash shell in its
container (``CustomJob.web_access_uris``, keyed ``workerpool0-0``...). The emulator gives each replica a URI that
works on this machine instead: ``shell://127.0.0.1:PORT/TOKEN``, a TCP endpoint bound to loopback only. A client
connects, sends the TOKEN and a newline (any other first line closes the connection), and what it sends next is a
bash script run in the replica's environment (a process replica: its variables and working directory; a container
replica: ``docker exec`` into its container), with the output coming back on the same connection::

    (echo TOKEN; echo 'echo hi') | nc 127.0.0.1 PORT

The endpoints close, and their shells are killed, when the job ends (:meth:`Shells.close`). A replica environment
without bash (Google's rule ``web-access-bash``) gets no URI and the job's service log says why.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import signal
import socket
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["SCHEME", "ShellCommand", "Shells"]

SCHEME = "shell"
_TOKEN_WAIT_S = 10.0


@dataclass(frozen=True, kw_only=True)
class ShellCommand:
    """How to start a shell in one replica's environment."""

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: str | None = None


class _Endpoint:
    def __init__(self, command: ShellCommand) -> None:
        self.command = command
        self.token = secrets.token_urlsafe(16)
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.port = self.server.getsockname()[1]
        self.procs: list[subprocess.Popen[bytes]] = []
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, name=f"tfcloud-shell-{self.port}", daemon=True).start()

    @property
    def uri(self) -> str:
        return f"{SCHEME}://127.0.0.1:{self.port}/{self.token}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _first_line(self, conn: socket.socket) -> bytes:
        """The first line, read a byte at a time (what follows it belongs to the shell)."""
        conn.settimeout(_TOKEN_WAIT_S)
        line = b""
        while not line.endswith(b"\n") and len(line) <= 256:
            byte = conn.recv(1)
            if not byte:
                break
            line += byte
        conn.settimeout(None)
        return line.strip()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                given = self._first_line(conn)
            except OSError:
                return
            if not hmac.compare_digest(given, self.token.encode()):
                return
            with self.lock:
                if self.closed:
                    return
                try:
                    proc = subprocess.Popen(
                        list(self.command.argv),
                        env=dict(self.command.env),
                        cwd=self.command.cwd,
                        stdin=conn.fileno(),
                        stdout=conn.fileno(),
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                except OSError as exc:
                    with contextlib.suppress(OSError):
                        conn.sendall(f"tfcloud emulator: cannot start a shell: {exc}\n".encode())
                    return
                self.procs.append(proc)
        proc.wait()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            procs = list(self.procs)
        with contextlib.suppress(OSError):  # shutdown first: it wakes the accept() in progress and stops listening
            self.server.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.server.close()
        for proc in procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)


class Shells:
    """A job's shell endpoints, by node (``workerpool0-0``)."""

    def __init__(self) -> None:
        self._endpoints: dict[str, _Endpoint] = {}
        self._lock = threading.Lock()

    def open(self, task_name: str, command: ShellCommand) -> str:
        """Start ``task_name``'s endpoint (again: the old one is closed) and return its URI."""
        endpoint = _Endpoint(command)
        with self._lock:
            old = self._endpoints.pop(task_name, None)
            self._endpoints[task_name] = endpoint
        if old is not None:
            old.close()
        return endpoint.uri

    def close(self) -> None:
        """Close every endpoint and kill every shell it started."""
        with self._lock:
            endpoints, self._endpoints = list(self._endpoints.values()), {}
        for endpoint in endpoints:
            endpoint.close()
