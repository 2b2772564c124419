"""The Google boundary: one table from Google's errors to tfcloud's, the retry policy, clients that close."""

from __future__ import annotations

import pytest

pytest.importorskip("google.api_core", reason="the Google boundary needs tfcloud[cloud]")

from google.api_core import exceptions as gexc

from tfcloud.errors import (
    BuildError,
    ConfigurationError,
    JobNotFoundError,
    OutcomeUnknownError,
    SubmitError,
    ValidationError,
)
from tfcloud.google.cloud.gcloud import TRANSIENT, Clients, RetryPolicy, call, translate


@pytest.mark.parametrize(("exc", "kind", "exit_code", "message"), [
    (gexc.NotFound("no such job"), JobNotFoundError, 2, "Getting job 1: not found (no such job)."),
    (gexc.PermissionDenied("nope"), ConfigurationError, 2, "Getting job 1: permission denied (nope)."),
    (gexc.Unauthenticated("who"), ConfigurationError, 2, "Getting job 1: unauthenticated (who)."),
    (gexc.InvalidArgument("bad pool"), SubmitError, 1, "Getting job 1: rejected by Vertex AI: bad pool"),
    (gexc.FailedPrecondition("ended"), SubmitError, 1, "Getting job 1: rejected by Vertex AI: ended"),
    (gexc.ServiceUnavailable("down"), OutcomeUnknownError, 3,
     "Getting job 1: Vertex AI did not answer (UNAVAILABLE: down); gave up after 60 s. It may run."),
    (gexc.DeadlineExceeded("slow"), OutcomeUnknownError, 3,
     "Getting job 1: Vertex AI did not answer (DEADLINE_EXCEEDED: slow); gave up after 60 s. It may run."),
    (gexc.DataLoss("gone"), SubmitError, 1, "Getting job 1: DATA_LOSS: gone"),
])
def test_one_table_translates_google_errors(exc: Exception, kind: type, exit_code: int, message: str) -> None:
    error = translate(exc, "Getting job 1", unknown="It may run.", unknown_hint="tfcloud logs 1 -f")
    assert type(error) is kind
    assert error.exit_code == exit_code
    assert error.message == message
    if kind is ConfigurationError:
        assert str(error.hint).startswith("Log in with `gcloud auth application-default login`")
    if kind is OutcomeUnknownError:
        assert error.hint == "tfcloud logs 1 -f"


def test_a_refusal_is_the_callers_own_error() -> None:
    error = translate(gexc.InvalidArgument("no steps"), "Starting the build", service="Cloud Build",
                      failed=BuildError)
    assert isinstance(error, BuildError) and error.exit_code == 1
    assert error.message == "Starting the build: rejected by Cloud Build: no steps"


def test_every_transient_code_is_an_unknown_outcome() -> None:
    assert {"UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "RESOURCE_EXHAUSTED", "ABORTED"} == TRANSIENT
    for exc in (gexc.ServiceUnavailable("x"), gexc.DeadlineExceeded("x"), gexc.InternalServerError("x"),
                gexc.ResourceExhausted("x"), gexc.Aborted("x")):
        assert isinstance(translate(exc, "x"), OutcomeUnknownError)


def test_call_retries_transient_errors_then_gives_up_with_the_last_one() -> None:
    policy = RetryPolicy(initial=0.001, maximum=0.002, deadline=0.2)
    answers: list[Exception | str] = [gexc.ServiceUnavailable("a"), gexc.Aborted("b"), "done"]

    def flaky() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert call(flaky, what="x", policy=policy) == "done"

    def down() -> str:
        raise gexc.ServiceUnavailable("still down")

    with pytest.raises(OutcomeUnknownError) as err:
        call(down, what="Listing", policy=policy)
    assert err.value.message == "Listing: Vertex AI did not answer (UNAVAILABLE: still down); gave up after 0.2 s."
    assert isinstance(err.value.__cause__, gexc.ServiceUnavailable)

    tries = []

    def refused() -> str:
        tries.append(1)
        raise gexc.InvalidArgument("no")

    with pytest.raises(SubmitError):
        call(refused, what="x", policy=policy)
    assert len(tries) == 1  # not retried


def test_retry_deadline_setting() -> None:
    assert RetryPolicy.from_setting(None) == RetryPolicy()
    assert RetryPolicy.from_setting("5").deadline == 5 and RetryPolicy.from_setting("5").call_timeout == 5
    for bad in ("soon", "0", "-1"):
        with pytest.raises(ValidationError, match="Invalid `retry_deadline`: expected a number of seconds > 0"):
            RetryPolicy.from_setting(bad)
    with pytest.raises(ValidationError, match=r"Invalid `RetryPolicy.deadline`"):
        RetryPolicy(deadline=0)


def test_clients_close_their_channels() -> None:
    pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    from tfcloud.emulator import Emulator

    with Emulator(project="gcloud-test", storage=False) as emulator:
        clients = Clients(endpoint=emulator.endpoint)
        jobs, logging, builds = clients.jobs(), clients.logging(), clients.builds()
        assert clients.jobs() is jobs  # made once
        assert clients.opened == ("jobs", "logging", "builds")
        assert list(jobs.list_custom_jobs(parent=emulator.parent)) == []
        clients.close()
        with pytest.raises(ValueError, match="closed channel"):
            list(jobs.list_custom_jobs(parent=emulator.parent))
        with pytest.raises(ValueError, match="closed channel"):
            list(logging.list_log_entries(request={"resource_names": ["projects/gcloud-test"]}, retry=None))
        with pytest.raises(ValueError, match="closed channel"):
            builds.get_build(project_id="gcloud-test", id="1", retry=None)
        assert clients.opened == ()
        assert clients.jobs() is not jobs  # a new one on the next use
        clients.close()
