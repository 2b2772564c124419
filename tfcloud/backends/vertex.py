"""The Vertex AI backend: a CustomJob per submission, followed through Cloud Logging.

- The request is :func:`tfcloud.backends.vertex_request.custom_job_request` (a pure function).
- Clients are ``aiplatform_v1.JobServiceClient`` on the region's endpoint and the Cloud Logging
  ``LoggingServiceV2Client``, with Application Default Credentials; with the ``emulator_host`` setting both
  talk to the tfcloud emulator over an insecure channel instead.
- Transient API errors (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED, ABORTED) are retried
  with exponential backoff. A create is idempotent: each submission carries a ``tfcloud-submission`` label,
  and before creating again after an error the backend looks for a job with that label.
- Logs are followed with ``TailLogEntries`` (the filter Vertex AI's own console uses:
  ``resource.type="ml_job" AND resource.labels.job_id="ID"``); ``ListLogEntries`` reads what a stream cannot
  promise: the lines before it opened, around a reconnect, and the last ones after the job has ended. State
  changes appear as lines of the ``job`` pseudo-replica.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from tfcloud.artifacts import PreparedJob
from tfcloud.backends.base import JobInfo, LogLine
from tfcloud.backends.vertex_request import SUBMISSION_LABEL, custom_job_request, replica_name
from tfcloud.errors import ConfigurationError, JobNotFoundError, SubmitError, TfcloudError, require
from tfcloud.settings import Settings
from tfcloud.states import JobState, to_job_state

if TYPE_CHECKING:
    from google.cloud.aiplatform_v1 import CustomJob, JobServiceClient
    from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client

    from tfcloud.targets import VertexTarget

__all__ = ["VertexBackend", "VertexJob", "console_url"]

log = logging.getLogger("tfcloud")
T = TypeVar("T")
TRANSIENT = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "RESOURCE_EXHAUSTED", "ABORTED"})
#: Seconds to wait before retry n (0-based); the last entry repeats.
BACKOFF = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0)
ATTEMPTS = 6
#: Seconds between polls while following a job. Cloud Logging allows 60 entries.list calls a minute per project,
#: shared by everyone reading it: 5 s keeps a follower at 12. The emulator has no quota: poll it fast.
POLL_S = 5.0
EMULATOR_POLL_S = 0.5


def console_url(name: str) -> str:
    """The Google Cloud console page of a CustomJob."""
    parts = name.split("/")
    project, location, job_id = parts[1], parts[3], parts[5]
    return f"https://console.cloud.google.com/vertex-ai/locations/{location}/training/{job_id}/cpu?project={project}"


def _code(exc: BaseException) -> str:
    grpc_code = getattr(exc, "grpc_status_code", None)
    if grpc_code is not None:
        return str(grpc_code.name)
    code = getattr(exc, "code", None)
    name = getattr(code, "name", None)
    return str(name) if name else type(exc).__name__


def _is_api_error(exc: BaseException) -> bool:
    from google.api_core import exceptions as gexc

    return isinstance(exc, gexc.GoogleAPIError)


def call_with_retry(call: Callable[[], T], *, what: str, sleep: Callable[[float], None] = time.sleep,
                    on_retry: Callable[[BaseException], T | None] | None = None) -> T:
    """Run ``call``; retry transient API errors with backoff. ``on_retry`` may resolve the call instead
    (the idempotent create uses it to find a job the failed call did create)."""
    for attempt in range(ATTEMPTS):
        try:
            return call()
        except Exception as exc:
            if not _is_api_error(exc):
                raise
            if _code(exc) not in TRANSIENT or attempt == ATTEMPTS - 1:
                raise translate(exc, what) from exc
            log.info("%s: %s; retrying (%d/%d)", what, _code(exc), attempt + 1, ATTEMPTS - 1)
            sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            if on_retry is not None:
                resolved = on_retry(exc)
                if resolved is not None:
                    return resolved
    raise AssertionError("unreachable")  # pragma: no cover


def translate(exc: BaseException, what: str) -> TfcloudError:
    """A Google API error as tfcloud's own."""
    code = _code(exc)
    message = getattr(exc, "message", None) or str(exc)
    if code == "NOT_FOUND":
        return JobNotFoundError(f"{what}: not found ({message}).")
    if code in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
        return ConfigurationError(
            f"{what}: {code.lower().replace('_', ' ')} ({message}).",
            hint="Log in with `gcloud auth application-default login`, and check that the account may use "
                 "Vertex AI in this project (roles/aiplatform.user).")
    if code in ("INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE"):
        return SubmitError(f"{what}: rejected by Vertex AI: {message}")
    return SubmitError(f"{what}: {code}: {message}")


class _Clients:
    """The Google clients one backend uses, created on first use and closed together."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._jobs: JobServiceClient | None = None
        self._logging: LoggingServiceV2Client | None = None
        self._channels: list[Any] = []

    def _channel(self) -> Any:
        import grpc

        assert self.settings.emulator_host
        channel = grpc.insecure_channel(self.settings.emulator_host)
        self._channels.append(channel)
        return channel

    def _credentials(self) -> Any:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError

        try:
            credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
        except DefaultCredentialsError as exc:
            raise ConfigurationError(
                "No Google Cloud credentials found (Application Default Credentials).",
                hint="Run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
                     "service account key file. To try tfcloud without Google Cloud, start "
                     "`tfcloud emulator start` and export what it prints.",
            ) from exc
        return credentials

    def jobs(self) -> JobServiceClient:
        if self._jobs is None:
            require("google.cloud.aiplatform_v1", feature="The Vertex AI backend", extra="cloud")
            from google.cloud import aiplatform_v1
            from google.cloud.aiplatform_v1.services.job_service.transports.grpc import JobServiceGrpcTransport

            if self.settings.emulator_host:
                self._jobs = aiplatform_v1.JobServiceClient(
                    transport=JobServiceGrpcTransport(channel=self._channel()))
            else:
                self._jobs = aiplatform_v1.JobServiceClient(
                    credentials=self._credentials(),
                    client_options={"api_endpoint": f"{self.settings.region}-aiplatform.googleapis.com"})
        return self._jobs

    def logging(self) -> LoggingServiceV2Client:
        if self._logging is None:
            require("google.cloud.logging_v2", feature="Following Vertex AI logs", extra="cloud")
            from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
            from google.cloud.logging_v2.services.logging_service_v2.transports import LoggingServiceV2GrpcTransport

            if self.settings.emulator_host:
                self._logging = LoggingServiceV2Client(
                    transport=LoggingServiceV2GrpcTransport(channel=self._channel()))
            else:
                self._logging = LoggingServiceV2Client(credentials=self._credentials())
        return self._logging

    def close(self) -> None:
        for channel in self._channels:
            channel.close()
        self._channels.clear()
        self._jobs = None
        self._logging = None


class VertexBackend:
    """Submits CustomJobs to Vertex AI (or the emulator) and finds them again by id."""

    def __init__(self, *, settings: Settings, target: VertexTarget | None = None,
                 sleep: Callable[[float], None] = time.sleep, poll_interval: float | None = None) -> None:
        if target is not None and (target.project or target.region):
            settings = replace(settings, project=target.project or settings.project,
                               region=target.region or settings.region)
        if not settings.project:
            raise ConfigurationError(
                "No Google Cloud project for Vertex AI.",
                hint="Pass --project (project= in run()), set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT, or add "
                     "project = \"...\" to [tool.tfcloud] in pyproject.toml.")
        self.settings = settings
        self.project: str = settings.project
        self.region = settings.region
        self.clients = _Clients(settings)
        self.sleep = sleep
        self.poll_interval = poll_interval if poll_interval is not None else (
            EMULATOR_POLL_S if settings.emulator_host else POLL_S)

    @classmethod
    def from_settings(cls, settings: Settings) -> VertexBackend:
        return cls(settings=settings)

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"

    def job_name(self, job_id: str) -> str:
        """A short id (``1234``) or a full resource name, as a full resource name."""
        if job_id.startswith("projects/"):
            return job_id
        return f"{self.parent}/customJobs/{job_id}"

    def default_output_dir(self, display_name: str) -> str | None:
        if not self.settings.staging_bucket:
            return None
        bucket = self.settings.staging_bucket.removeprefix("gs://").rstrip("/")
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        return f"gs://{bucket}/tfcloud/{display_name}-{stamp}"

    def submit(self, job: PreparedJob) -> VertexJob:
        if job.image is None:
            raise SubmitError("The Vertex AI backend needs an image; the pipeline builds it before submitting.")
        submission_id = uuid.uuid4().hex[:16]
        request = custom_job_request(job.spec, image_uri=job.image.uri, submission_id=submission_id,
                                     base_output_dir=self.default_output_dir(job.spec.display_name))
        created = self._create(request, submission_id)
        return VertexJob(self, created.name, job=created)

    def _create(self, request: dict[str, Any], submission_id: str) -> CustomJob:
        from google.cloud import aiplatform_v1

        message = aiplatform_v1.CustomJob.from_json(json.dumps(request))
        client = self.clients.jobs()
        return call_with_retry(
            lambda: client.create_custom_job(parent=self.parent, custom_job=message, timeout=60),
            what="Creating the Vertex AI job", sleep=self.sleep,
            on_retry=lambda _exc: self._find_submission(submission_id))

    def _find_submission(self, submission_id: str) -> CustomJob | None:
        from google.cloud import aiplatform_v1

        client = self.clients.jobs()
        request = aiplatform_v1.ListCustomJobsRequest(
            parent=self.parent, filter=f'labels.{SUBMISSION_LABEL}="{submission_id}"')
        jobs = call_with_retry(lambda: list(client.list_custom_jobs(request=request, timeout=30)),
                               what="Looking for the job a failed create may have made", sleep=self.sleep)
        return jobs[0] if jobs else None

    def attach(self, job_id: str) -> VertexJob:
        name = self.job_name(job_id)
        client = self.clients.jobs()
        found = call_with_retry(lambda: client.get_custom_job(name=name, timeout=30),
                                what=f"Looking up job {job_id}", sleep=self.sleep)
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
            for item in client.list_custom_jobs(request=request, timeout=30):
                out.append(item)
                if limit is not None and len(out) >= limit:
                    break
            return out

        found = call_with_retry(fetch, what="Listing Vertex AI jobs", sleep=self.sleep)
        found.sort(key=lambda j: j.create_time, reverse=True)
        return [VertexJob(self, j.name, job=j) for j in found]

    def list(self, *, state: JobState | None = None, limit: int | None = None) -> list[JobInfo]:
        """Jobs in the project and region, newest first (only those in ``state``; at most ``limit``)."""
        return [job._info(job.job) for job in self.list_jobs(state=state, limit=limit)]

    def close(self) -> None:
        """Close the gRPC channels (a handle that needs them again reopens them)."""
        self.clients.close()


def _vertex_states() -> list[tuple[tuple[str, str], JobState]]:
    from tfcloud.states import STATE_TABLE

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
        return console_url(self.name)

    def refresh(self) -> CustomJob:
        client = self.backend.clients.jobs()
        self._job = call_with_retry(lambda: client.get_custom_job(name=self.name, timeout=30),
                                    what=f"Getting job {self.job_id}", sleep=self.backend.sleep)
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
        return JobInfo(
            job_id=self.job_id, target="vertex", state=state, display_name=job.display_name or None,
            exit_code=(0 if state is JobState.SUCCEEDED else 1) if state.is_final else None,
            failed_replica=_failed_replica(message), message=message, console_url=self.console_url,
            created=_timestamp(job.create_time), labels=dict(job.labels),
            output_dir=job.job_spec.base_output_directory.output_uri_prefix or None)

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
        try:
            call_with_retry(lambda: client.cancel_custom_job(name=self.name, timeout=30),
                            what=f"Cancelling job {self.job_id}", sleep=self.backend.sleep)
        except SubmitError as exc:
            if isinstance(exc.__cause__, gexc.FailedPrecondition):  # already finished
                return
            raise

    # --- logs -----------------------------------------------------------------------------------------------
    def _filter(self, replica: str | None, since: str | None) -> str:
        terms = ['resource.type="ml_job"', f'resource.labels.job_id="{self.job_id}"']
        if replica is not None:
            terms.append(f'resource.labels.task_name="{_task_name(replica)}"')
        if since is not None:
            terms.append(f'timestamp>="{since}"')
        return " AND ".join(terms)

    def _entries(self, replica: str | None, since: str | None) -> list[Any]:
        client = self.backend.clients.logging()
        request = {
            "resource_names": [f"projects/{self.backend.project}"],
            "filter": self._filter(replica, since),
            "order_by": "timestamp asc",
            "page_size": 1000,
        }
        return call_with_retry(lambda: list(client.list_log_entries(request=request, timeout=30)),
                               what=f"Reading the logs of job {self.job_id}", sleep=self.backend.sleep)

    def logs(self, *, follow: bool = False, replica: str | None = None) -> Iterator[LogLine]:
        """The job's log lines, oldest first. With ``follow``: also state changes (as replica ``job``), until
        the job has ended and its last lines are in."""
        seen = _Seen()
        if not follow:
            yield from seen.lines(self._entries(replica, None))
            return
        yield from self._follow(replica, seen)

    def _follow(self, replica: str | None, seen: _Seen) -> Iterator[LogLine]:
        """Tail the logs (``TailLogEntries``) while the job runs. What the stream cannot promise is read with
        ``ListLogEntries``: the lines from before it opened, those around a reconnect, and the last ones once
        the job has ended. Lines are told apart by their ``insert_id``, so none is shown twice."""
        tail = _Tail(self, replica)
        reconnects = 0
        last_state: JobState | None = None
        try:
            yield from seen.lines(self._entries(replica, None))
            while True:
                state = self.status()
                if state is not last_state:
                    last_state = state
                    yield LogLine(replica="job", text=f"{self.job_id} is {state.value}", stream="stdout")
                if state.is_final:
                    break
                yield from seen.lines(tail.take(timeout=self.backend.poll_interval))
                if tail.error is not None:
                    log.info("the log stream of job %s broke (%s); reopening it", self.job_id, _code(tail.error))
                    tail.close()
                    if reconnects < ATTEMPTS:
                        self.backend.sleep(BACKOFF[min(reconnects, len(BACKOFF) - 1)])
                        reconnects += 1
                        tail = _Tail(self, replica)
                    else:  # the stream keeps failing: poll instead
                        tail = _Tail.polling(self, replica)
                    yield from seen.lines(self._entries(replica, seen.since))
        finally:
            tail.close()
        yield from seen.lines(tail.take(timeout=0))
        yield from seen.lines(self._entries(replica, seen.since))
        if self.error_message:
            yield LogLine(replica="job", text=f"error: {self.error_message}", stream="stderr")

    def tail(self, replica: str, n: int = 20) -> list[str]:
        return [line.text for line in self.logs(replica=replica)][-n:]


def _failed_replica(message: str | None) -> str | None:
    """The replica Vertex AI's error names (``The replica workerpool0-0 exited...`` → ``chief-0``), or None."""
    for word in (message or "").replace(".", " ").split():
        if word.startswith("workerpool"):
            return replica_name(word)
    return None


class _Seen:
    """The entries already shown (by ``insert_id``) and the newest timestamp among them."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.since: str | None = None

    def lines(self, entries: Iterable[Any]) -> Iterator[LogLine]:
        for entry in entries:
            if entry.insert_id in self.ids:
                continue
            self.ids.add(entry.insert_id)
            stamp = _iso(entry.timestamp)
            if stamp is not None and (self.since is None or stamp > self.since):
                self.since = stamp
            line = _log_line(entry)
            if line is not None:
                yield line


class _Tail:
    """One ``TailLogEntries`` stream, read by a thread into a queue. ``error`` is set when it breaks."""

    def __init__(self, job: VertexJob, replica: str | None, *, stream: bool = True) -> None:
        self.queue: queue.Queue[Any] = queue.Queue()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._call: Any = None
        self._thread: threading.Thread | None = None
        if stream:
            self._request = {"resource_names": [f"projects/{job.backend.project}"],
                             "filter": job._filter(replica, None)}
            self._client = job.backend.clients.logging()
            self._thread = threading.Thread(target=self._run, name=f"tfcloud-tail-{job.job_id}", daemon=True)
            self._thread.start()
        else:
            self._poll = (job, replica)

    @classmethod
    def polling(cls, job: VertexJob, replica: str | None) -> _Tail:
        """No stream: each ``take`` waits, then lists what is new."""
        return cls(job, replica, stream=False)

    def _requests(self) -> Iterator[Any]:
        from google.cloud.logging_v2.types import TailLogEntriesRequest

        yield TailLogEntriesRequest(**self._request)
        self._stop.wait()  # keep the request side open until we close the stream

    def _run(self) -> None:
        try:
            self._call = self._client.tail_log_entries(requests=self._requests())
            for response in self._call:
                for entry in response.entries:
                    self.queue.put(entry)
        except Exception as exc:
            if not self._stop.is_set():
                self.error = exc

    def take(self, *, timeout: float) -> list[Any]:
        """The entries that arrived, waiting up to ``timeout`` seconds for the first."""
        if self._thread is None:
            time.sleep(timeout)
            job, replica = self._poll
            return job._entries(replica, None)
        entries: list[Any] = []
        try:
            entries.append(self.queue.get(timeout=timeout) if timeout > 0 else self.queue.get_nowait())
            while True:
                entries.append(self.queue.get_nowait())
        except queue.Empty:
            pass
        return entries

    def close(self) -> None:
        self._stop.set()
        cancel = getattr(self._call, "cancel", None)
        if cancel is not None:
            cancel()
        if self._thread is not None:
            self._thread.join(timeout=10)


def _task_name(replica: str) -> str:
    from tfcloud.backends.vertex_request import POOL_ORDER

    role, _, index = replica.partition("-")
    for number, pool_role in enumerate(POOL_ORDER):
        if pool_role.value == role:
            return f"workerpool{number}-{index or 0}"
    return replica


def _timestamp(value: Any) -> float | None:
    """Seconds since the epoch from a protobuf Timestamp or a datetime (the clients return either)."""
    if value is None:
        return None
    if hasattr(value, "ToDatetime"):
        value = value.ToDatetime(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.datetime):
        return value.timestamp()
    return None


def _iso(value: Any) -> str | None:
    if hasattr(value, "ToDatetime"):
        value = value.ToDatetime(tzinfo=dt.timezone.utc) if (value.seconds or value.nanos) else None
    if not value:
        return None
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
    return str(value)


def _log_line(entry: Any) -> LogLine | None:
    text = entry.text_payload
    if not text and entry.json_payload:
        payload = dict(entry.json_payload)
        text = str(payload.get("message", json.dumps(payload, default=str)))
    if not text:
        return None
    task = entry.resource.labels.get("task_name", "") if entry.resource else ""
    severity = int(entry.severity)  # LogSeverity: ERROR is 500, and above it CRITICAL, ALERT, EMERGENCY
    stream = "stderr" if severity >= 500 else "stdout"
    stamp = _timestamp(entry.timestamp)
    return LogLine(replica=replica_name(task) if task else "job", text=text.rstrip("\n"), stream=stream,
                   timestamp=stamp)
