"""What every answer of the dashboard carries, and which requests it refuses before the token is even looked at.

- :class:`Guard`: the ``Host`` header must name this dashboard (loopback names, or the ``--host`` it was given):
  a page of another site that resolves its own name to 127.0.0.1 (DNS rebinding) gets 421; every answer, a
  refusal included, carries the security headers (:data:`HEADERS`): a content security policy that runs only
  the dashboard's own script files (no inline script, no other origin), no framing (``frame-ancestors 'none'``,
  ``X-Frame-Options: DENY``), no MIME sniffing, no referrer.
- :func:`local_path`: a redirect target that stays on this host (``//evil.example`` is not a path here).
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CSP", "HEADERS", "LOOPBACK_NAMES", "Guard", "allowed_hosts", "local_path"]

#: The pages run the dashboard's own scripts and styles only; they fetch from this host only.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = ((b"content-security-policy", CSP.encode()), (b"x-frame-options", b"DENY"),
           (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
           (b"cross-origin-opener-policy", b"same-origin"), (b"cross-origin-resource-policy", b"same-origin"))
#: The names a browser on this machine reaches a loopback address by.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The ``Host`` names a dashboard listening on ``host`` answers to: loopback names, plus ``host`` itself
    when it is a name or address of its own. None (any name) when it listens on every address (0.0.0.0, ::):
    then it is reached by names this process cannot know, and the token (required there) is the gate."""
    bare = host.strip("[]").lower()
    if bare in ("0.0.0.0", "::", ""):
        return None
    return LOOPBACK_NAMES | {bare} | {name.strip("[]").lower() for name in extra}


def _host_name(value: str) -> str:
    """``Host: name:port`` or ``[::1]:port`` as the bare name."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


class Guard:
    """Refuses a request whose ``Host`` is not this dashboard's (421) and adds :data:`HEADERS` to every answer."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in HEADERS if h[0] not in names)]
            await send(message)

        if self.hosts is not None:
            host = _host_name(Headers(scope=scope).get("host", ""))
            if host not in self.hosts:
                response = PlainTextResponse(
                    "421 Misdirected Request: this dashboard answers to " + ", ".join(sorted(self.hosts))
                    + " only (tfcloud ui --host NAME answers to NAME).\n", status_code=421)
                await response(scope, receive, with_headers)
                return
        await self.app(scope, receive, with_headers)


def local_path(path: str) -> str:
    """``path`` as a redirect target that stays on this host: one leading slash, no backslash (browsers read
    ``/\\evil.example`` and ``//evil.example`` as another host)."""
    return "/" + path.replace("\\", "/").lstrip("/")
