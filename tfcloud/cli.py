"""The ``tfcloud`` command: thin typer commands over the SDK.

One handler turns a :class:`~tfcloud.errors.TfcloudError` into a message and its exit code (2 bad input or
configuration, 1 the job or build failed); Ctrl-C exits 130. Tracebacks only with ``TFCLOUD_DEBUG=1``.
"""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up, and
# evaluating them from strings cost ~5 ms of each command's start-up (benchmarks/bench_cli.py).
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TypeVar

import typer
import typer.core

from tfcloud import completion
from tfcloud._version import __version__
from tfcloud.console import get_console, get_error_console, verbosity
from tfcloud.errors import TfcloudError, ValidationError

if TYPE_CHECKING:
    from tfcloud.plan import ImagePlan, Plan
    from tfcloud.sdk import JobOptions
    from tfcloud.study import StudyInfo

__all__ = ["app", "main"]


def _dumps(value: Any, **options: Any) -> str:
    """json.dumps, imported on first use: --help and most commands never need the json module (~1.5 ms)."""
    import json

    return json.dumps(value, **options)

# Each option's group in --help, by parameter name, for every command (an explicit rich_help_panel= wins).
# Printed by click's plain formatter: typer's rich help would import most of rich (~3x this command's start-up).
HELP_PANELS = {
    **dict.fromkeys(["local", "vertex", "ray", "ray_cpus", "container"], "Target"),
    **dict.fromkeys(["worker_count", "chief_config", "worker_config", "ps_count", "ps_config", "evaluator",
                     "strategy", "max_restarts"], "Cluster"),
    **dict.fromkeys(["requirements", "label", "env", "display_name", "output_dir"], "Job"),
    **dict.fromkeys(["image", "parent_image", "cache_from", "image_build_bucket", "context", "build_logs",
                     "no_push"], "Image"),
    **dict.fromkeys(["project", "region", "service_account", "timeout", "spot", "restart_on_worker_restart",
                     "network", "cancel_on_interrupt", "tensorboard", "experiment", "experiment_run"], "Vertex AI"),
    **dict.fromkeys(["scheduling", "max_wait", "reservation", "disable_retries", "persistent_resource"],
                    "Vertex AI capacity"),
    **dict.fromkeys(["dry_run", "json_output", "detach", "follow"], "Output"),
}

COMMAND_HELP_PANELS = {
    "list": dict.fromkeys(["state", "label", "limit"], "Filter"),
    "logs": {**dict.fromkeys(["replica", "tail", "since"], "Filter"), "timestamps": "Output"},
    "status": {"show_timeline": "Output", "study": "Target"},
    "tune": dict.fromkeys(["param", "metric", "goal", "trials", "parallel", "algorithm", "early_stopping"], "Study")
    | {"plot": "Output"},
}


class PanelCommand(typer.core.TyperCommand):
    """A command whose --help groups its options under headings (rich_help_panel, else HELP_PANELS)."""

    def format_options(self, ctx: Any, formatter: Any) -> None:  # click's Context and HelpFormatter
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": []}
        panels = {**HELP_PANELS, **COMMAND_HELP_PANELS.get(self.name or "", {})}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                title = "Arguments"
            else:
                title = getattr(param, "rich_help_panel", None) or panels.get(param.name or "", "Options")
            sections.setdefault(title, []).append(record)
        sections["Options"] = sections.pop("Options", [])  # the ungrouped ones (and --help) last
        for title, records in sections.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


_Command = TypeVar("_Command", bound=Callable[..., Any])


class _Typer(typer.Typer):
    def command(self, *args: Any, **kwargs: Any) -> Callable[[_Command], _Command]:
        kwargs.setdefault("cls", PanelCommand)
        return super().command(*args, **kwargs)


app = _Typer(
    name="tfcloud",
    help="Run a TensorFlow script or notebook as a distributed job: on this machine (the default) or on "
    "Google Cloud Vertex AI.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tfcloud {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    verbose: Annotated[int, typer.Option(
        "--verbose", "-v", count=True, help="Say more: retries and other diagnostics (-vv: debug), and the "
                                            "replicas' TensorFlow start-up lines.", show_default=False)] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only errors and the job's own output: no "
                                                              "progress or warnings.")] = False,
) -> None:
    """Run a TensorFlow script or notebook as a distributed job, locally or on Vertex AI."""
    from tfcloud.console import configure

    configure(verbosity=-1 if quiet else verbose)


def _pairs(values: list[str] | None, field: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValidationError(field, "KEY=VALUE", item)
        result[key] = value
    return result


def _machine(value: str | None, field: str) -> object:
    if value is None or value.lower() == "auto":
        return "auto"
    from tfcloud.machines import machine_config_from_name

    return machine_config_from_name(value, field=field)


# Options that `submit` and `build` share (typer reads the help from these annotations).
EntryPointArg = Annotated[Path, typer.Argument(help="The training script (.py) or notebook (.ipynb).",
                                               show_default=False)]
WorkerCountOpt = Annotated[int, typer.Option(help="Workers besides the chief.")]
PsCountOpt = Annotated[int, typer.Option(help="Parameter servers (ParameterServerStrategy).")]
ChiefConfigOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045 (typer needs Optional)
    metavar="NAME", autocompletion=completion.machine_names,
    help="Chief machine, a name from `tfcloud machines` (default: auto).", show_default=False)]
WorkerConfigOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="NAME", autocompletion=completion.machine_names,
    help="Worker machine (default: auto).", show_default=False)]
StrategyOpt = Annotated[str, typer.Option(
    "--strategy", metavar="STRATEGY", autocompletion=completion.strategies,
    help="One of: " + ", ".join(completion.STRATEGIES) + " (none: the script sets up its own).")]
RequirementsOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--requirements", "-r", help="A requirements.txt for the job.", show_default=False)]
ProjectOpt = Annotated[Optional[str], typer.Option(help="Google Cloud project.", show_default=False)]  # noqa: UP045
RegionOpt = Annotated[Optional[str], typer.Option(help="Vertex AI region.", show_default=False)]  # noqa: UP045
ImageOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    help="Image URI to build and push (DockerConfig.image).", show_default=False)]
ParentImageOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    help="Base image (DockerConfig.parent_image).", show_default=False)]
CacheFromOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    help="An image to take build cache from (DockerConfig.cache_from).", show_default=False)]
BuildBucketOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    help="Build with Cloud Build, staging the source in this bucket.", show_default=False)]
BuildLogsOpt = Annotated[bool, typer.Option("--build-logs", help="Print the image build's log as it comes.")]
ContextOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--context", help="The image's build context, a directory that contains the entry point (default: the "
                      "entry point's directory).", show_default=False)]
LabelOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--label", help="A job label KEY=VALUE (repeatable).", show_default=False)]
EnvOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--env", help="An environment variable NAME=VALUE for every replica (repeatable).", show_default=False)]


#: CLI parameter -> the job option it sets, for those the environment and config files can default
#: (tfcloud.settings.JOB_DEFAULTS): left out of the SDK call unless given on the command line.
DEFAULTABLE = {"worker_count": "worker_count", "ps_count": "ps_count", "chief_config": "chief_config",
               "worker_config": "worker_config", "ps_config": "ps_config", "strategy": "distribution_strategy",
               "requirements": "requirements_txt", "label": "job_labels", "env": "env",
               "service_account": "service_account", "network": "network", "output_dir": "base_output_dir",
               "timeout": "timeout", "spot": "spot", "max_restarts": "max_restarts", "scheduling": "scheduling",
               "max_wait": "max_wait", "reservation": "reservation", "disable_retries": "disable_retries",
               "persistent_resource": "persistent_resource", "tensorboard": "tensorboard", "experiment": "experiment"}


def _leave_defaults(ctx: typer.Context, options: Any) -> Any:
    """Drop from ``options`` (a JobOptions dict, changed in place and returned) each option that the command
    line did not give, so that TFCLOUD_* variables, [tool.tfcloud] and the user's config can fill it."""
    for param, option in DEFAULTABLE.items():
        source = ctx.get_parameter_source(param)
        if option in options and (source is None or source.name == "DEFAULT"):
            del options[option]
    return options


def _strategy(value: str) -> str | None:
    return None if value.lower() == "none" else value


def _target(local: bool, vertex: bool, ray: str | None = None) -> str | None:
    if local + vertex + (ray is not None) > 1:
        raise ValidationError("target", "one of --local, --vertex or --ray ADDRESS",
                              " and ".join(n for n, on in (("--local", local), ("--vertex", vertex),
                                                           ("--ray", ray is not None)) if on))
    return "vertex" if vertex else "local" if local else "ray" if ray is not None else None


# Vertex AI capacity, TensorBoard and experiments (docs/vertex.md, "Capacity").
SchedulingOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="STRATEGY", help="Vertex AI: standard, spot (as --spot) or flex-start (the Dynamic Workload "
                             "Scheduler: waits for every VM at once).", show_default=False)]
MaxWaitOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="DURATION", help="Vertex AI, flex-start: how long to wait for VMs (30m, 6h, 1d; 0: no limit; "
                             "Vertex AI's default 1d).", show_default=False)]
ReservationOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="any|none|NAME", help="Vertex AI: consume any reservation, none, or one (ZONE/NAME or "
                                  "projects/P/zones/Z/reservations/NAME).", show_default=False)]
DisableRetriesOpt = Annotated[bool, typer.Option(
    "--disable-retries", help="Vertex AI: never restart the job after an internal error.")]
PersistentResourceOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="ID", help="Vertex AI: run on this persistent resource (tfcloud cluster create).", show_default=False)]
TensorboardOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="RESOURCE", help="Vertex AI: upload the job's TensorBoard logs to this TensorBoard instance "
                             "(projects/P/locations/L/tensorboards/ID or ID).", show_default=False)]
ExperimentOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="NAME", help="Vertex AI: the experiment the job belongs to.", show_default=False)]
ExperimentRunOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="RUN", help="Vertex AI: the experiment run (with --experiment).", show_default=False)]

RayOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--ray", metavar="ADDRESS", help="A Ray cluster's dashboard, http://HEAD:8265 (default: TFCLOUD_RAY_ADDRESS, "
                                     "then RAY_ADDRESS). See docs/ray.md.", show_default=False)]


def _docker(image: str | None, parent_image: str | None, cache_from: str | None, bucket: str | None) -> object:
    from tfcloud import DockerConfig

    return DockerConfig(image=image, parent_image=parent_image, cache_from=cache_from, image_build_bucket=bucket)


@app.command()
def submit(
    ctx: typer.Context,
    entry_point: EntryPointArg,
    args: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP045 (typer needs Optional)
        help="Arguments for the script, after `--`: passed exactly as given.", show_default=False)] = None,
    local: Annotated[bool, typer.Option("--local", help="Run on this machine, one process per replica "
                                                          "(the default target).")] = False,
    vertex: Annotated[bool, typer.Option("--vertex", help="Run on Google Cloud Vertex AI.")] = False,
    ray: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--ray", metavar="ADDRESS", help="Run on the Ray cluster whose dashboard is ADDRESS (http://HEAD:8265; "
                                         "see docs/ray.md).", show_default=False)] = None,
    ray_cpus: Annotated[Optional[float], typer.Option(  # noqa: UP045
        help="Ray: CPUs each replica reserves (default: its machine config's cores).", show_default=False)] = None,
    container: Annotated[bool, typer.Option("--container", help="Local: run the replicas from the job's image "
                                                                  "on the local Docker engine.")] = False,
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
    project: ProjectOpt = None,
    region: RegionOpt = None,
    service_account: Annotated[Optional[str], typer.Option(  # noqa: UP045
        help="Service account the job runs as.", show_default=False)] = None,
    image: ImageOpt = None,
    parent_image: ParentImageOpt = None,
    cache_from: CacheFromOpt = None,
    image_build_bucket: BuildBucketOpt = None,
    context: ContextOpt = None,
    build_logs: BuildLogsOpt = False,
    display_name: Annotated[Optional[str], typer.Option(help="The job's display name.", show_default=False)] = None,  # noqa: UP045
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; submit nothing.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="With --dry-run: print the plan as JSON.")] = False,
    detach: Annotated[bool, typer.Option("--detach", "-d", help="Print the job id and return; do not follow "
                                                                "the logs.")] = False,
    cancel_on_interrupt: Annotated[bool, typer.Option(
        "--cancel-on-interrupt", help="Vertex AI: Ctrl-C cancels the job (default: detach; it keeps running). "
                                      "Local jobs are always stopped by Ctrl-C.")] = False,
    timeout: Annotated[Optional[int], typer.Option(  # noqa: UP045
        help="Vertex AI: stop the job after this many seconds.", show_default=False)] = None,
    spot: Annotated[bool, typer.Option("--spot", help="Vertex AI: run on Spot (preemptible) capacity.")] = False,
    restart_on_worker_restart: Annotated[bool, typer.Option(
        "--restart-on-worker-restart", help="Vertex AI: restart the whole job when a worker restarts.")] = False,
    max_restarts: Annotated[Optional[int], typer.Option(  # noqa: UP045
        help="Restart the cluster up to N times when a replica dies; training resumes from its checkpoint "
             "(docs/recovery.md).", show_default=False)] = None,
    network: Annotated[Optional[str], typer.Option(  # noqa: UP045
        help="Vertex AI: VPC network, projects/NUMBER/global/networks/NAME.", show_default=False)] = None,
    output_dir: Annotated[Optional[str], typer.Option(  # noqa: UP045
        help="Base output directory, gs://... (or, for a local run, a directory; default: the local job's "
             "directory): sets AIP_MODEL_DIR, AIP_CHECKPOINT_DIR, AIP_TENSORBOARD_LOG_DIR.",
        show_default=False)] = None,
    scheduling: SchedulingOpt = None,
    max_wait: MaxWaitOpt = None,
    reservation: ReservationOpt = None,
    disable_retries: DisableRetriesOpt = False,
    persistent_resource: PersistentResourceOpt = None,
    tensorboard: TensorboardOpt = None,
    experiment: ExperimentOpt = None,
    experiment_run: ExperimentRunOpt = None,
) -> None:
    """Submit ENTRY_POINT as a distributed job and follow its logs.

    Example: tfcloud submit train.py --worker-count 2 -- --epochs 5
    """
    from tfcloud import sdk

    if json_output and not dry_run:
        raise ValidationError("--json", "to be given with --dry-run (it prints the plan, and submits nothing)",
                              "<--json without --dry-run>", hint="Add --dry-run, or leave out --json.")
    options: JobOptions = {
        "requirements_txt": requirements, "docker_config": _docker(image, parent_image, cache_from, image_build_bucket),
        "distribution_strategy": _strategy(strategy), "chief_config": _machine(chief_config, "chief_config"),
        "worker_config": _machine(worker_config, "worker_config"), "worker_count": worker_count,
        "ps_config": _machine(ps_config, "ps_config"), "ps_count": ps_count, "evaluator_count": int(evaluator),
        "entry_point_args": list(args or []), "job_labels": _pairs(label, "--label"), "env": _pairs(env, "--env"),
        "service_account": service_account, "target": _target(local, vertex, ray), "project": project, "region": region,
        "display_name": display_name, "timeout": timeout, "spot": spot, "network": network,
        "restart_on_worker_restart": restart_on_worker_restart, "base_output_dir": output_dir, "context_dir": context,
        "ray_address": ray, "ray_cpus": None if ray_cpus is None else str(ray_cpus),
        "max_restarts": max_restarts, "container": container, "scheduling": scheduling, "max_wait": max_wait,
        "reservation": reservation, "disable_retries": disable_retries, "persistent_resource": persistent_resource,
        "tensorboard": tensorboard, "experiment": experiment, "experiment_run": experiment_run,
    }
    _leave_defaults(ctx, options)
    if dry_run:
        plan = sdk.plan(entry_point, **options)
        if json_output:
            typer.echo(_dumps(plan.to_dict(), indent=2))
        else:
            _print_plan(plan)
        return
    with sdk.submit(entry_point, build_logs=build_logs, **options) as job:
        if detach:
            typer.echo(job.job_id)
            get_console().print(f"Follow it with: tfcloud logs {job.job_id} -f", markup=False)
            return
        code = sdk.watch(job, cancel_on_interrupt=cancel_on_interrupt)
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

    if json_output and not dry_run:
        raise ValidationError("--json", "to be given with --dry-run (it prints the plan, and builds nothing)",
                              "<--json without --dry-run>", hint="Add --dry-run, or leave out --json.")
    options = _leave_defaults(ctx, {
        "requirements_txt": requirements, "distribution_strategy": _strategy(strategy),
        "chief_config": _machine(chief_config, "chief_config"),
        "worker_config": _machine(worker_config, "worker_config"), "worker_count": worker_count,
        "ps_count": ps_count})
    docker_config = _docker(image, parent_image, cache_from, image_build_bucket)
    if dry_run:
        plan = sdk.plan(entry_point, target="vertex", project=project, region=region, context_dir=context,
                        docker_config=docker_config, **options)
        if json_output:
            typer.echo(_dumps({**(plan.image.to_dict() if plan.image else {"uri": None}),
                                   "notes": list(plan.notes)}, indent=2))
        else:
            for note in plan.notes:
                get_console().print(f"Note: {note}", markup=False, highlight=False)
            if plan.image is not None:
                _print_image_plan(plan.image)
        return

    ref = sdk.build(entry_point, push=not no_push, build_logs=build_logs, target="vertex", project=project,
                    region=region, context_dir=context, docker_config=docker_config, **options)
    typer.echo(ref.uri)


@app.command()
def tune(
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
    trials: Annotated[int, typer.Option("--trials", help="Trials in all.")] = 10,
    parallel: Annotated[int, typer.Option("--parallel", help="Trials at a time.")] = 1,
    algorithm: Annotated[str, typer.Option(help="default (optuna's TPE locally; Vertex AI's Bayesian search), "
                                                "random or grid.")] = "default",
    early_stopping: Annotated[bool, typer.Option(
        "--early-stopping", help="Stop trials whose metric is worse than the median of the finished trials at the "
                                 "same step (optuna's MedianPruner locally; Vertex AI's median stopping).")] = False,
    local: Annotated[bool, typer.Option("--local", help="Trials as local jobs (the default target).")] = False,
    vertex: Annotated[bool, typer.Option("--vertex", help="A Vertex AI HyperparameterTuningJob.")] = False,
    worker_count: WorkerCountOpt = 0,
    chief_config: ChiefConfigOpt = None,
    worker_config: WorkerConfigOpt = None,
    ps_count: PsCountOpt = 0,
    strategy: StrategyOpt = "auto",
    requirements: RequirementsOpt = None,
    label: LabelOpt = None,
    env: EnvOpt = None,
    project: ProjectOpt = None,
    region: RegionOpt = None,
    image: ImageOpt = None,
    parent_image: ParentImageOpt = None,
    image_build_bucket: BuildBucketOpt = None,
    context: ContextOpt = None,
    build_logs: BuildLogsOpt = False,
    plot: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        help="Also write the plot here (.png, or .html: a self-contained page).", show_default=False)] = None,
    detach: Annotated[bool, typer.Option("--detach", "-d", help="Vertex AI: print the study id and return.")] = False,
) -> None:
    """Tune ENTRY_POINT's hyperparameters: trials with --NAME=VALUE arguments, a live table, the best trial.

    Example: tfcloud tune train.py --param learning_rate=double:1e-4:1e-1:log --param units=int:32:512
    --metric val_accuracy --trials 12 --parallel 3 -- --epochs 5
    """
    from tfcloud import sdk

    options: JobOptions = {
        "requirements_txt": requirements, "docker_config": _docker(image, parent_image, None, image_build_bucket),
        "distribution_strategy": _strategy(strategy), "chief_config": _machine(chief_config, "chief_config"),
        "worker_config": _machine(worker_config, "worker_config"), "worker_count": worker_count,
        "ps_count": ps_count, "entry_point_args": list(args or []), "job_labels": _pairs(label, "--label"),
        "env": _pairs(env, "--env"), "target": _target(local, vertex), "project": project, "region": region,
        "context_dir": context,
    }
    if strategy == "auto":
        del options["distribution_strategy"]
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
            info = _live_study(study)
        except KeyboardInterrupt:
            if study.info().target == "local":  # local trials die with the terminal, as local jobs do
                get_console().print(f"Interrupted: cancelling {study.study_id}.", markup=False)
                study.cancel()
            else:
                get_console().print(f"Detached: {study.study_id} keeps running.\n"
                                    f"  See it again: tfcloud status {study.study_id} --study\n"
                                    f"  Cancel it:    tfcloud cancel {study.study_id} --study", markup=False)
            raise typer.Exit(130) from None
        except BaseException:
            if study.info().target == "local":  # never leave the tuner running behind an error
                study.cancel()
            raise
        _study_outcome(study, info, plot)
    raise typer.Exit(0 if info.best_trial is not None else 1)


def _live_study(study: Any) -> "StudyInfo":
    """Follow a study with a live table of its trials until it ends; its info then."""
    import time

    from rich.live import Live

    from tfcloud.states import JobState
    from tfcloud.tuneview import study_table

    info: StudyInfo = study.info()
    ended = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)
    if verbosity() < 0:
        return study.wait()  # type: ignore[no-any-return]
    pause = 0.5 if info.target == "local" else 5.0
    with Live(study_table(info), console=get_console(), auto_refresh=False) as live:
        while info.state not in ended:
            time.sleep(pause)
            info = study.info()
            live.update(study_table(info), refresh=True)
    get_console().print()
    return study.wait()  # type: ignore[no-any-return]


def _study_outcome(study: Any, info: "StudyInfo", plot: Path | None) -> None:
    """After a study: why it failed, the command that reruns the best trial, where the plots are."""
    console = get_console()
    best = info.best_trial
    if best is None:
        get_error_console().print(f"Study {info.study_id} {info.state.value}: no trial succeeded.",
                                  style="bold red", markup=False)
        for trial in info.trials:
            if trial.message:
                get_error_console().print(f"  trial {trial.trial_id}: {trial.message}", markup=False,
                                          highlight=False)
                break
    else:
        console.print(f"Best trial {best.trial_id}: {info.study.metric} = {best.metric}. Rerun it with:",
                      markup=False)
        typer.echo(study.rerun_command(best))
    if plot is not None:
        from tfcloud.tuneview import write_plots

        html = plot.suffix.lower() in (".html", ".htm")
        write_plots(info, png=None if html else plot, html_path=plot if html else None)
        console.print(f"Plot: {plot}", markup=False)
    paths = study.plot_paths
    if paths is not None and paths[0].is_file():
        console.print(f"Plots: {paths[0]}\n       {paths[1]}", markup=False)


def _print_plan(plan: "Plan") -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from tfcloud.console import get_console

    console = get_console()
    spec = plan.spec
    console.print(f"[bold]Plan[/bold] for {escape(str(spec.entry_point))} (target: {spec.target.name}; "
                  "nothing submitted)")
    console.print(f"Strategy: [bold]{plan.strategy}[/bold] ({escape(plan.strategy_reason)})")
    table = Table("role", "replicas", "machine type", "accelerator")
    for row in plan.pools:
        table.add_row(Text(row.role), str(row.replicas), Text(row.machine_type), Text(row.accelerator))
    console.print(table)
    # User text (args, labels, requirements, notebook notes) is printed as plain text, never as markup.
    _say("Each replica runs: " + plan.command_line)
    _say("Script args: " + (_dumps(list(plan.args)) if plan.args else "(none)"))
    if spec.job_labels:
        _say("Labels: " + ", ".join(f"{k}={v}" for k, v in spec.job_labels.items()))
    for requirement in plan.requirements:
        _say(f"Requirement: {requirement}")
    if plan.endpoint:
        _say(f"Runs on: {plan.endpoint}")
    for note in plan.notes:
        _say(f"Note: {note}")
    for name, source in plan.sources.items():  # where each setting not left at its default came from
        value = source["value"]
        shown = ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value
        _say(f"Setting: {name} = {shown} (from {source['from']})")
    for warning in plan.warnings:
        _say(f"Warning: {warning}", style="yellow")
    if plan.image is not None:
        _print_image_plan(plan.image)
    console.rule("tfcloud_launcher.py")
    console.print(plan.launcher.rstrip("\n"), markup=False, highlight=False, soft_wrap=True)
    if plan.script is not None:
        console.rule(f"{spec.entry_point.name}, converted to a script")
        console.print(plan.script.rstrip("\n"), markup=False, highlight=False, soft_wrap=True)


def _say(text: str, *, style: str | None = None) -> None:
    """Print user text (paths, arguments, requirements) to the console as it is: never as markup, unwrapped so
    that commands and paths copy whole."""
    from tfcloud.console import get_console

    get_console().print(text, style=style, markup=False, highlight=False, soft_wrap=True)


#: At most this many of the context's own files are listed in the text plan (--json lists every one).
_PLAN_FILES = 40


def _print_image_plan(image: "ImagePlan") -> None:
    """The image part of a plan: tag, base, builder, the build context's files and what was kept out, the
    Dockerfile. tfcloud's generated files are summed up, one line per group."""
    from tfcloud.console import get_console
    from tfcloud.context import format_size, shown

    console = get_console()
    _say(f"Image: {image.uri} (tag computed from the files below; nothing built)")
    _say(f"Base image: {image.base_image}")
    _say(f"Builder: {image.builder}")
    _say(f"Build context {shown(image.context_root)}: {len(image.files)} files, {format_size(image.total_size)}")
    own = [f for f in image.files if not f.generated]
    for f in own[:_PLAN_FILES]:
        _say(f"  {shown(f.path)}  {format_size(f.size)}")
    if len(own) > _PLAN_FILES:
        _say(f"  ... and {len(own) - _PLAN_FILES} more (--json lists every file)")
    groups: dict[str, list[int]] = {}
    for f in image.files:
        if f.generated:
            key = ".tfcloud/python/ (tfcloud's own package)" if f.path.startswith(".tfcloud/python/") else f.path
            groups.setdefault(key, []).append(f.size)
    for key, sizes in groups.items():
        count = f"{len(sizes)} files, " if len(sizes) > 1 else ""
        _say(f"  {key}  {count}{format_size(sum(sizes))} (generated)")
    for path, reason in image.kept_out:
        _say(f"  kept out: {shown(path)} ({reason}; secret deny-list)", style="yellow")
    for path, reason in image.let_in:
        _say(f"  let in: {shown(path)} ({reason}; a `!path` line in .dockerignore)", style="yellow")
    for path in image.dropped_links:
        _say(f"  dropped: {shown(path)} (a symlink that leaves the build context)")
    console.rule("Dockerfile")
    _say(image.dockerfile.rstrip("\n"))


@app.command()
def machines(
    json_output: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
) -> None:
    """List the machine configs (COMMON_MACHINE_CONFIGS) and the Vertex AI machine each maps to."""
    from tfcloud.machines import COMMON_MACHINE_CONFIGS

    if json_output:
        typer.echo(_dumps({
            name: {"machine_type": m.machine_type, "cpu_cores": m.cpu_cores, "memory_gb": m.memory,
                   "accelerator_type": m.accelerator_type.name, "accelerator_count": m.accelerator_count,
                   **({"tpu_topology": m.tpu_topology, "tpu_hosts": m.tpu_hosts} if m.tpu_topology else {})}
            for name, m in COMMON_MACHINE_CONFIGS.items()
        }, indent=2))
        return
    rows = [["NAME", "MACHINE TYPE", "VCPUS", "MEMORY (GB)", "ACCELERATOR"]]
    for name, m in COMMON_MACHINE_CONFIGS.items():
        accel = "-" if m.accelerator_count == 0 else f"{m.accelerator_count} x {m.accelerator_type.name}"
        if m.tpu_hosts > 1:
            accel += f" x {m.tpu_hosts} hosts ({m.tpu_topology})"
        rows.append([name, m.machine_type, str(m.cpu_cores or "-"), f"{m.memory:g}" if m.memory else "-", accel])
    # Plain aligned columns (no rich table: rich's console is most of this command's start-up otherwise).
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


JobArg = Annotated[str, typer.Argument(
    metavar="JOB", autocompletion=completion.job_ids,
    help="The job id (local-..., ray-..., a Vertex AI id, or its full resource name).", show_default=False)]


@app.command()
def status(
    job: JobArg,
    json_output: Annotated[bool, typer.Option("--json", help="Print the job as JSON (with its stage "
                                                             "timeline).")] = False,
    show_timeline: Annotated[bool, typer.Option(
        "--timeline", help="Draw how long each stage took: context, build, push, submit, queued, run.")] = False,
    ray: RayOpt = None,
    study: Annotated[bool, typer.Option("--study", help="JOB is a Vertex AI tuning study's id.")] = False,
) -> None:
    """Show a job's state, or a tuning study's table of trials (study-..., or --study for Vertex AI)."""
    from tfcloud import sdk

    if study or job.startswith("study-") or "/hyperparameterTuningJobs/" in job:
        _study_status(job, json_output=json_output)
        return
    with sdk.attached(job, ray_address=ray) as handle:
        info = handle.info()
        error = None if json_output else sdk.failure(handle)
        stages = sdk.timeline(handle, info=info) if json_output or show_timeline else None
    if json_output:
        typer.echo(_dumps({**info.to_dict(), "timeline": stages.to_list() if stages else []}, indent=2))
        return
    typer.echo(f"{info.job_id}\t{info.state.value}")
    if stages is not None:
        from rich.console import Console

        from tfcloud.timeline import render_timeline

        Console(highlight=False).print(render_timeline(stages))
    if error is not None:
        get_error_console().print(str(error), markup=False, highlight=False)


def _study_status(study_id: str, *, json_output: bool) -> None:
    from rich.console import Console

    from tfcloud import sdk
    from tfcloud.tuneview import study_table

    with sdk.attach_study(study_id) as study:
        info = study.info()
        if json_output:
            typer.echo(_dumps(info.to_dict(), indent=2))
            return
        Console(highlight=False).print(study_table(info))
        best = info.best_trial
        if best is not None:
            typer.echo("Rerun the best trial: " + (study.rerun_command(best) or ""))


@app.command()
def logs(
    job: JobArg,
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
    ray: RayOpt = None,
) -> None:
    """Print a job's logs, one prefix per replica. With -f, exit with the job's outcome (0 or 1)."""
    from tfcloud import sdk
    from tfcloud.logview import print_lines

    last, after = sdk.log_window(tail=tail, since=since)
    with sdk.attached(job, ray_address=ray) as handle:
        try:
            if follow:
                raise typer.Exit(sdk.follow(handle, replica=replica, tail=last, since=after, timestamps=timestamps,
                                            json_lines=json_output))
            print_lines(handle.logs(follow=False, replica=replica, tail=last, since=after),
                        show_noise=verbosity() > 0, timestamps=timestamps, json_lines=json_output,
                        replicas=[r.name for r in handle.info().replicas if replica in (None, r.name)])
        except KeyboardInterrupt:
            raise typer.Exit(130) from None


@app.command()
def cancel(
    job: JobArg,
    ray: RayOpt = None,
    study: Annotated[bool, typer.Option("--study", help="JOB is a Vertex AI tuning study's id.")] = False,
) -> None:
    """Cancel a job, or a tuning study (study-..., or --study for Vertex AI) and its running trials."""
    from tfcloud import sdk

    if study or job.startswith("study-") or "/hyperparameterTuningJobs/" in job:
        with sdk.attach_study(job) as found:
            found.cancel()
            typer.echo(f"{found.study_id}\t{found.info().state.value}")
        return

    with sdk.attached(job, ray_address=ray) as handle:
        handle.cancel()
        typer.echo(f"{handle.job_id}\t{handle.info().state.value}")


@app.command()
def artifacts(
    job: JobArg,
    download: Annotated[Optional[Path], typer.Option(  # noqa: UP045
        help="Copy them into this directory.", show_default=False)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List (or --download) what a job wrote under its output directory: model/, checkpoints/, logs/."""
    from tfcloud import sdk
    from tfcloud.outputs import download_artifacts, job_output_dir, list_artifacts

    with sdk.attached(job) as handle:
        base = job_output_dir(handle.info())
    if download is not None:
        written = download_artifacts(base, download)
        typer.echo(f"{len(written)} file(s) from {base} in {download}")
        return
    found = list_artifacts(base)
    if json_output:
        typer.echo(_dumps({"output_dir": base, "artifacts": [{"path": a.path, "size": a.size} for a in found]},
                              indent=2))
        return
    typer.echo(f"# {base}")
    for artifact in found:
        typer.echo(f"{artifact.size:>12}  {artifact.path}")


@app.command()
def tensorboard(
    job: JobArg,
    port: Annotated[Optional[int], typer.Option(help="TensorBoard's port.", show_default=False)] = None,  # noqa: UP045
) -> None:
    """Run TensorBoard on a job's AIP_TENSORBOARD_LOG_DIR (its output directory's logs/)."""
    import subprocess

    from tfcloud import sdk
    from tfcloud.outputs import job_output_dir, tensorboard_command

    with sdk.attached(job) as handle:
        command = tensorboard_command(job_output_dir(handle.info()), port=port)
    try:
        raise typer.Exit(subprocess.call(command))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


@app.command(name="list")
def list_jobs(
    vertex: Annotated[bool, typer.Option("--vertex", help="Vertex AI jobs (default: the target setting).")] = False,
    local: Annotated[bool, typer.Option("--local", help="Local jobs.")] = False,
    ray: RayOpt = None,
    state: Annotated[Optional[str], typer.Option(  # noqa: UP045
        metavar="STATE", autocompletion=completion.states,
        help="Only jobs in this state: " + ", ".join(completion.STATES) + ".", show_default=False)] = None,
    label: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--label", help="Only jobs with this label KEY=VALUE (repeatable; Vertex AI).", show_default=False)] = None,
    limit: Annotated[int, typer.Option(help="At most this many jobs.")] = 50,
    json_output: Annotated[bool, typer.Option("--json", help="Print the jobs as JSON.")] = False,
) -> None:
    """List jobs, newest first."""
    from tfcloud import sdk

    target = _target(local, vertex, ray)
    rows = [info.to_dict() for info in sdk.list_jobs(target=target, state=state, labels=_pairs(label, "--label"),
                                                     limit=limit, ray_address=ray)]
    if json_output:
        typer.echo(_dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    columns = ["job_id", "state", "exit_code", "display_name", "created"]
    table = Table(*columns, title=f"{target or 'tfcloud'} jobs")
    for row in rows:
        table.add_row(*(Text(str(row[column]) if row[column] is not None else "-") for column in columns))
    Console(highlight=False).print(table)


cluster_app = _Typer(name="cluster", no_args_is_help=True, rich_markup_mode=None,
                     help="Vertex AI persistent resources: clusters that jobs run on with --persistent-resource ID, "
                          "without waiting for VMs (docs/vertex.md).")
ClusterIdArg = Annotated[str, typer.Argument(metavar="ID", help="The cluster's (persistent resource's) ID.",
                                             show_default=False)]


@cluster_app.command("create")
def cluster_create(
    cluster_id: ClusterIdArg,
    chief_config: ChiefConfigOpt = None,
    worker_config: WorkerConfigOpt = None,
    worker_count: WorkerCountOpt = 0,
    ps_config: Annotated[Optional[str], typer.Option(  # noqa: UP045
        metavar="NAME", autocompletion=completion.machine_names,
        help="Parameter server machine (default: CPU).", show_default=False)] = None,
    ps_count: PsCountOpt = 0,
    evaluator: Annotated[bool, typer.Option("--evaluator", help="Hold one evaluator replica.")] = False,
    display_name: Annotated[Optional[str], typer.Option(help="Its display name (default: the ID).",  # noqa: UP045
                                                        show_default=False)] = None,
    label: LabelOpt = None,
    network: Annotated[Optional[str], typer.Option(  # noqa: UP045
        help="VPC network, projects/NUMBER/global/networks/NAME (jobs on it must use the same).",
        show_default=False)] = None,
    project: ProjectOpt = None,
    region: RegionOpt = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once it is being provisioned.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print it as JSON.")] = False,
) -> None:
    """Create a persistent resource with a resource pool per role, sized like a job (--chief-config,
    --worker-config, --worker-count, ...); jobs of that shape then run on it with --persistent-resource ID.

    Example: tfcloud cluster create my-cluster --chief-config A100_1X --worker-config A100_1X --worker-count 3
    """
    from tfcloud import sdk

    info = sdk.create_cluster(
        cluster_id, chief_config=_machine(chief_config, "chief_config"),
        worker_config=_machine(worker_config, "worker_config"), worker_count=worker_count,
        ps_config="CPU" if ps_config is None else _machine(ps_config, "ps_config"), ps_count=ps_count,
        evaluator_count=int(evaluator), display_name=display_name, labels=_pairs(label, "--label"),
        network=network, project=project, region=region, wait=not no_wait)
    _print_clusters([info], json_output=json_output, one=True)


@cluster_app.command("list")
def cluster_list(
    project: ProjectOpt = None,
    region: RegionOpt = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print them as JSON.")] = False,
) -> None:
    """List the persistent resources in the project and region."""
    from tfcloud import sdk

    _print_clusters(sdk.list_clusters(project=project, region=region), json_output=json_output)


@cluster_app.command("delete")
def cluster_delete(
    cluster_id: ClusterIdArg,
    project: ProjectOpt = None,
    region: RegionOpt = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once the deletion started.")] = False,
) -> None:
    """Delete a persistent resource (billing for it stops once it is gone)."""
    from tfcloud import sdk

    sdk.delete_cluster(cluster_id, project=project, region=region, wait=not no_wait)
    typer.echo(f"{cluster_id}\tdeleted" if not no_wait else f"{cluster_id}\tdeleting")


def _print_clusters(clusters: list[Any], *, json_output: bool, one: bool = False) -> None:
    if json_output:
        rows = [info.to_dict() for info in clusters]
        typer.echo(_dumps(rows[0] if one else rows, indent=2))
        return
    for info in clusters:  # plain lines on stdout (tab-separated, as `tfcloud status`): they copy whole
        pools = ", ".join(f"{p.pool_id}: {p.replica_count} x {p.machine_type}"
                          + (f" ({p.accelerator})" if p.accelerator != "-" else "") for p in info.pools)
        typer.echo(f"{info.cluster_id}\t{info.state}\t{pools}")


def _mount_subcommands() -> None:
    try:
        from tfcloud.emulator.cli import app as emulator_app
    except ImportError:  # pragma: no cover - the emulator package is part of tfcloud
        return
    app.add_typer(emulator_app, name="emulator", help="Run the offline Google Cloud emulator.")
    app.add_typer(cluster_app, name="cluster")


_mount_subcommands()


def _caused_by_ctrl_c(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tfcloud`` command. Returns the exit code when given ``argv``, else exits."""
    debug = os.environ.get("TFCLOUD_DEBUG") == "1"
    try:
        app(args=argv, prog_name="tfcloud")
        code = 0
    except SystemExit as exc:  # typer (click) always ends with SystemExit in standalone mode
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if _caused_by_ctrl_c(exc):  # click turns Ctrl-C into "Aborted!" and exit 1; our convention is 130
            code = 130
    except TfcloudError as exc:
        if debug:
            raise
        from rich.markup import escape

        from tfcloud.console import get_error_console

        console = get_error_console()
        console.print(f"[bold red]Error:[/bold red] {escape(exc.message)}", highlight=False, soft_wrap=True)
        if exc.hint:
            console.print(exc.hint, markup=False, highlight=False, soft_wrap=True)
        code = exc.exit_code
    finally:
        if argv is not None:  # run in the caller's process (tests, scripts): leave its logging as it was
            from tfcloud.console import reset

            reset()
    if argv is None:
        sys.exit(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    main()
