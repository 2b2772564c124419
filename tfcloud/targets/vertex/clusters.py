"""Vertex AI persistent resources (``tfcloud cluster create|list|delete``): long-running clusters that jobs run on
with ``--persistent-resource ID``, skipping the VMs' provisioning.

- :func:`cluster_pools` sizes the resource pools from the same machine configs as a job (``chief_config``,
  ``worker_config``/``worker_count``, ``ps_config``/``ps_count``, ``evaluator_count``): one resource pool per
  role, named by the role (``chief``, ``worker``, ``ps``, ``evaluator``), each with the boot disk a job's pool
  asks for, so that a job of the same shape fits it (Vertex AI matches machine and disk exactly).
- :func:`persistent_resource_request` is the ``PersistentResource`` as a JSON-shaped dict (a pure function,
  tested as a value: ``tests/golden/vertex/cluster_*.json``).
- :class:`ClusterService` makes the calls through :mod:`tfcloud.gcloud` (retries, error translation): create
  (exactly once, as a job's create), get, list and delete, optionally waiting for the long-running change.
- :func:`create_cluster`, :func:`list_clusters`, :func:`delete_cluster`: the SDK's functions, with the settings
  resolved and every argument checked before anything is created (``tfcloud cluster`` is a thin layer on them).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tfcloud.errors import JobNotFoundError, SubmitError, ValidationError
from tfcloud.gcloud import Clients, RetryPolicy, call
from tfcloud.machines import COMMON_MACHINE_CONFIGS, MachineConfig, machine_config_from_name
from tfcloud.targets.vertex.request import BOOT_DISK, machine_spec

if TYPE_CHECKING:
    from tfcloud.prices import ClusterPrice
    from tfcloud.settings import Settings

__all__ = ["ClusterInfo", "ClusterPool", "ClusterService", "check_cluster_id", "cluster_pools", "cluster_price",
           "create_cluster",
           "delete_cluster", "list_clusters", "persistent_resource_request"]

_ID = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")
MAX_POOL_REPLICAS = 1000
#: Seconds between looks while waiting for a resource to be provisioned or deleted (Vertex AI takes minutes).
POLL_S = 10.0
EMULATOR_POLL_S = 0.2


@dataclass(frozen=True, kw_only=True)
class ClusterPool:
    """One resource pool: ``pool_id`` (the role), its machine and how many replicas it holds (and uses now)."""

    pool_id: str
    machine_type: str
    accelerator: str
    replica_count: int
    used_replica_count: int = 0


@dataclass(frozen=True, kw_only=True)
class ClusterInfo:
    """A persistent resource as tfcloud shows it. ``state``: Vertex AI's (PROVISIONING, RUNNING, STOPPING, ERROR,
    ...)."""

    cluster_id: str
    name: str
    state: str
    display_name: str | None
    pools: tuple[ClusterPool, ...]
    created: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"cluster_id": self.cluster_id, "name": self.name, "state": self.state,
                "display_name": self.display_name, "created": self.created, "error": self.error,
                "pools": [vars(pool) for pool in self.pools]}


def check_cluster_id(value: object) -> str:
    """A persistent resource's ID: 1 to 63 lowercase letters, digits or '-', starting with a letter."""
    if not isinstance(value, str) or not _ID.match(value):
        raise ValidationError("cluster_id", "1 to 63 lowercase letters, digits or '-', starting with a letter and "
                              "not ending with '-'", value)
    return value


def _machine(field: str, value: object) -> MachineConfig:
    if isinstance(value, MachineConfig):
        return value
    if value is None or (isinstance(value, str) and value.lower() == "auto"):
        return COMMON_MACHINE_CONFIGS["T4_1X"]  # as a Vertex AI job's "auto"
    if isinstance(value, str):
        return machine_config_from_name(value, field=field)
    raise ValidationError(field, "a name from `tfcloud machines` or a tfcloud.MachineConfig", value)


def _count(field: str, value: object, maximum: int = MAX_POOL_REPLICAS) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= maximum:
        raise ValidationError(field, f"an integer from 0 to {maximum}", value)
    return value


def cluster_pools(*, chief_config: object = "auto", worker_config: object = "auto", worker_count: object = 0,
                  ps_config: object = "CPU", ps_count: object = 0, evaluator_config: object = "CPU",
                  evaluator_count: object = 0) -> tuple[tuple[str, MachineConfig, int], ...]:
    """(pool id, machine, replicas) for each role the cluster holds, from a job's machine options."""
    pools = [("chief", _machine("chief_config", chief_config), 1)]
    for role, config, count, maximum in (("worker", worker_config, worker_count, MAX_POOL_REPLICAS),
                                         ("ps", ps_config, ps_count, MAX_POOL_REPLICAS),
                                         ("evaluator", evaluator_config, evaluator_count, 1)):
        replicas = _count(f"{role}_count", count, maximum)
        if replicas:
            pools.append((role, _machine(f"{role}_config", config), replicas))
    return tuple(pools)


def persistent_resource_request(pools: tuple[tuple[str, MachineConfig, int], ...], *, display_name: str | None = None,
                                labels: dict[str, str] | None = None, network: str | None = None) -> dict[str, Any]:
    """The ``PersistentResource`` for ``pools`` (:func:`cluster_pools`), in the form
    ``aiplatform_v1.PersistentResource.from_json`` reads."""
    body: dict[str, Any] = {
        "resource_pools": [{"id": pool_id, "machine_spec": machine_spec(machine), "replica_count": count,
                            "disk_spec": dict(BOOT_DISK)} for pool_id, machine, count in pools],
    }
    if display_name:
        body["display_name"] = display_name
    if labels:
        body["labels"] = dict(labels)
    if network:
        body["network"] = network
    return body


def cluster_price(info: ClusterInfo) -> ClusterPrice:
    """What ``info``'s persistent resource costs per hour while it exists (:func:`tfcloud.prices.cluster_price`;
    the region is its name's)."""
    from tfcloud.prices import cluster_price as price

    parts = info.name.split("/")
    region = parts[3] if len(parts) > 3 and parts[2] == "locations" else "us-central1"
    pools = []
    for pool in info.pools:
        count, _, accelerator = pool.accelerator.partition(" x ")
        pools.append((pool.replica_count, pool.machine_type, accelerator or None,
                      int(count) if count.isdigit() else 0))
    return price(pools, region=region)


def _info(resource: Any) -> ClusterInfo:
    pools = tuple(ClusterPool(
        pool_id=pool.id, machine_type=pool.machine_spec.machine_type,
        accelerator=(f"{pool.machine_spec.accelerator_count} x {pool.machine_spec.accelerator_type.name}"
                     if pool.machine_spec.accelerator_count else "-"),
        replica_count=int(pool.replica_count), used_replica_count=int(pool.used_replica_count))
        for pool in resource.resource_pools)
    created = resource.create_time.isoformat() if "create_time" in resource else None
    return ClusterInfo(cluster_id=resource.name.rsplit("/", 1)[-1], name=resource.name, state=resource.state.name,
                       display_name=resource.display_name or None, pools=pools, created=created,
                       error=(resource.error.message or None) if "error" in resource else None)


class ClusterService:
    """Persistent resources in the settings' project and region (or the emulator's)."""

    def __init__(self, *, settings: Settings, retry: RetryPolicy | None = None,
                 poll_interval: float | None = None) -> None:
        from tfcloud.errors import ConfigurationError

        if not settings.project:
            raise ConfigurationError("No Google Cloud project for Vertex AI.",
                                     hint="Pass --project, or set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT.")
        self.parent = f"projects/{settings.project}/locations/{settings.region}"
        self.clients = Clients(endpoint=settings.emulator_host, region=settings.region)
        self.retry = retry if retry is not None else RetryPolicy.from_setting(settings.retry_deadline)
        self.poll_interval = poll_interval if poll_interval is not None else (
            EMULATOR_POLL_S if settings.emulator_host else POLL_S)

    def name(self, cluster_id: str) -> str:
        return cluster_id if cluster_id.startswith("projects/") else f"{self.parent}/persistentResources/{cluster_id}"

    def get(self, cluster_id: str) -> ClusterInfo:
        client = self.clients.persistent_resources()
        return _info(call(lambda: client.get_persistent_resource(name=self.name(cluster_id), retry=None,
                                                                 timeout=self.retry.call_timeout),
                          what=f"Looking up cluster {cluster_id}", policy=self.retry))

    def create(self, cluster_id: str, request: dict[str, Any], *, wait: bool = True,
               timeout: float | None = None) -> ClusterInfo:
        """Create the resource (exactly once: a retried create first looks for it), then, with ``wait``, wait until
        it is no longer PROVISIONING (SubmitError when it ends in ERROR)."""
        import json

        from google.cloud import aiplatform_v1

        from tfcloud.targets.vertex.backend import create_once

        message = aiplatform_v1.PersistentResource.from_json(json.dumps(request))
        client = self.clients.persistent_resources()

        def find() -> Any:
            from google.api_core.exceptions import NotFound

            try:
                return client.get_persistent_resource(name=self.name(cluster_id), retry=None,
                                                      timeout=self.retry.call_timeout)
            except NotFound:
                return None

        create_once(lambda: client.create_persistent_resource(
                        parent=self.parent, persistent_resource=message, persistent_resource_id=cluster_id,
                        retry=None, timeout=self.retry.create_timeout),
                    find, what=f"Creating cluster {cluster_id}", policy=self.retry, noun="cluster",
                    look_hint=f"Look for it: tfcloud cluster list --region {self.parent.rsplit('/', 1)[-1]}")
        info = self.get(cluster_id)
        deadline = None if timeout is None else time.monotonic() + timeout
        while wait and info.state == "PROVISIONING" and (deadline is None or time.monotonic() < deadline):
            time.sleep(self.poll_interval)
            info = self.get(cluster_id)
        if info.state == "ERROR":
            raise SubmitError(f"Cluster {cluster_id} could not be provisioned: {info.error or 'no reason given'}")
        return info

    def list(self) -> list[ClusterInfo]:
        """Every persistent resource in the project and region, newest first."""
        client = self.clients.persistent_resources()
        found = call(lambda: list(client.list_persistent_resources(parent=self.parent, retry=None,
                                                                   timeout=self.retry.call_timeout)),
                     what="Listing clusters", policy=self.retry)
        return [_info(resource) for resource in found]

    def delete(self, cluster_id: str, *, wait: bool = True, timeout: float | None = None) -> None:
        """Delete the resource; with ``wait``, until Vertex AI no longer finds it."""
        client = self.clients.persistent_resources()
        call(lambda: client.delete_persistent_resource(name=self.name(cluster_id), retry=None,
                                                       timeout=self.retry.call_timeout),
             what=f"Deleting cluster {cluster_id}", policy=self.retry)
        deadline = None if timeout is None else time.monotonic() + timeout
        while wait and (deadline is None or time.monotonic() < deadline):
            try:
                self.get(cluster_id)
            except JobNotFoundError:
                return
            time.sleep(self.poll_interval)

    def close(self) -> None:
        self.clients.close()


# -- the SDK's cluster functions (``tfcloud cluster`` calls them) ------------------------------------------------
def _service(project: str | None, region: str | None, emulator_host: str | None) -> ClusterService:
    """The persistent resources' client for the settings (flag > TFCLOUD_* > config > default), checked."""
    from tfcloud.settings import resolve_settings
    from tfcloud.targets.vertex import check_project, check_region
    from tfcloud.validate import check_credentials, check_settings

    settings = resolve_settings({"target": "vertex", "project": project, "region": region,
                                 "emulator_host": emulator_host})
    check_settings(settings)
    check_project("project", settings.project)
    check_region("region", settings.region)
    if not settings.project:
        raise ValidationError("project", "a Google Cloud project id for Vertex AI", None,
                              hint="Pass --project, or set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT.")
    check_credentials(settings)
    return ClusterService(settings=settings)


def create_cluster(cluster_id: str, *, chief_config: Any = "auto", worker_config: Any = "auto", worker_count: int = 0,
                   ps_config: Any = "CPU", ps_count: int = 0, evaluator_count: int = 0,
                   display_name: str | None = None, labels: Mapping[str, str] | None = None,
                   network: str | None = None, project: str | None = None, region: str | None = None,
                   emulator_host: str | None = None, wait: bool = True) -> ClusterInfo:
    """Create a Vertex AI persistent resource (``tfcloud cluster create``) whose resource pools hold the machines
    a job of this shape asks for; jobs then run on it with ``persistent_resource=`` (docs/vertex.md). With
    ``wait``, returns once it is RUNNING. Everything is checked before anything is created."""
    from tfcloud.validate import validate_labels

    request = persistent_resource_request(
        cluster_pools(chief_config=chief_config, worker_config=worker_config, worker_count=worker_count,
                      ps_config=ps_config, ps_count=ps_count, evaluator_count=evaluator_count),
        display_name=display_name or check_cluster_id(cluster_id), labels=dict(validate_labels(labels)),
        network=network)
    service = _service(project, region, emulator_host)
    try:
        return service.create(check_cluster_id(cluster_id), request, wait=wait)
    finally:
        service.close()


def list_clusters(*, project: str | None = None, region: str | None = None,
                  emulator_host: str | None = None) -> list[ClusterInfo]:
    """The persistent resources in the project and region (``tfcloud cluster list``)."""
    service = _service(project, region, emulator_host)
    try:
        return service.list()
    finally:
        service.close()


def delete_cluster(cluster_id: str, *, project: str | None = None, region: str | None = None,
                   emulator_host: str | None = None, wait: bool = True) -> None:
    """Delete a persistent resource (``tfcloud cluster delete``); with ``wait``, until it is gone."""
    service = _service(project, region, emulator_host)
    try:
        service.delete(cluster_id, wait=wait)
    finally:
        service.close()
