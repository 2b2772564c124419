"""``tfcloud submit`` and ``tfcloud build``: a job's plan, its image, and the job itself (thin: the SDK does it)."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from tfcloud.cli._app import app, dumps
from tfcloud.cli._common import AllReplicasOpt, selected_target
from tfcloud.cli._options import (
    BuildBucketOpt,
    BuildLogsOpt,
    CacheFromOpt,
    ChiefConfigOpt,
    ContextOpt,
    DataOpt,
    EntryPointArg,
    EnvOpt,
    ImageOpt,
    LabelOpt,
    ParentImageOpt,
    ProjectOpt,
    PsCountOpt,
    RegionOpt,
    RequirementsOpt,
    SecretOpt,
    StrategyOpt,
    TargetOpt,
    TargetOptionOpt,
    WorkerConfigOpt,
    WorkerCountOpt,
    docker,
    given_target_options,
    leave_defaults,
    machine,
    pairs,
    strategy_value,
    with_target_options,
)
from tfcloud.errors import ValidationError
from tfcloud.view import completion
from tfcloud.view.console import get_console
from tfcloud.view.heap import keep_freed_memory

if TYPE_CHECKING:
    from tfcloud.sdk import JobOptions

__all__ = ["build", "submit"]


@app.command()
@with_target_options
def submit(
    ctx: typer.Context,
    entry_point: EntryPointArg,
    args: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045 (typer needs Optional)
        help="Arguments for the script, after `--`: passed exactly as given.", show_default=False)] = None,
    local: Annotated[bool, typer.Option("--local", help="Run on this machine, one process per replica "
                                                          "(the default target).")] = False,
    vertex: Annotated[bool, typer.Option("--vertex", help="Run on Google Cloud Vertex AI.")] = False,
    target: TargetOpt = None,
    target_option: TargetOptionOpt = None,
    worker_count: WorkerCountOpt = 0,
    chief_config: ChiefConfigOpt = None,
    worker_config: WorkerConfigOpt = None,
    ps_count: PsCountOpt = 0,
    ps_config: Annotated[Optional[str], typer.Option(  # noqa: UP045
        metavar="NAME", autocompletion=completion.machine_names,
        help="Parameter server machine (default: CPU).", show_default=False)] = None,
    evaluator: Annotated[bool, typer.Option("--evaluator", help="Add one evaluator replica.")] = False,
    strategy: StrategyOpt = "auto",
    requirements: RequirementsOpt = None,
    label: LabelOpt = None,
    env: EnvOpt = None,
    secret: SecretOpt = None,
    data: DataOpt = None,
    image: ImageOpt = None,
    parent_image: ParentImageOpt = None,
    cache_from: CacheFromOpt = None,
    image_build_bucket: BuildBucketOpt = None,
    context: ContextOpt = None,
    build_logs: BuildLogsOpt = False,
    display_name: Annotated[Optional[str], typer.Option(help="The job's display name.", show_default=False)] = None,  # noqa: UP045
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; submit nothing.")] = False,
    show_files: Annotated[bool, typer.Option("--show-files", help="With --dry-run: also print the generated "
                                                                  "launcher (and a notebook's script).")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="With --dry-run: print the plan as JSON.")] = False,
    show_request: Annotated[bool, typer.Option(
        "--show-request", help="With --dry-run: also print the request the target sends to start the job (Vertex "
                               "AI: the CustomJob; --json always holds it).")] = False,
    detach: Annotated[bool, typer.Option("--detach", "-d", help="Print the job id and return; do not follow "
                                                                "the logs.")] = False,
    all_replicas: AllReplicasOpt = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Submit a paid job without asking first (on a terminal, "
                                                           "a Vertex AI submit shows its price and asks; setting "
                                                           "yes, TFCLOUD_YES=1).")] = False,
    cancel_on_interrupt: Annotated[bool, typer.Option(
        "--cancel-on-interrupt", help="Ctrl-C cancels the job (default: detach from a cloud job; it keeps "
                                      "running). Local jobs are always stopped by Ctrl-C.")] = False,
    **target_options: Any,
) -> None:
    """Submit ENTRY_POINT as a distributed job and follow its logs.

    Example: tfcloud submit train.py --worker-count 2 -- --epochs 5
    """
    from tfcloud import sdk
    from tfcloud.view.printers import print_plan

    if json_output and not dry_run:
        raise ValidationError("--json", "to be given with --dry-run (it prints the plan, and submits nothing)",
                              "<--json without --dry-run>", hint="Add --dry-run, or leave out --json.")
    chosen = selected_target(local, vertex, target_options.get("ray_address"), target)
    options: JobOptions = {
        "requirements_txt": requirements, "docker_config": docker(image, parent_image, cache_from, image_build_bucket),
        "distribution_strategy": strategy_value(strategy), "chief_config": machine(chief_config, "chief_config"),
        "worker_config": machine(worker_config, "worker_config"), "worker_count": worker_count,
        "ps_config": machine(ps_config, "ps_config"), "ps_count": ps_count, "evaluator_count": int(evaluator),
        "entry_point_args": list(args or []), "job_labels": pairs(label, "--label"), "env": pairs(env, "--env"),
        "secrets": pairs(secret, "--secret"),
        "data": list(data) if data else None,
        "target": chosen, "display_name": display_name, "context_dir": context,
        **given_target_options(ctx, target_options, target=chosen, plugin_options=target_option),  # type: ignore[typeddict-item]
    }
    leave_defaults(ctx, options)
    if dry_run:
        plan = sdk.plan(entry_point, **options)
        if json_output:
            typer.echo(dumps(plan.to_dict(), indent=2))
        else:
            print_plan(plan, show_files=show_files, show_request=show_request)
        return
    with sdk.submit(entry_point, build_logs=build_logs, yes=yes, **options) as job:
        if detach:
            typer.echo(job.job_id)
            get_console().print(f"Follow it with: tfcloud logs {job.job_id} -f", markup=False)
            return
        keep_freed_memory()  # this process is the command's own: it may keep freed memory for its next read
        # the backend's handle: its log sources fix the prefix's width from the first line (Vertex AI)
        code = sdk.watch(job.handle, cancel_on_interrupt=cancel_on_interrupt, all_replicas=all_replicas)
    raise typer.Exit(code)


@app.command()
def build(
    ctx: typer.Context,
    entry_point: EntryPointArg,
    worker_count: WorkerCountOpt = 0,
    ps_count: PsCountOpt = 0,
    chief_config: ChiefConfigOpt = None,
    worker_config: WorkerConfigOpt = None,
    strategy: StrategyOpt = "auto",
    requirements: RequirementsOpt = None,
    project: ProjectOpt = None,
    region: RegionOpt = None,
    image: ImageOpt = None,
    parent_image: ParentImageOpt = None,
    cache_from: CacheFromOpt = None,
    image_build_bucket: BuildBucketOpt = None,
    context: ContextOpt = None,
    build_logs: BuildLogsOpt = False,
    no_push: Annotated[bool, typer.Option("--no-push", help="Build into the local engine only.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the image's plan (tag, base image, build "
                                                              "context, Dockerfile); build nothing.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="With --dry-run: print it as JSON.")] = False,
) -> None:
    """Build (or find) the job's image and print its reference; submit nothing.

    The tag is a digest of everything that determines the image: unchanged code costs one look-up.
    """
    from tfcloud import sdk
    from tfcloud.view.printers import print_image_plan

    if json_output and not dry_run:
        raise ValidationError("--json", "to be given with --dry-run (it prints the plan, and builds nothing)",
                              "<--json without --dry-run>", hint="Add --dry-run, or leave out --json.")
    options = leave_defaults(ctx, {
        "requirements_txt": requirements, "distribution_strategy": strategy_value(strategy),
        "chief_config": machine(chief_config, "chief_config"),
        "worker_config": machine(worker_config, "worker_config"), "worker_count": worker_count,
        "ps_count": ps_count})
    given_as = {name: f"--{name}" for name, value in (("project", project), ("region", region)) if value}
    if given_as:
        options["given_as"] = given_as  # the plan's sources name the flags
    docker_config = docker(image, parent_image, cache_from, image_build_bucket)
    if dry_run:
        plan = sdk.plan(entry_point, target="vertex", project=project, region=region, context_dir=context,
                        docker_config=docker_config, **options)
        if json_output:
            typer.echo(dumps({**(plan.image.to_dict() if plan.image else {"uri": None}),
                                   "notes": list(plan.notes)}, indent=2))
        else:
            cannot = "No image can be planned: "
            for note in plan.notes:
                if plan.image is not None or not note.startswith(cannot):
                    get_console().print(f"Note: {note}", markup=False, highlight=False)
            if plan.image is None:  # the image is all this command shows: none is an error that says why
                from tfcloud.errors import ConfigurationError

                why = next((n[len(cannot):] for n in plan.notes if n.startswith(cannot)), "")
                raise ConfigurationError(f"No image can be planned. {why}".strip())
            print_image_plan(plan.image)
        return

    ref = sdk.build(entry_point, push=not no_push, build_logs=build_logs, target="vertex", project=project,
                    region=region, context_dir=context, docker_config=docker_config, **options)
    typer.echo(ref.uri)

