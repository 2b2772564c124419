"""Every fault the emulator can inject, on every call the Cloud Build builder makes: exactly one build, and the
right outcome — the build's own when it can be learned, :class:`OutcomeUnknownError` (exit 3) when it cannot.

The emulator runs here without a Docker engine, so every build fails at its Docker step: a failure that comes
from the build itself (``BuildError`` naming the step), told apart from one that comes from the API.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("google.cloud.devtools.cloudbuild_v1", reason="the Cloud Build tests need tfcloud[cloud]")

from tfcloud.errors import BuildError, OutcomeUnknownError
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.staging.cloudbuild import CloudBuildBuilder

pytestmark = pytest.mark.emulator

PROJECT = "tfcloud-build-faults"
CALL_TIMEOUT = 1.0
LATE = 2.0
SLOW = 0.3
FAST = RetryPolicy(initial=0.02, maximum=0.1, deadline=10, call_timeout=CALL_TIMEOUT, create_timeout=CALL_TIMEOUT)
IMPATIENT = RetryPolicy(initial=0.02, maximum=0.1, deadline=1, call_timeout=CALL_TIMEOUT,
                        create_timeout=CALL_TIMEOUT)
FOREVER = 10_000

Arm = Callable[[Any, str], None]
FAULTS: dict[str, Arm] = {
    "unavailable": lambda faults, method: faults.fail(method, code="UNAVAILABLE", times=2),
    "deadline-exceeded": lambda faults, method: faults.fail(method, code="DEADLINE_EXCEEDED", times=2),
    "lost-answer": lambda faults, method: faults.fail(method, code="UNAVAILABLE", after=True),
    "lost-answer-deadline": lambda faults, method: faults.fail(method, code="DEADLINE_EXCEEDED", after=True),
    "late-answer": lambda faults, method: faults.late(method, seconds=LATE),
    "slow-answer": lambda faults, method: faults.delay(method, seconds=SLOW, times=1),  # within the deadline
}
CALLS = ("CreateBuild", "GetBuild", "ListBuilds", "ListLogEntries")
STEP = 'Step #0 - "build"'


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    with Emulator(project=PROJECT, storage=False) as emu:  # no Docker engine: Docker steps fail
        yield emu


@pytest.fixture
def faults(emulator: Any) -> Iterator[Any]:
    yield emulator.faults
    emulator.faults.clear()


def _builder(emulator: Any, policy: RetryPolicy = FAST) -> CloudBuildBuilder:
    return CloudBuildBuilder(project=PROJECT, bucket="unused", endpoint=emulator.endpoint, poll_interval=0.05,
                             retry=policy)


def _body(name: str) -> dict[str, Any]:
    return {"steps": [{"id": "build", "name": "gcr.io/cloud-builders/docker", "args": ["version"]}],
            "tags": ["tfcloud", name]}


def _builds(emulator: Any, name: str) -> list[Any]:
    """The builds tagged ``name``, asked with faults disarmed."""
    emulator.faults.clear()
    client = emulator.build_client()
    try:
        return list(client.list_builds(project_id=PROJECT, filter=f'tags="{name}"'))
    finally:
        client.transport.close()


def _name() -> str:
    return f"faults-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("method", CALLS)
def test_a_fault_is_survived_with_one_build_and_its_own_outcome(emulator: Any, faults: Any, method: str,
                                                                fault: str) -> None:
    if method == "ListBuilds":  # it is called when a create went wrong: lose the create's answer too
        faults.fail("CreateBuild", code="UNAVAILABLE", after=True)
    FAULTS[fault](faults, method)
    name = _name()
    with _builder(emulator) as builder, pytest.raises(BuildError) as err:
        builder.run_build(_body(name), "localhost:5000/x:1")
    assert err.value.exit_code == 1
    assert err.value.step == STEP  # the build's own failure, not the API's
    assert "No Docker engine is configured on the emulator" in str(err.value)
    assert len(_builds(emulator, name)) == 1


def test_create_that_keeps_failing_starts_no_build_and_says_so(emulator: Any, faults: Any) -> None:
    faults.fail("CreateBuild", code="UNAVAILABLE", times=FOREVER)
    name = _name()
    with _builder(emulator, IMPATIENT) as builder, pytest.raises(BuildError) as err:
        builder.run_build(_body(name), "localhost:5000/x:1")
    assert err.value.step == "submit" and err.value.exit_code == 1
    assert str(err.value).startswith("Starting the Cloud Build of localhost:5000/x:1 failed: Cloud Build did not "
                                     "answer (UNAVAILABLE)")
    assert str(err.value).endswith("and no build was started. Try again later.")
    assert _builds(emulator, name) == []


def test_create_whose_answers_are_always_lost_starts_one_build(emulator: Any, faults: Any) -> None:
    faults.fail("CreateBuild", code="DEADLINE_EXCEEDED", times=FOREVER, after=True)
    name = _name()
    with _builder(emulator) as builder, pytest.raises(BuildError) as err:
        builder.run_build(_body(name), "localhost:5000/x:1")
    assert err.value.step == STEP
    assert len(_builds(emulator, name)) == 1


def test_create_that_cannot_be_confirmed_is_an_unknown_outcome(emulator: Any, faults: Any) -> None:
    faults.fail("CreateBuild", code="UNAVAILABLE", times=FOREVER, after=True)
    faults.fail("ListBuilds", code="UNAVAILABLE", times=FOREVER)
    name = _name()
    with _builder(emulator, IMPATIENT) as builder, pytest.raises(OutcomeUnknownError) as err:
        builder.run_build(_body(name), "localhost:5000/x:1")
    assert err.value.exit_code == 3
    assert err.value.message.endswith("a build may have been started.")
    assert str(err.value.hint).startswith(f"Look for it: gcloud builds list --project {PROJECT} --filter "
                                          "tags=tfcloud-submission-")
    (build,) = _builds(emulator, name)
    assert str(err.value.hint).rsplit("=", 1)[1] in build.tags


def test_a_build_whose_state_cannot_be_read_may_still_be_running(emulator: Any, faults: Any) -> None:
    faults.fail("GetBuild", code="UNAVAILABLE", times=FOREVER)
    name = _name()
    with _builder(emulator, IMPATIENT) as builder, pytest.raises(OutcomeUnknownError) as err:
        builder.run_build(_body(name), "localhost:5000/x:1")
    assert err.value.exit_code == 3
    (build,) = _builds(emulator, name)
    assert err.value.message.startswith(f"Reading Cloud Build {build.id}: Cloud Build did not answer (UNAVAILABLE")
    assert err.value.message.endswith("The build of localhost:5000/x:1 may still be running.")
    assert err.value.hint == f"Follow it: gcloud builds log --stream {build.id} --project {PROJECT}"


def test_logs_that_keep_failing_do_not_change_the_outcome(emulator: Any, faults: Any) -> None:
    faults.fail("ListLogEntries", code="UNAVAILABLE", times=FOREVER)
    name = _name()
    with _builder(emulator, IMPATIENT) as builder, pytest.raises(BuildError) as err:
        builder.run_build(_body(name), "localhost:5000/x:1")
    assert err.value.step == STEP and err.value.log_tail == ""
    assert len(_builds(emulator, name)) == 1
