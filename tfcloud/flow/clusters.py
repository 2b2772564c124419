"""The SDK's cluster functions (``tfcloud cluster create|list|delete|gc``): Vertex AI persistent resources, clusters
that jobs run on with ``persistent_resource=`` (``--persistent-resource ID``) without waiting for VMs.

An edge module beside :mod:`tfcloud.sdk`: it resolves the Vertex AI target as every verb does
(:func:`tfcloud.flow.where.resolve`: flag > ``TFCLOUD_*`` > config > other tools' variables > gcloud's configuration >
default) and hands the resolved value and settings to the Vertex AI package
(:mod:`tfcloud.google.vertex.clusters`: the request, the checks, the ``ClusterService``), which never reaches back
up.
Every argument is checked before any setting is read or anything is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ValidationError
from tfcloud.google.vertex.clusters import (
    ClusterInfo,
    ClusterPool,
    cluster_price,
    duration_text,
    idle_cost,
)

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.google.vertex.value import VertexOptions

__all__ = ["ClusterInfo", "ClusterPool", "cluster_price", "create_cluster", "delete_cluster", "duration_text",
           "gc_clusters", "idle_cost", "idle_warnings", "list_clusters"]


def _resolved(project: str | None, region: str | None, emulator_host: str | None,
              target_options: Mapping[str, str] | None = None) -> tuple[Settings, VertexOptions]:
    """The Vertex AI target (its place: project, region and emulator resolved as a job's, also by name and text in
    ``target_options``; a job option there is refused), checked, with the settings."""
    from tfcloud.flow.where import resolve
    from tfcloud.google.vertex import VertexTarget
    from tfcloud.google.vertex.clusters import require_project
    from tfcloud.job.checks import check_settings

    given: dict[str, object] = {"project": project, "region": region, "emulator_host": emulator_host}
    if target_options:
        given["target_options"] = dict(target_options)
    found = resolve(VertexTarget.name, given, place_only=True)
    check_settings(found.settings)
    target = found.target
    assert isinstance(target, VertexTarget)
    return found.settings, require_project(target)


def create_cluster(cluster_id: str, *, chief_config: Any = "auto", worker_config: Any = "auto", worker_count: int = 0,
                   ps_config: Any = "CPU", ps_count: int = 0, evaluator_count: int = 0,
                   display_name: str | None = None, labels: Mapping[str, str] | None = None,
                   network: str | None = None, custom_service_account: bool = False, project: str | None = None,
                   region: str | None = None, emulator_host: str | None = None, wait: bool = True,
                   dry_run: bool = False, target_options: Mapping[str, str] | None = None) -> ClusterInfo:
    """Create a Vertex AI persistent resource (``tfcloud cluster create``) whose resource pools hold the machines
    a job of this shape asks for; jobs then run on it with ``persistent_resource=``
    (``tfcloud docs vertex#persistent-resources-tfcloud-cluster``). With ``wait``,
    returns once it is RUNNING; with ``dry_run``, checks everything and returns what it would create (state
    ``DRY_RUN``, for its price per hour: :func:`cluster_price`) without creating it or needing credentials.
    Every field is checked as a job's would be before anything is created; the create is idempotent by
    submission (a ``tfcloud-submission`` label): a retry never reports another cluster of that ID as created,
    and a create whose answer was lost is found by looking."""
    from tfcloud.google.vertex.clusters import cluster_request, create_on, planned_cluster

    cluster_id, request = cluster_request(
        cluster_id, chief_config=chief_config, worker_config=worker_config, worker_count=worker_count,
        ps_config=ps_config, ps_count=ps_count, evaluator_count=evaluator_count, display_name=display_name,
        labels=labels, network=network, custom_service_account=custom_service_account, wait=wait, dry_run=dry_run)
    settings, target = _resolved(project, region, emulator_host, target_options)
    if dry_run:
        return planned_cluster(cluster_id, request, target=target)
    return create_on(cluster_id, request, settings=settings, target=target, wait=wait)


def list_clusters(*, project: str | None = None, region: str | None = None, emulator_host: str | None = None,
                  target_options: Mapping[str, str] | None = None) -> list[ClusterInfo]:
    """The persistent resources in the project and region (``tfcloud cluster list``). Each function here takes
    the Vertex AI target's place only: ``project``, ``region``, ``emulator_host`` (or by name in
    ``target_options``, the CLI's ``-o``)."""
    from tfcloud.google.vertex.clusters import list_on

    settings, target = _resolved(project, region, emulator_host, target_options)
    return list_on(settings=settings, target=target)


def delete_cluster(cluster_id: str, *, project: str | None = None, region: str | None = None,
                   emulator_host: str | None = None, wait: bool = True, force: bool = False,
                   target_options: Mapping[str, str] | None = None) -> None:
    """Delete a persistent resource (``tfcloud cluster delete``); with ``wait``, until it is gone. ``cluster_id``:
    its ID, or its full name in the project and region. Refused while jobs run on it (naming them) unless
    ``force``."""
    from tfcloud.google.vertex.clusters import check_delete, delete_on

    check_delete(cluster_id, force=force)
    settings, target = _resolved(project, region, emulator_host, target_options)
    delete_on(cluster_id, settings=settings, target=target, wait=wait, force=force)


def gc_clusters(idle: object, *, dry_run: bool = False, project: str | None = None, region: str | None = None,
                emulator_host: str | None = None, target_options: Mapping[str, str] | None = None,
                now: float | None = None) -> list[ClusterInfo]:
    """Delete the persistent resources no job has run on for ``idle`` (a duration: ``30m``, ``2h``, ``1d``) or
    longer (``tfcloud cluster gc --idle``), never one a job runs on; with ``dry_run``, only say which. Returns
    them."""
    import time

    from tfcloud.config.digits import parse_duration
    from tfcloud.google.vertex.clusters import delete_on, list_on

    seconds = parse_duration(idle)
    if seconds is None or not 0 <= seconds < float("inf"):
        raise ValidationError("idle", "a duration such as 30m, 2h or 1d", idle,
                              hint="tfcloud cluster gc --idle 2h --dry-run shows which it would delete.")
    settings, target = _resolved(project, region, emulator_host, target_options)
    at = time.time() if now is None else now
    chosen = [info for info in list_on(settings=settings, target=target)
              if not info.busy and (info.idle_s(at) or 0.0) >= seconds and info.idle_since is not None]
    for info in [] if dry_run else chosen:
        delete_on(info.name, settings=settings, target=target, wait=True)  # refused there too if a job started
    return chosen


def idle_warnings(clusters: list[ClusterInfo], *, settings: Settings | None = None,
                  now: float | None = None) -> list[str]:
    """A warning for each of ``clusters`` idle longer than the ``cluster_idle_warn`` setting, each said once a
    day (:func:`tfcloud.google.vertex.clusters.warn_once`)."""
    from tfcloud.flow.settings import resolve_settings
    from tfcloud.google.vertex.clusters import warn_once

    return warn_once(clusters, settings=settings if settings is not None else resolve_settings({}), now=now)
