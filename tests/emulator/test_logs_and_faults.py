"""Cloud Logging and fault injection on the emulator, through the real ``logging_v2`` client."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from google.api import monitored_resource_pb2
from google.api_core import exceptions
from google.cloud import aiplatform_v1 as vertex
from google.cloud.logging_v2.types import (
    ListLogEntriesRequest,
    LogEntry,
    TailLogEntriesRequest,
    WriteLogEntriesRequest,
)

from tests.emulator.test_jobs import custom_job, follow, job_id, pool

pytestmark = pytest.mark.emulator


def write(logs: Any, project: str, log: str, *texts: str, severity: str = "INFO", **labels: str) -> None:
    logs.write_log_entries(request=WriteLogEntriesRequest(
        log_name=f"projects/{project}/logs/{log}",
        resource=monitored_resource_pb2.MonitoredResource(type="global", labels={"project_id": project}),
        labels=labels,
        entries=[LogEntry(text_payload=text, severity=severity) for text in texts]))


def listed(logs: Any, project: str, expression: str, **request: Any) -> list[str]:
    return [entry.text_payload for entry in logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{project}"], filter=expression, **request))]


def test_write_then_list_with_filters_order_and_paging(emulator: Any, logs: Any) -> None:
    project = "logs-project"
    write(logs, project, "app", *(f"line {i}" for i in range(7)), run="one")
    write(logs, project, "app", "bad thing", severity="ERROR", run="one")
    write(logs, project, "other", "elsewhere")

    assert listed(logs, project, 'logName="projects/logs-project/logs/app" AND labels.run="one"') == [
        *(f"line {i}" for i in range(7)), "bad thing"]
    assert listed(logs, project, "severity>=ERROR") == ["bad thing"]
    assert listed(logs, project, 'logName:"other" OR textPayload:"line 3"') == ["line 3", "elsewhere"]
    assert listed(logs, project, '"thing"') == ["bad thing"]
    assert listed(logs, project, 'labels.run="one"', order_by="timestamp desc")[:2] == ["bad thing", "line 6"]
    pages = logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{project}"], filter='labels.run="one"', page_size=3)).pages
    assert [len(page.entries) for page in pages] == [3, 3, 2]
    assert listed(logs, "another-project", "") == []


def test_each_list_answer_is_counted_with_what_it_served(emulator: Any, logs: Any) -> None:
    project = "counted-project"
    write(logs, project, "app", *(f"line {i}" for i in range(5)))
    stamps = [entry.timestamp for entry in logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{project}"], filter="", page_size=10))]
    before = len(emulator.log_store.reads)
    first = next(iter(logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{project}"], order_by="timestamp desc", page_size=2)).pages))
    assert [entry.text_payload for entry in first.entries] == ["line 4", "line 3"] and first.next_page_token
    since = stamps[3].isoformat().replace("+00:00", "Z")
    assert listed(logs, project, f'timestamp>="{since}"') == ["line 3", "line 4"]
    reads = list(emulator.log_store.reads)[before:]
    assert [(r.order_by, r.page_size, r.served) for r in reads] == [("timestamp desc", 2, 2), ("", 0, 2)]
    assert reads[1].filter == f'timestamp>="{since}"'


def test_invalid_logging_requests(emulator: Any, logs: Any) -> None:
    with pytest.raises(exceptions.InvalidArgument):
        logs.list_log_entries(request=ListLogEntriesRequest(resource_names=[], filter=""))
    with pytest.raises(exceptions.InvalidArgument):
        listed(logs, "p", "severity>=")
    with pytest.raises(exceptions.InvalidArgument):
        listed(logs, "p", "", order_by="insertId")
    with pytest.raises(exceptions.InvalidArgument):
        logs.write_log_entries(request=WriteLogEntriesRequest(entries=[LogEntry(text_payload="no log name")]))


class Tail:
    """Follow matching entries through ``tail_log_entries`` in a thread; ``close()`` cancels the stream. Returns
    once the emulator's ``store`` has the stream's subscription (entries written from then on reach it)."""

    def __init__(self, logs: Any, project: str, expression: str, *, store: Any) -> None:
        self.seen: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._done = threading.Event()

        def requests() -> Iterator[TailLogEntriesRequest]:
            yield TailLogEntriesRequest(resource_names=[f"projects/{project}"], filter=expression)
            self._done.wait(120)

        self._requests = requests
        self._logs = logs
        self._responses: Any = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        before = store.subscriptions
        self._thread.start()
        deadline = time.monotonic() + 60  # the server subscribes once it has read the first request
        while store.subscriptions == before and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert store.subscriptions > before, "the tail did not subscribe"

    def _run(self) -> None:
        try:
            # The client waits for the first response before it returns (api_core prefetches it).
            self._responses = self._logs.tail_log_entries(requests=self._requests())
            for response in self._responses:
                for entry in response.entries:
                    self.seen.put(entry.text_payload)
        except exceptions.Cancelled:
            pass

    def close(self) -> None:
        self._done.set()
        if self._responses is not None:
            self._responses.cancel()
        self._thread.join(10)
        assert not self._thread.is_alive()


def drain(seen: queue.SimpleQueue[str], count: int, timeout: float = 30) -> list[str]:
    texts: list[str] = []
    deadline = time.monotonic() + timeout
    while len(texts) < count and time.monotonic() < deadline:
        try:
            texts.append(seen.get(timeout=0.2))
        except queue.Empty:
            continue
    return texts


def test_tail_streams_new_matching_entries(emulator: Any, logs: Any) -> None:
    follower = Tail(logs, "tail-project", 'labels.k="v"', store=emulator.log_store)
    try:
        write(logs, "tail-project", "app", "skip me", k="other")
        write(logs, "tail-project", "app", "first", "second", k="v")
        write(logs, "tail-project", "app", "third", k="v")
        assert drain(follower.seen, 3) == ["first", "second", "third"]
    finally:
        follower.close()


def test_replica_output_is_logged_as_vertex_labels_it(emulator: Any, jobs: Any, logs: Any) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool("import sys; print('to stdout'); print('to stderr', file=sys.stderr)"),
        pool("print('worker says hi')")))
    job = job_id(created)
    vertex_filter = f'resource.type="ml_job" AND resource.labels.job_id="{job}"'
    follower = Tail(logs, emulator.project, vertex_filter + ' AND resource.labels.task_name!="service"',
                    store=emulator.log_store)
    try:
        finished, _ = follow(jobs, created.name)
        assert finished.state.name == "JOB_STATE_SUCCEEDED"
        assert sorted(drain(follower.seen, 3)) == ["to stderr", "to stdout", "worker says hi"]
    finally:
        follower.close()

    entries = list(logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{emulator.project}"], filter=vertex_filter)))
    by_text = {entry.text_payload: entry for entry in entries}
    out, err = by_text["to stdout"], by_text["to stderr"]
    assert out.log_name == f"projects/{emulator.project}/logs/workerpool0-0"
    assert dict(out.resource.labels) == {"job_id": job, "task_name": "workerpool0-0", "project_id": emulator.project}
    assert (out.severity, err.severity) == (200, 500)  # INFO, ERROR
    assert by_text["worker says hi"].resource.labels["task_name"] == "workerpool1-0"
    assert "Job completed successfully." in by_text


def test_injected_call_failures_and_latency(emulator: Any, jobs: Any) -> None:
    name = f"{emulator.parent}/customJobs/1"
    emulator.faults.fail("GetCustomJob", code="UNAVAILABLE", times=2)
    for _ in range(2):
        with pytest.raises(exceptions.ServiceUnavailable, match="Injected fault"):
            jobs.get_custom_job(name=name, retry=None)
    with pytest.raises(exceptions.NotFound):
        jobs.get_custom_job(name=name, retry=None)

    emulator.faults.fail("/google.cloud.aiplatform.v1.JobService/CreateCustomJob", code="RESOURCE_EXHAUSTED",
                         message="Quota exceeded")
    with pytest.raises(exceptions.ResourceExhausted, match="Quota exceeded"):
        jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("1")), retry=None)

    emulator.faults.delay("ListCustomJobs", seconds=0.4, times=1)
    started = time.monotonic()
    jobs.list_custom_jobs(parent=emulator.parent)
    assert time.monotonic() - started >= 0.4  # a lower bound: a loaded machine only adds to it
    # `times=1` delays the next call only. Shown with deadlines rather than a stopwatch: a delay of 5 s outlasts a
    # 0.2 s deadline, while an undelayed call answers within 4 s on a loaded machine and a delayed one cannot.
    emulator.faults.delay("ListCustomJobs", seconds=5, times=1)
    with pytest.raises(exceptions.DeadlineExceeded):
        jobs.list_custom_jobs(parent=emulator.parent, timeout=0.2, retry=None)
    jobs.list_custom_jobs(parent=emulator.parent, timeout=4, retry=None)


def test_a_late_answer_comes_after_the_work(emulator: Any, jobs: Any) -> None:
    emulator.faults.late("CreateCustomJob", seconds=1.5)
    with pytest.raises(exceptions.DeadlineExceeded):
        jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("1"), name="late-one"),
                               retry=None, timeout=0.3)
    made = [job for job in jobs.list_custom_jobs(parent=emulator.parent) if job.display_name == "late-one"]
    assert len(made) == 1  # the job exists although its creator saw DEADLINE_EXCEEDED
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("1")), timeout=5)
    assert created.name  # once only: the next call answers at once
    for job in (made[0], created):
        assert follow(jobs, job.name)[0].state.name == "JOB_STATE_SUCCEEDED"


def test_injected_replica_exit(emulator: Any, jobs: Any) -> None:
    emulator.faults.fail_replica("workerpool1-1", exit_code=7, job="fault-target")
    other = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("1"), pool("1", 2)))
    target = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        pool("import time; time.sleep(60)"), pool("import time; time.sleep(60)", 2), name="fault-target"))
    assert follow(jobs, other.name)[0].state.name == "JOB_STATE_SUCCEEDED"
    finished, _ = follow(jobs, target.name)
    assert finished.state.name == "JOB_STATE_FAILED"
    assert finished.error.message.startswith("The replica workerpool1-1 exited with a non-zero status of 7.")


def test_held_jobs_stay_queued_until_released(emulator: Any, jobs: Any) -> None:
    emulator.faults.hold_queued()
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("1")))
    time.sleep(0.8)
    assert jobs.get_custom_job(name=created.name).state == vertex.JobState.JOB_STATE_QUEUED
    emulator.faults.release_queued()
    assert follow(jobs, created.name)[0].state.name == "JOB_STATE_SUCCEEDED"


def test_a_get_can_be_answered_once_its_job_ended(emulator: Any, jobs: Any) -> None:
    """``answer_once_ended``: what lets a client with a fixed 5 s poll (the Vertex AI SDK) see the end at once."""
    emulator.faults.hold_queued()
    emulator.faults.answer_once_ended("GetCustomJob", within=0.3)
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool("1")))
    # held in QUEUED: the answer waits `within` at most, then says how the job is
    assert jobs.get_custom_job(name=created.name).state == vertex.JobState.JOB_STATE_QUEUED
    emulator.faults.answer_once_ended("GetCustomJob", within=120)
    emulator.faults.release_queued()
    assert jobs.get_custom_job(name=created.name).state == vertex.JobState.JOB_STATE_SUCCEEDED  # the first read


def test_invalid_fault_arguments(emulator: Any) -> None:
    from tfcloud.errors import ValidationError

    with pytest.raises(ValidationError, match="Invalid `code`"):
        emulator.faults.fail("GetCustomJob", code="NOPE")
    with pytest.raises(ValidationError, match="Invalid `exit_code`"):
        emulator.faults.fail_replica("workerpool0-0", exit_code=0)
