"""The Vertex AI target's value in its two halves, as plain frozen values below everything that reads them:
:class:`VertexPlace` (how Vertex AI is reached: project, region, the emulator) and :class:`VertexSetup` (the
place and how a job runs there: network, capacity, restarts, outputs, ...), with :class:`SchedulingStrategy`, the
one type among them. The CustomJob body (:mod:`tfcloud.google.vertex.customjob`), Google's rules
(:mod:`tfcloud.google.vertex.gate`), the options' rules (:mod:`tfcloud.google.vertex.options`) and the persistent
resource's fit (:mod:`tfcloud.google.vertex.fit`) read a :class:`VertexSetup`; the target's value
(:class:`~tfcloud.google.vertex.value.VertexOptions`) is one, with the target's rules and options on top (its
rules call the gate, which builds the body: the body names these halves, never the value's class)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["DEFAULT_REGION", "SchedulingStrategy", "VertexPlace", "VertexSetup"]

#: The region a job runs in when none is given.
DEFAULT_REGION = "us-central1"


class SchedulingStrategy(str, enum.Enum):
    """Where a Vertex AI job's VMs come from (``Scheduling.strategy``; the value is the API's name, and the member
    is that string, so that a plan's JSON shows it):
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
class VertexPlace:
    """How Vertex AI is reached (the target's place options): the project, the region (``location``: it, or
    :data:`DEFAULT_REGION`), and the tfcloud emulator's address instead of Google's endpoint."""

    project: str | None = None
    region: str | None = None
    emulator_host: str | None = None

    @property
    def location(self) -> str:
        """The job's region: the ``region`` option, else :data:`DEFAULT_REGION`."""
        return self.region or DEFAULT_REGION


@dataclass(frozen=True, kw_only=True)
class VertexSetup(VertexPlace):
    """The place and a job's setup there (the target's job options, as the request and Google's rules read
    them). ``spot`` and ``scheduling`` each set the other (``spot=True`` is :attr:`SchedulingStrategy.SPOT`)."""

    network: str | None = None  # projects/NUMBER/global/networks/NAME
    spot: bool = False
    timeout_s: int | None = None
    restart_on_worker_restart: bool = False
    base_output_dir: str | None = None  # gs://... ; Vertex AI sets AIP_MODEL_DIR etc. under it
    service_account: str | None = None
    max_restarts: int | None = None  # as Vertex AI's restart options (request.restart_scheduling)
    staging_bucket: str | None = None
    scheduling: SchedulingStrategy | None = None
    max_wait_s: int | None = None
    reservation: str | None = None  # "any", "none", ZONE/NAME or projects/P/zones/Z/reservations/NAME
    disable_retries: bool = False
    web_access: bool = False  # enable_web_access: an interactive shell in each replica (web_access_uris)
    persistent_resource: str | None = None  # its ID, or its full name
    tensorboard: str | None = None
    experiment: str | None = None
    experiment_run: str | None = None
    # False (--no-build): a package on the job's base image (tfcloud.google.staging.baseimage) instead
    build: bool = True
    #: ``--fallback``: alternatives tried in turn when the job finds no capacity, each (KEY, VALUE) pairs
    #: (tfcloud.google.vertex.fallback); ``--fallback-after``: how long an attempt may wait QUEUED or PENDING.
    fallback: tuple[tuple[tuple[str, object], ...], ...] = ()
    fallback_after_s: int | None = None
