"""Fault injection: make the emulator misbehave on purpose, the way Google Cloud sometimes does.

Reach it as ``Emulator.faults``::

    emulator.faults.fail("CreateCustomJob", code="UNAVAILABLE", times=2)   # the next 2 calls fail
    emulator.faults.fail("CreateCustomJob", after=True)                    # it creates, then the answer is lost
    emulator.faults.delay("GetCustomJob", seconds=0.5)                     # every call waits 0.5 s
    emulator.faults.late("CreateCustomJob", seconds=2)                     # it creates, then answers 2 s late
    emulator.faults.fail_replica("workerpool1-0", exit_code=3)             # that replica exits 3 at start
    emulator.faults.preempt("workerpool1-0", when_line="Epoch 3/")          # SIGKILLed once it prints that
    emulator.faults.hold_queued()                                          # new jobs stay QUEUED ...
    emulator.faults.release_queued()                                       # ... until released
    emulator.faults.exhaust_capacity(machine_type="a2-highgpu-1g")         # no VMs of that type (None: any) ...
    emulator.faults.restore_capacity()                                     # ... until restored
    emulator.faults.stockout("us-central1", machine_type="a2-highgpu-1g")  # a region out of a type (or all) ...
    emulator.faults.stockout("europe-west4", spot=True, queued=True)       # ... of Spot VMs: its jobs stay QUEUED
    emulator.faults.restock()                                              # ... until restocked
    emulator.faults.clear()

Methods are named by their short gRPC name (``CreateCustomJob``) or full path
(``/google.cloud.aiplatform.v1.JobService/CreateCustomJob``). Codes are ``grpc.StatusCode`` members or their
names. This module imports nothing from grpc.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["CallFault", "Faults", "Preemption", "ReplicaFault", "Stockout", "parse_stockout"]

_CODES = frozenset({
    "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
})


@dataclass(frozen=True, kw_only=True)
class Stockout:
    """A region out of stock (``tfcloud emulator start --stockout REGION[/MACHINE_TYPE][:spot]``): of one machine
    type (None: every one), of Spot VMs only (``spot``) or of every kind. A job there that needs them fails at
    once with RESOURCE_EXHAUSTED ("Resources are insufficient in region: ..."), waits in PENDING if it is a
    FLEX_START job, or, with ``queued``, stays QUEUED as Vertex AI keeps a job until quota allows
    ("Understanding the training service": "Vertex AI keeps the job queued until you have sufficient quotas")."""

    region: str
    machine_type: str | None = None
    spot: bool = False
    queued: bool = False

    def covers(self, region: str, machine_types: set[str], *, spot: bool) -> bool:
        """Whether a job in ``region`` on ``machine_types`` (Spot VMs: ``spot``) finds no VMs here."""
        return (region == self.region and (self.machine_type is None or self.machine_type in machine_types)
                and (spot or not self.spot))

    def __str__(self) -> str:
        return self.region + (f"/{self.machine_type}" if self.machine_type else "") + (":spot" if self.spot else "")


def parse_stockout(text: str, *, queued: bool = False) -> Stockout:
    """``REGION[/MACHINE_TYPE][:spot]`` as a :class:`Stockout`; ValueError naming what is wrong."""
    import re

    match = re.fullmatch(r"([a-z]+(?:-[a-z0-9]+)+)(?:/([a-z][a-z0-9-]*))?(:spot)?", text.strip())
    if match is None:
        raise ValueError(f"expected REGION[/MACHINE_TYPE][:spot] (e.g. us-central1/a2-highgpu-1g:spot), received "
                         f"{text!r}")
    return Stockout(region=match[1], machine_type=match[2], spot=bool(match[3]), queued=queued)


@dataclass(frozen=True, kw_only=True)
class CallFault:
    """What happens to one call: wait ``delay`` seconds, then fail with ``code`` (a StatusCode name) or not."""

    delay: float = 0.0
    code: str | None = None
    message: str = ""
    after: bool = False  # fail only after the call did its work (the answer is "lost")
    late: float = 0.0  # after the call did its work, wait this long before answering


@dataclass(frozen=True, kw_only=True)
class ReplicaFault:
    """A replica that exits with ``exit_code`` as soon as it starts, after writing ``message`` to stderr."""

    exit_code: int
    message: str


@dataclass(frozen=True, kw_only=True)
class Preemption:
    """A running replica the emulator SIGKILLs, as when Compute Engine reclaims a Spot VM: once it wrote a line
    containing ``when_line``, or ``after_s`` seconds after it started (whichever is given)."""

    when_line: str | None = None
    after_s: float | None = None


@dataclass(kw_only=True)
class _Failure:
    code: str
    message: str
    remaining: int
    after: bool = False


@dataclass(kw_only=True)
class _Late:
    seconds: float
    remaining: int


@dataclass(kw_only=True)
class _Delay:
    seconds: float
    remaining: int | None


def _code_name(code: object) -> str:
    name = getattr(code, "name", code)
    if not isinstance(name, str) or name.upper() not in _CODES:
        from tfcloud.errors import ValidationError

        raise ValidationError("code", "a grpc.StatusCode or one of " + ", ".join(sorted(_CODES)), code)
    return name.upper()


class Faults:
    """The faults armed on one emulator. Thread-safe; every method returns immediately."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, list[_Failure]] = {}
        self._delays: dict[str, _Delay] = {}
        self._lates: dict[str, list[_Late]] = {}
        self._until_ended: dict[str, float] = {}
        self._replicas: dict[str, list[tuple[str | None, ReplicaFault, list[int]]]] = {}
        self._preemptions: dict[str, list[tuple[str | None, Preemption, list[int]]]] = {}
        self._hold = threading.Event()
        self._exhausted: set[str | None] | None = None  # machine types without capacity (None in it: every one)
        self._stockouts: list[Stockout] = []

    # -- calls ---------------------------------------------------------------------------------------------
    def fail(self, method: str, *, code: object = "UNAVAILABLE", times: int = 1, message: str | None = None,
             after: bool = False) -> None:
        """Fail the next ``times`` calls of ``method`` with status ``code``. With ``after`` (unary methods), the
        call first does its work and only its answer is lost: a created job exists although the client saw an
        error, as when a connection drops mid-call."""
        name = _code_name(code)
        text = message if message is not None else f"Injected fault: {method} fails with {name}."
        with self._lock:
            self._failures.setdefault(_short(method), []).append(
                _Failure(code=name, message=text, remaining=times, after=after))

    def delay(self, method: str, *, seconds: float, times: int | None = None) -> None:
        """Delay calls of ``method`` (``"*"``: every method) by ``seconds``; the next ``times`` only, if given."""
        with self._lock:
            self._delays[_short(method)] = _Delay(seconds=seconds, remaining=times)

    def late(self, method: str, *, seconds: float, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` do their work, then answer ``seconds`` late: a client whose
        deadline is shorter sees DEADLINE_EXCEEDED although the work was done (a job created, a build started).
        On a streaming method the stream opens ``seconds`` late."""
        with self._lock:
            self._lates.setdefault(_short(method), []).append(_Late(seconds=seconds, remaining=times))

    def answer_once_ended(self, method: str, *, within: float) -> None:
        """Hold each answer of ``method`` (``GetCustomJob``, ``GetHyperparameterTuningJob``) about a job that has
        not ended until it ends, ``within`` seconds at most. A client that polls on a fixed schedule sees the end
        on its first poll: the Vertex AI SDK's ``run()`` and ``wait()`` read the state every 5 s, an interval it has
        no setting for. The real service answers at once; this is for tests that wait on such a client."""
        with self._lock:
            self._until_ended[_short(method)] = within

    def hold_until_ended(self, method: str, ended: Callable[[], bool], *, active: Callable[[], bool]) -> None:
        """Wait while ``active()`` for ``ended()``, as long as :meth:`answer_once_ended` asks for ``method`` (else
        return at once): the servers call this before they answer."""
        with self._lock:
            within = self._until_ended.get(method, 0.0)
        deadline = time.monotonic() + within
        while time.monotonic() < deadline and active() and not ended():
            time.sleep(0.02)

    def take_call_fault(self, name: str, path: str = "") -> CallFault:
        """Consume and return what is armed for one call of ``name`` (the server calls this)."""
        with self._lock:
            delay = 0.0
            for key in (name, "*"):
                armed = self._delays.get(key)
                if armed is not None:
                    delay = max(delay, armed.seconds)
                    if armed.remaining is not None:
                        armed.remaining -= 1
                        if armed.remaining <= 0:
                            del self._delays[key]
            late = 0.0
            lates = self._lates.get(name, [])
            if lates:
                late = lates[0].seconds
                lates[0].remaining -= 1
                if lates[0].remaining <= 0:
                    lates.pop(0)
            queue = self._failures.get(name, [])
            if queue:
                failure = queue[0]
                failure.remaining -= 1
                if failure.remaining <= 0:
                    queue.pop(0)
                return CallFault(delay=delay, code=failure.code, message=failure.message, after=failure.after,
                                 late=late)
            return CallFault(delay=delay, late=late)

    # -- replicas ------------------------------------------------------------------------------------------
    def fail_replica(self, task_name: str, *, exit_code: int = 1, job: str | None = None, times: int = 1,
                     message: str | None = None) -> None:
        """Make replica ``task_name`` ("workerpool1-0") of the next ``times`` jobs exit with ``exit_code``.

        ``job`` restricts it to jobs with that display name or numeric id.
        """
        if exit_code == 0:
            from tfcloud.errors import ValidationError

            raise ValidationError("exit_code", "a non-zero exit status", exit_code)
        text = message if message is not None else f"Injected fault: replica {task_name} exits with {exit_code}."
        with self._lock:
            self._replicas.setdefault(task_name, []).append(
                (job, ReplicaFault(exit_code=exit_code, message=text), [times]))

    def take_replica_fault(self, task_name: str, *, job_id: str, display_name: str) -> ReplicaFault | None:
        """Consume and return the fault armed for this replica of this job, if any (the job runner calls this)."""
        with self._lock:
            for entry in self._replicas.get(task_name, []):
                job, fault, remaining = entry
                if job is None or job in (job_id, display_name):
                    remaining[0] -= 1
                    if remaining[0] <= 0:
                        self._replicas[task_name].remove(entry)
                    return fault
        return None

    def preempt(self, task_name: str, *, when_line: str | None = None, after_s: float | None = None,
                job: str | None = None, times: int = 1) -> None:
        """Preempt replica ``task_name`` ("workerpool1-0") of the next ``times`` jobs while it runs: SIGKILL it once
        it wrote a line containing ``when_line``, or ``after_s`` seconds after it started. The job then restarts
        the replica, or the whole job, as its ``scheduling`` says (docs/recovery.md). ``job``: as in
        :meth:`fail_replica`."""
        if (when_line is None) == (after_s is None):
            from tfcloud.errors import ValidationError

            raise ValidationError("preempt", "exactly one of when_line and after_s",
                                  f"when_line={when_line!r}, after_s={after_s!r}")
        with self._lock:
            self._preemptions.setdefault(task_name, []).append(
                (job, Preemption(when_line=when_line, after_s=after_s), [times]))

    def take_preemption(self, task_name: str, *, job_id: str, display_name: str) -> Preemption | None:
        """Consume and return the preemption armed for this replica of this job, if any."""
        with self._lock:
            for entry in self._preemptions.get(task_name, []):
                job, preemption, remaining = entry
                if job is None or job in (job_id, display_name):
                    remaining[0] -= 1
                    if remaining[0] <= 0:
                        self._preemptions[task_name].remove(entry)
                    return preemption
        return None

    # -- queueing ------------------------------------------------------------------------------------------
    def hold_queued(self) -> None:
        """Keep every job that is QUEUED (now or later) in QUEUED until :meth:`release_queued`."""
        self._hold.set()

    def release_queued(self) -> None:
        self._hold.clear()

    @property
    def holding(self) -> bool:
        return self._hold.is_set()

    # -- capacity ------------------------------------------------------------------------------------------
    def exhaust_capacity(self, machine_type: str | None = None) -> None:
        """No VMs of ``machine_type`` (None: of any type) can be had until :meth:`restore_capacity`. A job that
        needs them waits in PENDING if its scheduling strategy is FLEX_START (failing once its
        ``max_wait_duration`` has passed), else fails at once, as when a region runs out (RESOURCE_EXHAUSTED).
        Jobs on a persistent resource or a reservation keep their capacity (:mod:`tfcloud.emulator.capacity`)."""
        with self._lock:
            self._exhausted = (self._exhausted or set()) | {machine_type}

    def restore_capacity(self) -> None:
        with self._lock:
            self._exhausted = None

    def capacity_for(self, machine_types: set[str]) -> bool:
        """Whether VMs of every one of ``machine_types`` can be had now."""
        with self._lock:
            exhausted = self._exhausted
        return exhausted is None or (None not in exhausted and not exhausted & machine_types)

    def stockout(self, region: str, *, machine_type: str | None = None, spot: bool = False,
                 queued: bool = False) -> Stockout:
        """``region`` out of ``machine_type`` (None: of every type; ``spot``: of Spot VMs only) until
        :meth:`restock` (:class:`Stockout`)."""
        out = Stockout(region=region, machine_type=machine_type, spot=spot, queued=queued)
        with self._lock:
            self._stockouts.append(out)
        return out

    def restock(self, region: str | None = None) -> None:
        """End the stockouts of ``region`` (None: of every region)."""
        with self._lock:
            self._stockouts = [s for s in self._stockouts if region is not None and s.region != region]

    def stockout_for(self, region: str, machine_types: set[str], *, spot: bool) -> Stockout | None:
        """The first stockout that leaves a job in ``region`` on ``machine_types`` without VMs; None: it has them."""
        with self._lock:
            stockouts = list(self._stockouts)
        return next((s for s in stockouts if s.covers(region, machine_types, spot=spot)), None)

    def clear(self) -> None:
        """Disarm everything, release held jobs and restore capacity."""
        with self._lock:
            self._failures.clear()
            self._delays.clear()
            self._lates.clear()
            self._until_ended.clear()
            self._replicas.clear()
            self._preemptions.clear()
            self._exhausted = None
            self._stockouts = []
        self._hold.clear()


def _short(method: str) -> str:
    return method.rsplit("/", 1)[-1] if method != "*" else method
