"""What the Vertex AI target's request and checks read of its value: :class:`VertexPlace`, the fields of
:class:`~tfcloud.google.vertex.value.VertexOptions` that the CustomJob body
(:mod:`tfcloud.google.vertex.customjob`), Google's rules (:mod:`tfcloud.google.vertex.gate`), the options' rules
(:mod:`tfcloud.google.vertex.options`) and the persistent resource's fit (:mod:`tfcloud.google.vertex.fit`) use,
and :class:`SchedulingStrategy`, the one type among them.

Declared here, below all of them and below the value: the value's rules call the gate, which builds the body, so
the body cannot name the value's class (that would be a circle: value → gate → customjob → value); it names what
it reads instead, and mypy checks that the value keeps it (``value.py``)."""

from __future__ import annotations

import enum
from typing import Protocol

__all__ = ["SchedulingStrategy", "VertexPlace"]


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


class VertexPlace(Protocol):
    """The Vertex AI target's value as its request and checks read it (each member is the VertexOptions field of
    that name; ``location`` is the region or the default one)."""

    @property
    def project(self) -> str | None: ...
    @property
    def region(self) -> str | None: ...
    @property
    def location(self) -> str: ...
    @property
    def emulator_host(self) -> str | None: ...
    @property
    def network(self) -> str | None: ...
    @property
    def service_account(self) -> str | None: ...
    @property
    def base_output_dir(self) -> str | None: ...
    @property
    def spot(self) -> bool: ...
    @property
    def scheduling(self) -> SchedulingStrategy | None: ...
    @property
    def max_wait_s(self) -> int | None: ...
    @property
    def timeout_s(self) -> int | None: ...
    @property
    def max_restarts(self) -> int | None: ...
    @property
    def disable_retries(self) -> bool: ...
    @property
    def restart_on_worker_restart(self) -> bool: ...
    @property
    def reservation(self) -> str | None: ...
    @property
    def persistent_resource(self) -> str | None: ...
    @property
    def tensorboard(self) -> str | None: ...
    @property
    def experiment(self) -> str | None: ...
    @property
    def experiment_run(self) -> str | None: ...
