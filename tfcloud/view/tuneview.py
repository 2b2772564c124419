"""What people see of a study: the table of trials and the command that reruns the best one (the plots, which
the local tuner writes too, are :mod:`tfcloud.view.studyplots`; re-exported here).

- :func:`study_table`: a rich table (trial, each parameter, the metric, state, duration), the best marked.
- :func:`rerun_command`: ``tfcloud submit train.py ... -- --learning_rate=0.01``, shell-quoted.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tfcloud.job.states import JobState
from tfcloud.job.study import ParamKind, StudyInfo, TrialInfo, trial_args
from tfcloud.view.studyplots import _duration, _metric, _value, check_plot_path, plot_png, state_text, write_plots

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["check_plot_path", "plot_png", "rerun_command", "state_text", "study_table", "write_plots"]

_STYLE = {JobState.SUCCEEDED: "green", JobState.FAILED: "red", JobState.CANCELLED: "yellow"}


def study_table(info: StudyInfo) -> Table:
    """The trials as a rich table; the best succeeded trial's row is marked ``*`` and bold."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    best = info.best_trial
    done = sum(1 for t in info.trials if t.state in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED))
    title = (f"{info.study_id}\n{info.state.value}: {done}/{info.study.max_trials} trials done, "
             f"{info.study.goal.value} {info.study.metric}")
    table = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("trial", justify="right")
    for spec in info.study.params:
        table.add_column(Text(spec.name), justify="left" if spec.kind is ParamKind.CATEGORICAL else "right",
                         min_width=min(len(spec.name), 24))
    table.add_column(Text(info.study.metric), justify="right", min_width=min(len(info.study.metric), 24))
    table.add_column("state")
    table.add_column("duration", justify="right")
    for trial in info.trials:
        marked = best is not None and trial.trial_id == best.trial_id
        cells = [Text(("* " if marked else "") + trial.trial_id)]
        cells += [Text(_value(info, spec.name, trial.params[spec.name]) if spec.name in trial.params else "-")
                  for spec in info.study.params]
        style = "yellow" if trial.stopped_at is not None else _STYLE.get(trial.state, "")
        cells += [Text(_metric(trial.metric)), Text(state_text(trial), style=style),
                  Text(_duration(trial))]
        table.add_row(*cells, style="bold" if marked else None)
    if best is not None:
        table.caption = Text(f"* best: trial {best.trial_id}, {info.study.metric} = {_metric(best.metric)}")
        table.caption_justify = "left"
    return table


def rerun_command(entry_point: str, trial: TrialInfo, info: StudyInfo, *, flags: Sequence[str] = (),
                  args: Sequence[str] = ()) -> str:
    """The command that runs ``trial``'s parameters as one job: the study's job flags, the user's arguments,
    then the trial's ``--NAME=VALUE``; shell-quoted."""
    words = ["tfcloud", "submit", entry_point, *flags, "--", *args, *trial_args(info.study, trial.params)]
    return shlex.join(words)
