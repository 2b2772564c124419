"""What people see of a list of jobs (``tfcloud list``): one line per job, its id always whole.

Ids are what every other command takes (``tfcloud logs JOB``), so they are never cut: when the columns do not
fit the terminal, each job takes two lines instead, its id alone on the first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["jobs_lines"]

#: (heading, JobInfo.to_dict() key), in the order shown.
COLUMNS = (("JOB ID", "job_id"), ("STATE", "state"), ("EXIT", "exit_code"), ("CREATED (UTC)", "created"),
           ("COST", "cost"), ("NAME", "display_name"))
_GAP = "  "


def _cell(row: Mapping[str, object], key: str) -> str:
    value = row.get(key)
    if value is None or value == "":
        return "-"
    if key == "cost" and isinstance(value, Mapping):  # sdk.cost_of(...).to_dict()
        return str(value.get("shown") or "-")
    if key == "created" and isinstance(value, str):
        return value[:16].replace("T", " ")  # 2026-11-25T03:24:32.123Z -> 2026-11-25 03:24
    return str(value)


def jobs_lines(rows: Sequence[Mapping[str, object]], *, width: int) -> list[str]:
    """The lines of the jobs table (``rows``: :meth:`JobInfo.to_dict` values) for a terminal ``width`` wide:
    aligned columns under a heading, or, when they would not fit, two lines a job (its whole id, then the
    rest, indented)."""
    from rich.cells import cell_len

    cells = [[_cell(row, key) for _, key in COLUMNS] for row in rows]
    heading = [title for title, _ in COLUMNS]
    widths = [max(cell_len(text) for text in column) for column in zip(heading, *cells, strict=True)]
    if sum(widths) + len(_GAP) * (len(widths) - 1) <= width:
        return [_GAP.join(text + " " * (w - cell_len(text)) for text, w in zip(line, widths, strict=True)).rstrip()
                for line in (heading, *cells)]
    lines = []
    for job_id, state, code, created, cost, name in cells:
        lines.append(job_id)
        outcome = state if code == "-" else f"{state} (exit {code})"
        detail = "  " + _GAP.join([outcome, f"created {created}", f"cost {cost}", name])
        if cell_len(detail) > width > 20:  # the name gives way; the id above never does
            detail = detail[: width - 1] + "…"
        lines.append(detail)
    return lines
