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
from tfcloud.google.catalog.costs import usd
from tfcloud.google.vertex.clusters import ClusterInfo, ClusterPool, cluster_price

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
    (https://tfcloud.readthedocs.io/en/latest/vertex/#persistent-resources-tfcloud-cluster). With ``wait``,
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


def idle_cost(info: ClusterInfo, now: float) -> float | None:
    """What the cluster's idle time (:meth:`ClusterInfo.idle_s`) cost at its price per hour (:func:`cluster_price`):
    a persistent resource is billed while it runs, job or no job. None: busy, or no price known."""
    idle = info.idle_s(now)
    per_hour = cluster_price(info).per_hour
    return None if idle is None or per_hour is None else per_hour * idle / 3600


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
    day (what was said is kept in the state dir, ``cluster-idle-warned.json``)."""
    import contextlib
    import datetime as dt
    import json
    import time

    from tfcloud.flow.settings import cluster_idle_warn, resolve_settings
    from tfcloud.records.files import write_private_json
    from tfcloud.records.statedir import state_dir

    settings = settings if settings is not None else resolve_settings({})
    limit = cluster_idle_warn(settings)
    at = time.time() if now is None else now
    idle = [info for info in clusters if limit is not None and (info.idle_s(at) or 0.0) > limit]
    if not idle:
        return []
    path = state_dir(settings) / "cluster-idle-warned.json"
    try:
        said = json.loads(path.read_text(encoding="utf-8"))
        said = said if isinstance(said, dict) else {}
    except (OSError, ValueError):
        said = {}
    today = dt.datetime.fromtimestamp(at, dt.timezone.utc).date().isoformat()
    out = []
    for info in idle:
        if said.get(info.name) == today:
            continue
        said[info.name] = today
        cost = idle_cost(info, at)
        idle_s = info.idle_s(at) or 0.0
        region = info.name.split("/")[3] if info.name.count("/") >= 3 else ""
        out.append(f"Warning: cluster {info.cluster_id} has run no job for {duration_text(idle_s)}"
                   + (f" (that idle time cost {usd(cost)})" if cost is not None else "")
                   + f"; it bills while it exists. Delete it: tfcloud cluster delete {info.cluster_id} --region "
                   f"{region}, or every idle one: tfcloud cluster gc --idle {duration_text(limit or 0.0)} "
                   "--dry-run")
    with contextlib.suppress(OSError):  # a warning that cannot be remembered is said again; never an error
        write_private_json(path, said)
    return out


def duration_text(seconds: float) -> str:
    """``45s``, ``12m03s``, ``3h05m``, ``2d4h``."""
    s = int(seconds)
    d, rest = divmod(s, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{d}d{h}h" if d else f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


