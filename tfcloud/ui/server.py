"""The dashboard's server: the app (:func:`tfcloud.ui.app.create_app`) served by uvicorn on a socket of its own,
in the foreground (``tfcloud ui``) or in a background thread (``tfcloud.ui()`` in a notebook).

The socket is bound before uvicorn starts, so that ``--port 0`` (any free port) still gives the address to
print, and a port in use is a clear error (exit 2), not uvicorn's log line.
"""

from __future__ import annotations

import contextlib
import ipaddress
import math
import re
import secrets
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from tfcloud.errors import ConfigurationError, ValidationError

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "Dashboard", "check_bind", "is_loopback", "new_token", "weak_token"]

DEFAULT_HOST = "127.0.0.1"
#: The port tried first when none is given (then any free one).
DEFAULT_PORT = 8790
_TOKEN = re.compile(r"^[A-Za-z0-9._~-]{8,256}$")
#: The least guessing a token on an address other than loopback must take (bits; a new token has 192).
STRONG_BITS = 64


def new_token() -> str:
    """A fresh random token (48 hex digits, as Jupyter's)."""
    return secrets.token_hex(24)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only: ``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: object, port: object, token: object) -> None:
    """The dashboard's address and token, checked before anything starts (:class:`ValidationError`): a host
    other than loopback only with a token of the caller's own, a port from 0 (any free one) to 65535, a token
    of 8 to 256 URL-safe characters."""
    if not isinstance(host, str) or not host.strip():
        raise ValidationError("--host", "an address to listen on, such as 127.0.0.1", host)
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535):
        raise ValidationError("--port", "a port from 0 (any free one) to 65535", port)
    if token is not None and (not isinstance(token, str) or not _TOKEN.match(token)):
        raise ValidationError("--token", "8 to 256 characters: letters, digits, . _ ~ -", "(hidden)"
                              if isinstance(token, str) else token)
    if token is None and not is_loopback(host):
        raise ValidationError(
            "--host", "a loopback address (127.0.0.1, the default) unless --token is given", host,
            hint="Anyone who can reach that address could read every job's logs and cancel jobs. Give a secret "
                 "token of your own: tfcloud ui --host HOST --token \"$(openssl rand -hex 24)\" (or keep "
                 "127.0.0.1 and reach it through an SSH tunnel).")
    weak = None if token is None or is_loopback(host) else weak_token(token)
    if weak:
        raise ValidationError(
            "--token", f"a secret hard to guess on an address other than loopback ({STRONG_BITS} bits or more)",
            "(hidden)", hint=f"That token is too easy to guess: {weak}. Anyone who can reach {host} could try "
                             "tokens until one works. Use a random one: --token \"$(openssl rand -hex 24)\".")


def weak_token(token: str) -> str | None:
    """Why ``token`` is too easy to guess (fewer than :data:`STRONG_BITS` bits if each character were drawn at
    random from the kinds it uses, or the same few characters again), or None when it is strong enough."""
    kinds = sum(size for test, size in ((str.islower, 26), (str.isupper, 26), (str.isdigit, 10))
                if any(test(c) for c in token)) + (4 if any(c in "._~-" for c in token) else 0)
    bits = len(token) * math.log2(max(kinds, 2))
    if len(set(token)) < 6:
        return f"it has only {len(set(token))} different characters"
    if bits < STRONG_BITS:
        return f"{len(token)} characters of that kind are about {bits:.0f} bits, fewer than {STRONG_BITS}"
    return None


def _bind(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ValidationError("--host", "an address of this machine", host, hint=str(exc)) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.",
                                 hint="Pick another port: tfcloud ui --port N (0: any free port).") from None
    sock.set_inheritable(False)
    return sock


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        return socket.gethostname()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class Dashboard:
    """A dashboard on its socket: :attr:`url` (with the token), :meth:`serve` (blocks), :meth:`start` (a
    background thread) and :meth:`stop`. ``port`` None: :data:`DEFAULT_PORT` when free, else any free port."""

    def __init__(self, *, host: str = DEFAULT_HOST, port: int | None = None, token: str | None = None,
                 targets: Sequence[str] | None = None, ray_address: str | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        check_bind(host, port, token)
        from tfcloud.ui.views import check_options, listed_targets

        self.options = {**(options or {}), **({"ray_address": ray_address} if ray_address else {})}
        check_options(tuple(targets or listed_targets()), self.options)  # before the socket is bound
        self.host = host
        self.token = token or new_token()
        if port is None:
            try:
                self._socket = _bind(host, DEFAULT_PORT)
            except ConfigurationError:
                self._socket = _bind(host, 0)
        else:
            self._socket = _bind(host, port)
        self.port = int(self._socket.getsockname()[1])
        self.targets = tuple(targets) if targets else None
        self._server: Any = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        """``http://HOST:PORT`` (without the token)."""
        return f"http://{_url_host(self.host)}:{self.port}"

    @property
    def url(self) -> str:
        """The address to open: ``http://HOST:PORT/?token=...``."""
        return f"{self.address}/?token={self.token}"

    def __repr__(self) -> str:
        return f"Dashboard({self.url!r})"

    def _repr_html_(self) -> str:  # a notebook shows the link
        import html

        return (f'<a href="{html.escape(self.url)}" target="_blank" rel="noopener">tfcloud dashboard</a> '
                f'<code>{html.escape(self.address)}</code>')

    def _make_server(self) -> Any:
        import uvicorn

        from tfcloud.ui.app import create_app
        from tfcloud.ui.security import allowed_hosts
        from tfcloud.ui.views import Sources

        stopping = self._stopping
        sources = Sources(self.targets, options=self.options)
        sources.warm()
        app = create_app(token=self.token, sources=sources,
                         cookie=f"tfcloud_ui_{self.port}", hosts=allowed_hosts(self.host), stopping=stopping)
        # log_config=None: uvicorn leaves the process's logging alone; no access log (addresses hold the token).
        config = uvicorn.Config(app, log_config=None, access_log=False, ws="none", lifespan="off",
                                timeout_graceful_shutdown=2, log_level="warning")

        class Server(uvicorn.Server):
            """uvicorn's server that tells the open log streams to end as soon as it is asked to stop (Ctrl-C):
            they end within a tenth of a second, so the graceful shutdown never has to cancel one."""

            def handle_exit(self, sig: int, frame: Any) -> None:
                stopping.set()
                super().handle_exit(sig, frame)

        self._server = Server(config)
        return self._server

    @property
    def started(self) -> bool:
        """Whether the server answers requests."""
        return self._server is not None and bool(self._server.started)

    def open_browser(self, timeout: float = 10.0) -> None:
        """Open :attr:`url` in the web browser once the server answers (``tfcloud ui`` calls it from a thread)."""
        import webbrowser

        deadline = time.monotonic() + timeout
        while not self.started and time.monotonic() < deadline:
            time.sleep(0.02)
        webbrowser.open(self.url)

    def serve(self) -> None:
        """Serve until interrupted (Ctrl-C: uvicorn stops, then KeyboardInterrupt is raised here)."""
        server = self._make_server()
        try:
            server.run(sockets=[self._socket])
        finally:
            self._socket.close()

    def start(self, timeout: float = 30.0) -> Dashboard:
        """Serve in a background thread (a daemon: it ends with the process); returns once it answers."""
        server = self._make_server()
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [self._socket]},
                                        name="tfcloud-ui", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self.started:
            self.stop()
            raise ConfigurationError("The dashboard's server did not start.")
        return self

    def stop(self) -> None:
        """Stop the server (a background one: wait for its thread)."""
        self._stopping.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        with contextlib.suppress(OSError):
            self._socket.close()

    def __enter__(self) -> Dashboard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
