"""A dry-run plan for people: plain text (``str(plan)``, IPython's pretty printer) and an HTML table (a
notebook's ``_repr_html_``). ``tfcloud submit --dry-run`` prints the same facts on the console; the generated
files (the launcher, a converted notebook) only with ``--show-files``.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcloud.plan import Plan

__all__ = ["generated_files", "plan_html", "plan_rows", "plan_text"]


def plan_rows(plan: Plan) -> list[tuple[str, str]]:
    """(label, value) for each fact of the plan after its pools, in the order the console shows them."""
    spec = plan.spec
    rows = [("Each replica runs", plan.command_line),
            ("Script args", json.dumps(list(plan.args)) if plan.args else "(none)")]
    if spec.job_labels:
        rows.append(("Labels", ", ".join(f"{k}={v}" for k, v in spec.job_labels.items())))
    rows += [("Requirement", r) for r in plan.requirements]
    if plan.endpoint:
        rows.append(("Runs on", plan.endpoint))
    rows += [("Note", n) for n in plan.notes]
    for name, source in plan.sources.items():
        value = source["value"]
        shown = ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value
        rows.append(("Setting", f"{name} = {shown} (from {source['from']})"))
    rows += [("Warning", w) for w in plan.warnings]
    if plan.image is not None:
        from tfcloud.context import format_size

        image = plan.image
        rows += [("Image", f"{image.uri} (nothing built)"), ("Base image", image.base_image),
                 ("Builder", image.builder),
                 ("Build context", f"{image.context_root}: {len(image.files)} files, "
                                   f"{format_size(image.total_size)}")]
    rows.append(("Generated", generated_files(plan)))
    return rows


def generated_files(plan: Plan) -> str:
    """One line naming the files tfcloud generates for the job and where to see them whole."""
    generated = [("tfcloud_launcher.py", plan.launcher)]
    if plan.script is not None:
        generated.append((f"{plan.spec.entry_point.name} as a script", plan.script))
    return (", ".join(f"{name} ({text.count(chr(10))} lines)" for name, text in generated)
            + "; shown by --show-files (plan.launcher" + (", plan.script" if plan.script is not None else "")
            + " in Python)")


def _pools(plan: Plan) -> list[list[str]]:
    return [["role", "replicas", "machine type", "accelerator"],
            *([p.role, str(p.replicas), p.machine_type, p.accelerator] for p in plan.pools)]


def plan_text(plan: Plan) -> str:
    """The plan as plain text: what it runs where, the pools as aligned columns, then :func:`plan_rows`."""
    spec = plan.spec
    lines = [f"Plan for {spec.entry_point} (target: {spec.target.name}; nothing submitted)",
             f"Strategy: {plan.strategy} ({plan.strategy_reason})"]
    table = _pools(plan)
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table]
    lines += [f"{label}: {value}" for label, value in plan_rows(plan)]
    return "\n".join(lines)


def plan_html(plan: Plan) -> str:
    """The plan as an HTML fragment for a notebook: a heading, the pools table and a table of the rest."""
    esc = html.escape
    spec = plan.spec
    pools = _pools(plan)
    head = "".join(f"<th>{esc(c)}</th>" for c in pools[0])
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in pools[1:])
    facts = "".join(f"<tr><th style='text-align:left'>{esc(label)}</th><td style='text-align:left'>"
                    f"<code>{esc(value)}</code></td></tr>" for label, value in plan_rows(plan))
    return (f"<div><p><b>Plan</b> for <code>{esc(str(spec.entry_point))}</code> (target: "
            f"{esc(spec.target.name)}; nothing submitted)<br>Strategy: <b>{esc(plan.strategy)}</b> "
            f"({esc(plan.strategy_reason)})</p><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<table>{facts}</table></div>")
