"""Targets: *where* a job runs, as frozen values, each with its own options (XManager's executor).

The :class:`~tfcloud.spec.JobSpec` says *what* runs; its ``target`` is one of these values. A target knows
its registry name (:data:`tfcloud.backends.BACKENDS` maps it to the backend class) and whether the job runs
from a container image (then the stages build one before the backend submits).

- :class:`LocalTarget`: processes on this machine (or containers from the job's image: ``container``), restarts,
  output directory (the state dir is a setting).
- :class:`VertexTarget`: a Vertex AI CustomJob: project, region, network, capacity (scheduling strategy, max wait,
  reservation, persistent resource), timeout, restarts, output directory, service account, managed TensorBoard and
  experiment.
- :class:`RayTarget`: a Ray cluster by address.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

__all__ = ["TARGETS", "AnyTarget", "LocalTarget", "RayTarget", "SchedulingStrategy", "VertexTarget"]


class SchedulingStrategy(enum.Enum):
    """Where a Vertex AI job's VMs come from (``Scheduling.strategy``; the value is the API's name):
    ``STANDARD`` on-demand VMs, ``SPOT`` preemptible Spot VMs, ``FLEX_START`` the Dynamic Workload Scheduler
    (the job waits up to ``Scheduling.max_wait_duration`` for all of its VMs at once)."""

    STANDARD = "STANDARD"
    SPOT = "SPOT"
    FLEX_START = "FLEX_START"

    @property
    def flag(self) -> str:
        """Its name on the command line: ``standard``, ``spot``, ``flex-start``."""
        return self.value.lower().replace("_", "-")


@dataclass(frozen=True, kw_only=True)
class LocalTarget:
    """One process per replica on this machine, on loopback.

    - ``container``: each replica runs the job's image on the local Docker engine instead (built, not pushed).
    - ``max_restarts``: how often the supervisor restarts the whole cluster when a replica fails.
    - ``output_dir``: the base of the ``AIP_*`` directories (a directory or ``gs://``); None: the job's own
      ``output/``. See docs/recovery.md.
    """

    name: ClassVar[str] = "local"
    container: bool = False
    max_restarts: int = 0
    output_dir: str | None = None

    @property
    def ships_files(self) -> bool:
        """The job's files travel to where it runs (in an image, or Ray's runtime environment): the launcher
        names the script relative to the build root. Else replicas run in the user's own directory."""
        return self.container


@dataclass(frozen=True, kw_only=True)
class VertexTarget:
    """A Vertex AI CustomJob. ``project``/``region`` None: the settings' (the backend says when there is no
    project).

    Capacity (docs/vertex.md, "Capacity"): ``scheduling`` (``spot=True`` is ``SchedulingStrategy.SPOT``; each
    sets the other), ``max_wait_s`` (FLEX_START only), ``reservation`` (``"any"``, ``"none"``, or a reservation's
    full name ``projects/P/zones/Z/reservations/NAME``), ``disable_retries``, ``persistent_resource`` (an ID in
    the job's project and region). ``tensorboard``, ``experiment``, ``experiment_run``: full resource names, or
    short ones that the request expands in the job's project and region.
    """

    name: ClassVar[str] = "vertex"
    container: ClassVar[bool] = True
    ships_files: ClassVar[bool] = True

    project: str | None = None
    region: str | None = None
    network: str | None = None  # projects/NUMBER/global/networks/NAME
    spot: bool = False
    timeout_s: int | None = None
    restart_on_worker_restart: bool = False
    base_output_dir: str | None = None  # gs://... ; Vertex AI sets AIP_MODEL_DIR etc. under it
    service_account: str | None = None
    max_restarts: int | None = None  # as Vertex AI's restart options (vertex_request.restart_scheduling)
    scheduling: SchedulingStrategy | None = None
    max_wait_s: int | None = None
    reservation: str | None = None
    disable_retries: bool = False
    persistent_resource: str | None = None
    tensorboard: str | None = None
    experiment: str | None = None
    experiment_run: str | None = None

    def __post_init__(self) -> None:
        spot = SchedulingStrategy.SPOT
        if self.spot and self.scheduling not in (None, spot):
            raise ValueError(f"spot=True contradicts scheduling={self.scheduling}")
        if self.spot and self.scheduling is None:
            object.__setattr__(self, "scheduling", spot)
        elif self.scheduling is spot:
            object.__setattr__(self, "spot", True)


@dataclass(frozen=True, kw_only=True)
class RayTarget:
    """A Ray cluster, by its dashboard's address (``http://HEAD:8265``). ``address`` None: the settings'
    (``TFCLOUD_RAY_ADDRESS``, then ``RAY_ADDRESS``)."""

    name: ClassVar[str] = "ray"
    container: ClassVar[bool] = False
    ships_files: ClassVar[bool] = True

    address: str | None = None


AnyTarget = LocalTarget | VertexTarget | RayTarget

#: The targets ``run(target=...)`` and ``--local/--vertex`` accept, by name (one line per target).
TARGETS: dict[str, type[AnyTarget]] = {
    LocalTarget.name: LocalTarget,
    VertexTarget.name: VertexTarget,
    RayTarget.name: RayTarget,
}
