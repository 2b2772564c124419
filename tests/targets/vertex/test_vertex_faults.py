"""Every fault the emulator can inject, on every call the Vertex AI backend makes: exactly one job, and the right
outcome (exit code) — the job's own when it can be learned, 3 ("outcome unknown") when it cannot.

Real ``aiplatform_v1`` and ``logging_v2`` clients against the emulator; the backoff is made small through a
:class:`~tfcloud.google.cloud.gcloud.RetryPolicy` (and ``TFCLOUD_RETRY_DEADLINE`` for the CLI), nothing is patched.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI tests need tfcloud[cloud]")

from tfcloud.errors import OutcomeUnknownError, SubmitError
from tfcloud.flow.settings import Settings
from tfcloud.flow.validate import build_spec
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.vertex.backend import VertexBackend, VertexJob
from tfcloud.job.artifacts import ImageRef, PreparedJob
from tfcloud.job.states import JobState
from tfcloud.targets import VertexTarget

pytestmark = pytest.mark.emulator

PROJECT = "tfcloud-faults"
IMAGE = "localhost:5000/tfcloud/faults:ok"
SLOW_IMAGE = "localhost:5000/tfcloud/faults:slow"
FAIL_IMAGE = "localhost:5000/tfcloud/faults:fail"
SCRIPT = """
import time
for i in range(3):
    print("step", i, flush=True)
    time.sleep(0.2)
print("the last line", flush=True)
"""
#: Runs until the test lets it go (:func:`_let_go`): a file named after its job appears in ``{gates}``.
SLOW_SCRIPT = """
import os, pathlib, time
print("started", flush=True)
go, deadline = pathlib.Path({gates!r}) / os.environ["CLOUD_ML_JOB_ID"], time.monotonic() + 120
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.02)
print("the last line", flush=True)
"""
#: A call's own deadline in these tests, and how late a "late" answer comes (after the work was done).
CALL_TIMEOUT = 1.0
LATE = 2.0
SLOW = 0.3
FAST = RetryPolicy(initial=0.02, maximum=0.1, deadline=10, call_timeout=CALL_TIMEOUT, create_timeout=CALL_TIMEOUT)
#: Gives up quickly: for the faults that never stop.
IMPATIENT = RetryPolicy(initial=0.02, maximum=0.1, deadline=1, call_timeout=CALL_TIMEOUT,
                        create_timeout=CALL_TIMEOUT)
FOREVER = 10_000  # "times" for a fault that keeps failing

Arm = Callable[[Any, str], None]
#: The faults: each arms ``method`` on ``faults`` so that the next call(s) misbehave once or twice.
FAULTS: dict[str, Arm] = {
    "unavailable": lambda faults, method: faults.fail(method, code="UNAVAILABLE", times=2),
    "deadline-exceeded": lambda faults, method: faults.fail(method, code="DEADLINE_EXCEEDED", times=2),
    "lost-answer": lambda faults, method: faults.fail(method, code="UNAVAILABLE", after=True),
    "lost-answer-deadline": lambda faults, method: faults.fail(method, code="DEADLINE_EXCEEDED", after=True),
    "late-answer": lambda faults, method: faults.late(method, seconds=LATE),
    "slow-answer": lambda faults, method: faults.delay(method, seconds=SLOW, times=1),  # within the deadline
}
#: Calls made while submitting and following a job (ListCustomJobs: only after a create went wrong).
FOLLOWED_CALLS = ("CreateCustomJob", "GetCustomJob", "ListCustomJobs", "ListLogEntries", "TailLogEntries")


@pytest.fixture(scope="module")
def gates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where a SLOW_IMAGE job's chief looks for the file that lets it go (:func:`_let_go`)."""
    return tmp_path_factory.mktemp("gates")


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory, gates: Path) -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    root = tmp_path_factory.mktemp("faults")
    (root / "ok.py").write_text(SCRIPT)
    (root / "slow.py").write_text(SLOW_SCRIPT.format(gates=str(gates)))
    (root / "fail.py").write_text("raise SystemExit('loss is NaN')\n")
    entrypoints = {IMAGE: [sys.executable, str(root / "ok.py")], SLOW_IMAGE: [sys.executable, str(root / "slow.py")],
                   FAIL_IMAGE: [sys.executable, str(root / "fail.py")]}
    with Emulator(project=PROJECT, storage=False, entrypoints=entrypoints) as emu:
        yield emu


@pytest.fixture
def faults(emulator: Any) -> Iterator[Any]:
    yield emulator.faults
    emulator.faults.clear()


def _backend(emulator: Any, policy: RetryPolicy = FAST) -> VertexBackend:
    where = VertexTarget(project=PROJECT, region="us-central1", emulator_host=emulator.endpoint)
    return VertexBackend(settings=Settings(target="vertex"), target=where, retry=policy)


@pytest.fixture
def backend(emulator: Any) -> Iterator[VertexBackend]:
    backend = _backend(emulator)
    yield backend
    backend.clients.close()


def _submit(backend: VertexBackend, tmp_path: Path, name: str, image: str = IMAGE) -> VertexJob:
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    spec = build_spec(entry_point=str(script), target="vertex", chief_config="CPU", display_name=name,
                      distribution_strategy=None)
    launcher = tmp_path / "tfcloud_launcher.py"
    launcher.write_text("pass\n")
    return backend.submit(PreparedJob(spec=spec, workdir=tmp_path, launcher=launcher, script=script,
                                      image=ImageRef(uri=image)))


def _jobs_named(emulator: Any, name: str) -> list[Any]:
    """The jobs with display name ``name``, asked with faults disarmed (they are the server's)."""
    emulator.faults.clear()
    client = emulator.job_client()
    try:
        return [job for job in client.list_custom_jobs(parent=emulator.parent) if job.display_name == name]
    finally:
        client.transport.close()


def _wait_for_end(emulator: Any, name: str) -> Any:
    client = emulator.job_client()
    try:
        while True:
            (job,) = [j for j in client.list_custom_jobs(parent=emulator.parent) if j.display_name == name]
            if job.state.name in ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"):
                return job
            time.sleep(0.1)
    finally:
        client.transport.close()


def _let_go(gates: Path, job: VertexJob) -> None:
    """Ends a SLOW_IMAGE job's wait: its chief says its last line and exits."""
    (gates / job.job_id).touch()


def _name() -> str:
    return f"faults-{uuid.uuid4().hex[:8]}"


# --- one fault on one call: survived, one job, exit 0 ----------------------------------------------------------
@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("method", FOLLOWED_CALLS)
def test_a_fault_is_survived_with_one_job_and_the_right_outcome(
        emulator: Any, faults: Any, backend: VertexBackend, tmp_path: Path, method: str, fault: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.sdk import follow

    if method == "ListCustomJobs":  # it is called when a create went wrong: lose the create's answer too
        faults.fail("CreateCustomJob", code="UNAVAILABLE", after=True)
    FAULTS[fault](faults, method)
    name = _name()
    job = _submit(backend, tmp_path, name)
    assert follow(job) == 0
    out = capsys.readouterr().out
    assert "chief-0 | the last line" in out
    assert [line for line in out.splitlines() if "| step" in line] == [
        "chief-0 | step 0", "chief-0 | step 1", "chief-0 | step 2"]  # every line, none twice
    assert len(_jobs_named(emulator, name)) == 1


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_fault_on_cancel_is_survived(emulator: Any, faults: Any, backend: VertexBackend, tmp_path: Path,
                                       fault: str) -> None:
    faults.hold_queued()
    name = _name()
    job = _submit(backend, tmp_path, name)
    FAULTS[fault](faults, "CancelCustomJob")
    job.cancel()
    assert job.wait(timeout=60).state is JobState.CANCELLED
    assert len(_jobs_named(emulator, name)) == 1


# --- faults that never stop: the right outcome, never "failed" for a job that runs ------------------------------
def test_create_that_keeps_failing_makes_no_job_and_says_so(emulator: Any, faults: Any, tmp_path: Path) -> None:
    backend = _backend(emulator, IMPATIENT)
    faults.fail("CreateCustomJob", code="UNAVAILABLE", times=FOREVER)
    name = _name()
    with pytest.raises(SubmitError) as err:
        _submit(backend, tmp_path, name)
    assert err.value.exit_code == 1
    assert err.value.message.startswith("Creating the Vertex AI job failed: Vertex AI did not answer (UNAVAILABLE)")
    assert err.value.message.endswith("and no job was created. Try again later.")
    assert _jobs_named(emulator, name) == []
    backend.clients.close()


@pytest.mark.parametrize("code", ["UNAVAILABLE", "DEADLINE_EXCEEDED"])
def test_create_whose_answers_are_always_lost_makes_one_job(emulator: Any, faults: Any, backend: VertexBackend,
                                                           tmp_path: Path, code: str) -> None:
    faults.fail("CreateCustomJob", code=code, times=FOREVER, after=True)
    name = _name()
    job = _submit(backend, tmp_path, name)
    assert job.job.display_name == name
    assert len(_jobs_named(emulator, name)) == 1
    _wait_for_end(emulator, name)


def test_create_that_cannot_be_confirmed_is_an_unknown_outcome(emulator: Any, faults: Any, tmp_path: Path) -> None:
    backend = _backend(emulator, IMPATIENT)
    faults.fail("CreateCustomJob", code="UNAVAILABLE", times=FOREVER, after=True)  # made, never answered
    faults.fail("ListCustomJobs", code="UNAVAILABLE", times=FOREVER)  # and never found
    name = _name()
    with pytest.raises(OutcomeUnknownError) as err:
        _submit(backend, tmp_path, name)
    assert err.value.exit_code == 3
    assert err.value.message.startswith("Creating the Vertex AI job: Vertex AI did not answer (UNAVAILABLE)")
    assert err.value.message.endswith("a job may have been created.")
    assert str(err.value.hint).startswith("Look for it: tfcloud list --vertex --label tfcloud-submission=")
    (job,) = _jobs_named(emulator, name)  # it was made once, and only once
    label = str(err.value.hint).rsplit("=", 1)[1]
    assert job.labels["tfcloud-submission"] == label
    _wait_for_end(emulator, name)
    backend.clients.close()


@pytest.fixture
def cli_env(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", emulator.endpoint)
    monkeypatch.setenv("TFCLOUD_PROJECT", PROJECT)
    monkeypatch.setenv("TFCLOUD_TARGET", "vertex")
    monkeypatch.setenv("TFCLOUD_RETRY_DEADLINE", "1")


@pytest.mark.parametrize("code", ["UNAVAILABLE", "DEADLINE_EXCEEDED"])
def test_a_job_whose_state_cannot_be_read_may_still_be_running(emulator: Any, faults: Any, tmp_path: Path,
                                                              gates: Path, code: str) -> None:
    from tfcloud.sdk import follow

    backend = _backend(emulator, IMPATIENT)
    name = _name()
    job = _submit(backend, tmp_path, name, image=SLOW_IMAGE)
    faults.fail("GetCustomJob", code=code, times=FOREVER)
    with pytest.raises(OutcomeUnknownError) as err:
        follow(job)
    assert err.value.exit_code == 3
    assert err.value.message.startswith(f"Getting job {job.job_id}: Vertex AI did not answer ({code}: Injected")
    assert err.value.message.endswith(f"Job {job.job_id} may still be running.")
    assert err.value.hint == f"Follow it: tfcloud logs {job.job_id} -f\nIts state: tfcloud status {job.job_id}"
    faults.clear()
    _let_go(gates, job)
    assert job.wait(timeout=60).state is JobState.SUCCEEDED  # it was running all along, and succeeded
    assert len(_jobs_named(emulator, name)) == 1
    backend.clients.close()


def test_follow_when_vertex_stops_answering_exits_3_and_says_how_to_follow(
        emulator: Any, faults: Any, backend: VertexBackend, tmp_path: Path, cli_env: None, gates: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.cli import main

    job = _submit(backend, tmp_path, _name(), image=SLOW_IMAGE)
    faults.fail("GetCustomJob", code="UNAVAILABLE", times=FOREVER)
    assert main(["logs", job.job_id, "-f"]) == 3
    err = capsys.readouterr().err
    assert f"Error: Looking up job {job.job_id}: Vertex AI did not answer (UNAVAILABLE: Injected fault" in err
    assert f"Job {job.job_id} may still be running." in err
    assert f"Follow it: tfcloud logs {job.job_id} -f" in err
    assert "failed" not in err
    faults.clear()
    _let_go(gates, job)
    assert main(["logs", job.job_id, "-f"]) == 0
    assert "chief-0 | the last line" in capsys.readouterr().out


def test_status_list_cancel_and_logs_when_vertex_stops_answering_exit_3(
        emulator: Any, faults: Any, backend: VertexBackend, tmp_path: Path, cli_env: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.cli import main

    faults.hold_queued()
    job = _submit(backend, tmp_path, _name())
    faults.fail("GetCustomJob", code="UNAVAILABLE", times=FOREVER)
    assert main(["status", job.job_id]) == 3
    assert f"Follow it: tfcloud logs {job.job_id} -f" in capsys.readouterr().err
    faults.clear()
    faults.hold_queued()  # clear() released it

    faults.fail("ListCustomJobs", code="UNAVAILABLE", times=FOREVER)
    assert main(["list", "--vertex"]) == 3
    assert "Error: Listing Vertex AI jobs: Vertex AI did not answer (UNAVAILABLE" in capsys.readouterr().err
    faults.clear()
    faults.hold_queued()  # clear() released it

    faults.fail("CancelCustomJob", code="UNAVAILABLE", times=FOREVER)
    assert main(["cancel", job.job_id]) == 3
    err = capsys.readouterr().err
    assert f"The cancel may not have reached Vertex AI: job {job.job_id} may still be running." in err
    assert f"Cancel it: tfcloud cancel {job.job_id}" in err
    faults.clear()
    faults.hold_queued()
    assert backend.attach(job.job_id).status() is JobState.QUEUED  # not cancelled, and not "failed"

    faults.fail("ListLogEntries", code="UNAVAILABLE", times=FOREVER)
    assert main(["logs", job.job_id]) == 3
    assert f"Try again: tfcloud logs {job.job_id}" in capsys.readouterr().err
    faults.clear()
    faults.hold_queued()
    job.cancel()
    assert job.wait(timeout=60).state is JobState.CANCELLED


def test_logs_that_keep_failing_do_not_change_the_outcome(emulator: Any, faults: Any, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.sdk import follow

    backend = _backend(emulator, IMPATIENT)
    faults.fail("ListLogEntries", code="UNAVAILABLE", times=FOREVER)
    faults.fail("TailLogEntries", code="UNAVAILABLE", times=FOREVER)
    job = _submit(backend, tmp_path, _name())
    assert follow(job) == 0  # the job succeeded: its lines could not be read, its state could
    captured = capsys.readouterr()
    assert f"Job {job.job_id} succeeded." in captured.err
    assert f"Some lines may be missing; read them later: tfcloud logs {job.job_id}" in captured.out + captured.err
    faults.clear()
    assert [line.text for line in job.logs() if line.replica == "chief-0"][-1] == "the last line"
    backend.clients.close()


def test_a_failed_job_whose_logs_cannot_be_read_still_exits_1(emulator: Any, faults: Any, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.sdk import follow

    backend = _backend(emulator, IMPATIENT)
    faults.fail("ListLogEntries", code="UNAVAILABLE", times=FOREVER)
    faults.fail("TailLogEntries", code="UNAVAILABLE", times=FOREVER)
    job = _submit(backend, tmp_path, _name(), image=FAIL_IMAGE)
    assert follow(job) == 1  # its state could be read: it failed
    err = capsys.readouterr().err
    assert f"Job {job.job_id} failed: The replica workerpool0-0 exited with a non-zero status of 1." in err
    assert "(The last lines of chief-0 could not be read: Reading the logs of job" in err
    backend.clients.close()


def test_a_log_stream_that_keeps_breaking_is_replaced_by_polling(emulator: Any, faults: Any,
                                                                 backend: VertexBackend, tmp_path: Path) -> None:
    faults.fail("TailLogEntries", code="UNAVAILABLE", times=FOREVER)
    job = _submit(backend, tmp_path, _name())
    lines = [line.text for line in job.logs(follow=True) if line.replica == "chief-0"]
    assert lines == ["step 0", "step 1", "step 2", "the last line"]


def test_a_bad_retry_deadline_is_bad_input(cli_env: None, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.cli import main

    monkeypatch.setenv("TFCLOUD_RETRY_DEADLINE", "soon")
    assert main(["status", "123"]) == 2
    assert capsys.readouterr().err.startswith(
        "Error: Invalid `TFCLOUD_RETRY_DEADLINE`: expected a number of seconds > 0, received 'soon'.")
