"""What people see of one job (``tfcloud status JOB``): a few aligned rows, the id and state first.

Target, state and outcome; each replica's state, exit code and machine, the one that failed marked, its
web-access shell (Vertex AI with ``--web-access``) and the last line it printed; when it was created, started and
ended, and how long it ran; where its outputs went; its console link; and the next command worth typing.
``--json`` prints :meth:`JobInfo.to_dict` instead (the machine form). Pure: lines in, lines out; the CLI prints them.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from tfcloud.backends.base import JobInfo

__all__ = ["next_command", "status_html", "status_lines", "status_rows"]


def status_lines(info: JobInfo, *, now: float | None = None, said: Mapping[str, str] | None = None) -> list[str]:
    """The lines of ``tfcloud status`` for ``info`` (``now``: the time a running job's duration runs to;
    ``said``: each replica's last line, :func:`tfcloud.view.outcome.last_said`)."""
    rows = status_rows(info, now=now, said=said)
    label_width = max(len(label) for label, _ in rows)
    return [f"{info.job_id}  {info.state.value}",
            *(f"  {label:<{label_width}}  {value}" for label, value in rows)]


def status_html(info: JobInfo, *, now: float | None = None) -> str:
    """The job as an HTML table for a notebook (the :class:`~tfcloud.sdk.Job` a cell returns): the same rows,
    the console a link, and what to call next in Python's terms."""
    import html

    esc = html.escape
    cells = []
    for label, value in status_rows(info, now=now, python=True):
        shown = (f"<a href='{esc(value)}' target='_blank'>{esc(value)}</a>" if label == "console"
                 else f"<code>{esc(value)}</code>")
        cells.append(f"<tr><th style='text-align:left'>{esc(label)}</th><td style='text-align:left'>{shown}</td></tr>")
    return (f"<div><p><b>Job</b> <code>{esc(info.job_id)}</code>: <b>{esc(info.state.value)}</b></p>"
            f"<table>{''.join(cells)}</table></div>")


def status_rows(info: JobInfo, *, now: float | None = None, python: bool = False,
                said: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(label, value) for each fact of ``tfcloud status`` (``python``: the next step as a method call; ``said``:
    each replica's last line, shown under its replicas)."""
    from tfcloud.job.states import JobState
    from tfcloud.records.timeline import format_duration

    rows: list[tuple[str, str]] = [("target", info.target)]
    if info.display_name:
        rows.append(("name", info.display_name))
    attempt = (info.labels or {}).get("tfcloud-attempt")
    if attempt and attempt != "1":  # a capacity fallback's attempt (tfcloud.google.vertex.fallback)
        first = (info.labels or {}).get("tfcloud-fallback-of", "?")
        rows.append(("attempt", f"{attempt}: fallback {int(attempt) - 1} of job {first}, which found no capacity"
                     if attempt.isdigit() else attempt))
    if info.state is JobState.SUCCEEDED:
        from tfcloud.view.outcome import failed_beside

        _, beside = failed_beside(info)
        rows.append(("outcome", "succeeded" + (f" (exit code {info.exit_code})" if info.exit_code else "")
                     + (f": the chief ended well, but {beside}" if beside else "")))
    elif info.state.is_final:
        rows.append(("outcome", f"{info.state.value}: {info.message or 'no reason recorded'}"))
    else:
        rows.append(("outcome", "not yet: the job has not ended"))
    width = max((len(r.name) for r in info.replicas), default=0)
    machines = any(r.machine for r in info.replicas)
    for i, replica in enumerate(info.replicas):
        code = "" if replica.exit_code is None else f"exit {replica.exit_code}"
        machine = f"  {replica.machine or '-'}" if machines else ""
        mark = "  <- failed first" if replica.name == info.failed_replica else ""
        rows.append(("replicas" if i == 0 else "",
                     f"{replica.name:<{width}}  {replica.state.value:<12} {code:<7}{machine}".rstrip() + mark))
    if not info.replicas:
        rows.append(("replicas", "none yet (they show up once the job starts)"))
    shells = [(r.name, r.web_access_uri) for r in info.replicas if r.web_access_uri]
    rows += [("shell" if i == 0 else "", f"{name:<{width}}  {uri}") for i, (name, uri) in enumerate(shells)]
    lasts = [(r.name, (said or {})[r.name]) for r in info.replicas if r.name in (said or {})]
    rows += [("said" if i == 0 else "", f"{name:<{width}}  {_printable(text)}")
             for i, (name, text) in enumerate(lasts)]
    for label, when in (("created", info.created), ("started", info.started), ("ended", info.ended)):
        rows.append((label, _when(when)))
    start = info.started if info.started is not None else info.created
    if start is not None:
        end = info.ended if info.ended is not None else (now if now is not None else time.time())
        running = "" if info.ended is not None else " so far"
        rows.append(("duration", format_duration(max(0.0, end - start)) + running))
    rows.append(("outputs", info.output_dir or "-"))
    if info.console_url:
        rows.append(("console", info.console_url))
    rows.append(("next", next_call(info) if python else next_command(info)))
    return rows


def next_command(info: JobInfo) -> str:
    """The command worth typing next: follow a running job, read why a failed one failed, list what a finished
    one wrote."""
    from tfcloud.job.states import JobState
    from tfcloud.view.outcome import failed_beside

    if not info.state.is_final:
        return f"tfcloud logs {info.job_id} -f"
    if info.state is not JobState.SUCCEEDED and info.failed_replica:
        return f"tfcloud logs {info.job_id} --replica {info.failed_replica} --tail 50"
    beside, _ = failed_beside(info)
    if beside:  # succeeded, but a replica failed beside the chief: its lines first
        return f"tfcloud logs {info.job_id} --replica {beside[0]} --tail 50"
    if info.state is JobState.SUCCEEDED and info.output_dir:
        return f"tfcloud artifacts {info.job_id}"
    return f"tfcloud logs {info.job_id}"


def next_call(info: JobInfo) -> str:
    """:func:`next_command` in Python, on the job a notebook cell holds."""
    from tfcloud.job.states import JobState

    if not info.state.is_final:
        return "job.logs(follow=True), job.wait(), job.cancel()"
    if info.state is not JobState.SUCCEEDED and info.failed_replica:
        return f"job.logs(replica={info.failed_replica!r}, tail=50), job.failure()"
    return "job.logs()"


def _printable(text: str, width: int = 100) -> str:
    """``text`` on one line of at most ``width`` characters, control characters (colour codes) left out."""
    shown = "".join(c for c in text if c.isprintable())
    return shown if len(shown) <= width else shown[:width - 1] + "…"


def _when(value: float | None) -> str:
    if value is None:
        return "-"
    return dt.datetime.fromtimestamp(value, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
