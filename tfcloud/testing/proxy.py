"""A real HTTP proxy on loopback that fails on purpose, for tests: it stands in front of a registry (or any
HTTP server), forwards every request, and answers ``500`` instead to the ones a rule picks (by default the
first ``fail_manifest_puts`` manifest uploads). Docker pushes through it as to any registry on 127.0.0.1.

    with failing_proxy(registry.address, fail_manifest_puts=2) as proxy:
        ...push to f"{proxy.address}/repo/name:tag"...
        proxy.requests  # [("PUT", "/v2/repo/name/manifests/tag", 500), ...]
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FailingProxy", "failing_proxy"]

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
               "content-length"}
_FAILURE = b'{"errors": [{"code": "UNKNOWN", "message": "injected failure (tfcloud test proxy)"}]}\n'


@dataclass(kw_only=True)
class FailingProxy:
    address: str  # "127.0.0.1:PORT"
    upstream: str
    fail: Callable[[str, str], bool]
    requests: list[tuple[str, str, int]] = field(default_factory=list)  # (method, path, status answered)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def manifest_puts(self) -> list[int]:
        """The statuses answered to manifest uploads, in order."""
        with self.lock:
            return [status for method, path, status in self.requests if method == "PUT" and "/manifests/" in path]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _body(self) -> bytes | None:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = self.headers.get("Content-Length")
        return self.rfile.read(int(length)) if length else None

    def _forward(self) -> None:
        proxy = self.server.proxy
        body = self._body()
        with proxy.lock:
            failing = proxy.fail(self.command, self.path)
        if failing:
            self._record(500)  # before answering: the client may act on the answer at once
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(_FAILURE)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(_FAILURE)
            return
        conn = http.client.HTTPConnection(proxy.upstream, timeout=300)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for key, value in self.headers.items():
                if key.lower() not in _HOP_BY_HOP:
                    conn.putheader(key, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            resp = conn.getresponse()
            data = resp.read()
            self._record(resp.status)  # before answering: the client may act on the answer at once
            self.send_response(resp.status, resp.reason)
            for key, value in resp.getheaders():
                if key.lower() not in _HOP_BY_HOP:
                    self.send_header(key, value)
            if self.command == "HEAD":
                self.send_header("Content-Length", resp.getheader("Content-Length") or "0")
            else:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        finally:
            conn.close()

    def _record(self, status: int) -> None:
        with self.server.proxy.lock:
            self.server.proxy.requests.append((self.command, self.path, status))

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _forward


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    proxy: FailingProxy


@contextlib.contextmanager
def failing_proxy(upstream: str, *, fail_manifest_puts: int = 0,
                  fail: Callable[[str, str], bool] | None = None) -> Iterator[FailingProxy]:
    """A proxy on a free 127.0.0.1 port in front of ``upstream`` ("host:port"), stopped on exit. ``fail``
    (method, path) -> bool picks the requests answered 500 (called under the proxy's lock); by default the
    first ``fail_manifest_puts`` manifest PUTs."""
    count = {"n": 0}

    def first_manifest_puts(method: str, path: str) -> bool:
        if method == "PUT" and "/manifests/" in path and count["n"] < fail_manifest_puts:
            count["n"] += 1
            return True
        return False

    server = _Server(("127.0.0.1", 0), _Handler)
    host, port = "127.0.0.1", int(server.server_address[1])  # bound to loopback above
    server.proxy = FailingProxy(address=f"{host}:{port}", upstream=upstream, fail=fail or first_manifest_puts)
    thread = threading.Thread(target=server.serve_forever, name="tfcloud-failing-proxy", daemon=True)
    thread.start()
    try:
        with socket.create_connection((host, port), timeout=5):
            pass
        yield server.proxy
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
