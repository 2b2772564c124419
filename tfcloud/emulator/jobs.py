"""Vertex AI ``JobService`` for CustomJobs: create, get, list, cancel, delete, and the jobs' own lives.

Names are formed as the service forms them: ``projects/{project number}/locations/{location}/customJobs/{id}``
with a numeric id (the service answers with the project *number* even when the request named the project by
id; :func:`project_number` gives each project id a stable number, and both are accepted).

A job moves QUEUED → PENDING → RUNNING → SUCCEEDED / FAILED, or CANCELLING → CANCELLED; PENDING is its VMs'
provisioning (:mod:`tfcloud.emulator.capacity`: skipped on a persistent resource; a FLEX_START job waits there for
capacity), then its replicas drive it: it succeeds when the chief (``workerpool0-0``) exits 0 (workers get
``finish_grace`` seconds to exit on their own, parameter servers are stopped at once); it fails as soon as any
replica exits non-zero, with the error the service sets (code 3, "The replica workerpool1-0 exited with a non-zero
status of 1. ...") and the other replicas are stopped. A replica that dies by a signal (a preempted VM:
``faults.preempt``, or a SIGKILL from outside) is restarted instead, as Vertex AI restarts workers, up to
:data:`MAX_REPLICA_RESTARTS` times each: alone by default, or together with every other replica when the job's
``scheduling.restart_job_on_worker_restart`` is set (what MultiWorkerMirrored needs); never with
``scheduling.disable_retries``. A cancelled job gets ``error`` code 1 (CANCELLED). Every change sets
``update_time``; RUNNING sets ``start_time``; an end state sets ``end_time``.

Replica output becomes Cloud Logging entries labelled as Vertex labels them: ``resource.type="ml_job"``,
``resource.labels.job_id``, ``resource.labels.task_name="workerpool0-0"``, log ``projects/{p}/logs/workerpool0-0``,
stdout at INFO and stderr at ERROR; the service's own messages go to ``ml.googleapis.com%2F{job_id}`` with
``task_name="service"``.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import grpc

from tfcloud.emulator._common import JobTimings, job_record, project_number
from tfcloud.emulator._grpc import (
    JOB_FILTER,
    Handler,
    abort_invalid,
    apply_read_mask,
    bound,
    clear_output_only,
    list_predicate,
    page,
)
from tfcloud.emulator._rules import custom_job_violations
from tfcloud.emulator.capacity import Outcome, provision, queued_by
from tfcloud.emulator.faults import Faults, Preemption
from tfcloud.emulator.logs import LogStore
from tfcloud.emulator.operations import OperationStore
from tfcloud.emulator.packages import PackageInstaller, pool_code
from tfcloud.emulator.replicas import Launch, Replica, ReplicaStartError, Runner, free_port, replica_environment
from tfcloud.emulator.store import Store
from tfcloud.emulator.webaccess import Shells

__all__ = ["MAX_REPLICA_RESTARTS", "JobService", "JobTimings", "job_record", "project_number"]

logger = logging.getLogger("tfcloud.emulator")

_PARENT = re.compile(r"^projects/([^/]+)/locations/([^/]+)$")
_JOB_NAME = re.compile(r"^projects/([^/]+)/locations/([^/]+)/customJobs/([^/]+)$")
_TERMINAL = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")
#: How often Vertex AI restarts one worker that keeps failing with a non-permanent error.
MAX_REPLICA_RESTARTS = 5


@dataclass(kw_only=True)
class _Job:
    job: Any  # aiplatform_v1.CustomJob, guarded by JobService._lock
    project_id: str
    job_id: str
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    replicas: list[Replica] = field(default_factory=list)
    preemptions: dict[str, Preemption] = field(default_factory=dict)  # armed, not fired yet
    preempt_now: set[str] = field(default_factory=set)  # the line was seen
    preempted: set[str] = field(default_factory=set)  # killed by the emulator in this attempt
    started: dict[str, float] = field(default_factory=dict)
    hidden: bool = False  # a tuning trial's job: found by name, not listed
    mounts: tuple[str, ...] = ()  # more host directories its containers see (a trial's metrics directory)
    trial_id: str = ""
    shells: Shells = field(default_factory=Shells)  # enable_web_access: each replica's shell endpoint


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _copy(message: Any) -> Any:
    return type(message).deserialize(type(message).serialize(message))


class JobService:
    """The CustomJob methods of ``google.cloud.aiplatform.v1.JobService``."""

    def __init__(self, *, runner: Runner, logs: LogStore, operations: OperationStore, faults: Faults,
                 timings: JobTimings, project_ids: dict[str, str], local_output_root: str = "",
                 packages: PackageInstaller | None = None, resources: Any = None,
                 store: Store | None = None) -> None:
        self._runner = runner
        self._packages = packages
        self._resources = resources  # the PersistentResourceService, for jobs that name a persistent resource
        self._local_output_root = local_output_root
        self._logs = logs
        self._operations = operations
        self._faults = faults
        self._timings = timings
        self._project_ids = project_ids  # number → id, for log labels
        #: What points a replica's Google clients at this emulator (TFCLOUD_EMULATOR_HOST: Secret Manager;
        #: STORAGE_EMULATOR_HOST: Cloud Storage), set once the servers listen; a job's own env wins.
        self.replica_endpoints: dict[str, str] = {}
        self._lock = threading.Lock()
        self._store = store or Store.memory()  # --data-dir: jobs kept across restarts (tfcloud.emulator.store)
        self._jobs = {job.name: _Job(job=job, **extra) for job, extra in self._store.restore()}
        self._stopping = threading.Event()

    #: The RPCs it serves, each with the method that answers it.
    RPCS: ClassVar[dict[str, str]] = {"CreateCustomJob": "create_custom_job", "GetCustomJob": "get_custom_job",
                                      "ListCustomJobs": "list_custom_jobs", "CancelCustomJob": "cancel_custom_job",
                                      "DeleteCustomJob": "delete_custom_job"}

    def implementations(self) -> dict[str, Handler]:
        return bound(self, self.RPCS)

    # -- names ---------------------------------------------------------------------------------------------
    def _parent(self, parent: str, context: grpc.ServicerContext) -> tuple[str, str]:
        match = _PARENT.match(parent)
        if match is None:
            abort_invalid(context, [("parent", "Invalid parent: expected projects/PROJECT/locations/LOCATION, "
                                               f"received {parent!r}.")])
        assert match is not None
        project, location = match.groups()
        number = project_number(project)
        if not project.isdigit():
            self._project_ids.setdefault(number, project)
        return number, location

    def _find(self, name: str, context: grpc.ServicerContext) -> _Job:
        match = _JOB_NAME.match(name)
        if match is None or not match.group(3).isdigit():
            abort_invalid(context, [("name", "Invalid CustomJob name: expected projects/PROJECT/locations/"
                                             f"LOCATION/customJobs/ID with a numeric ID, received {name!r}.")])
        assert match is not None
        project, location, job_id = match.groups()
        canonical = f"projects/{project_number(project)}/locations/{location}/customJobs/{job_id}"
        with self._lock:
            job = self._jobs.get(canonical)
        if job is None:
            context.abort(grpc.StatusCode.NOT_FOUND, self._store.not_found("CustomJob", canonical))
        assert job is not None
        return job

    # -- RPCs ----------------------------------------------------------------------------------------------
    def create_custom_job(self, request: Any, context: grpc.ServicerContext) -> Any:
        number, location = self._parent(request.parent, context)
        violations = custom_job_violations(request.custom_job, location=location)
        if violations:
            abort_invalid(context, violations)
        if request.custom_job.job_spec.persistent_resource_id and self._resources is not None:
            refused = self._resources.refuse_job(f"projects/{number}/locations/{location}", request.custom_job)
            if refused is not None:
                context.abort(*refused)
        return self.start_job(request.custom_job, number=number, location=location)

    def start_job(self, custom_job: Any, *, number: str, location: str, hidden: bool = False,
                  mounts: tuple[str, ...] = (), trial_id: str = "") -> Any:
        """Create and start a (valid) CustomJob; its copy as created. The tuning service runs each trial so:
        ``hidden`` (not listed), ``mounts`` (the trial's metrics directory), ``trial_id`` (in its log entries)."""
        from google.cloud.aiplatform_v1.types import JobState

        job = clear_output_only(_copy(custom_job))
        job_id = str(random.randint(10**18, 9 * 10**18))
        job.name = f"projects/{number}/locations/{location}/customJobs/{job_id}"
        now = _now()
        job.state = JobState.JOB_STATE_QUEUED
        job.create_time = now
        job.update_time = now
        record = _Job(job=job, project_id=self._project_ids.get(number, number), job_id=job_id, hidden=hidden,
                      mounts=mounts, trial_id=trial_id)
        with self._lock:
            self._jobs[job.name] = record
            self._store.save(record)
            created = _copy(job)
        record.thread = threading.Thread(target=self._live, args=(record,), name=f"job-{job_id}", daemon=True)
        record.thread.start()
        return created

    def snapshot(self, name: str) -> Any:
        """A copy of the CustomJob ``name`` (canonical), or None."""
        with self._lock:
            job = self._jobs.get(name)
            return _copy(job.job) if job is not None else None

    def cancel_job(self, name: str) -> None:
        """Cancel the CustomJob ``name`` unless it has ended (what CancelCustomJob does, without the checks)."""
        from google.cloud.aiplatform_v1.types import JobState

        with self._lock:
            job = self._jobs.get(name)
            if job is None or job.job.state.name in _TERMINAL:
                return
            job.job.state = JobState.JOB_STATE_CANCELLING
            job.job.update_time = _now()
        job.cancel.set()

    def get_custom_job(self, request: Any, context: grpc.ServicerContext) -> Any:
        job = self._find(request.name, context)
        self._faults.hold_until_ended("GetCustomJob", lambda: self._state(job) in _TERMINAL,
                                      active=lambda: context.is_active() and not self._stopping.is_set())
        with self._lock:
            return _copy(job.job)

    def _state(self, job: _Job) -> str:
        with self._lock:
            return str(job.job.state.name)

    def list_custom_jobs(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.aiplatform_v1.types import CustomJob, ListCustomJobsResponse

        number, location = self._parent(request.parent, context)
        predicate = list_predicate(request, context, JOB_FILTER)
        prefix = f"projects/{number}/locations/{location}/customJobs/"
        with self._lock:
            jobs = [_copy(j.job) for name, j in self._jobs.items() if name.startswith(prefix) and not j.hidden]
        jobs.sort(key=lambda job: (job.create_time, job.name), reverse=True)
        jobs = [job for job in jobs if predicate(job_record(job))]
        found, token = page(jobs, request, context)
        return ListCustomJobsResponse(custom_jobs=apply_read_mask(found, request, context, CustomJob),
                                      next_page_token=token)

    def cancel_custom_job(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.protobuf import empty_pb2

        job = self._find(request.name, context)
        with self._lock:
            mark_cancelling(job.job, context)
        job.cancel.set()
        return empty_pb2.Empty()

    def delete_custom_job(self, request: Any, context: grpc.ServicerContext) -> Any:
        job = self._find(request.name, context)
        with self._lock:
            refuse_delete_unless_final(job.job, context)
            del self._jobs[job.job.name]
            self._store.delete(job.job.name)
        return deleted(self._operations, job.job.name)

    # -- a job's life --------------------------------------------------------------------------------------
    def _set(self, job: _Job, state_name: str, **fields: Any) -> bool:
        """Move to ``state_name`` unless the job already ended; False when it had."""
        with self._lock:
            moved = move_state(job.job, state_name, **fields)
            if moved and state_name in _TERMINAL:  # its shells go with it
                job.job.web_access_uris.clear()
            if moved:
                self._store.save(job)
        if moved and state_name in _TERMINAL:
            job.shells.close()
        return moved

    def _service_log(self, job: _Job, text: str, severity: str = "INFO") -> None:
        self._logs.append(
            log_name=f"projects/{job.project_id}/logs/ml.googleapis.com%2F{job.job_id}",
            resource_type="ml_job",
            resource_labels={"job_id": job.job_id, "task_name": "service", "project_id": job.project_id},
            text=text, severity=severity)

    def _sink(self, job: _Job, task_name: str) -> Callable[[str, str], None]:
        labels = {"job_id": job.job_id, "task_name": task_name, "project_id": job.project_id}

        def sink(stream: str, line: str) -> None:
            self._logs.append(
                log_name=f"projects/{job.project_id}/logs/{task_name}", resource_type="ml_job",
                resource_labels=labels, text=line, severity="INFO" if stream == "stdout" else "ERROR",
                labels={"ml.googleapis.com/job_id/log_area": "user", "ml.googleapis.com/trial_id": job.trial_id})

        return sink

    def _wait(self, job: _Job, seconds: float) -> bool:
        """Sleep unless cancelled or stopping; True when the job should go on."""
        job.cancel.wait(seconds)
        return not (job.cancel.is_set() or self._stopping.is_set())

    def _cancelled(self, job: _Job) -> None:
        from google.rpc import status_pb2

        if self._set(job, "JOB_STATE_CANCELLED", error=status_pb2.Status(code=1, message="CANCELED")):
            self._service_log(job, "Job was cancelled.")

    def _failed(self, job: _Job, code: int, message: str) -> None:
        from google.rpc import status_pb2

        if self._set(job, "JOB_STATE_FAILED", error=status_pb2.Status(code=code, message=message)):
            self._service_log(job, f"Job failed. {message}", "ERROR")

    def _live(self, job: _Job) -> None:
        try:
            self._run(job)
        except Exception as exc:  # never leave a job RUNNING because the emulator broke
            logger.exception("job %s", job.job_id)
            self._failed(job, 13, f"Internal error in the emulator: {exc}")
        finally:
            job.shells.close()
            for replica in job.replicas:
                replica.stop(self._timings.stop_grace)
            for replica in job.replicas:
                replica.drain()

    def _run(self, job: _Job) -> None:
        timings = self._timings
        if not self._wait(job, timings.queued):
            return self._cancelled(job)
        while self._faults.holding:
            if not self._wait(job, 0.05):
                return self._cancelled(job)
        with self._lock:
            spec = _copy(job.job.job_spec)
        location = job.job.name.split("/")[3]
        said = False
        while (stockout := queued_by(spec, location=location, faults=self._faults)) is not None:
            if not said:  # once: the job stays QUEUED until the region has its VMs (or it is cancelled)
                self._service_log(job, f"Job is queued: resources are insufficient in region: {location} "
                                       f"({stockout}); it starts when they are available.")
                said = True
            if not self._wait(job, 0.05):
                return self._cancelled(job)
        self._set(job, "JOB_STATE_PENDING")
        outcome = provision(spec, location=location, faults=self._faults, timings=timings,
                            wait=lambda seconds: self._wait(job, seconds),
                            log=lambda text, severity="INFO": self._service_log(job, text, severity))
        if outcome is Outcome.CANCELLED:
            return self._cancelled(job)
        if isinstance(outcome, tuple):
            return self._failed(job, *outcome)
        try:
            launches = self._launches(job, spec)
        except ReplicaStartError as exc:
            return self._failed(job, 3, str(exc))
        for launch in launches:
            preemption = self._faults.take_preemption(launch.task_name, job_id=job.job_id,
                                                      display_name=job.job.display_name)
            if preemption is not None:
                job.preemptions[launch.task_name] = preemption
        try:
            for launch in launches:
                job.replicas.append(self._start(job, launch))
        except ReplicaStartError as exc:
            return self._failed(job, 3, str(exc))
        if spec.enable_web_access:
            self._open_shells(job, launches)
        if not self._set(job, "JOB_STATE_RUNNING"):
            return None
        self._service_log(job, "Job is running.")
        timeout = spec.scheduling.timeout.total_seconds() if "scheduling" in spec and "timeout" in spec.scheduling \
            else None
        no_retries = bool(spec.scheduling.disable_retries)
        whole_job = bool(spec.scheduling.restart_job_on_worker_restart) and not no_retries
        restarts = {launch.task_name: 0 for launch in launches}
        started = time.monotonic()
        while True:
            if job.cancel.is_set() or self._stopping.is_set():
                self._stop_all(job)
                return self._cancelled(job)
            self._preempt_due(job)
            failed = [(i, r, code) for i, r in enumerate(job.replicas) if (code := r.poll()) not in (None, 0)]
            if failed:
                # A preempted replica (or one killed by a signal) restarts; an error of its own ends the job. Once
                # a replica was preempted, the others' errors are its consequence (MultiWorkerMirrored fails then).
                lost = [(i, r, code) for i, r, code in failed
                        if r.task_name in job.preempted or _killed_by_signal(code)]
                if lost and (whole_job or len(lost) == len(failed)) and not no_retries \
                        and all(restarts[r.task_name] < MAX_REPLICA_RESTARTS for _, r, _ in lost):
                    try:
                        for _, r, _ in lost:
                            restarts[r.task_name] += 1
                        if whole_job:
                            self._restart_job(job, launches, lost[0][1].task_name, lost[0][2],
                                              restarts[lost[0][1].task_name])
                        else:
                            for i, r, code in lost:
                                self._restart_replica(job, launches[i], i, code, restarts[r.task_name])
                    except ReplicaStartError as exc:
                        self._stop_all(job)
                        return self._failed(job, 3, str(exc))
                    continue
                _, replica, code = next(((i, r, c) for i, r, c in failed if (i, r, c) not in lost), failed[0])
                self._stop_all(job)
                return self._failed(job, 3, _exit_message(replica.task_name, code))
            if job.replicas[0].poll() == 0:
                return self._finish(job)
            if timeout and time.monotonic() - started > timeout:
                self._stop_all(job)
                return self._failed(job, 4, f"The job exceeded its timeout of {timeout:g}s and was stopped.")
            time.sleep(0.05)

    def _open_shells(self, job: _Job, launches: list[Launch]) -> None:
        """``enable_web_access``: a loopback shell endpoint per replica, its URI in ``web_access_uris``
        (:mod:`tfcloud.emulator.webaccess`); a replica without bash (rule web-access-bash) gets none."""
        uris = {}
        for launch in launches:
            command = self._runner.shell(launch)
            if command is None:
                self._service_log(job, f"Replica {launch.task_name} has no interactive shell: its container has no "
                                       "bash (the interactive shell runs bash).", "WARNING")
                continue
            uris[launch.task_name] = job.shells.open(launch.task_name, command)
        with self._lock:
            job.job.web_access_uris.update(uris)

    def _finish(self, job: _Job) -> None:
        deadline = time.monotonic() + self._timings.finish_grace
        waiting = [r for r in job.replicas[1:] if not r.task_name.startswith("workerpool2-")]
        while waiting and time.monotonic() < deadline and not job.cancel.is_set():
            for replica in waiting:
                code = replica.poll()
                if code not in (None, 0):
                    self._stop_all(job)
                    return self._failed(job, 3, _exit_message(replica.task_name, code))
            waiting = [r for r in waiting if r.poll() is None]
            time.sleep(0.05)
        self._stop_all(job)
        for replica in job.replicas:
            replica.drain()
        if self._set(job, "JOB_STATE_SUCCEEDED"):
            self._service_log(job, "Job completed successfully.")

    def _start(self, job: _Job, launch: Launch) -> Replica:
        task = launch.task_name
        sink = self._sink(job, task)
        preemption = job.preemptions.get(task)
        if preemption is not None and preemption.when_line is not None:
            wanted, write = preemption.when_line, sink

            def sink(stream: str, line: str) -> None:
                write(stream, line)
                if wanted in line and task in job.preemptions:
                    job.preempt_now.add(task)

        replica = self._runner.start(launch, sink)
        job.started[task] = time.monotonic()
        return replica

    def _preempt_due(self, job: _Job) -> None:
        now = time.monotonic()
        for replica in job.replicas:
            task = replica.task_name
            preemption = job.preemptions.get(task)
            if preemption is None or replica.poll() is not None:
                continue
            if task in job.preempt_now or (
                    preemption.after_s is not None and now - job.started[task] >= preemption.after_s):
                del job.preemptions[task]
                job.preempted.add(task)
                self._service_log(job, f"Replica {task} was preempted: its VM was reclaimed.", "WARNING")
                replica.kill()

    def _restart_replica(self, job: _Job, launch: Launch, index: int, code: int, restart: int) -> None:
        """Vertex AI's default: the lost replica alone starts again, with the same name and address."""
        self._service_log(job, f"{_lost_message(job, launch.task_name, code)} Restarting it "
                               f"(restart {restart} of at most {MAX_REPLICA_RESTARTS}).", "WARNING")
        old = job.replicas[index]
        old.stop(self._timings.stop_grace)
        old.drain()
        job.preempted.discard(launch.task_name)
        job.replicas[index] = self._start(job, replace(launch, fault=None))

    def _restart_job(self, job: _Job, launches: list[Launch], task: str, code: int, restart: int) -> None:
        """``scheduling.restart_job_on_worker_restart``: every replica starts again, with the same addresses."""
        self._service_log(job, f"{_lost_message(job, task, code)} Restarting every replica of the job "
                               f"(restart_job_on_worker_restart; restart {restart} of at most "
                               f"{MAX_REPLICA_RESTARTS}).", "WARNING")
        self._stop_all(job)
        for replica in job.replicas:
            replica.drain()
        job.preempted.clear()
        job.replicas = [self._start(job, replace(launch, fault=None)) for launch in launches]

    def _stop_all(self, job: _Job) -> None:
        """Stop every replica and log what each had written (before the job's state says it ended, as on the
        success path: a follower that reads once the job has failed finds the failing replica's last lines)."""
        for replica in job.replicas:
            replica.stop(self._timings.stop_grace)
        for replica in job.replicas:
            replica.drain()

    def _launches(self, job: _Job, spec: Any) -> list[Launch]:
        from google.protobuf import json_format

        pools = {index: pool for index, pool in enumerate(spec.worker_pool_specs) if pool.replica_count}
        ports = {index: [free_port() for _ in range(pool.replica_count)] for index, pool in pools.items()}
        cluster = {index: [f"127.0.0.1:{port}" for port in pool_ports] for index, pool_ports in ports.items()}
        job_dict = json_format.MessageToDict(spec._pb)
        base = spec.base_output_directory.output_uri_prefix
        launches = []
        for index, pool in pools.items():
            image, command, args, env_list, site, gcs = pool_code(pool, self._packages, project=job.project_id)
            for replica in range(pool.replica_count):
                task_name = f"workerpool{index}-{replica}"
                env = {var.name: var.value for var in env_list}
                env.update(replica_environment(
                    cluster=cluster, pool=index, index=replica, job_spec=job_dict,
                    base_output_directory=base, project=job.project_id, job_id=job.job_id,
                    local_output_root=self._local_output_root))
                if self._local_output_root:  # Cloud Storage has no directories to make; a file system does
                    for key in ("AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR"):
                        if key in env:
                            Path(env[key]).mkdir(parents=True, exist_ok=True)
                if site is not None:
                    env["PYTHONPATH"] = os.pathsep.join(p for p in (site, os.environ.get("PYTHONPATH")) if p)
                for key, value in self.replica_endpoints.items():
                    env.setdefault(key, value)
                env.setdefault("no_proxy", "127.0.0.1,localhost")
                env.setdefault("NO_PROXY", "127.0.0.1,localhost")
                env.setdefault("no_grpc_proxy", "127.0.0.1,localhost")
                fault = self._faults.take_replica_fault(task_name, job_id=job.job_id,
                                                        display_name=job.job.display_name)
                launches.append(Launch(
                    task_name=task_name, image=image, command=command, args=args, env=env,
                    name=f"tfcloud-emulator-{job.job_id}-{task_name}",
                    fault=(fault.exit_code, fault.message) if fault else None,
                    mounts=((self._local_output_root,) if self._local_output_root else ()) + job.mounts
                    + ((site,) if site else ()), gcs_root=gcs))
        return launches

    def stop(self) -> None:
        """Cancel every unfinished job and wait for their replicas to be gone."""
        self._stopping.set()
        with self._lock:
            threads = [job.thread for job in self._jobs.values() if job.thread is not None]
        for thread in threads:
            thread.join(30)


# -- a Vertex AI job's state, shared by CustomJobs and HyperparameterTuningJobs (tfcloud.emulator.tuning) ----------
def _kind(job: Any) -> str:
    return type(job).__name__  # CustomJob, HyperparameterTuningJob


def move_state(job: Any, state_name: str, **fields: Any) -> bool:
    """Move ``job`` (the message) to ``state_name`` unless it already ended, stamping its times and setting
    ``fields``; False when it had ended. The caller holds its service's lock."""
    from google.cloud.aiplatform_v1.types import JobState

    if job.state.name in _TERMINAL:
        return False
    now = _now()
    job.state = getattr(JobState, state_name)
    job.update_time = now
    if state_name == "JOB_STATE_RUNNING" and "start_time" not in job:
        job.start_time = now
    if state_name in _TERMINAL:
        job.end_time = now
    for key, value in fields.items():
        setattr(job, key, value)
    return True


def mark_cancelling(job: Any, context: grpc.ServicerContext) -> None:
    """What a Cancel RPC does to the message (the caller holds the lock, then wakes the job's thread): an ended
    job is FAILED_PRECONDITION; else it is CANCELLING."""
    from google.cloud.aiplatform_v1.types import JobState

    state = job.state
    if state.name in _TERMINAL:
        context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                      f'Cannot cancel {_kind(job)} "{job.name}": it is in state {state.name}.')
    if state != JobState.JOB_STATE_CANCELLING:
        job.state = JobState.JOB_STATE_CANCELLING
        job.update_time = _now()


def refuse_delete_unless_final(job: Any, context: grpc.ServicerContext) -> None:
    """A Delete RPC of a job that has not ended is FAILED_PRECONDITION."""
    if job.state.name not in _TERMINAL:
        context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                      f'Cannot delete {_kind(job)} "{job.name}": it is in state {job.state.name}; cancel it first.')


def deleted(operations: OperationStore, name: str) -> Any:
    """The finished long-running operation a Delete RPC of ``name`` answers with."""
    from google.cloud.aiplatform_v1.types import DeleteOperationMetadata, GenericOperationMetadata
    from google.protobuf import empty_pb2

    now = _now()
    metadata = DeleteOperationMetadata(generic_metadata=GenericOperationMetadata(create_time=now, update_time=now))
    operation = f"{name}/operations/{random.randint(10**18, 9 * 10**18)}"
    operations.create(operation, metadata)
    return operations.finish(operation, response=empty_pb2.Empty())


def _killed_by_signal(code: int) -> bool:
    """A process killed by a signal (Popen: negative; a container: 128 + N), as a preempted VM's is."""
    return code < 0 or code >= 128


def _lost_message(job: _Job, task_name: str, code: int) -> str:
    if task_name in job.preempted:
        return f"Replica {task_name} was preempted."
    number = -code if code < 0 else code - 128
    return f"Replica {task_name} was killed by signal {number}."


def _exit_message(task_name: str, code: int) -> str:
    if code < 0:
        return (f"The replica {task_name} exited with a non-zero status of {128 - code}. "
                f"Termination reason: killed by signal {-code}.")
    return f"The replica {task_name} exited with a non-zero status of {code}. Termination reason: Error."
