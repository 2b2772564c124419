"""The Vertex AI backend: a CustomJob per submission, followed through Cloud Logging.

- The request is :func:`tfcloud.google.vertex.request.custom_job_request` (a pure function).
- Clients, retries and the translation of Google's errors are :mod:`tfcloud.google.cloud.gcloud`'s; the log follower is
  :mod:`tfcloud.google.vertex.logs`.
- A create is idempotent: each submission carries a ``tfcloud-submission`` label, and before creating again
  after a failed or unanswered create the backend looks for a job with that label. When the retries run out,
  one more look decides: the job (it was made), ``SubmitError`` (none was made) or
  :class:`~tfcloud.errors.OutcomeUnknownError` (Vertex AI cannot say; the message names the command that will).
- When Vertex AI keeps failing while a job is followed, waited for, looked up or cancelled, the error is
  ``OutcomeUnknownError`` (exit 3): the job may still be running; never "failed".
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from tfcloud.backends.base import BilledPool, Billing, JobInfo, LogLine, ReplicaInfo
from tfcloud.config.value import Settings
from tfcloud.errors import ConfigurationError, OutcomeUnknownError, SubmitError, ValidationError
from tfcloud.google.cloud.gcloud import Clients, RetryPolicy, call, status_code
from tfcloud.google.vertex.logs import LogFollower
from tfcloud.google.vertex.logs import timestamp as _timestamp
from tfcloud.google.vertex.request import SUBMISSION_LABEL, custom_job_request, replica_name
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.states import JobState, to_job_state

if TYPE_CHECKING:
    from google.cloud.aiplatform_v1 import CustomJob

    from tfcloud.google.vertex.value import VertexOptions

__all__ = ["VertexBackend", "VertexJob", "console_url", "create_once"]

log = logging.getLogger("tfcloud")
T = TypeVar("T")
#: Seconds between polls while following a job. Cloud Logging allows 60 entries.list calls a minute per project,
#: shared by everyone reading it: 5 s keeps a follower at 12. The emulator has no quota: poll it fast.
POLL_S = 5.0
EMULATOR_POLL_S = 0.5


def console_url(name: str, *, emulator_host: str | None = None) -> str:
    """The Google Cloud console page of a CustomJob; against the emulator (which has no web console), the
    emulator's address and the job's name: ``grpc://127.0.0.1:8470/projects/.../customJobs/ID``."""
    if emulator_host:
        return f"grpc://{emulator_host}/{name}"
    parts = name.split("/")
    project, location, job_id = parts[1], parts[3], parts[5]
    return f"https://console.cloud.google.com/vertex-ai/locations/{location}/training/{job_id}/cpu?project={project}"


def _may_be_running(job_id: str) -> tuple[str, str]:
    """What an :class:`OutcomeUnknownError` about job ``job_id`` says, and its hint."""
    return (f"Job {job_id} may still be running.",
            f"Follow it: tfcloud logs {job_id} -f\nIts state: tfcloud status {job_id}")


def create_once(create: Callable[[], T], find: Callable[[], T | None], *, what: str, policy: RetryPolicy,
                look_hint: str, noun: str = "job") -> T:
    """Create a resource exactly once. A create that failed or went unanswered may still have made it, so each
    later try first calls ``find`` (a look-up by the submission's label); when the retries run out, one last look
    decides: the resource, :class:`SubmitError` (none was made) or :class:`OutcomeUnknownError` (``look_hint``
    says how to find out). ``noun`` names the resource in those messages."""
    tries = 0

    def attempt() -> T:
        nonlocal tries
        tries += 1
        if tries > 1:
            found = find()
            if found is not None:
                log.info("the create that failed did make %s", getattr(found, "name", "it"))
                return found
        return create()

    try:
        return call(attempt, what=what, policy=policy)
    except OutcomeUnknownError as exc:
        last = exc.__cause__
    try:
        found = call(find, what=what, policy=policy)
    except OutcomeUnknownError:
        raise OutcomeUnknownError(
            f"{what}: Vertex AI did not answer ({status_code(last) if last else 'no answer'}) for "
            f"{policy.deadline:g} s; a {noun} may have been created.", hint=look_hint) from last
    if found is not None:
        return found
    raise SubmitError(f"{what} failed: Vertex AI did not answer ({status_code(last) if last else '?'}) for "
                      f"{policy.deadline:g} s, and no {noun} was created. Try again later.") from last


class VertexBackend:
    """Submits CustomJobs to Vertex AI (or the emulator) and finds them again by id."""

    def __init__(self, *, settings: Settings, target: VertexOptions | None = None,
                 retry: RetryPolicy | None = None, poll_interval: float | None = None) -> None:
        if target is None:
            from tfcloud.google.vertex.value import VertexOptions

            target = VertexOptions()
        if not target.project:
            raise ConfigurationError(
                "No Google Cloud project for Vertex AI.",
                hint="Pass --project (project= in run()), set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT, or add "
                     "project = \"...\" to [tool.tfcloud] in pyproject.toml.")
        self.settings = settings
        self.target = target  # where: the project, region, emulator and staging bucket are its options
        self.project: str = target.project
        self.region = target.location
        self.clients = Clients(endpoint=target.emulator_host, region=self.region)
        self.retry = retry if retry is not None else RetryPolicy.from_setting(settings.retry_deadline)
        self.poll_interval = poll_interval if poll_interval is not None else (
            EMULATOR_POLL_S if target.emulator_host else POLL_S)

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"

    def job_name(self, job_id: str) -> str:
        """A short id (``1234``) or a full resource name, as a full resource name."""
        if job_id.startswith("projects/"):
            return job_id
        return f"{self.parent}/customJobs/{job_id}"

    def default_output_dir(self, display_name: str) -> str | None:
        bucket = self.target.google().bucket
        if not bucket:
            return None
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        return f"gs://{bucket}/tfcloud/{display_name}-{stamp}"

    def submit(self, job: PreparedJob) -> VertexJob:
        """Create the job's CustomJob; with ``--fallback``, each alternative in turn while the one before finds no
        capacity (:func:`tfcloud.google.vertex.fallback.submit_with_fallback`): then it returns once an attempt
        has its VMs."""
        if not self.target.fallback:
            return self._submit_one(job)
        from tfcloud.google.vertex.fallback import submit_with_fallback

        handle: VertexJob = submit_with_fallback(self, job, self.target.alternatives(job.spec),
                                                 lambda backend, attempt: backend._submit_one(attempt))
        return handle

    def _submit_one(self, job: PreparedJob) -> VertexJob:
        if job.image is None and job.package is None:
            raise SubmitError("The Vertex AI backend needs an image or a package; the pipeline makes it before "
                              "submitting.")
        from tfcloud.image.dockerfile import installed_tensorflow_version

        submission_id = uuid.uuid4().hex[:16]
        request = custom_job_request(job.spec, self.target, image_uri=job.image.uri if job.image else None,
                                     package=job.package, submission_id=submission_id,
                                     base_output_dir=self.default_output_dir(job.spec.display_name),
                                     tensorflow_version=installed_tensorflow_version(), region=self.region,
                                     parent=self.parent)
        created = self._create(request, submission_id)
        return VertexJob(self, created.name, job=created)

    def _create(self, request: dict[str, Any], submission_id: str) -> CustomJob:
        """Create the job exactly once (:func:`create_once`)."""
        from google.cloud import aiplatform_v1

        message = aiplatform_v1.CustomJob.from_json(json.dumps(request))
        client = self.clients.jobs()
        return create_once(
            lambda: client.create_custom_job(parent=self.parent, custom_job=message, retry=None,
                                             timeout=self.retry.create_timeout),
            lambda: self._find_submission(submission_id),
            what="Creating the Vertex AI job", policy=self.retry,
            look_hint=f"Look for it: tfcloud list --vertex --label {SUBMISSION_LABEL}={submission_id}")

    def _find_submission(self, submission_id: str) -> CustomJob | None:
        """The job labelled with ``submission_id`` (one call; its errors are the caller's to retry)."""
        from google.cloud import aiplatform_v1

        request = aiplatform_v1.ListCustomJobsRequest(
            parent=self.parent, filter=f'labels.{SUBMISSION_LABEL}="{submission_id}"')
        jobs = list(self.clients.jobs().list_custom_jobs(request=request, retry=None,
                                                        timeout=self.retry.call_timeout))
        return min(jobs, key=lambda job: job.create_time) if jobs else None

    def attach(self, job_id: str) -> VertexJob:
        name = self.job_name(job_id)
        client = self.clients.jobs()
        unknown, hint = _may_be_running(job_id)
        found = call(lambda: client.get_custom_job(name=name, retry=None, timeout=self.retry.call_timeout),
                     what=f"Looking up job {job_id}", policy=self.retry, unknown=unknown, unknown_hint=hint)
        return VertexJob(self, found.name, job=found)

    def list_jobs(self, *, state: JobState | None = None, labels: dict[str, str] | None = None,
                  limit: int | None = 50) -> list[VertexJob]:
        """Jobs in the project and region, newest first, optionally by tfcloud state and labels."""
        from google.cloud import aiplatform_v1

        terms = [f'labels.{key}="{value}"' for key, value in (labels or {}).items()]
        if state is not None:
            names = [name for (source, name), mapped in _vertex_states() if mapped is state]
            if names:
                terms.append("(" + " OR ".join(f"state={name}" for name in names) + ")")
        request = aiplatform_v1.ListCustomJobsRequest(parent=self.parent, filter=" AND ".join(terms),
                                                      page_size=min(limit or 100, 100))
        client = self.clients.jobs()

        def fetch() -> list[CustomJob]:
            out: list[CustomJob] = []
            for item in client.list_custom_jobs(request=request, retry=None, timeout=self.retry.call_timeout):
                out.append(item)
                if limit is not None and len(out) >= limit:
                    break
            return out

        found = call(fetch, what="Listing Vertex AI jobs", policy=self.retry,
                     unknown_hint="Try again later: tfcloud list --vertex")
        found.sort(key=lambda j: j.create_time, reverse=True)
        return [VertexJob(self, j.name, job=j) for j in found]

    def list(self, *, state: JobState | None = None, limit: int | None = None) -> list[JobInfo]:
        """Jobs in the project and region, newest first (only those in ``state``; at most ``limit``)."""
        return [job._info(job.job) for job in self.list_jobs(state=state, limit=limit)]

    def close(self) -> None:
        """Close the gRPC channels (a handle that needs them again reopens them)."""
        self.clients.close()


def _vertex_states() -> list[tuple[tuple[str, str], JobState]]:
    from tfcloud.job.states import STATE_TABLE

    return [(key, value) for key, value in STATE_TABLE.items() if key[0] == "vertex"]


class VertexJob:
    """A CustomJob: ``info()``, ``logs()``, ``wait()``, ``cancel()``, like a local job."""

    def __init__(self, backend: VertexBackend, name: str, *, job: CustomJob | None = None) -> None:
        self.backend = backend
        self.name = name
        self._job = job

    def __repr__(self) -> str:
        return f"VertexJob({self.name!r})"

    @property
    def job_id(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    @property
    def console_url(self) -> str:
        return console_url(self.name, emulator_host=self.backend.target.emulator_host)

    def refresh(self) -> CustomJob:
        client = self.backend.clients.jobs()
        policy = self.backend.retry
        unknown, hint = _may_be_running(self.job_id)
        self._job = call(lambda: client.get_custom_job(name=self.name, retry=None, timeout=policy.call_timeout),
                         what=f"Getting job {self.job_id}", policy=policy, unknown=unknown, unknown_hint=hint)
        return self._job

    @property
    def job(self) -> CustomJob:
        return self._job if self._job is not None else self.refresh()

    def status(self) -> JobState:
        """The state alone (one look-up); :meth:`info` has the rest."""
        return to_job_state("vertex", self.refresh().state.name)

    def info(self) -> JobInfo:
        """Where the job stands now (one look-up)."""
        return self._info(self.refresh())

    def _info(self, job: CustomJob) -> JobInfo:
        state = to_job_state("vertex", job.state.name)
        message = (job.error.message if job.error else "") or None
        failed = _failed_replica(message)
        from tfcloud.google.vertex.fallback import capacity_hint

        hint = capacity_hint(message) if state is JobState.FAILED and message else None
        if hint:
            message = f"{message} {hint}"
        return JobInfo(
            job_id=self.job_id, target="vertex", state=state, display_name=job.display_name or None,
            exit_code=(0 if state is JobState.SUCCEEDED else 1) if state.is_final else None,
            replicas=_replicas(job, state, failed, message),
            failed_replica=failed, message=message, console_url=self.console_url,
            created=_timestamp(job.create_time), started=_timestamp(job.start_time),
            ended=_timestamp(job.end_time) if state.is_final else None, labels=dict(job.labels),
            output_dir=job.job_spec.base_output_directory.output_uri_prefix or None,
            log_sources=self._log_sources(job), billing=_billing(job, self.name, self.backend.target.location))

    @property
    def error_message(self) -> str | None:
        message = self.job.error.message if self.job.error else ""
        return message or None

    def wait(self, timeout: float | None = None) -> JobInfo:
        """Block until the job is final (or ``timeout`` seconds passed); return its info then."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            info = self.info()
            if info.state.is_final or (deadline is not None and time.monotonic() >= deadline):
                return info
            time.sleep(self.backend.poll_interval)

    def cancel(self) -> None:
        from google.api_core import exceptions as gexc

        client = self.backend.clients.jobs()
        policy = self.backend.retry
        unknown, hint = _may_be_running(self.job_id)
        try:
            call(lambda: client.cancel_custom_job(name=self.name, retry=None, timeout=policy.call_timeout),
                 what=f"Cancelling job {self.job_id}", policy=policy,
                 unknown=f"The cancel may not have reached Vertex AI: {unknown[0].lower()}{unknown[1:]}",
                 unknown_hint=hint + f"\nCancel it: tfcloud cancel {self.job_id}")
        except SubmitError as exc:
            if isinstance(exc.__cause__, gexc.FailedPrecondition):  # already finished
                return
            raise

    # --- logs -----------------------------------------------------------------------------------------------
    @staticmethod
    def _log_sources(job: CustomJob) -> tuple[str, ...]:
        """Every name a line of this job's logs can carry (:attr:`JobInfo.log_sources`): each replica its pools
        can have (``chief-0``, ``worker-0``...), and the ``job`` (state changes) and ``service`` (Vertex AI's
        own) pseudo-replicas, so that the printed prefix has its final width from the first line (replicas
        show up one by one)."""
        names = [replica_name(f"workerpool{i}-{k}")
                 for i, pool in enumerate(job.job_spec.worker_pool_specs) for k in range(pool.replica_count)]
        return (*names, "job", "service")

    def _logs(self) -> LogFollower:
        return LogFollower(clients=self.backend.clients, project=self.backend.project, job_id=self.job_id,
                           policy=self.backend.retry, poll_interval=self.backend.poll_interval,
                           state=self.status, error=lambda: self.error_message)

    def logs(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
             since: float | None = None) -> Iterator[LogLine]:
        """The job's log lines, oldest first. With ``follow``: also state changes (as replica ``job``), until
        the job has ended and its last lines are in (:class:`~tfcloud.google.vertex.logs.LogFollower`).
        ``since`` and ``tail`` are asked of Cloud Logging (a timestamp filter; newest first, one page). A
        ``replica`` the job's pools do not have is refused naming those it has (never an empty success)."""
        if replica is not None:
            names = self.replica_names()
            if names and replica not in names:
                raise ValidationError("--replica", "one of the job's replicas: " + ", ".join(names), replica,
                                      hint=f"Its worker pools hold {len(names)} replica(s).")
        return self._logs().lines(follow=follow, replica=replica, tail=tail, since=since)

    def replica_names(self) -> list[str]:
        """Its replicas' names (``chief-0``, ``worker-1``...), from its worker pools' replica counts."""
        names: list[str] = []
        for index, pool in enumerate(self.job.job_spec.worker_pool_specs):
            names += [replica_name(f"workerpool{index}-{k}") for k in range(int(pool.replica_count))]
        return names


def _replicas(job: CustomJob, state: JobState, failed: str | None, message: str | None) -> tuple[ReplicaInfo, ...]:
    """Every replica its worker pools hold, each with its pool's machine. Vertex AI reports no state per replica
    (a CustomJob has one state): each replica has the job's, but for a failed job whose error names the replica
    that failed, which has ``failed`` and the exit status the error gives, while the others' are ``unknown``
    (Vertex AI stopped them; how they ended it does not say). A replica's web-access URI is the job's
    ``web_access_uris`` entry for its node (``workerpool1-0``), with ``--web-access``."""
    out = []
    for index, pool in enumerate(job.job_spec.worker_pool_specs):
        machine = _machine(pool.machine_spec)
        for k in range(int(pool.replica_count)):
            name = replica_name(f"workerpool{index}-{k}")
            replica_state, code = state, None
            if state is JobState.FAILED and failed is not None:
                replica_state = JobState.FAILED if name == failed else JobState.UNKNOWN
                code = _exit_status(message) if name == failed else None
            out.append(ReplicaInfo(name=name, state=replica_state, exit_code=code, machine=machine,
                                   web_access_uri=job.web_access_uris.get(f"workerpool{index}-{k}") or None))
    return tuple(out)


def _billing(job: CustomJob, name: str, location: str) -> Billing:
    """What Vertex AI bills the job by, from the CustomJob itself: its region (its name's), its capacity (a
    persistent resource, a reservation, Spot or Flex Start scheduling, else on demand) and its pools."""

    parts = name.split("/")
    region = parts[3] if len(parts) > 3 and parts[2] == "locations" else location
    spec = job.job_spec
    pools, reservation = [], None
    for index, pool in enumerate(spec.worker_pool_specs):
        machine = pool.machine_spec
        affinity = machine.reservation_affinity
        kind = affinity.reservation_affinity_type.name if "reservation_affinity" in machine else ""
        if kind == "ANY_RESERVATION":
            reservation = "any"
        elif kind == "SPECIFIC_RESERVATION":
            reservation = ",".join(affinity.values) or "specific"
        count = int(machine.accelerator_count)
        pools.append(BilledPool(role=replica_name(f"workerpool{index}-0").rsplit("-", 1)[0],
                                replicas=int(pool.replica_count), machine_type=str(machine.machine_type),
                                accelerator=machine.accelerator_type.name if count else None,
                                accelerator_count=count))
    strategy = spec.scheduling.strategy.name if "scheduling" in spec else ""
    resource = spec.persistent_resource_id or None
    capacity = ("persistent-resource" if resource else "reservation" if reservation else
                "spot" if strategy == "SPOT" else "flex-start" if strategy == "FLEX_START" else "on-demand")
    return Billing(region=region, capacity=capacity, pools=tuple(pools), resource=resource,
                   reservation=reservation)


def _machine(spec: Any) -> str:
    """``n1-standard-4 + 1 NVIDIA_TESLA_T4``, ``ct5lp-hightpu-4t (2x2)``: a pool's machine as Vertex AI has it."""
    text = spec.machine_type
    if spec.accelerator_count:
        text += f" + {spec.accelerator_count} {spec.accelerator_type.name}"
    if spec.tpu_topology:
        text += f" ({spec.tpu_topology})"
    return str(text)


def _exit_status(message: str | None) -> int | None:
    """The status in Vertex AI's ``The replica workerpool0-0 exited with a non-zero status of 3.``, or None."""
    import re

    found = re.search(r"exited with a non-zero status of (\d+)", message or "")
    return int(found.group(1)) if found else None


def _failed_replica(message: str | None) -> str | None:
    """The replica Vertex AI's error names (``The replica workerpool0-0 exited...`` → ``chief-0``), or None."""
    for word in (message or "").replace(".", " ").split():
        if word.startswith("workerpool"):
            return replica_name(word)
    return None
