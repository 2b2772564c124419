"""The SDK's front door: typed run() over submit/plan/attach/list_jobs, what vs where, tensorflow-cloud's
drop-in arguments and result keys, and one failure format."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

import tfcloud
from tfcloud import sdk
from tfcloud.errors import JobFailedError, ValidationError
from tfcloud.flow.validate import build_job
from tfcloud.targets import LocalTarget, VertexTarget


def test_run_has_typed_keyword_options(script: Path) -> None:
    params = inspect.signature(tfcloud.run).parameters
    for name in ("dry_run", "docker_base_image", "docker_image_bucket_name"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[name].annotation != "Any"
    # every other keyword is an option, typed by JobOptions: the job's own and each built-in target's, no more
    from tfcloud import targets
    from tfcloud.api import NEW_OPTIONS, known_options
    from tfcloud.sdk import JobOptions

    target_options = {o.name for cls in targets.builtin_targets() for o in cls.options}
    assert set(known_options()) - {"dry_run"} <= set(JobOptions.__annotations__)
    assert set(JobOptions.__annotations__) == ({*NEW_OPTIONS, *target_options} - {"dry_run"}) | {
        "requirements_txt", "docker_config", "distribution_strategy", "chief_config", "worker_config",
        "worker_count", "entry_point_args", "job_labels"}
    positional = [p.name for p in params.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == ["entry_point", "requirements_txt", "docker_config", "distribution_strategy",
                          "chief_config", "worker_config", "worker_count", "entry_point_args", "stream_logs",
                          "job_labels", "service_account"]  # tensorflow-cloud's order


def test_the_face_exports_the_sdk() -> None:
    for name in ("submit", "build", "attach", "list_jobs", "Job", "JobState", "JobInfo", "JobHandle"):
        assert name in tfcloud.__all__ and hasattr(tfcloud, name)


def test_spec_says_what_and_its_target_says_where(script: Path) -> None:
    spec, target = build_job(entry_point=str(script), target="vertex", project="my-project", region="europe-west4",
                             spot=True, timeout=3600, network="projects/1/global/networks/vpc", worker_count=1)
    assert target == VertexTarget(project="my-project", region="europe-west4", spot=True, timeout_s=3600,
                                       network="projects/1/global/networks/vpc")
    assert not any(hasattr(spec, name) for name in ("dry_run", "stream_logs", "spot", "target"))
    assert build_job(entry_point=str(script))[1] == LocalTarget()


def test_docker_base_image_and_bucket_fill_the_docker_config(script: Path) -> None:
    plan = tfcloud.run(str(script), target="vertex", dry_run=True, docker_base_image="python:3.11-slim",
                       docker_image_bucket_name="my-bucket")
    assert plan.spec.docker_config == tfcloud.DockerConfig(parent_image="python:3.11-slim",
                                                           image_build_bucket="my-bucket")
    # as in tensorflow-cloud, the DockerConfig's own values win
    plan = tfcloud.run(str(script), target="vertex", dry_run=True, docker_base_image="python:3.11-slim",
                       docker_config=tfcloud.DockerConfig(parent_image="mine:1"))
    assert plan.spec.docker_config.parent_image == "mine:1"


def test_docker_base_image_is_checked(script: Path) -> None:
    with pytest.raises(ValidationError) as err:
        tfcloud.run(str(script), dry_run=True, docker_base_image=3)  # type: ignore[call-overload]
    assert str(err.value) == "Invalid `docker_base_image`: expected a non-empty string, received 3."


def test_call_options_are_checked_by_run(script: Path) -> None:
    with pytest.raises(ValidationError) as err:
        tfcloud.run(str(script), dry_run="yes")  # type: ignore[call-overload]
    assert str(err.value) == "Invalid `dry_run`: expected a bool, received 'yes'."


def test_run_returns_a_job_with_tensorflow_clouds_result_keys_and_the_sdk_finds_it_again(tmp_path: Path) -> None:
    (tmp_path / "hello.py").write_text("print('hello')\n")
    job = tfcloud.run(str(tmp_path / "hello.py"), distribution_strategy=None)
    assert isinstance(job, tfcloud.Job)
    assert job["job_id"] == job.job_id and job["docker_image"] is None  # a local job runs no image
    with pytest.raises(KeyError):
        job["nope"]
    info = job.wait(60)
    assert info.state is tfcloud.JobState.SUCCEEDED and info.exit_code == 0 and info.target == "local"
    assert [r.name for r in info.replicas] == ["chief-0"]
    again = tfcloud.attach(job.job_id)
    assert again.info().state is tfcloud.JobState.SUCCEEDED
    assert [i.job_id for i in tfcloud.list_jobs(target="local")] == [job.job_id]
    assert tfcloud.list_jobs(target="local", state="failed") == []
    data = json.loads(json.dumps(info.to_dict()))
    assert data["state"] == "succeeded" and data["replicas"] == [
        {"name": "chief-0", "state": "succeeded", "exit_code": 0, "machine": None, "web_access_uri": None}]


def test_a_failing_job_with_stream_logs_raises_job_failed_error(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.py").write_text("print('about to fail')\nraise SystemExit(3)\n")
    with pytest.raises(JobFailedError) as err:
        tfcloud.run(str(tmp_path / "bad.py"), distribution_strategy=None, stream_logs=True)
    assert err.value.exit_code == 3
    assert err.value.summary.startswith("Job local-bad-") and " failed: " in err.value.summary
    assert "chief-0 | about to fail" in err.value.log_tail
    out, err = capsys.readouterr()
    assert "chief-0 | about to fail" in out
    # As `tfcloud submit` does after following a job: how long each stage took, on one line.
    assert re.search(r"^Stages: submit \d+\.\ds · queued \d+\.\ds · run \d+\.\ds \(total \d+\.\ds\)$", err, re.M), err


def test_list_jobs_rejects_an_unknown_state() -> None:
    with pytest.raises(ValidationError, match="expected one of queued, provisioning"):
        sdk.list_jobs(target="local", state="sleeping")
