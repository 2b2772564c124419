"""The dashboard as an ASGI application (Starlette): pages rendered from the templates in ``templates/``, plain
JavaScript modules in ``static/`` (no build step), a job's logs as server-sent events.

Pages and endpoints (every one behind the token, :class:`TokenGate`)::

    GET  /                           the jobs (filter: target, state, label) and the studies
    GET  /fragments/jobs             the jobs table alone (the page refreshes it)
    GET  /jobs/{id}                  a job: plan, replicas, timeline, failure, artifacts, logs, cancel
    GET  /fragments/jobs/{id}        the job's status part alone (state, replicas, timeline, failure)
    GET  /api/jobs/{id}/logs         its log lines as server-sent events, following until it ends
    GET  /fragments/jobs/{id}/artifacts
    POST /api/jobs/{id}/cancel       cancel it (the token in the X-Tfcloud-Token header)
    GET  /studies/{id}               a study: trials, plot, rerun command
    GET  /fragments/studies/{id}     its trials table alone
    GET  /studies/{id}/plot.png      its plot
    GET  /static/...                 CSS and JavaScript

Everything a page shows that came from a user or a job (names, labels, paths, log lines) is text: the
templates escape it (autoescape) and the scripts set ``textContent``, never HTML.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from tfcloud._version import __version__
from tfcloud.errors import JobNotFoundError, TfcloudError
from tfcloud.ui import views

__all__ = ["HEADER", "TokenGate", "create_app"]

HERE = Path(__file__).resolve().parent
#: The header a page's scripts send the token in (a POST needs it: the cookie alone does not do).
HEADER = "x-tfcloud-token"
#: The most log lines one server-sent event carries (a burst is sent in a few events, not thousands).
_BATCH = 500


class TokenGate:
    """Lets a request through only with the dashboard's token, as Jupyter does: ``?token=`` on a page's address
    (then a cookie for this dashboard, and a redirect to the address without it), the cookie, or the
    ``X-Tfcloud-Token`` header. An action (any method but GET and HEAD) needs the header: a page of another
    site that sends a form here carries the cookie at most. Anything else: 403."""

    def __init__(self, app: ASGIApp, *, token: str, cookie: str) -> None:
        self.app = app
        self.token = token
        self.cookie = cookie

    def _ok(self, value: str | None) -> bool:
        return bool(value) and secrets.compare_digest(str(value).encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        header = request.headers.get(HEADER)
        if request.method not in ("GET", "HEAD"):
            allowed = self._ok(header)
        else:
            query = request.query_params.get("token")
            if self._ok(query) and not request.url.path.startswith("/api/"):
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = request.url.path + ("?" + urlencode(rest) if rest else "")
                response: Response = RedirectResponse(target, status_code=303)
                response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
                await response(scope, receive, send)
                return
            allowed = self._ok(query) or self._ok(header) or self._ok(request.cookies.get(self.cookie))
        if not allowed:
            response = PlainTextResponse(
                "403 Forbidden: this dashboard needs its token. Open the address `tfcloud ui` printed "
                "(http://HOST:PORT/?token=...).\n", status_code=403)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _templates() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = _when
    env.filters["size"] = _size
    return env


def _when(value: float | None) -> str:
    if value is None:
        return "-"
    import datetime as dt

    return dt.datetime.fromtimestamp(value).strftime("%Y-%m-%d %H:%M:%S")


def _size(value: int) -> str:
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"  # pragma: no cover


def create_app(*, token: str, sources: views.Sources | None = None, cookie: str = "tfcloud_ui") -> ASGIApp:
    """The dashboard's ASGI application (behind its :class:`TokenGate`). ``sources``: which targets it lists
    (default: every one); ``cookie``: the cookie's name (one per dashboard: the port is not part of a cookie)."""
    sources = sources or views.Sources()
    env = _templates()

    def page(name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        body = env.get_template(name).render(token=token, version=__version__, **context)
        return HTMLResponse(body, status_code=status_code, headers={"Cache-Control": "no-store"})

    def problem(exc: TfcloudError) -> HTMLResponse:
        code = 404 if isinstance(exc, JobNotFoundError) else 400
        return page("error.html", status_code=code, message=exc.message, hint=exc.hint or "")

    def filters(request: Request) -> dict[str, str]:
        return {key: request.query_params.get(key, "").strip() for key in ("target", "state", "label")}

    async def jobs_table(request: Request) -> dict[str, Any]:
        chosen = filters(request)
        labels = views.parse_label(chosen["label"])
        jobs, notes = await run_in_threadpool(sources.jobs, target=chosen["target"] or None,
                                              state=chosen["state"] or None, labels=labels)
        return {"jobs": jobs, "notes": notes, "filters": chosen}

    async def index(request: Request) -> Response:
        try:
            table = await jobs_table(request)
        except TfcloudError as exc:
            return problem(exc)
        studies, study_notes = await run_in_threadpool(sources.studies)
        from tfcloud.states import JobState

        return page("jobs.html", targets=sources.targets, states=[s.value for s in JobState],
                    studies=views.study_rows(studies), study_notes=study_notes,
                    query=urlencode({k: v for k, v in table["filters"].items() if v}), **table)

    async def jobs_fragment(request: Request) -> Response:
        try:
            return page("_jobs_table.html", **await jobs_table(request))
        except TfcloudError as exc:
            return PlainTextResponse(exc.message, status_code=400)

    async def job(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        try:
            info = await run_in_threadpool(views.job_page, job_id, ray_address=sources.ray_for(job_id))
        except TfcloudError as exc:
            return problem(exc)
        return page("job.html", **info)

    async def job_fragment(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        try:
            info = await run_in_threadpool(views.job_page, job_id, ray_address=sources.ray_for(job_id), details=False)
        except TfcloudError as exc:
            return PlainTextResponse(exc.message, status_code=404 if isinstance(exc, JobNotFoundError) else 400)
        return page("_job_status.html", **info)

    async def artifacts_fragment(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        try:
            found = await run_in_threadpool(views.artifacts, job_id, ray_address=sources.ray_for(job_id))
        except TfcloudError as exc:
            found = {"base": None, "files": [], "note": exc.message}
        return page("_artifacts.html", **found)

    async def cancel(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        from tfcloud import sdk

        def stop() -> str:
            with sdk.attached(job_id, ray_address=sources.ray_for(job_id)) as handle:
                handle.cancel()
                return handle.info().state.value

        try:
            state = await run_in_threadpool(stop)
        except TfcloudError as exc:
            return JSONResponse({"error": exc.message}, status_code=404 if isinstance(exc, JobNotFoundError) else 400)
        return JSONResponse({"job_id": job_id, "state": state})

    async def logs(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        return StreamingResponse(_log_events(job_id, sources.ray_for(job_id)), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def study(request: Request) -> Response:
        try:
            info = await run_in_threadpool(views.study_page, request.path_params["study_id"])
        except TfcloudError as exc:
            return problem(exc)
        return page("study.html", **info)

    async def study_fragment(request: Request) -> Response:
        try:
            info = await run_in_threadpool(views.study_page, request.path_params["study_id"])
        except TfcloudError as exc:
            return PlainTextResponse(exc.message, status_code=404 if isinstance(exc, JobNotFoundError) else 400)
        return page("_study_table.html", **info)

    async def study_plot(request: Request) -> Response:
        try:
            png = await run_in_threadpool(views.study_plot, request.path_params["study_id"])
        except TfcloudError as exc:
            return PlainTextResponse(exc.message + ("\n" + exc.hint if exc.hint else ""), status_code=404)
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})

    routes = [
        Route("/", index),
        Route("/fragments/jobs", jobs_fragment),
        Route("/fragments/jobs/{job_id:path}/artifacts", artifacts_fragment),
        Route("/fragments/jobs/{job_id:path}", job_fragment),
        Route("/fragments/studies/{study_id:path}", study_fragment),
        Route("/api/jobs/{job_id:path}/logs", logs),
        Route("/api/jobs/{job_id:path}/cancel", cancel, methods=["POST"]),
        Route("/studies/{study_id:path}/plot.png", study_plot),
        Route("/studies/{study_id:path}", study),
        Route("/jobs/{job_id:path}", job),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes)
    return TokenGate(app, token=token, cookie=cookie)


def _event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def _log_events(job_id: str, ray_address: str | None) -> AsyncIterator[str]:
    """The job's log lines as server-sent events, following until it ends: ``lines`` (a list of ``{"r": replica,
    "x": text, "s": stream, "t": time, "n": hidden unless "Show everything"}``: start-up noise, the whole of a
    TensorFlow protobuf dump, tfcloud's launcher and ``runpy`` frames in a traceback, as in the terminal), then
    ``end`` (its state) or ``problem``. A thread reads the SDK's (blocking) log stream; it stops at its next line
    once the page has gone."""
    from tfcloud import sdk
    from tfcloud.noise import LineFilter

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    gone = threading.Event()

    def put(item: tuple[str, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: the server stopped
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def pump() -> None:
        try:
            hidden = LineFilter(show_frames=sdk.debugging())
            with sdk.attached(job_id, ray_address=ray_address) as handle:
                for line in handle.logs(follow=True):
                    if gone.is_set():
                        return
                    put(("line", {"r": line.replica, "x": line.text, "s": line.stream, "t": line.timestamp,
                                  "n": hidden.hides(line.replica, line.text)}))
                put(("end", {"state": handle.info().state.value}))
        except TfcloudError as exc:
            put(("problem", {"message": exc.message}))
        except Exception as exc:  # the stream must end with a word, whatever went wrong
            put(("problem", {"message": f"{type(exc).__name__}: {exc}"}))

    threading.Thread(target=pump, name=f"tfcloud-ui-logs-{job_id}", daemon=True).start()
    try:
        yield ": stream open\n\n"  # the browser's EventSource opens now, before the first line
        while True:
            kind, value = await queue.get()
            if kind != "line":
                yield _event(kind, value)
                return
            batch = [value]
            while len(batch) < _BATCH and not queue.empty():
                kind, value = queue.get_nowait()
                if kind != "line":
                    yield _event("lines", batch)
                    yield _event(kind, value)
                    return
                batch.append(value)
            yield _event("lines", batch)
    finally:
        gone.set()
