"""``tfcloud tune``: a hyperparameter study on a target that has a tuner, followed with a live table."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from tfcloud.cli._app import app
from tfcloud.cli._common import ascii_integer, selected_target
from tfcloud.cli._options import (
    BuildBucketOpt,
    BuildLogsOpt,
    ChiefConfigOpt,
    ContextOpt,
    DataOpt,
    EntryPointArg,
    EnvOpt,
    ImageOpt,
    LabelOpt,
    ParentImageOpt,
    PsCountOpt,
    RequirementsOpt,
    SecretOpt,
    StrategyOpt,
    TargetOpt,
    TargetOptionOpt,
    WorkerConfigOpt,
    WorkerCountOpt,
    docker,
    given_target_options,
    machine,
    pairs,
    strategy_value,
    with_target_options,
)
from tfcloud.view.console import get_console, verbosity

if TYPE_CHECKING:
    from tfcloud.job.study import StudyInfo
    from tfcloud.sdk import JobOptions, Study, TrialLogs

__all__ = ["tune"]


def _trial_number(value: Any) -> int:
    """``--follow-trial N``: a trial number ≥ 1, in ASCII digits."""
    number = ascii_integer(value)
    if number < 1:
        raise typer.BadParameter(f"{number} is not in the range x>=1.")
    return number


@app.command()
@with_target_options
def tune(
    ctx: typer.Context,
    entry_point: EntryPointArg,
    args: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045 (typer needs Optional)
        help="Arguments for the script, after `--`; each trial adds --NAME=VALUE per parameter.",
        show_default=False)] = None,
    param: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--param", "-p", help="A parameter (repeatable): NAME=double:LOW:HIGH[:log], NAME=int:LOW:HIGH[:log], "
                              "NAME=categorical:A,B,... or NAME=discrete:N1,N2,...", show_default=False)] = None,
    metric: Annotated[str, typer.Option(help="The metric trials report (tfcloud.report, or Keras fit's epoch "
                                             "logs), e.g. val_accuracy.", show_default=False)] = "",
    goal: Annotated[str, typer.Option(help="maximize or minimize the metric.")] = "maximize",
    trials: Annotated[int, typer.Option("--trials", help="Trials in all.", parser=ascii_integer,
                                        metavar="INTEGER")] = 10,
    parallel: Annotated[int, typer.Option("--parallel", help="Trials at a time.", parser=ascii_integer,
                                          metavar="INTEGER")] = 1,
    algorithm: Annotated[str, typer.Option(help="default (optuna's TPE locally; Vertex AI's Bayesian search), "
                                                "random or grid.")] = "default",
    early_stopping: Annotated[bool, typer.Option(
        "--early-stopping", help="Stop trials whose metric is worse than the median of the finished trials at the "
                                 "same step (optuna's MedianPruner locally; Vertex AI's median stopping).")] = False,
    local: Annotated[bool, typer.Option("--local", help="Trials as local jobs (the default target).")] = False,
    vertex: Annotated[bool, typer.Option("--vertex", help="A Vertex AI HyperparameterTuningJob.")] = False,
    target: TargetOpt = None,
    target_option: TargetOptionOpt = None,
    worker_count: WorkerCountOpt = 0,
    chief_config: ChiefConfigOpt = None,
    worker_config: WorkerConfigOpt = None,
    ps_count: PsCountOpt = 0,
    strategy: StrategyOpt = "auto",
    requirements: RequirementsOpt = None,
    label: LabelOpt = None,
    env: EnvOpt = None,
    secret: SecretOpt = None,
    data: DataOpt = None,
    image: ImageOpt = None,
    parent_image: ParentImageOpt = None,
    image_build_bucket: BuildBucketOpt = None,
    context: ContextOpt = None,
    build_logs: BuildLogsOpt = False,
    plot: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        help="Also write the plot here (.png, or .html: a self-contained page).", show_default=False)] = None,
    detach: Annotated[bool, typer.Option("--detach", "-d", help="Vertex AI: print the study id and return.")] = False,
    follow_trial: Annotated[Optional[int], typer.Option(  # noqa: UP045
        "--follow-trial", metavar="N", parser=_trial_number,
        help="Stream trial N's logs live above the table (-v: every trial's).", show_default=False)] = None,
    **target_options: Any,
) -> None:
    """Tune ENTRY_POINT's hyperparameters: trials with --NAME=VALUE arguments, a live table, the best trial.

    Example: tfcloud tune train.py --param learning_rate=double:1e-4:1e-1:log --param units=int:32:512
    --metric val_accuracy --trials 12 --parallel 3 -- --epochs 5
    """
    from tfcloud import sdk
    from tfcloud.view.printers import study_outcome

    chosen = selected_target(local, vertex, target_options.get("ray_address"), target)
    options: JobOptions = {
        "requirements_txt": requirements, "docker_config": docker(image, parent_image, None, image_build_bucket),
        "distribution_strategy": strategy_value(strategy), "chief_config": machine(chief_config, "chief_config"),
        "worker_config": machine(worker_config, "worker_config"), "worker_count": worker_count,
        "ps_count": ps_count, "entry_point_args": list(args or []), "job_labels": pairs(label, "--label"),
        "env": pairs(env, "--env"), "secrets": pairs(secret, "--secret"),
        "data": list(data) if data else None, "target": chosen, "context_dir": context,
        **given_target_options(ctx, target_options, target=chosen, plugin_options=target_option),  # type: ignore[typeddict-item]
    }
    if strategy == "auto":
        del options["distribution_strategy"]
    if follow_trial is not None:  # trials are numbered from 1
        from tfcloud.errors import ValidationError

        if detach:
            raise ValidationError("--follow-trial", "no --detach (a detached study is not followed)", "--detach",
                                  hint=f"Read the trial's logs later: tfcloud logs STUDY_ID --trial {follow_trial}")
        if follow_trial > trials:
            raise ValidationError("--follow-trial", f"a trial's number, 1 to {trials} (--trials)", follow_trial)
    if plot is not None:  # checked before the first trial, not after the last
        from tfcloud.view.tuneview import check_plot_path

        plot = check_plot_path(plot)
    study = sdk.tune(entry_point, params=list(param or []), metric=metric, goal=goal, max_trials=trials,
                     parallel_trials=parallel, algorithm=algorithm, build_logs=build_logs,
                     early_stopping=early_stopping, **options)
    with study:
        if detach:
            typer.echo(study.study_id)
            get_console().print(f"See it with: tfcloud status {study.study_id}", markup=False)
            return
        get_console().print(f"Study {study.study_id}: {trials} trial(s), {parallel} at a time.", markup=False)
        try:
            logs = None
            if verbosity() >= 0 and (follow_trial is not None or verbosity() > 0):
                names = ["chief-0", *([f"worker-{worker_count - 1}"] if worker_count else []),
                         *([f"ps-{ps_count - 1}"] if ps_count else [])]
                on = study.info().target
                logs = sdk.TrialLogs(get_console(), attached=lambda job_id: sdk.attached(job_id, target=on),
                                     trials=trials, replicas=names,
                                     only=None if follow_trial is None else str(follow_trial))
            info = _live_study(study, logs)
        except KeyboardInterrupt:
            if study.cancels_on_interrupt:  # local trials die with the terminal, as local jobs do
                get_console().print(f"Interrupted: cancelling {study.study_id}.", markup=False)
                study.cancel()
            else:
                get_console().print(f"Detached: {study.study_id} keeps running.\n"
                                    f"  See it again: tfcloud status {study.study_id} --study\n"
                                    f"  Cancel it:    tfcloud cancel {study.study_id} --study", markup=False)
            raise typer.Exit(130) from None
        except BaseException:
            if study.cancels_on_interrupt:  # never leave the tuner running behind an error
                study.cancel()
            raise
        study_outcome(study, info, plot)
    raise typer.Exit(0 if info.best_trial is not None else 1)


def _live_study(study: "Study", logs: "TrialLogs | None" = None) -> "StudyInfo":
    """Follow a study with a live table of its trials until it ends (``logs``: a :class:`tfcloud.sdk.TrialLogs`
    whose trials' lines scroll above the table); its info then."""
    import time

    from rich.live import Live

    from tfcloud.job.states import JobState
    from tfcloud.view.tuneview import study_table

    info: StudyInfo = study.info()
    ended = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)
    if verbosity() < 0:
        return study.wait()
    pause = study.poll_interval
    with Live(study_table(info), console=get_console(), auto_refresh=False) as live:
        while info.state not in ended:
            if logs is None:
                time.sleep(pause)
            else:
                logs.start(info)
                logs.pump(pause)
            info = study.info()
            live.update(study_table(info), refresh=True)
        if logs is not None:
            logs.start(info)  # a trial that started and ended between two looks
            logs.finish()
    get_console().print()
    return study.wait()

