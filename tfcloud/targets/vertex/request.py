"""The Vertex AI requests: the CustomJob, a pure function of the job spec (what), its Vertex AI target (where)
and the image; and the HyperparameterTuningJob, which adds a study (:mod:`tfcloud.study`) and runs that
CustomJob's spec for every trial.

The result is a JSON-shaped dict with the API's field names (durations as ``"3600s"``, enums by name), the
form ``aiplatform_v1.CustomJob.from_json`` (``HyperparameterTuningJob.from_json``) reads; ``tests/golden/vertex/``
holds one per strategy, and the tuning jobs (``tuning_*.json``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tfcloud.machines import MachineConfig
from tfcloud.spec import JobSpec, Role
from tfcloud.study import ParamSpec, StudySpec
from tfcloud.targets.vertex import VertexTarget
from tfcloud.targets.vertex.options import (
    RESERVATION_KEY,
    expand_experiment,
    expand_experiment_run,
    expand_reservation,
    expand_tensorboard,
    persistent_resource_id,
)

if TYPE_CHECKING:
    from tfcloud.artifacts import PackageRef

__all__ = ["ALGORITHMS", "BOOT_DISK", "POOL_ORDER", "SUBMISSION_LABEL", "custom_job_request", "disk_spec",
           "machine_spec", "parameter_spec", "replica_name", "reservation_affinity", "restart_scheduling",
           "tuning_job_request"]

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


def restart_scheduling(spec: JobSpec) -> dict[str, Any]:
    """``max_restarts`` (and ``spot``) as Vertex AI's restart options, which take no count:

    - ``max_restarts=0`` or ``disable_retries``: ``disable_retries`` (Vertex AI then restarts nothing);
    - ``max_restarts >= 1``, or ``spot`` with more than one replica when ``max_restarts`` is not given:
      ``restart_job_on_worker_restart``: a restarted (preempted) worker restarts every replica, which a
      MultiWorkerMirrored cluster needs; ``fit`` then resumes from ``AIP_CHECKPOINT_DIR``. Vertex AI's own limit
      applies (5 restarts per worker), not the count;
    - otherwise, ``--restart-on-worker-restart`` as given.
    """
    target = spec.target if isinstance(spec.target, VertexTarget) else VertexTarget()
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
    from tfcloud.vertexrules import BOOT_DISK as RULES
    from tfcloud.vertexrules import MACHINE_TYPES

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
    Storage FUSE) and runs it (:func:`tfcloud.baseimage.container_command`)."""
    from tfcloud.baseimage import container_command

    env = [{"name": name, "value": value} for name, value in sorted(spec.env.items())]
    assert image_uri is not None, "a CustomJob runs an image (with a package: the job's base image)"
    code: dict[str, Any] = {"image_uri": image_uri}
    if package is not None:
        code["command"] = container_command(package.uri)
    code["args"] = list(spec.entry_point_args)
    if env:
        code["env"] = env
    return {"container_spec": code}


def custom_job_request(spec: JobSpec, *, image_uri: str | None = None, submission_id: str,
                       base_output_dir: str | None = None, package: PackageRef | None = None,
                       tensorflow_version: str | None = None, region: str | None = None,
                       parent: str | None = None) -> dict[str, Any]:
    """The CustomJob for ``spec`` running ``image_uri`` (whose entrypoint is the launcher), or, with ``package``
    (``--no-build``), that package on ``image_uri`` as the job's base image (:mod:`tfcloud.baseimage`); placed
    by the spec's :class:`~tfcloud.targets.VertexTarget` (service account, network,
    scheduling and capacity, output directory, TensorBoard, experiment). Short names (a reservation's
    ``ZONE/NAME``, a TensorBoard ID, an experiment's name) are expanded under ``parent`` (``projects/P/locations/L``:
    the backend's), else the target's project and region."""
    target = spec.target if isinstance(spec.target, VertexTarget) else VertexTarget()
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
    scheduling.update(restart_scheduling(spec))
    if target.scheduling is not None:
        scheduling["strategy"] = target.scheduling.value
    if target.max_wait_s is not None:
        scheduling["max_wait_duration"] = f"{target.max_wait_s}s"
    if scheduling:
        job_spec["scheduling"] = scheduling
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


#: tfcloud's search → Vertex AI's ``StudySpec.Algorithm`` (``default``: Vertex AI's own Bayesian optimisation).
ALGORITHMS = {"default": "ALGORITHM_UNSPECIFIED", "random": "RANDOM_SEARCH", "grid": "GRID_SEARCH"}
_SCALES = {"linear": "UNIT_LINEAR_SCALE", "log": "UNIT_LOG_SCALE"}
_VALUE_SPECS = {"double": "double_value_spec", "int": "integer_value_spec", "categorical": "categorical_value_spec",
                "discrete": "discrete_value_spec"}


def parameter_spec(param: ParamSpec) -> dict[str, Any]:
    """One :class:`~tfcloud.study.ParamSpec` as Vertex AI's ``StudySpec.ParameterSpec``. A categorical parameter
    has no scale (Vertex AI asks to leave it unset)."""
    kind = param.kind.value
    body: dict[str, Any]
    if kind == "double":
        body = {"min_value": float(param.low or 0), "max_value": float(param.high or 0)}
    elif kind == "int":
        body = {"min_value": int(param.low or 0), "max_value": int(param.high or 0)}
    elif kind == "categorical":
        body = {"values": [str(value) for value in param.values]}
    else:
        body = {"values": [float(value) for value in param.values]}
    spec: dict[str, Any] = {"parameter_id": param.name, _VALUE_SPECS[kind]: body}
    if kind != "categorical":
        spec["scale_type"] = _SCALES[param.scale.value]
    return spec


def tuning_job_request(spec: JobSpec, study: StudySpec, *, image_uri: str, submission_id: str,
                       base_output_dir: str | None = None, parent: str | None = None) -> dict[str, Any]:
    """The HyperparameterTuningJob for ``study``: each trial runs the CustomJobSpec that
    :func:`custom_job_request` makes for ``spec`` (Vertex AI appends the trial's ``--NAME=VALUE`` arguments to
    every pool's container args); display name and labels (with the submission label) as the CustomJob's.
    Early stopping is ``study_spec.median_automated_stopping_spec`` (on steps, not elapsed time)."""
    custom = custom_job_request(spec, image_uri=image_uri, submission_id=submission_id,
                                base_output_dir=base_output_dir, parent=parent)
    study_spec: dict[str, Any] = {
        "metrics": [{"metric_id": study.metric, "goal": study.goal.value.upper()}],
        "parameters": [parameter_spec(param) for param in study.params],
        "algorithm": ALGORITHMS[study.algorithm.value],
    }
    if study.early_stopping:
        # The median rule on the measurements' steps (global_step: the epoch from Keras fit), not their time.
        study_spec["median_automated_stopping_spec"] = {"use_elapsed_duration": False}
    return {
        "display_name": custom["display_name"],
        "study_spec": study_spec,
        "max_trial_count": study.max_trials,
        "parallel_trial_count": study.parallel_trials,
        "trial_job_spec": custom["job_spec"],
        "labels": custom["labels"],
    }
