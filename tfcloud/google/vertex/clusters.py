"""Vertex AI persistent resources (``tfcloud cluster create|list|delete``): long-running clusters that jobs run on
with ``--persistent-resource ID``, skipping the VMs' provisioning.

- :func:`cluster_pools` sizes the resource pools from the same machine configs as a job (``chief_config``,
  ``worker_config``/``worker_count``, ``ps_config``/``ps_count``, ``evaluator_count``): one resource pool per
  role, named by the role (``chief``, ``worker``, ``ps``, ``evaluator``), each with the boot disk a job's pool
  asks for, so that a job of the same shape fits it (Vertex AI matches machine and disk exactly).
- :func:`persistent_resource_request` is the ``PersistentResource`` as a JSON-shaped dict (a pure function,
  tested as a value: ``tests/golden/vertex/cluster_*.json``).
- :class:`ClusterService` makes the calls through :mod:`tfcloud.google.cloud.gcloud` (retries, error translation):
create
  (exactly once, as a job's create), get, list and delete, optionally waiting for the long-running change.
- :func:`cluster_request`, :func:`check_delete`: every argument checked before any setting is read; then, given
  the resolved Vertex AI target and settings, :func:`planned_cluster` (a dry run), :func:`create_on`,
  :func:`list_on` and :func:`delete_on`. The SDK's functions (:mod:`tfcloud.flow.clusters`: ``create_cluster``,
  ``list_clusters``, ``delete_cluster``, which ``tfcloud cluster`` calls) resolve the target as every verb does
  and call these: this package never imports :mod:`tfcloud.flow.where`.
"""

from __future__ import annotations

import builtins
import dataclasses
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tfcloud.errors import JobNotFoundError, SubmitError, ValidationError
from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS, MachineConfig, machine_config_from_name
from tfcloud.google.cloud.gcloud import Clients, RetryPolicy, call
from tfcloud.google.vertex.request import BOOT_DISK, SUBMISSION_LABEL, machine_spec
from tfcloud.targets._base import check_text, refuse_control

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.google.catalog.prices import ClusterPrice
    from tfcloud.google.vertex.value import VertexOptions

__all__ = ["CLUSTER_IDLE_WARN", "ClusterInfo", "ClusterPool", "ClusterService", "check_cluster_id", "check_delete",
           "cluster_pools", "cluster_price", "cluster_request", "create_on", "delete_on", "duration_text", "idle_cost",
           "idle_notices", "idle_warn_s", "list_on", "persistent_resource_request", "planned_cluster",
           "require_project", "warn_once"]

_ID = re.compile(r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?")
MAX_POOL_REPLICAS = 1000
#: PersistentResource.display_name: "up to 128 characters long and can consist of any UTF-8 characters"
#: (aiplatform_v1 persistent_resource.proto, read 2026-11-26); control characters refused as everywhere.
MAX_DISPLAY_NAME = 128
#: CustomJob states after which a job holds no machine of a cluster (JobState in aiplatform_v1 job_state.proto).
FINAL_JOB_STATES = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED",
                              "JOB_STATE_PARTIALLY_SUCCEEDED"})
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
    #: The jobs (CustomJobs, tuning studies) not in a final state that run on it: their names. Filled by a list.
    busy: tuple[str, ...] = ()
    #: Epoch seconds since when no job has run on it (the end of the last job on it, else when it started
    #: running); None while a job runs on it, or when unknown (not listed, or not running).
    idle_since: float | None = None

    def idle_s(self, now: float) -> float | None:
        """How long no job has run on it, at ``now`` (None: busy, or unknown)."""
        return None if self.busy or self.idle_since is None else max(0.0, now - self.idle_since)

    def to_dict(self) -> dict[str, object]:
        return {"cluster_id": self.cluster_id, "name": self.name, "state": self.state,
                "display_name": self.display_name, "created": self.created, "error": self.error,
                "pools": [vars(pool) for pool in self.pools], "busy": list(self.busy)}


def check_cluster_id(value: object) -> str:
    """A persistent resource's ID: 1 to 63 lowercase letters, digits or '-', starting with a letter (a control
    character refused first: ``$`` would match before a final newline)."""
    refuse_control("cluster_id", value)
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise ValidationError("cluster_id", "1 to 63 lowercase letters, digits or '-', starting with a letter and "
                              "not ending with '-'", value)
    return value


def check_cluster_name(value: object, *, project: str | None, region: str | None) -> str:
    """A cluster's ID, or its full name ``projects/P/locations/REGION/persistentResources/ID`` in the settings'
    project and region (another's is refused: the calls go to the settings' region). Returns the ID."""
    refuse_control("cluster_id", value)
    if isinstance(value, str) and value.startswith("projects/"):
        from tfcloud.google.vertex.options import check_persistent_resource

        try:
            check_persistent_resource(value, region=region, project=project)
        except ValidationError as exc:
            raise ValidationError("cluster_id", exc.expected.replace("the job's", "the settings'"), value,
                                  hint=exc.hint) from None
        return check_cluster_id(value.rsplit("/", 1)[-1])
    return check_cluster_id(value)


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
                                labels: dict[str, str] | None = None, network: str | None = None,
                                custom_service_account: bool = False) -> dict[str, Any]:
    """The ``PersistentResource`` for ``pools`` (:func:`cluster_pools`), in the form
    ``aiplatform_v1.PersistentResource.from_json`` reads. ``custom_service_account``: jobs on it run as their own
    service account (``ResourceRuntimeSpec.service_account_spec.enable_custom_service_account``; the proto: "If
    true, custom user-managed service account is enforced to run any workloads", so every job on it then gives
    one; without it, the Vertex AI Custom Code Service Agent runs them, and a job's own is refused)."""
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
    if custom_service_account:
        body["resource_runtime_spec"] = {"service_account_spec": {"enable_custom_service_account": True}}
    return body


def cluster_price(info: ClusterInfo) -> ClusterPrice:
    """What ``info``'s persistent resource costs per hour while it exists
    (:func:`tfcloud.google.catalog.prices.cluster_price`; the region is its name's)."""
    from tfcloud.google.catalog.prices import cluster_price as price

    parts = info.name.split("/")
    region = parts[3] if len(parts) > 3 and parts[2] == "locations" else "us-central1"
    pools = []
    for pool in info.pools:
        count, _, accelerator = pool.accelerator.partition(" x ")
        pools.append((pool.replica_count, pool.machine_type, accelerator or None,
                      int(count) if count.isdigit() else 0))
    return price(pools, region=region)


def _epoch(message: Any, field: str) -> float | None:
    """A proto message's timestamp ``field`` as epoch seconds; None when it is not set."""
    from tfcloud.google.vertex.logs import timestamp

    return timestamp(getattr(message, field)) if field in message else None


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
    """Persistent resources in the target's project and region (or the emulator's)."""

    def __init__(self, *, settings: Settings, target: VertexOptions, retry: RetryPolicy | None = None,
                 poll_interval: float | None = None) -> None:
        from tfcloud.errors import ConfigurationError

        if not target.project:
            raise ConfigurationError("No Google Cloud project for Vertex AI.",
                                     hint="Pass --project, or set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT.")
        self.parent = f"projects/{target.project}/locations/{target.location}"
        self.clients = Clients(endpoint=target.emulator_host, region=target.location)
        self.retry = retry if retry is not None else RetryPolicy.from_setting(settings.retry_deadline)
        self.poll_interval = poll_interval if poll_interval is not None else (
            EMULATOR_POLL_S if target.emulator_host else POLL_S)

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

        from tfcloud.google.vertex.backend import create_once

        message = aiplatform_v1.PersistentResource.from_json(json.dumps(request))
        client = self.clients.persistent_resources()
        submission = request.get("labels", {}).get(SUBMISSION_LABEL)

        def find() -> Any:
            """This submission's cluster (a retried create that did make it), None when there is none; another
            cluster of that ID is someone else's, never reported as created."""
            from google.api_core.exceptions import NotFound

            try:
                found = client.get_persistent_resource(name=self.name(cluster_id), retry=None,
                                                       timeout=self.retry.call_timeout)
            except NotFound:
                return None
            if submission is not None and found.labels.get(SUBMISSION_LABEL) != submission:
                raise SubmitError(f"Creating cluster {cluster_id}: a cluster {cluster_id} already exists that this "
                                  "command did not create; nothing was created.",
                                  hint="Pick another ID, or see it: tfcloud cluster list")
            return found

        create_once(lambda: client.create_persistent_resource(
                        parent=self.parent, persistent_resource=message, persistent_resource_id=cluster_id,
                        retry=None, timeout=self.retry.create_timeout),
                    find, what=f"Creating cluster {cluster_id}", policy=self.retry, noun="cluster",
                    look_hint=f"Look for it: tfcloud cluster list --region {self.parent.rsplit('/', 1)[-1]}")
        from tfcloud.errors import OutcomeUnknownError

        try:
            info = self.get(cluster_id)
            deadline = None if timeout is None else time.monotonic() + timeout
            while wait and info.state == "PROVISIONING" and (deadline is None or time.monotonic() < deadline):
                time.sleep(self.poll_interval)
                info = self.get(cluster_id)
        except OutcomeUnknownError as exc:  # created: it exists, and bills while it provisions
            region = self.parent.rsplit("/", 1)[-1]
            raise OutcomeUnknownError(
                f"Cluster {cluster_id} was created, but Vertex AI stopped answering when asked how it stands "
                f"({exc.message}): it exists, and may be provisioning or running (and billing).",
                hint=f"See it: tfcloud cluster list --region {region}; delete it if it is not wanted: "
                     f"tfcloud cluster delete {cluster_id} --region {region}") from exc
        if info.state == "ERROR":
            raise SubmitError(f"Cluster {cluster_id} could not be provisioned: {info.error or 'no reason given'}")
        return info

    def list(self) -> list[ClusterInfo]:
        """Every persistent resource in the project and region, newest first, each with the jobs that run on it
        (:attr:`ClusterInfo.busy`) and since when none has (:attr:`ClusterInfo.idle_since`: the end of the last
        job on it, else when it started running): one ListPersistentResources and one ListCustomJobs (and
        ListHyperparameterTuningJobs) call."""
        client = self.clients.persistent_resources()
        found = call(lambda: list(client.list_persistent_resources(parent=self.parent, retry=None,
                                                                   timeout=self.retry.call_timeout)),
                     what="Listing clusters", policy=self.retry)
        if not found:
            return []
        jobs = self.clients.jobs()
        request = {"parent": self.parent}
        customs = call(lambda: list(jobs.list_custom_jobs(request=request, retry=None,
                                                          timeout=self.retry.call_timeout)),
                       what="Looking for jobs on the clusters", policy=self.retry)
        studies = call(lambda: list(jobs.list_hyperparameter_tuning_jobs(request=request, retry=None,
                                                                         timeout=self.retry.call_timeout)),
                       what="Looking for tuning studies on the clusters", policy=self.retry)
        on: dict[str, list[tuple[str, str, float | None]]] = {}
        for job in customs:
            if job.job_spec.persistent_resource_id:
                on.setdefault(job.job_spec.persistent_resource_id, []).append(
                    (job.name, job.state.name, _epoch(job, "end_time")))
        for study in studies:
            if study.trial_job_spec.persistent_resource_id:
                on.setdefault(study.trial_job_spec.persistent_resource_id, []).append(
                    (study.name, study.state.name, _epoch(study, "end_time")))
        out = []
        for resource in found:
            info = _info(resource)
            ran = on.get(info.cluster_id, [])
            busy = tuple(name for name, state, _ in ran if state not in FINAL_JOB_STATES)
            ends = [end for _, state, end in ran if state in FINAL_JOB_STATES and end is not None]
            began = _epoch(resource, "start_time")
            idle_since = None if busy or info.state != "RUNNING" or began is None else max([began, *ends])
            out.append(dataclasses.replace(info, busy=busy, idle_since=idle_since))
        return out

    def jobs_on(self, cluster_id: str) -> builtins.list[str]:
        """The CustomJobs whose ``job_spec.persistent_resource_id`` is the cluster, and the HyperparameterTuningJobs
        whose ``trial_job_spec`` names it, whose state is not final (their names): they hold its machines."""
        client = self.clients.jobs()
        live = " AND ".join(f'state!="{state}"' for state in sorted(FINAL_JOB_STATES))  # ListCustomJobs' filter
        request = {"parent": self.parent, "filter": live}
        found = call(lambda: list(client.list_custom_jobs(request=request, retry=None,
                                                          timeout=self.retry.call_timeout)),
                     what=f"Looking for jobs on cluster {cluster_id}", policy=self.retry)
        studies = call(lambda: list(client.list_hyperparameter_tuning_jobs(request=request, retry=None,
                                                                           timeout=self.retry.call_timeout)),
                       what=f"Looking for tuning studies on cluster {cluster_id}", policy=self.retry)
        return [job.name for job in found if job.job_spec.persistent_resource_id == cluster_id
                and job.state.name not in FINAL_JOB_STATES] + [
                study.name for study in studies if study.trial_job_spec.persistent_resource_id == cluster_id
                and study.state.name not in FINAL_JOB_STATES]

    def delete(self, cluster_id: str, *, wait: bool = True, timeout: float | None = None, force: bool = False) -> None:
        """Delete the resource (refused while jobs run on it, unless ``force``); with ``wait``, until Vertex AI no
        longer finds it. A retried delete that finds it gone was answered late: the cluster is deleted."""
        from google.api_core.exceptions import NotFound

        from tfcloud.errors import OutcomeUnknownError

        if not force:
            running = self.jobs_on(cluster_id)
            if running:
                ids = ", ".join(name.rsplit("/", 1)[-1] for name in running)
                raise ValidationError("cluster_id", "a cluster no job runs on", cluster_id,
                                      hint=f"{len(running)} job(s) run on it: {ids}. Wait for them or cancel them "
                                           "(tfcloud cancel ID), or pass --force (force=True) to delete it under "
                                           "them.")
        client = self.clients.persistent_resources()
        tries = 0

        def attempt() -> Any:
            nonlocal tries
            tries += 1
            try:
                return client.delete_persistent_resource(name=self.name(cluster_id), retry=None,
                                                         timeout=self.retry.call_timeout)
            except NotFound:
                if tries > 1:  # an earlier try deleted it; its answer was lost
                    return None
                raise

        what = f"Deleting cluster {cluster_id}"
        try:
            call(attempt, what=what, policy=self.retry)
        except OutcomeUnknownError:
            try:  # one last look decides
                self.get(cluster_id)
            except JobNotFoundError:
                return
            except OutcomeUnknownError:
                raise OutcomeUnknownError(f"{what}: Vertex AI did not answer; it may be deleted.",
                                          hint="Look: tfcloud cluster list") from None
            raise
        deadline = None if timeout is None else time.monotonic() + timeout
        while wait and (deadline is None or time.monotonic() < deadline):
            try:
                self.get(cluster_id)
            except JobNotFoundError:
                return
            time.sleep(self.poll_interval)

    def close(self) -> None:
        self.clients.close()


# -- what the SDK's cluster functions (tfcloud.flow.clusters) do once the target is resolved -------------------------
def require_project(target: VertexOptions) -> VertexOptions:
    """The resolved Vertex AI target, which must name a project (a cluster lives in one)."""
    if not target.project:
        raise ValidationError("project", "a Google Cloud project id for Vertex AI", None,
                              hint="Pass --project, or set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT.")
    return target


def _service(settings: Settings, target: VertexOptions) -> ClusterService:
    """The persistent resources' client for the resolved Vertex AI target, with credentials checked."""
    from tfcloud.google.cloud.auth import check_credentials

    check_credentials(emulator_host=target.emulator_host)
    return ClusterService(settings=settings, target=target)


def _planned(cluster_id: str, request: dict[str, Any], *, parent: str) -> ClusterInfo:
    """What ``request`` would create, not created (``state`` DRY_RUN): its pools, for the price it would cost."""
    pools = tuple(ClusterPool(
        pool_id=pool["id"], machine_type=pool["machine_spec"]["machine_type"],
        accelerator=(f"{pool['machine_spec']['accelerator_count']} x {pool['machine_spec']['accelerator_type']}"
                     if pool["machine_spec"].get("accelerator_count") else "-"),
        replica_count=int(pool["replica_count"])) for pool in request["resource_pools"])
    return ClusterInfo(cluster_id=cluster_id, name=f"{parent}/persistentResources/{cluster_id}", state="DRY_RUN",
                       display_name=request.get("display_name"), pools=pools)


def check_display_name(value: object) -> str | None:
    """A cluster's display name: 1 to 128 characters (PersistentResource.display_name), no control character."""
    text = check_text("display_name", value, expected=f"a string of 1 to {MAX_DISPLAY_NAME} characters")
    if text is not None and (len(text) > MAX_DISPLAY_NAME or not text.strip()):
        raise ValidationError("display_name", f"a string of 1 to {MAX_DISPLAY_NAME} characters without control "
                              "characters", text)
    return text


def _check_pools(pools: tuple[tuple[str, MachineConfig, int], ...]) -> None:
    """The machines a job could use: a cluster's pools are matched to a job's (machine and replicas), so a pool
    no job may ask for (a TPU chief) is a paid cluster no job runs on."""
    for role, machine, count in pools:
        if role == "chief" and machine.is_tpu:
            raise ValidationError("chief_config", "a CPU or GPU machine (a TPU cannot be a job's chief, so no job "
                                  "could use this pool)", machine.describe(),
                                  hint="Put the TPU in --worker-config with --worker-count 1.")
        if role == "worker" and machine.is_tpu and count != 1:
            raise ValidationError("worker_count", "1 when worker_config is a TPU (as a job)", count)
        if role in ("ps", "evaluator") and machine.is_tpu:
            raise ValidationError(f"{role}_config", "a CPU or GPU machine (as a job)", machine.describe())


def cluster_request(cluster_id: str, *, chief_config: Any = "auto", worker_config: Any = "auto",
                    worker_count: int = 0, ps_config: Any = "CPU", ps_count: int = 0, evaluator_count: int = 0,
                    display_name: str | None = None, labels: Mapping[str, str] | None = None,
                    network: str | None = None, custom_service_account: bool = False, wait: bool = True,
                    dry_run: bool = False) -> tuple[str, dict[str, Any]]:
    """Every argument of ``tfcloud cluster create`` checked as a job's would be, before any setting is read or
    anything is created: the cluster's ID and its ``PersistentResource`` request, idempotent by submission (a
    ``tfcloud-submission`` label)."""
    import uuid

    from tfcloud.google.vertex.value import VertexOptions
    from tfcloud.job.checks import validate_labels

    cluster_id = check_cluster_id(cluster_id)
    check_display_name(display_name)
    network_option = VertexOptions.option("network")
    assert network_option is not None
    network_option.convert(network)
    if not isinstance(custom_service_account, bool):
        raise ValidationError("custom_service_account", "a bool", custom_service_account)
    checked_labels = dict(validate_labels(labels, field="labels"))
    pools = cluster_pools(chief_config=chief_config, worker_config=worker_config, worker_count=worker_count,
                          ps_config=ps_config, ps_count=ps_count, evaluator_count=evaluator_count)
    _check_pools(pools)
    request = persistent_resource_request(
        pools, display_name=display_name or cluster_id,
        labels={**checked_labels, SUBMISSION_LABEL: uuid.uuid4().hex[:16]}, network=network,
        custom_service_account=custom_service_account)
    if not isinstance(dry_run, bool):
        raise ValidationError("dry_run", "a bool", dry_run)
    if dry_run and not wait:
        raise ValidationError("wait", "True with dry_run (a dry run creates nothing to wait for)", wait,
                              hint="Drop --no-wait or --dry-run.")
    return cluster_id, request


def planned_cluster(cluster_id: str, request: dict[str, Any], *, target: VertexOptions) -> ClusterInfo:
    """A dry run: ``request`` checked against Google's rules in the target's region, and what it would create
    (state ``DRY_RUN``), without credentials."""
    from tfcloud.google.vertex.gate import check_persistent_resource_request

    check_persistent_resource_request(request, region=target.location)  # Google's rules
    return _planned(cluster_id, request, parent=f"projects/{target.project}/locations/{target.location}")


def create_on(cluster_id: str, request: dict[str, Any], *, settings: Settings, target: VertexOptions,
              wait: bool = True) -> ClusterInfo:
    """Create the checked ``request`` (:func:`cluster_request`) in the target's project and region (exactly
    once: a retry never reports another cluster of that ID as created, and a create whose answer was lost is
    found by looking); with ``wait``, returns once it is RUNNING."""
    from tfcloud.google.vertex.gate import check_persistent_resource_request

    service = _service(settings, target)
    try:
        check_persistent_resource_request(request, region=service.parent.rsplit("/", 1)[-1])  # Google's rules
        return service.create(cluster_id, request, wait=wait)
    finally:
        service.close()


def list_on(*, settings: Settings, target: VertexOptions) -> list[ClusterInfo]:
    """The persistent resources in the target's project and region."""
    service = _service(settings, target)
    try:
        return service.list()
    finally:
        service.close()


def check_delete(cluster_id: object, *, force: object) -> None:
    """``tfcloud cluster delete``'s arguments, before any setting is read: ``../../x`` is refused however the
    settings are."""
    refuse_control("cluster_id", cluster_id)
    if not cluster_id or not isinstance(cluster_id, str) or not cluster_id.startswith("projects/"):
        check_cluster_id(cluster_id)
    if not isinstance(force, bool):
        raise ValidationError("force", "a bool", force)


def delete_on(cluster_id: str, *, settings: Settings, target: VertexOptions, wait: bool = True,
              force: bool = False) -> None:
    """Delete a persistent resource of the target's project and region (its ID, or its full name there); with
    ``wait``, until it is gone. Refused while jobs run on it (naming them) unless ``force``."""
    service = _service(settings, target)
    try:
        parent = service.parent.split("/")
        service.delete(check_cluster_name(cluster_id, project=parent[1], region=parent[3]), wait=wait, force=force)
    finally:
        service.close()


# --- idle clusters: what they cost, and the warning said once ---------------------------------------------------
#: ``cluster_idle_warn``'s default: warn once a cluster has been idle an hour.
CLUSTER_IDLE_WARN = "1h"
_OFF = ("0", "false", "no", "off")
_WARNED = "cluster-idle-warned.json"  # cluster name -> the day it was warned of (UTC)
_LOOKED = "cluster-idle-looked.json"  # projects/P/locations/R -> when its clusters were last looked at (epoch)


def idle_warn_s(settings: Settings) -> float | None:
    """The ``cluster_idle_warn`` setting in seconds (default :data:`CLUSTER_IDLE_WARN`); None when it is ``off``
    (or not a duration: the setting's check refuses that first)."""
    from tfcloud.config.digits import parse_duration

    value = (settings.cluster_idle_warn or CLUSTER_IDLE_WARN).strip()
    return None if value.lower() in _OFF else parse_duration(value)


def idle_cost(info: ClusterInfo, now: float) -> float | None:
    """What the cluster's idle time (:meth:`ClusterInfo.idle_s`) cost at its price per hour (:func:`cluster_price`):
    a persistent resource is billed while it runs, job or no job. None: busy, or no price known."""
    idle = info.idle_s(now)
    per_hour = cluster_price(info).per_hour
    return None if idle is None or per_hour is None else per_hour * idle / 3600


def duration_text(seconds: float) -> str:
    """``45s``, ``12m03s``, ``3h05m``, ``2d4h``."""
    s = int(seconds)
    d, rest = divmod(s, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{d}d{h}h" if d else f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def _read_json(path: Any) -> dict[str, Any]:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def warn_once(clusters: builtins.list[ClusterInfo], *, settings: Settings,
              now: float | None = None) -> builtins.list[str]:
    """A warning for each of ``clusters`` idle longer than the ``cluster_idle_warn`` setting, each said once a day
    (what was said is kept in the state dir: ``cluster-idle-warned.json``)."""
    import contextlib
    import datetime as dt

    from tfcloud.google.catalog.costs import usd
    from tfcloud.records.files import write_private_json
    from tfcloud.records.statedir import state_dir

    limit = idle_warn_s(settings)
    at = time.time() if now is None else now
    idle = [info for info in clusters if limit is not None and (info.idle_s(at) or 0.0) > limit]
    if not idle or limit is None:
        return []
    path = state_dir(settings) / _WARNED
    said = _read_json(path)
    today = dt.datetime.fromtimestamp(at, dt.timezone.utc).date().isoformat()
    out = []
    for info in idle:
        if said.get(info.name) == today:
            continue
        said[info.name] = today
        cost = idle_cost(info, at)
        parts = info.name.split("/")
        region = parts[3] if len(parts) > 3 else ""
        out.append(f"Warning: cluster {info.cluster_id} has run no job for {duration_text(info.idle_s(at) or 0.0)}"
                   + (f" (that idle time cost {usd(cost)})" if cost is not None else "")
                   + f"; it bills while it exists. Delete it: tfcloud cluster delete {info.cluster_id} --region "
                   f"{region}, or every idle one: tfcloud cluster gc --idle {duration_text(limit)} --dry-run")
    with contextlib.suppress(OSError):  # a warning that cannot be remembered is said again; never an error
        write_private_json(path, said)
    return out


def idle_notices(target: VertexOptions, settings: Settings, *, now: float | None = None) -> builtins.list[str]:
    """The target's ``notices`` (:attr:`tfcloud.targets.Target.notices`), said after a verb that talked to Vertex
    AI: the project and region's clusters idle longer than ``cluster_idle_warn`` (:func:`warn_once`). It looks
    (ListPersistentResources, then ListCustomJobs and ListHyperparameterTuningJobs if there is a cluster) at most
    once per ``cluster_idle_warn`` period per project and region (when it last looked is kept in the state dir,
    ``cluster-idle-looked.json``), with a short deadline; a look that fails says nothing."""
    import contextlib

    from tfcloud.errors import TfcloudError
    from tfcloud.records.files import write_private_json
    from tfcloud.records.statedir import state_dir

    limit = idle_warn_s(settings)
    if limit is None or not target.project:
        return []
    at = time.time() if now is None else now
    parent = f"projects/{target.project}/locations/{target.location}"
    path = state_dir(settings) / _LOOKED
    looked = _read_json(path)
    last = looked.get(parent)
    if isinstance(last, int | float) and 0 <= at - last < limit:
        return []
    looked[parent] = at
    with contextlib.suppress(OSError):
        write_private_json(path, looked)
    service = ClusterService(settings=settings, target=target, retry=RetryPolicy.from_setting("5"))
    try:
        found = service.list()
    except TfcloudError:
        return []
    finally:
        service.close()
    return warn_once(found, settings=settings, now=at)
