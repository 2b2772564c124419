"""The job commands: ``status``, ``stacks``, ``logs``, ``cancel``, ``artifacts``, ``tensorboard``, ``list`` and
``cost``."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import Annotated, Any, Optional

import typer

from tfcloud.cli._app import app, dumps
from tfcloud.cli._common import AllReplicasOpt, ascii_integer, pairs
from tfcloud.cli._options import where, with_where
from tfcloud.view import completion
from tfcloud.view.console import get_console, get_error_console, verbosity
from tfcloud.view.heap import keep_freed_memory

__all__ = ["artifacts", "cancel", "cost", "list_jobs", "logs", "stacks", "status", "tensorboard"]


JobArg = Annotated[str, typer.Argument(
    metavar="JOB", autocompletion=completion.job_ids,
    help="The job id (local-..., ray-..., a Vertex AI id, its full resource name, or a plug-in target's).",
    show_default=False)]
LatestJobArg = Annotated[Optional[str], typer.Argument(  # noqa: UP045
    metavar="[JOB]", autocompletion=completion.job_ids,
    help="The job id (local-..., ray-..., a Vertex AI id, its full resource name, or a plug-in target's); "
         "default: the job this "
         "machine submitted last.", show_default=False)]


@app.command()
@with_where
def status(
    ctx: typer.Context,
    job: LatestJobArg = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the job as JSON (with its stage "
                                                             "timeline).")] = False,
    show_timeline: Annotated[bool, typer.Option(
        "--timeline", help="Draw how long each stage took: context, build, push, submit, queued, run.")] = False,
    study: Annotated[bool, typer.Option("--study", help="JOB is a Vertex AI tuning study's id.")] = False,
    **target_options: Any,
) -> None:
    """Show a job: target, state and outcome, its replicas, times, outputs, console link, the next command
    (without JOB: the job this machine submitted last). A tuning study's table of trials: study-..., or --study
    for Vertex AI."""
    from tfcloud import sdk

    chosen = where(ctx, target_options)
    if study or (job is not None and (job.startswith("study-") or "/hyperparameterTuningJobs/" in job)):
        _study_status(sdk.latest_job(job), json_output=json_output, **chosen)
        return
    job = sdk.latest_job(job)
    with sdk.attached(job, **chosen) as handle:
        info = handle.info()
        error = None if json_output else sdk.failure(handle)
        said = None if json_output else sdk.last_said(handle, info)
        stages = sdk.timeline(handle, info=info) if json_output or show_timeline else None
    if json_output:
        typer.echo(dumps({**info.to_dict(), "timeline": stages.to_list() if stages else []}, indent=2))
        return
    from tfcloud.view.statusview import status_lines

    typer.echo("\n".join(status_lines(info, said=said)))
    if stages is not None:
        typer.echo("")
        from rich.console import Console

        from tfcloud.records.timeline import render_timeline

        Console(highlight=False).print(render_timeline(stages))
    if error is not None:
        get_error_console().print(str(error), markup=False, highlight=False)


@app.command()
@with_where
def stacks(
    ctx: typer.Context,
    job: LatestJobArg = None,
    replica: Annotated[Optional[str], typer.Option(help="Only this replica, e.g. worker-1.",  # noqa: UP045
                                                   show_default=False)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print {replica: stacks} as JSON.")] = False,
    **target_options: Any,
) -> None:
    """Print every thread's Python stack of each running replica of a local, --container or Ray job (without
    JOB: the job this machine submitted last): where a slow or hung replica is waiting. On Ray, a short helper
    job reads them on each replica's node."""
    from tfcloud import sdk

    job = sdk.latest_job(job)
    found = sdk.stacks(job, replica=replica, **where(ctx, target_options))
    if json_output:
        typer.echo(dumps(found, indent=2))
        return
    if not found:
        get_console().print(f"No replica of {job} runs yet: try again in a moment.", markup=False, highlight=False)
        return
    typer.echo("\n\n".join(f"== {name} ==\n{text}" for name, text in found.items()))


def _study_status(study_id: str, *, json_output: bool, **chosen: Any) -> None:
    from rich.console import Console

    from tfcloud import sdk
    from tfcloud.view.tuneview import study_table

    with sdk.attach_study(study_id, **chosen) as study:
        info = study.info()
        if json_output:
            typer.echo(dumps(info.to_dict(), indent=2))
            return
        Console(highlight=False).print(study_table(info))
        best = info.best_trial
        if best is not None:
            typer.echo("Rerun the best trial: " + (study.rerun_command(best) or ""))


@app.command()
@with_where
def logs(
    ctx: typer.Context,
    job: LatestJobArg = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep following until the job ends.")] = False,
    replica: Annotated[Optional[str], typer.Option(help="Only this replica, e.g. worker-1.",  # noqa: UP045
                                                   show_default=False)] = None,
    tail: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--tail", metavar="N", help="Only the last N lines, in total (of one replica with --replica); with -f, "
                                    "then the new ones.", show_default=False)] = None,
    since: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--since", metavar="WHEN", help="Only lines printed since WHEN: a duration back from now (30s, 10m, 2h, "
                                        "1d) or a time (2026-11-23T14:05:00Z).", show_default=False)] = None,
    timestamps: Annotated[bool, typer.Option("--timestamps", "-t", help="Each line with the time it was printed "
                                                                        "(UTC).")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="One JSON object per line: time, replica, text, "
                                                             "stream (every line, start-up noise too).")] = False,
    trial: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--trial", metavar="N", help="JOB is a tuning study's id: the logs of its trial N (the number its table "
                                     "shows).", show_default=False)] = None,
    all_replicas: AllReplicasOpt = False,
    **target_options: Any,
) -> None:
    """Print a job's logs, one prefix per replica (without JOB: the job this machine submitted last). With -f,
    exit with the job's outcome (0 or 1). A study's trial: tfcloud logs STUDY_ID --trial N."""
    from tfcloud import sdk
    from tfcloud.view.logview import print_lines, print_tail

    job = sdk.latest_job(job)
    last, after = sdk.log_window(tail=tail, since=since)
    chosen = where(ctx, target_options)
    if trial is not None:
        with sdk.attach_study(job, **chosen) as study:
            found = study.info()
        job, chosen["target"] = sdk.trial_job(found, trial), found.target
    with sdk.attached(job, **chosen) as handle:
        info = handle.info()
        sdk.check_replica(info, replica)
        keep_freed_memory()  # this process is the command's own: it may keep freed memory for its next read
        try:
            if follow:
                raise typer.Exit(sdk.follow(handle, replica=replica, tail=last, since=after, timestamps=timestamps,
                                            json_lines=json_output, all_replicas=all_replicas))
            shown: dict[str, Any] = {
                "show_noise": verbosity() > 0, "timestamps": timestamps, "json_lines": json_output,
                "replicas": sdk.prefix_names(handle, info, replica),
                "all_replicas": all_replicas or verbosity() > 0, "show_frames": sdk.debugging()}
            if last is None:
                print_lines(handle.logs(follow=False, replica=replica, since=after), **shown)
            else:  # the last N lines as they read (folded, noise left off), not the last N printed
                print_tail(lambda n: handle.logs(follow=False, replica=replica, tail=n, since=after), last, **shown)
        except KeyboardInterrupt:
            raise typer.Exit(130) from None


@app.command()
@with_where
def cancel(
    ctx: typer.Context,
    job: LatestJobArg = None,
    study: Annotated[bool, typer.Option("--study", help="JOB is a Vertex AI tuning study's id.")] = False,
    **target_options: Any,
) -> None:
    """Cancel a job (without JOB: the job this machine submitted last), or a tuning study (study-..., or --study
    for Vertex AI) and its running trials. A job that had already ended is left as it is, and said so."""
    from tfcloud import sdk

    job = sdk.latest_job(job)
    chosen = where(ctx, target_options)
    if study or job.startswith("study-") or "/hyperparameterTuningJobs/" in job:
        with sdk.attach_study(job, **chosen) as found:
            found.cancel()
            typer.echo(f"{found.study_id}\t{found.info().state.value}")
        return

    with sdk.attached(job, **chosen) as handle:
        before = handle.info()
        if before.state.is_final:
            typer.echo(f"{handle.job_id}\t{before.state.value}")
            get_console().print(f"Job {handle.job_id} had already ended ({before.state.value}): nothing to cancel.",
                                markup=False, highlight=False)
            return
        handle.cancel()
        typer.echo(f"{handle.job_id}\t{handle.info().state.value}")


@app.command()
@with_where
def artifacts(
    ctx: typer.Context,
    job: LatestJobArg = None,
    # text, not a Path: typer turns '' into Path('.'), and an empty --download would write into the current directory
    download: Annotated[Optional[str], typer.Option(  # noqa: UP045
        help="Copy them into this directory.", show_default=False, metavar="PATH")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
    **target_options: Any,
) -> None:
    """List (or --download) what a job wrote under its output directory: model/, checkpoints/, logs/ (without
    JOB: the job this machine submitted last)."""
    from tfcloud import sdk
    from tfcloud.flow.outputs import download_artifacts, job_output_dir, list_artifacts

    if download is not None:  # checked before the job is looked up: an unwritable place copies nothing
        from tfcloud.flow.outputs import check_download_dir

        destination = check_download_dir(download)
    job = sdk.latest_job(job)
    with sdk.attached(job, **where(ctx, target_options)) as handle:
        base = job_output_dir(handle.info())
    if download is not None:
        from pathlib import Path

        fetched: list[Path] = []
        written = download_artifacts(base, destination, console=get_console(), fetched=fetched)
        already = f" ({len(written) - len(fetched)} already there)" if base.startswith("gs://") else ""
        typer.echo(f"{len(written)} file(s) from {base} in {destination}{already}")
        return
    found = list_artifacts(base)
    if json_output:
        typer.echo(dumps({"output_dir": base, "artifacts": [{"path": a.path, "size": a.size} for a in found]},
                              indent=2))
        return
    typer.echo(f"# {base}")
    for artifact in found:
        typer.echo(f"{artifact.size:>12}  {artifact.path}")
    if not found:
        get_console().print(f"Job {job} wrote no files under its output directory.", markup=False,
                            highlight=False)


@app.command()
@with_where
def tensorboard(
    ctx: typer.Context,
    job: LatestJobArg = None,
    port: Annotated[Optional[int], typer.Option(help="TensorBoard's port.", show_default=False,  # noqa: UP045
                                                parser=ascii_integer, metavar="INTEGER")] = None,
    **target_options: Any,
) -> None:
    """Run TensorBoard on a job's AIP_TENSORBOARD_LOG_DIR (its output directory's logs/; without JOB: the job
    this machine submitted last)."""
    import subprocess

    from tfcloud import sdk
    from tfcloud.flow.outputs import job_output_dir, tensorboard_command

    job = sdk.latest_job(job)
    with sdk.attached(job, **where(ctx, target_options)) as handle:
        command = tensorboard_command(job_output_dir(handle.info()), port=port)
    try:
        raise typer.Exit(subprocess.call(command))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


@app.command(name="list")
@with_where
def list_jobs(
    ctx: typer.Context,
    state: Annotated[Optional[str], typer.Option(  # noqa: UP045
        metavar="STATE", autocompletion=completion.states,
        help="Only jobs in this state: " + ", ".join(completion.STATES) + ".", show_default=False)] = None,
    label: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--label", help="Only jobs with this label KEY=VALUE (repeatable).", show_default=False)] = None,
    limit: Annotated[int, typer.Option(help="At most this many jobs.", parser=ascii_integer, metavar="INTEGER")] = 50,
    json_output: Annotated[bool, typer.Option("--json", help="Print the jobs as JSON.")] = False,
    **target_options: Any,
) -> None:
    """List jobs, newest first."""
    from tfcloud import sdk

    chosen = where(ctx, target_options)
    rows = [{**info.to_dict(), "cost": sdk.cost_of(info).to_dict()}
            for info in sdk.list_jobs(state=state, labels=pairs(label, "--label"), limit=limit, **chosen)]
    target = chosen["target"]
    if json_output:
        typer.echo(dumps(rows, indent=2))
        return
    import shutil

    from tfcloud.view.jobview import jobs_lines

    if not rows:
        get_console().print(f"No {target + ' ' if target else ''}jobs{' in state ' + state if state else ''}.",
                            markup=False, highlight=False)
    for line in jobs_lines(rows, width=shutil.get_terminal_size().columns) if rows else []:
        typer.echo(line)



@app.command()
@with_where
def cost(
    ctx: typer.Context,
    job: LatestJobArg = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the cost as JSON.")] = False,
    **target_options: Any,
) -> None:
    """What a finished or running job cost, by how Google bills it: replicas x machine price x the time from its
    replicas' start to its end, from tfcloud's price table ("unknown" where it has no price; local and Ray jobs
    are not billed by Google). Without JOB: the job this machine submitted last."""
    from tfcloud import sdk

    chosen = where(ctx, target_options)
    found = sdk.cost(sdk.latest_job(job), **chosen)
    if json_output:
        typer.echo(dumps(found.to_dict(), indent=2))
        return
    typer.echo("\n".join(found.lines()))
