"""A study's plots: the metric against trial number and against each parameter, as a PNG (matplotlib, the tune
extra) and a self-contained HTML page (the PNG embedded, and the table of trials). Files and bytes, not a
terminal's: the local tuner writes them at a study's end (:mod:`tfcloud.targets.local.tuning`), ``tfcloud tune
--plot`` and the dashboard too.

- :func:`write_plots`: the PNG and/or the HTML page; :func:`plot_png`: the PNG's bytes;
  :func:`check_plot_path`: ``--plot PATH`` checked before the study starts;
- :func:`state_text`: a trial's state as a word (``succeeded``, ``stopped early``).
"""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path
from typing import Any

from tfcloud.job.states import JobState
from tfcloud.job.study import ParamKind, Scale, StudyInfo, TrialInfo, format_value

__all__ = ["PLOT_SUFFIXES", "check_plot_path", "plot_png", "state_text", "write_plots"]


def _duration(trial: TrialInfo) -> str:
    seconds = trial.duration
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    return f"{seconds:.0f}s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def _value(info: StudyInfo, name: str, value: object) -> str:
    try:
        spec = info.study.param(name)
    except KeyError:
        return str(value)
    if spec.kind is ParamKind.DOUBLE and isinstance(value, float):
        return f"{value:.4g}"
    return format_value(spec, value)


def _metric(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def state_text(trial: TrialInfo) -> str:
    """A trial's state as the table shows it: ``stopped at N`` for a trial early stopping ended at step N."""
    return f"stopped at {trial.stopped_at}" if trial.stopped_at is not None else trial.state.value


def _figure(info: StudyInfo) -> Any:
    from matplotlib.figure import Figure

    params = info.study.params
    columns = min(3, 1 + len(params))
    rows = math.ceil((1 + len(params)) / columns)
    figure = Figure(figsize=(4.2 * columns, 3.4 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    done = [t for t in info.trials if t.state is JobState.SUCCEEDED and t.metric is not None]
    failed = [t for t in info.trials if t.state is not JobState.SUCCEEDED]
    best = info.best_trial
    metric = info.study.metric

    ax = axes[0]
    xs = [int(t.trial_id) if t.trial_id.isdigit() else i for i, t in enumerate(done, 1)]
    ys = [t.metric for t in done]
    ax.plot(xs, ys, "o", color="tab:blue", label="trial")
    running: list[float] = []
    for y in ys:
        assert y is not None
        running.append(y if not running or info.study.better(y, running[-1]) else running[-1])
    if running:
        ax.step(xs, running, where="post", color="tab:orange", label="best so far")
    for trial in failed:
        if trial.trial_id.isdigit():
            ax.axvline(int(trial.trial_id), color="tab:red", alpha=0.25, linewidth=4)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("trial")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} by trial ({info.study.goal.value})", fontsize=10)
    if xs:
        ax.legend(fontsize=8)

    for ax, spec in zip(axes[1:], params, strict=False):
        values = [t.params.get(spec.name) for t in done]
        if spec.kind is ParamKind.CATEGORICAL:
            labels = [str(v) for v in spec.values]
            positions = [labels.index(str(v)) if str(v) in labels else -1 for v in values]
            ax.set_xticks(range(len(labels)), labels)
            ax.set_xlim(-0.5, len(labels) - 0.5)
            ax.plot(positions, ys, "o", color="tab:blue")
        else:
            ax.plot([float(v) for v in values if v is not None], ys, "o", color="tab:blue")
            if spec.scale is Scale.LOG:
                ax.set_xscale("log")
        if best is not None and spec.name in best.params:
            value = best.params[spec.name]
            x = (list(map(str, spec.values)).index(str(value)) if spec.kind is ParamKind.CATEGORICAL
                 else float(value))
            ax.plot([x], [best.metric], "*", color="tab:orange", markersize=14, label="best")
            ax.legend(fontsize=8)
        ax.set_xlabel(spec.name)
        ax.set_ylabel(metric)
        ax.set_title(f"{metric} vs {spec.name}", fontsize=10)
    for ax in axes[1 + len(params):]:
        ax.set_visible(False)
    figure.suptitle(info.study_id, fontsize=11)
    return figure


def _html(info: StudyInfo, png: bytes) -> str:
    best = info.best_trial
    head = ["trial", *(p.name for p in info.study.params), info.study.metric, "state", "duration"]
    rows = []
    for trial in info.trials:
        marked = best is not None and trial.trial_id == best.trial_id
        cells = [("* " if marked else "") + trial.trial_id,
                 *(_value(info, p.name, trial.params[p.name]) if p.name in trial.params else "-"
                   for p in info.study.params),
                 _metric(trial.metric), state_text(trial), _duration(trial)]
        style = ' style="font-weight:bold"' if marked else ""
        rows.append(f"<tr{style}>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    title = html.escape(f"{info.study_id}: {info.study.goal.value} {info.study.metric}")
    return (
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + title + "</title>\n"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style></head><body>\n"
        f"<h1>{title}</h1>\n"
        f"<img alt=\"{html.escape(info.study.metric)} by trial and by parameter\" "
        f"src=\"data:image/png;base64,{base64.b64encode(png).decode('ascii')}\">\n"
        "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>\n" + "\n".join(rows)
        + "\n</table>\n</body></html>\n")


PLOT_SUFFIXES = (".png", ".html", ".htm")


def check_plot_path(value: object, field: str = "--plot") -> Path:
    """``tfcloud tune --plot PATH``, checked before the first trial starts: a ``.png`` or ``.html`` file, not
    a directory, where this user can write (missing directories above it are made when the plot is written)."""
    import os

    from tfcloud.config.usertext import refuse_control as check_text
    from tfcloud.errors import ValidationError

    expected = "a .png or .html file in a directory you can write to"
    check_text(field, str(value) if isinstance(value, Path) else value)
    if not isinstance(value, str | Path) or not str(value) or "\0" in str(value):
        raise ValidationError(field, expected, value)
    path = Path(value).expanduser()
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise ValidationError(field, expected, str(value),
                              hint="End the name with .png (an image) or .html (a page with the table).")
    if path.is_dir() or (path.exists() and not os.access(path, os.W_OK)):
        what = "is a directory" if path.is_dir() else "cannot be written"
        raise ValidationError(field, expected, str(value), hint=f"{path} {what}.")
    existing = path.parent  # missing directories are made, as long as the nearest one that exists allows it
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        what = "is not a directory" if not existing.is_dir() else "is not writable"
        raise ValidationError(field, expected, str(value), hint=f"{existing} {what}: the plot cannot go there.")
    if existing == existing.parent and path.parent != existing:  # a new directory at the filesystem's root
        top = existing / path.relative_to(existing).parts[0]
        raise ValidationError(field, expected, str(value),
                              hint=f"{top} does not exist, and tfcloud does not make directories at the "
                                   f"filesystem's root: create it first (mkdir -p {path.parent}), or choose a "
                                   "directory that exists.")
    return path


def write_plots(info: StudyInfo, *, png: Path | None = None, html_path: Path | None = None) -> None:
    """Write the plot as a PNG (``png``) and/or a self-contained HTML page (``html_path``: the PNG embedded,
    and the table of trials). Needs matplotlib (tfcloud[tune])."""
    data = plot_png(info)
    if png is not None:
        png.parent.mkdir(parents=True, exist_ok=True)
        png.write_bytes(data)
    if html_path is not None:
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(_html(info, data), encoding="utf-8")


def plot_png(info: StudyInfo, *, dpi: int = 110) -> bytes:
    """The plot (the metric against trial number and against each parameter) as PNG bytes (``tfcloud ui``
    shows it in the study's page). Needs matplotlib (tfcloud[tune])."""
    import io

    from tfcloud.config.extras import require_tune_extra

    require_tune_extra(search=False)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure = _figure(info)
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()
