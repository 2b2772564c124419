"""``tfcloud cluster create|list|delete|gc``: Vertex AI persistent resources, clusters that jobs run on with
``--persistent-resource ID`` without waiting for VMs. Thin commands over the Vertex AI target's SDK functions
(:mod:`tfcloud.flow.clusters`: ``create_cluster``, ``list_clusters``, ``delete_cluster``, ``gc_clusters``). ``list``
and ``gc`` warn once a day of each cluster idle longer than the ``cluster_idle_warn`` setting (they list the
clusters anyway: the warning costs no call)."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import Annotated, Any, Optional

import typer

from tfcloud.cli._app import _Typer, dumps
from tfcloud.cli._options import (
    ChiefConfigOpt,
    LabelOpt,
    PsCountOpt,
    WorkerConfigOpt,
    WorkerCountOpt,
    machine,
    pairs,
    where,
    with_where,
)
from tfcloud.config.docsite import page
from tfcloud.view import completion

__all__ = ["cluster_app"]

cluster_app = _Typer(name="cluster", no_args_is_help=True, rich_markup_mode=None,
                     help="Vertex AI persistent resources: clusters that jobs run on with --persistent-resource ID, "
                          "without waiting for VMs (" + page("vertex") + ").")
ClusterIdArg = Annotated[str, typer.Argument(metavar="ID", help="The cluster's (persistent resource's) ID.",
                                             show_default=False)]


@cluster_app.command("create")
@with_where(targets=("vertex",))
def cluster_create(
    ctx: typer.Context,
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
    custom_service_account: Annotated[bool, typer.Option(
        "--custom-service-account", help="Jobs on it run as their own --service-account (every job on it must "
                                         "give one); without it, as Vertex AI's Custom Code Service Agent.")] = False,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once it is being provisioned.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check it and show what it would cost per hour while "
                                                            "it exists; create nothing.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print it as JSON.")] = False,
    **target_options: Any,
) -> None:
    """Create a persistent resource with a resource pool per role, sized like a job (--chief-config,
    --worker-config, --worker-count, ...); jobs of that shape then run on it with --persistent-resource ID.

    Example: tfcloud cluster create my-cluster --chief-config A100_1X --worker-config A100_1X --worker-count 3
    """
    import tfcloud.flow.clusters as clusters

    info = clusters.create_cluster(
        cluster_id, chief_config=machine(chief_config, "chief_config"),
        worker_config=machine(worker_config, "worker_config"), worker_count=worker_count,
        ps_config="CPU" if ps_config is None else machine(ps_config, "ps_config"), ps_count=ps_count,
        evaluator_count=int(evaluator), display_name=display_name, labels=pairs(label, "--label"),
        network=network, custom_service_account=custom_service_account, wait=not no_wait, dry_run=dry_run,
        **_place(ctx, target_options))
    _print_clusters([info], json_output=json_output, one=True)


@cluster_app.command("list")
@with_where(targets=("vertex",))
def cluster_list(
    ctx: typer.Context,
    json_output: Annotated[bool, typer.Option("--json", help="Print them as JSON.")] = False,
    **target_options: Any,
) -> None:
    """List the persistent resources in the project and region: each one's price per hour while it exists, how
    long it has run no job, and what that idle time cost."""
    import tfcloud.flow.clusters as clusters

    found = clusters.list_clusters(**_place(ctx, target_options))
    _print_clusters(found, json_output=json_output)
    _warn_idle(found)


@cluster_app.command("gc")
@with_where(targets=("vertex",))
def cluster_gc(
    ctx: typer.Context,
    idle: Annotated[str, typer.Option(
        metavar="DURATION", help="Delete the clusters no job has run on for this long (30m, 2h, 1d).",
        show_default=False)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say which it would delete; delete nothing.")] = False,
    **target_options: Any,
) -> None:
    """Delete the persistent resources that have run no job for --idle DURATION or longer; never one a job runs
    on.

    Example: tfcloud cluster gc --idle 2h --dry-run
    """
    import time

    import tfcloud.flow.clusters as clusters
    from tfcloud.google.catalog.costs import usd

    chosen = clusters.gc_clusters(idle, dry_run=dry_run, **_place(ctx, target_options))
    now = time.time()
    for info in chosen:
        cost = clusters.idle_cost(info, now)
        spent = f"\tidle {clusters.duration_text(info.idle_s(now) or 0.0)}" + (
            f" ({usd(cost)})" if cost is not None else "")
        typer.echo(f"{info.cluster_id}\t{'would delete' if dry_run else 'deleted'}{spent}")
    if not chosen:
        from tfcloud.view.console import get_error_console

        get_error_console().print(f"No cluster has been idle for {idle} or longer.", markup=False, highlight=False)


@cluster_app.command("delete")
@with_where(targets=("vertex",))
def cluster_delete(
    ctx: typer.Context,
    cluster_id: ClusterIdArg,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Return once the deletion started.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Delete it even while jobs run on it (they lose its "
                                                        "machines).")] = False,
    **target_options: Any,
) -> None:
    """Delete a persistent resource (billing for it stops once it is gone); refused while jobs run on it, naming
    them, unless --force."""
    import tfcloud.flow.clusters as clusters

    clusters.delete_cluster(cluster_id, wait=not no_wait, force=force, **_place(ctx, target_options))
    typer.echo(f"{cluster_id}\tdeleted" if not no_wait else f"{cluster_id}\tdeleting")


def _place(ctx: typer.Context, values: dict[str, Any]) -> dict[str, Any]:
    """The Vertex AI target's place the flags give (``--vertex``, ``--project``, ``--region``,
    ``--emulator-host``, ``-o KEY=VALUE``), as the cluster functions take it (``with_where(targets=("vertex",))``
    offers no other target's flag)."""
    options = where(ctx, values)
    options.pop("target")
    options.pop("given_as", None)
    return options


def _warn_idle(found: list[Any]) -> None:
    from tfcloud.flow.clusters import idle_warnings
    from tfcloud.view.console import get_error_console

    for line in idle_warnings(found):
        get_error_console().print(line, markup=False, highlight=False)


def _print_clusters(clusters: list[Any], *, json_output: bool, one: bool = False) -> None:
    import time

    from tfcloud.flow.clusters import cluster_price, duration_text, idle_cost
    from tfcloud.google.catalog.costs import usd

    now = time.time()
    if json_output:
        rows = [{**info.to_dict(), "price_per_hour_usd": cluster_price(info).per_hour,
                 "idle_seconds": info.idle_s(now), "idle_cost_usd": idle_cost(info, now)} for info in clusters]
        typer.echo(dumps(rows[0] if one else rows, indent=2))
        return
    for info in clusters:  # plain lines on stdout (tab-separated, as `tfcloud status`): they copy whole
        pools = ", ".join(f"{p.pool_id}: {p.replica_count} x {p.machine_type}"
                          + (f" ({p.accelerator})" if p.accelerator != "-" else "") for p in info.pools)
        line = f"{info.cluster_id}\t{info.state}\t{pools}\t{cluster_price(info).line()}"
        idle, cost = info.idle_s(now), idle_cost(info, now)
        if info.busy:
            line += f"\tbusy: {len(info.busy)} job{'s' if len(info.busy) != 1 else ''} running"
        elif idle is not None:
            line += f"\tidle {duration_text(idle)}" + (f", which cost {usd(cost)}" if cost is not None else "")
        typer.echo(line)
