"""The Vertex AI target: a CustomJob with worker pools (:mod:`tfcloud.google.vertex.request` builds it,
:mod:`tfcloud.google.vertex.backend` submits it; tuning studies are HyperparameterTuningJobs,
:mod:`tfcloud.google.vertex.tuning`). Its value (options, rules, plan rows) is
:mod:`tfcloud.google.vertex.value`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tfcloud.google.vertex.value import (
    DEFAULT_REGION,
    MAX_TIMEOUT_S,
    VERTEX_REGIONS,
    SchedulingStrategy,
    VertexOptions,
    check_project,
    check_region,
    refuse_image_options,
)

__all__ = ["DEFAULT_REGION", "MAX_TIMEOUT_S", "VERTEX_REGIONS", "SchedulingStrategy", "VertexTarget",
           "check_project", "check_region", "refuse_image_options"]


@dataclass(frozen=True, kw_only=True)
class VertexTarget(VertexOptions):
    """A Vertex AI CustomJob. Its fields, options and rules are :class:`~tfcloud.google.vertex.value.VertexOptions`;
    this class binds them to its backend and its tuner. Its ``project``, ``region``, ``staging_bucket`` and
    ``emulator_host`` are options like the others: a call gives them, else ``TFCLOUD_*`` variables, the config
    files, other tools' variables and gcloud's configuration fill them (:func:`tfcloud.flow.where.resolve`).
    ``project`` None: none was found (the backend says so); ``region`` None: :data:`DEFAULT_REGION`
    (:attr:`location`)."""

    backend: ClassVar[str] = "tfcloud.google.vertex.backend:VertexBackend"
    doctor_checks: ClassVar[str | None] = "tfcloud.google.vertex.doctor:checks"
    notices: ClassVar[str | None] = "tfcloud.google.vertex.clusters:idle_notices"
    tuner: ClassVar[str | None] = "tfcloud.google.vertex.tuning:VertexTuner"
