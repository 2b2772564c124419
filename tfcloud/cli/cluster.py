"""``tfcloud cluster create|list|delete``: Vertex AI persistent resources, clusters that jobs run on with
``--persistent-resource ID`` without waiting for VMs. Thin commands over the Vertex AI target's SDK functions
(:mod:`tfcloud.flow.clusters`: ``create_cluster``, ``list_clusters``, ``delete_cluster``)."""

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
    """List the persistent resources in the project and region."""
    import tfcloud.flow.clusters as clusters

    _print_clusters(clusters.list_clusters(**_place(ctx, target_options)), json_output=json_output)


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


def _print_clusters(clusters: list[Any], *, json_output: bool, one: bool = False) -> None:
    from tfcloud.flow.clusters import cluster_price

    if json_output:
        rows = [{**info.to_dict(), "price_per_hour_usd": cluster_price(info).per_hour} for info in clusters]
        typer.echo(dumps(rows[0] if one else rows, indent=2))
        return
    for info in clusters:  # plain lines on stdout (tab-separated, as `tfcloud status`): they copy whole
        pools = ", ".join(f"{p.pool_id}: {p.replica_count} x {p.machine_type}"
                          + (f" ({p.accelerator})" if p.accelerator != "-" else "") for p in info.pools)
        typer.echo(f"{info.cluster_id}\t{info.state}\t{pools}\t{cluster_price(info).line()}")
