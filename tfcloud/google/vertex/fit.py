"""Whether a job fits the persistent resource it names, asked of the service before anything is built or uploaded
(:meth:`tfcloud.targets.VertexTarget.check_service`): the resource exists in the job's project and region and is
RUNNING, has a resource pool with each of the job's machines that holds its replicas, and allows the job's service
account as Google requires (``resource_runtime_spec.service_account_spec.enable_custom_service_account``; the
service applies the same rules when the job is created, and so does the emulator)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tfcloud.errors import JobNotFoundError, ValidationError
from tfcloud.google.cloud.gcloud import Clients, RetryPolicy, call

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.google.catalog.machines import MachineConfig
    from tfcloud.google.vertex.place import VertexSetup
    from tfcloud.job.spec import JobSpec

__all__ = ["check_job_fits"]


def _accelerator(machine: MachineConfig) -> tuple[str, int]:
    """A job pool's accelerator as the resource's ``MachineSpec`` names it (a TPU VM's chips come with its machine
    type): the enum name and count, ("", 0) for none."""
    if machine.is_tpu_vm or not machine.accelerator_count:
        return "", 0
    return machine.accelerator_type.name, machine.accelerator_count


def _shown(machine_type: str, accelerator: tuple[str, int]) -> str:
    return f"{machine_type} + {accelerator[1]} x {accelerator[0]}" if accelerator[1] else machine_type


def _lookup(cluster: str, target: VertexSetup, settings: Settings) -> Any:
    parent = f"projects/{target.project}/locations/{target.location}"
    name = cluster if cluster.startswith("projects/") else f"{parent}/persistentResources/{cluster}"
    clients = Clients(endpoint=target.emulator_host, region=target.location)
    policy = RetryPolicy.from_setting(settings.retry_deadline)
    try:
        client = clients.persistent_resources()
        return call(lambda: client.get_persistent_resource(name=name, retry=None, timeout=policy.call_timeout),
                    what=f"Looking up persistent resource {cluster}", policy=policy)
    except JobNotFoundError:
        raise ValidationError(
            "persistent_resource", f"a persistent resource in {parent} (tfcloud cluster list)", cluster,
            hint=f"Create it first: tfcloud cluster create {cluster.rsplit('/', 1)[-1]} --chief-config ...") from None
    finally:
        clients.close()


def check_job_fits(spec: JobSpec, target: VertexSetup, settings: Settings) -> None:
    """Refuse (:class:`~tfcloud.errors.ValidationError`, exit 2, naming the option) a job that the persistent
    resource ``target.persistent_resource`` cannot run."""
    cluster = str(target.persistent_resource)
    resource = _lookup(cluster, target, settings)
    cluster_id = cluster.rsplit("/", 1)[-1]
    if resource.state.name != "RUNNING":
        raise ValidationError("persistent_resource", "a persistent resource that is RUNNING",
                              f"{cluster} ({resource.state.name})",
                              hint="Wait until `tfcloud cluster list` shows it RUNNING, or use another cluster.")
    custom = bool(resource.resource_runtime_spec.service_account_spec.enable_custom_service_account)
    if custom and not target.service_account:
        raise ValidationError("service_account", f"a service account: cluster {cluster_id} enables custom service "
                              "accounts, and Vertex AI requires its jobs to name one", None,
                              hint="Pass --service-account EMAIL.")
    if target.service_account and not custom:
        raise ValidationError("service_account", f"none: cluster {cluster_id} does not enable custom service "
                              "accounts, so its jobs run as the Custom Code Service Agent", target.service_account,
                              hint="Leave --service-account out, or create the cluster with --custom-service-account.")
    pools = [(p.id, p.machine_spec.machine_type,
              (p.machine_spec.accelerator_type.name, p.machine_spec.accelerator_count)
              if p.machine_spec.accelerator_count else ("", 0), int(p.replica_count))
             for p in resource.resource_pools]
    have = "; ".join(f"{pid}: {_shown(mt, acc)} x{n}" for pid, mt, acc, n in pools)
    for pool in spec.pools:
        if not pool.replica_count:
            continue
        wanted = (pool.machine.machine_type, _accelerator(pool.machine))
        fits = [n for _, mt, acc, n in pools if (mt, acc) == wanted]
        role = pool.role.value
        if not fits:
            raise ValidationError(f"{role}_config", f"a machine one of cluster {cluster_id}'s pools has ({have})",
                                  _shown(*wanted),
                                  hint="Give the pool a machine the cluster has, or create a cluster for this job.")
        if pool.replica_count > max(fits):
            raise ValidationError(f"{role}_count" if role != "chief" else f"{role}_config",
                                  f"at most {max(fits)} replicas (what cluster {cluster_id}'s pool of that machine "
                                  "holds)", pool.replica_count)
