"""The dashboard as an ASGI application (Starlette): pages rendered from the templates in ``templates/``, plain
JavaScript modules in ``static/`` (no build step), a job's logs as server-sent events.

Pages and endpoints (every one behind the token, :class:`TokenGate`)::

    GET  /                           the jobs (filter: target, state, label) and the studies
    GET  /fragments/jobs             the jobs table alone (the page refreshes it)
    GET  /jobs/{id}                  a job: plan, replicas, timeline, failure, artifacts, logs, cancel
    GET  /fragments/jobs/{id}        the job's status part alone (state, replicas, timeline, failure)
    GET  /api/jobs/{id}/logs         its last lines, then new ones, as server-sent events (:mod:`.logroutes`)
    GET  /api/jobs/{id}/curves       its training curves (TensorBoard scalars), JSON (:mod:`.jobdata`)
    GET  /api/jobs/{id}/resources    its replicas' CPU and memory over time, JSON
    GET  /api/jobs/{id}/logs/earlier, /logs/search, /logs.txt: lines before the window, a search, the download
    GET  /fragments/jobs/{id}/artifacts
    GET  /api/jobs/{id}/artifact?path=P   one of its output files, downloaded
    POST /api/jobs/{id}/cancel       cancel it (the token in the X-Tfcloud-Token header)
    GET  /studies/{id}               a study: trials (sortable, filterable), parallel coordinates, importance,
                                     plot, rerun command, cancel
    GET  /api/studies/{id}           its trials as JSON (:mod:`.explore`)
    POST /api/studies/{id}/cancel    cancel it (the token in the header)
    GET  /fragments/studies/{id}     its trials table alone
    GET  /studies/{id}/plot.png      its plot
    GET  /static/...                 CSS and JavaScript

Everything a page shows that came from a user or a job (names, labels, paths, log lines) is text: the
templates escape it (autoescape) and the scripts set ``textContent``, never HTML.
"""

from __future__ import annotations

import secrets
import threading
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
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from tfcloud._version import __version__
from tfcloud.errors import JobNotFoundError, TfcloudError
from tfcloud.ui import logroutes, views
from tfcloud.ui.jobdata import JobData
from tfcloud.ui.records import record_problem
from tfcloud.ui.security import LOOPBACK_NAMES, Guard, local_path

__all__ = ["HEADER", "TokenGate", "create_app"]

HERE = Path(__file__).resolve().parent
#: The header a page's scripts send the token in (a POST needs it: the cookie alone does not do).
HEADER = "x-tfcloud-token"


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
                target = local_path(request.url.path) + ("?" + urlencode(rest) if rest else "")
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
    env.filters["shown"] = views.shown_labels
    env.filters["problem"] = record_problem
    env.filters["iso"] = _iso
    env.filters["cost"] = _cost
    return env


def _cost(info: Any) -> str:
    """A job's cost cell (:func:`tfcloud.sdk.cost_of`): ``$1.23``, ``unknown``, ``not billed``..."""
    from tfcloud.sdk import cost_of

    return cost_of(info).short()


def _when(value: float | None) -> str:
    """A time as this machine's clock shows it, with its zone (``2026-11-26 14:02:03 UTC``)."""
    if value is None:
        return "-"
    import datetime as dt

    return dt.datetime.fromtimestamp(value).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def _iso(value: float | None) -> str:
    """A time as ISO 8601 with its offset (a ``<time datetime>``)."""
    if value is None:
        return ""
    import datetime as dt

    return dt.datetime.fromtimestamp(value).astimezone().isoformat(timespec="seconds")


def _size(value: int) -> str:
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"  # pragma: no cover


def create_app(*, token: str, sources: views.Sources | None = None, cookie: str = "tfcloud_ui",
               hosts: frozenset[str] | None = LOOPBACK_NAMES, stopping: threading.Event | None = None) -> ASGIApp:
    """The dashboard's ASGI application (behind its :class:`TokenGate` and :class:`~tfcloud.ui.security.Guard`).
    ``sources``: which targets it lists (default: every one); ``cookie``: the cookie's name (one per dashboard:
    the port is not part of a cookie); ``hosts``: the ``Host`` names it answers to (None: any); ``stopping``:
    set when the server stops (open log streams end then)."""
    stopping = stopping or threading.Event()
    sources = sources or views.Sources()
    data = JobData()
    env = _templates()

    def page(name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        body = env.get_template(name).render(token=token, version=__version__, **context)
        return HTMLResponse(body, status_code=status_code, headers={"Cache-Control": "no-store"})

    def problem(exc: TfcloudError) -> HTMLResponse:
        code = 404 if isinstance(exc, JobNotFoundError) else 400
        return page("error.html", status_code=code, message=exc.message, hint=exc.hint or "",
                    title="Not found" if code == 404 else "Cannot show that")

    def filters(request: Request) -> dict[str, str]:
        return {key: request.query_params.get(key, "").strip() for key in ("target", "state", "label", "trials")}

    async def jobs_table(request: Request) -> dict[str, Any]:
        chosen = filters(request)
        labels = views.parse_label(chosen["label"])

        def gather() -> tuple[list[Any], dict[str, str], list[Any]]:
            jobs, notes = sources.jobs(target=chosen["target"] or None, state=chosen["state"] or None, labels=labels)
            return jobs, notes, sources.studies()[0] if chosen["trials"] != "show" else []

        jobs, notes, studies = await run_in_threadpool(gather)
        rows = views.job_rows(jobs, studies)
        if not chosen["state"] and not chosen["label"]:  # jobs a target cannot read are shown so, not dropped
            rows = sorted(rows + await run_in_threadpool(sources.unreadable, chosen["target"] or None),
                          key=lambda row: (row["job"].created if "job" in row else row["created"]) or 0.0,
                          reverse=True)
        number = views.page_number(request.query_params.get("page"))
        pages = max(1, -(-len(rows) // views.PAGE))
        number = min(number, pages)
        rest = {k: v for k, v in chosen.items() if v}
        return {"rows": rows[(number - 1) * views.PAGE:number * views.PAGE], "notes": notes, "filters": chosen,
                "page": number, "pages": pages, "total": len(rows),
                "newer": urlencode({**rest, "page": number - 1}) if number > 1 else None,
                "older": urlencode({**rest, "page": number + 1}) if number < pages else None,
                "jobs": jobs}

    async def index(request: Request) -> Response:
        filter_problem = None
        try:
            table = await jobs_table(request)
        except TfcloudError as exc:  # a bad filter: the page, with the filter's problem over an empty table
            filter_problem = exc.message + (" " + exc.hint if exc.hint else "")
            table = {"jobs": [], "rows": [], "notes": {}, "filters": filters(request), "page": 1, "pages": 1,
                     "total": 0, "newer": None, "older": None}
        studies, study_notes = await run_in_threadpool(sources.studies)
        from tfcloud.job.states import JobState

        return page("jobs.html", status_code=400 if filter_problem else 200, targets=sources.targets,
                    states=[s.value for s in JobState], studies=views.study_rows(studies), study_notes=study_notes,
                    filter_problem=filter_problem,
                    query=urlencode({k: v for k, v in {**table["filters"], "page": str(table["page"])}.items()
                                     if v and v != "1"}), **table)

    async def jobs_fragment(request: Request) -> Response:
        try:
            return page("_jobs_table.html", **await jobs_table(request))
        except TfcloudError as exc:
            return PlainTextResponse(exc.message, status_code=400)

    async def job(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        try:
            info = await run_in_threadpool(views.job_page, job_id, options=sources.options_for(job_id))
        except TfcloudError as exc:
            return problem(exc)
        return page("job.html", **info)

    async def job_fragment(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        try:
            info = await run_in_threadpool(views.job_page, job_id, options=sources.options_for(job_id), details=False)
        except TfcloudError as exc:
            return PlainTextResponse(exc.message, status_code=404 if isinstance(exc, JobNotFoundError) else 400)
        return page("_job_status.html", **info)

    async def artifacts_fragment(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        try:
            found = await run_in_threadpool(views.artifacts, job_id, options=sources.options_for(job_id))
        except TfcloudError as exc:
            found = {"base": None, "files": [], "note": exc.message, "browse": None, "local": False, "job_id": job_id}
        return page("_artifacts.html", **found)

    async def artifact(request: Request) -> Response:
        """One file of the job's outputs, as a download."""
        from starlette.responses import FileResponse

        job_id = request.path_params["job_id"]
        try:
            found = await run_in_threadpool(views.artifact_file, job_id, request.query_params.get("path", ""),
                                            options=sources.options_for(job_id))
        except TfcloudError as exc:
            return JSONResponse({"error": exc.message, "hint": exc.hint},
                                status_code=404 if isinstance(exc, JobNotFoundError) else 400)
        return FileResponse(found, filename=found.name, content_disposition_type="attachment",
                            headers={"Cache-Control": "no-store"})

    async def cancel(request: Request) -> Response:
        job_id = request.path_params["job_id"]
        from tfcloud import sdk

        def stop() -> str:
            with sdk.attached(job_id, **sources.options_for(job_id)) as handle:
                handle.cancel()
                return handle.info().state.value

        try:
            state = await run_in_threadpool(stop)
        except TfcloudError as exc:
            return JSONResponse({"error": exc.message}, status_code=404 if isinstance(exc, JobNotFoundError) else 400)
        return JSONResponse({"job_id": job_id, "state": state})

    async def job_data(request: Request) -> Response:
        """A job's training curves (``/curves``) or its replicas' resources (``/resources``), as JSON."""
        from tfcloud import sdk
        from tfcloud.ui.logstream import local_pids

        job_id, what = request.path_params["job_id"], request.url.path.rpartition("/")[2]

        def get() -> dict[str, Any]:
            with sdk.attached(job_id, **sources.options_for(job_id)) as handle:
                info = handle.info()
                pids = local_pids(info) if what == "resources" else None
            found = (data.curves(job_id, info.output_dir, views.trial_metrics_file(job_id, sources))
                     if what == "curves" else data.resources(job_id, pids, info.state.is_final))
            return {**found, "state": info.state.value, "final": info.state.is_final}

        try:
            return JSONResponse(await run_in_threadpool(get), headers={"Cache-Control": "no-store"})
        except TfcloudError as exc:
            return JSONResponse({"error": exc.message}, status_code=404 if isinstance(exc, JobNotFoundError) else 400)

    def log_route(handler: Any) -> Any:
        async def route(request: Request) -> Response:
            job_id = request.path_params["job_id"]
            try:
                options = sources.options_for(job_id)
            except TfcloudError as exc:
                return JSONResponse({"error": exc.message}, status_code=400)
            return await handler(request, job_id, options, stopping=stopping)  # type: ignore[no-any-return]

        return route

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

    async def study_json(request: Request) -> Response:
        from tfcloud import sdk
        from tfcloud.ui.explore import study_data

        def get() -> dict[str, Any]:
            with sdk.attach_study(request.path_params["study_id"]) as found:
                return study_data(found.info())

        try:
            return JSONResponse(await run_in_threadpool(get), headers={"Cache-Control": "no-store"})
        except TfcloudError as exc:
            return JSONResponse({"error": exc.message}, status_code=404 if isinstance(exc, JobNotFoundError) else 400)

    async def cancel_study(request: Request) -> Response:
        from tfcloud import sdk

        def stop() -> str:
            with sdk.attach_study(request.path_params["study_id"]) as found:
                found.cancel()
                return found.info().state.value

        try:
            state = await run_in_threadpool(stop)
        except TfcloudError as exc:
            return JSONResponse({"error": exc.message}, status_code=404 if isinstance(exc, JobNotFoundError) else 400)
        return JSONResponse({"study_id": request.path_params["study_id"], "state": state})

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
        Route("/api/jobs/{job_id:path}/logs/earlier", log_route(logroutes.earlier)),
        Route("/api/jobs/{job_id:path}/logs/search", log_route(logroutes.search)),
        Route("/api/jobs/{job_id:path}/logs.txt", log_route(logroutes.download)),
        Route("/api/jobs/{job_id:path}/logs", log_route(logroutes.events)),
        Route("/api/jobs/{job_id:path}/artifact", artifact),
        Route("/api/jobs/{job_id:path}/curves", job_data, name="curves"),
        Route("/api/jobs/{job_id:path}/resources", job_data, name="resources"),
        Route("/api/jobs/{job_id:path}/cancel", cancel, methods=["POST"]),
        Route("/api/studies/{study_id:path}/cancel", cancel_study, methods=["POST"]),
        Route("/api/studies/{study_id:path}", study_json),
        Route("/studies/{study_id:path}/plot.png", study_plot),
        Route("/studies/{study_id:path}", study),
        Route("/jobs/{job_id:path}", job),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes)
    return Guard(TokenGate(app, token=token, cookie=cookie), hosts=hosts)

