"""The CustomJob's body, a pure function of the job spec (what), its Vertex AI target (where, passed as a value)
and the image: its worker pools (machine, boot disk, reservation, code), scheduling and the rest of the
``CustomJobSpec``. :func:`tfcloud.google.vertex.request.custom_job_request` is its front door; the gate
(:mod:`tfcloud.google.vertex.gate`) builds the same body to check it against Google's rules before anything is
built. The value's rules call the gate, so the body never names the value's class: it takes what it reads,
:class:`~tfcloud.google.vertex.place.VertexSetup`, which the value keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tfcloud.google.catalog.machines import MachineConfig
from tfcloud.google.vertex.options import (
    RESERVATION_KEY,
    expand_experiment,
    expand_experiment_run,
    expand_reservation,
    expand_tensorboard,
    persistent_resource_id,
)
from tfcloud.job.spec import JobSpec, Role

if TYPE_CHECKING:
    from tfcloud.google.vertex.place import VertexSetup
    from tfcloud.job.artifacts import PackageRef

__all__ = ["BOOT_DISK", "POOL_ORDER", "SUBMISSION_LABEL", "custom_job_body", "disk_spec", "machine_spec",
           "replica_name", "reservation_affinity", "restart_options"]

#: Vertex AI's worker pool order: pool i holds this role.
POOL_ORDER = (Role.CHIEF, Role.WORKER, Role.PS, Role.EVALUATOR)
#: The label that makes a retried create idempotent: tfcloud looks the job up by it before creating again.
SUBMISSION_LABEL = "tfcloud-submission"
#: Vertex AI's default boot disk (``DiskSpec``) for most machines; :func:`disk_spec` gives each machine its own.
BOOT_DISK = {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 100}


def replica_name(task_name: str) -> str:
    """Vertex AI's ``workerpool1-0`` → tfcloud's ``worker-0`` (the prefix local runs use too)."""
    pool, _, index = task_name.partition("-")
    if pool.startswith("workerpool") and pool[len("workerpool"):].isdigit():
        number = int(pool[len("workerpool"):])
        if number < len(POOL_ORDER):
            return f"{POOL_ORDER[number].value}-{index or 0}"
    return task_name


def restart_options(spec: JobSpec, target: VertexSetup) -> dict[str, Any]:
    """``max_restarts`` (and ``spot``) as Vertex AI's restart options, which take no count:

    - ``max_restarts=0`` or ``disable_retries``: ``disable_retries`` (Vertex AI then restarts nothing);
    - ``max_restarts >= 1``, or ``spot`` with more than one replica when ``max_restarts`` is not given:
      ``restart_job_on_worker_restart``: a restarted (preempted) worker restarts every replica, which a
      MultiWorkerMirrored cluster needs; ``fit`` then resumes from ``AIP_CHECKPOINT_DIR``. Vertex AI's own limit
      applies (5 restarts per worker), not the count;
    - otherwise, ``--restart-on-worker-restart`` as given.
    """
    if target.max_restarts == 0 or target.disable_retries:
        return {"disable_retries": True}
    if target.restart_on_worker_restart or (target.max_restarts or 0) > 0 or (
            target.max_restarts is None and target.spot and spec.replica_count > 1):
        return {"restart_job_on_worker_restart": True}
    return {}


def machine_spec(machine: MachineConfig) -> dict[str, Any]:
    """A machine config as Vertex AI's ``MachineSpec`` (a job's pool, or a persistent resource's), as Google's
    examples write it: a TPU VM machine type (v5e, v6e) fixes its chips and always names its ``tpu_topology``
    ("Training with TPU VMs"; the SDK: "required for the TPU v5 versions"), a multi-host slice being one replica
    of the machine type with a larger topology; any other accelerator by ``accelerator_type`` and count."""
    spec: dict[str, Any] = {"machine_type": machine.machine_type}
    if machine.is_tpu_vm:
        spec["tpu_topology"] = machine.tpu_topology
    elif machine.accelerator_count:
        spec["accelerator_type"] = machine.accelerator_type.value
        spec["accelerator_count"] = machine.accelerator_count
    return spec


def disk_spec(machine: MachineConfig) -> dict[str, Any]:
    """``DiskSpec``: the boot disk type Google's table gives the machine type (hyperdisk-balanced on A3 Ultra, A4
    and A4X, which take no Persistent Disk; pd-ssd elsewhere, Vertex AI's default), 100 GB."""
    from tfcloud.google.rules import BOOT_DISK as RULES
    from tfcloud.google.rules import MACHINE_TYPES

    row = MACHINE_TYPES.get(machine.machine_type)
    return {"boot_disk_type": row.default_boot_disk if row else BOOT_DISK["boot_disk_type"],
            "boot_disk_size_gb": RULES.default_size_gb}


def reservation_affinity(reservation: str, project: str) -> dict[str, Any]:
    """``--reservation`` as ``MachineSpec.reservation_affinity``: ``any``, ``none``, or one reservation by its full
    name (``ZONE/NAME`` is expanded in ``project``)."""
    if reservation == "any":
        return {"reservation_affinity_type": "ANY_RESERVATION"}
    if reservation == "none":
        return {"reservation_affinity_type": "NO_RESERVATION"}
    return {"reservation_affinity_type": "SPECIFIC_RESERVATION", "key": RESERVATION_KEY,
            "values": [expand_reservation(reservation, project)]}


def _code_spec(spec: JobSpec, *, image_uri: str | None, package: PackageRef | None) -> dict[str, Any]:
    """What a pool runs: ``container_spec`` with the job's image, whose entrypoint is the launcher; or, with a
    package (``--no-build``), the job's base image, whose bootstrap reads the package from ``/gcs/`` (Cloud
    Storage FUSE) and runs it (:func:`tfcloud.google.staging.baseimage.container_command`)."""
    from tfcloud.google.staging.baseimage import container_command
    from tfcloud.image.dockerfile import LAUNCHER_COMMAND, tpu_pod_base

    env = [{"name": name, "value": value} for name, value in sorted(spec.env.items())]
    assert image_uri is not None, "a CustomJob runs an image (with a package: the job's base image)"
    code: dict[str, Any] = {"image_uri": image_uri}
    command = container_command(package.uri) if package is not None else None
    if tpu_pod_base(spec) is not None:
        # A TPU Pod base image keeps its ENTRYPOINT (it sets up the pod) and runs the CMD: the whole command goes
        # in args, which replace the CMD ("Training with TPU accelerators", TPU Pod).
        code["args"] = [*(command or LAUNCHER_COMMAND), *spec.entry_point_args]
    else:
        if command is not None:
            code["command"] = command
        code["args"] = list(spec.entry_point_args)
    if env:
        code["env"] = env
    return {"container_spec": code}


def custom_job_body(spec: JobSpec, target: VertexSetup, *, image_uri: str | None = None, submission_id: str,
                    base_output_dir: str | None = None, package: PackageRef | None = None,
                    tensorflow_version: str | None = None, region: str | None = None,
                    parent: str | None = None) -> dict[str, Any]:
    """The CustomJob for ``spec`` running ``image_uri`` (whose entrypoint is the launcher), or, with ``package``
    (``--no-build``), that package on ``image_uri`` as the job's base image (:mod:`tfcloud.google.staging.baseimage`);
    placed by the spec's :class:`~tfcloud.targets.VertexTarget` (service account, network,
    scheduling and capacity, output directory, TensorBoard, experiment). Short names (a reservation's
    ``ZONE/NAME``, a TensorBoard ID, an experiment's name) are expanded under ``parent`` (``projects/P/locations/L``:
    the backend's), else the target's project and region."""
    if parent is None:  # a dry run may have no project
        parent = f"projects/{target.project or 'PROJECT'}/locations/{target.region or region or 'us-central1'}"
    project = parent.split("/")[1]
    pools: list[dict[str, Any]] = []
    for role in POOL_ORDER:
        pool = spec.pool(role)
        if pool is None:
            pools.append({})  # Vertex AI skips an empty pool; later pools keep their index
            continue
        machine = machine_spec(pool.machine)
        if target.reservation is not None:
            machine["reservation_affinity"] = reservation_affinity(target.reservation, project)
        pools.append({
            "machine_spec": machine,
            "replica_count": pool.replica_count,
            **_code_spec(spec, image_uri=image_uri, package=package),
            "disk_spec": disk_spec(pool.machine),
        })
    while pools and not pools[-1]:
        pools.pop()

    job_spec: dict[str, Any] = {"worker_pool_specs": pools}
    if target.persistent_resource:
        job_spec["persistent_resource_id"] = persistent_resource_id(target.persistent_resource)
    if target.service_account:
        job_spec["service_account"] = target.service_account
    if target.network:
        job_spec["network"] = target.network
    output_dir = target.base_output_dir or base_output_dir
    if output_dir:
        job_spec["base_output_directory"] = {"output_uri_prefix": output_dir}
    scheduling: dict[str, Any] = {}
    if target.timeout_s:
        scheduling["timeout"] = f"{target.timeout_s}s"
    scheduling.update(restart_options(spec, target))
    if target.scheduling is not None:
        scheduling["strategy"] = target.scheduling.value
    if target.max_wait_s is not None:
        scheduling["max_wait_duration"] = f"{target.max_wait_s}s"
    if scheduling:
        job_spec["scheduling"] = scheduling
    if target.web_access:
        job_spec["enable_web_access"] = True
    if target.tensorboard:
        job_spec["tensorboard"] = expand_tensorboard(target.tensorboard, parent)
    if target.experiment:
        job_spec["experiment"] = expand_experiment(target.experiment, parent)
        if target.experiment_run:
            job_spec["experiment_run"] = expand_experiment_run(target.experiment_run, target.experiment, parent)
    return {
        "display_name": spec.display_name,
        "job_spec": job_spec,
        "labels": {**spec.job_labels, SUBMISSION_LABEL: submission_id},
    }
