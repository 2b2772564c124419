"""The Vertex AI requests: the CustomJob, a pure function of the job spec (what), its Vertex AI target (where)
and the image (its body: :mod:`tfcloud.google.vertex.customjob`); and the HyperparameterTuningJob, which adds a
study (:mod:`tfcloud.job.study`) and runs that CustomJob's spec for every trial.

The result is a JSON-shaped dict with the API's field names (durations as ``"3600s"``, enums by name), the
form ``aiplatform_v1.CustomJob.from_json`` (``HyperparameterTuningJob.from_json``) reads; ``tests/golden/vertex/``
holds one per strategy, and the tuning jobs (``tuning_*.json``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tfcloud.google.vertex.customjob import (
    BOOT_DISK,
    POOL_ORDER,
    SUBMISSION_LABEL,
    custom_job_body,
    disk_spec,
    machine_spec,
    replica_name,
    reservation_affinity,
    restart_options,
)
from tfcloud.google.vertex.value import VertexOptions
from tfcloud.job.spec import JobSpec
from tfcloud.job.study import ParamSpec, StudySpec

if TYPE_CHECKING:
    from tfcloud.job.artifacts import PackageRef

__all__ = ["ALGORITHMS", "BOOT_DISK", "POOL_ORDER", "SUBMISSION_LABEL", "custom_job_request", "disk_spec",
           "machine_spec", "parameter_spec", "replica_name", "reservation_affinity", "restart_scheduling",
           "tuning_job_request"]


def restart_scheduling(spec: JobSpec, target: VertexOptions) -> dict[str, Any]:
    """The job's restart options as Vertex AI's (:func:`tfcloud.google.vertex.customjob.restart_options`)."""
    return restart_options(spec, target)


def custom_job_request(spec: JobSpec, target: VertexOptions, *, image_uri: str | None = None, submission_id: str,
                       base_output_dir: str | None = None, package: PackageRef | None = None,
                       tensorflow_version: str | None = None, region: str | None = None,
                       parent: str | None = None) -> dict[str, Any]:
    """The CustomJob for ``spec`` running ``image_uri`` (or ``package`` with ``--no-build``), placed by ``target``
    (the job's Vertex AI options): :func:`tfcloud.google.vertex.customjob.custom_job_body`."""
    return custom_job_body(spec, target, image_uri=image_uri, submission_id=submission_id,
                           base_output_dir=base_output_dir, package=package, tensorflow_version=tensorflow_version,
                           region=region, parent=parent)


#: tfcloud's search → Vertex AI's ``StudySpec.Algorithm`` (``default``: Vertex AI's own Bayesian optimisation).
ALGORITHMS = {"default": "ALGORITHM_UNSPECIFIED", "random": "RANDOM_SEARCH", "grid": "GRID_SEARCH"}
_SCALES = {"linear": "UNIT_LINEAR_SCALE", "log": "UNIT_LOG_SCALE"}
_VALUE_SPECS = {"double": "double_value_spec", "int": "integer_value_spec", "categorical": "categorical_value_spec",
                "discrete": "discrete_value_spec"}


def parameter_spec(param: ParamSpec) -> dict[str, Any]:
    """One :class:`~tfcloud.job.study.ParamSpec` as Vertex AI's ``StudySpec.ParameterSpec``. A categorical parameter
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


def tuning_job_request(spec: JobSpec, target: VertexOptions, study: StudySpec, *, image_uri: str, submission_id: str,
                       base_output_dir: str | None = None, parent: str | None = None) -> dict[str, Any]:
    """The HyperparameterTuningJob for ``study``: each trial runs the CustomJobSpec that
    :func:`custom_job_request` makes for ``spec`` (Vertex AI appends the trial's ``--NAME=VALUE`` arguments to
    every pool's container args); display name and labels (with the submission label) as the CustomJob's.
    Early stopping is ``study_spec.median_automated_stopping_spec`` (on steps, not elapsed time)."""
    custom = custom_job_request(spec, target, image_uri=image_uri, submission_id=submission_id,
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
