"""Where is one value on every verb (tfcloud/flow/where.py): the SDK's job functions take the target as submit does
(a name or a value, its options as keywords or ``target_options``), a JOB finds its target by its id, a target
given beside a JOB must own it, and the plan shows a target option's value as the target holds it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tfcloud
import tfcloud.targets as targets
from tfcloud import sdk
from tfcloud.cli import main
from tfcloud.errors import JobNotFoundError, UnsupportedOptionError, ValidationError


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("print('ok')\n")
    return path


def test_a_job_id_finds_its_target_through_the_registry() -> None:
    assert targets.for_job_id("local-train-20260101-120000-ab12").name == "local"
    assert targets.for_job_id("ray-train-20260101-120000-ab12").name == "ray"
    assert targets.for_job_id("1234").name == "vertex"
    assert targets.for_job_id("projects/p/locations/us-central1/customJobs/12").name == "vertex"
    with pytest.raises(ValidationError) as err:
        targets.for_job_id("echo-1")
    assert err.value.field == "JOB" and "local-NAME-DATE-TIME-XXXX" in err.value.expected


def test_attach_takes_the_target_as_submit_does(script: Path) -> None:
    with tfcloud.submit(script, distribution_strategy=None) as job:
        job.wait(60)
        job_id = job.job_id
    for target in (None, "local", targets.get("local")()):
        with sdk.attached(job_id, target=target) as handle:
            assert handle.info().job_id == job_id
    with pytest.raises(ValidationError) as err:  # a target given beside a JOB must own such ids
        sdk.attach(job_id, target="vertex")
    assert err.value.field == "JOB" and "(vertex runs such jobs)" not in (err.value.hint or "")
    assert "local runs such jobs" in (err.value.hint or "")
    with pytest.raises(UnsupportedOptionError):  # an option the target does not take is refused, as on submit
        sdk.attach(job_id, ray_address="http://127.0.0.1:8265")
    with pytest.raises(ValidationError):
        sdk.attach(job_id, target_options={"spot": "true"})
    with pytest.raises(JobNotFoundError):
        sdk.attach("local-nothing-20260101-120000-0000")
    assert [info.job_id for info in sdk.list_jobs(target="local")] == [job_id]


def test_the_plan_shows_a_target_options_value_and_where_it_came_from(script: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", str(script), "--vertex", "--spot", "--project", "my-project", "-o", "timeout=600",
                 "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "Setting: target = vertex (from --vertex)" in err
    assert "Setting: spot = True (from --spot)" in err
    assert "Setting: project = my-project (from --project)" in err
    assert "Setting: timeout = 600 (from -o timeout)" in err
    assert "= None" not in err
    assert "(from given)" not in err


def test_the_plan_names_where_each_value_came_from_in_python(script: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """SDK keywords, target_options=, a target value's own options, variables, other tools' variables, config
    files and gcloud's configuration: each value's source is named exactly."""
    from tfcloud.targets import VertexTarget

    gcloud = Path(os.environ["CLOUDSDK_CONFIG"])
    (gcloud / "configurations").mkdir(parents=True, exist_ok=True)
    (gcloud / "active_config").write_text("default\n")
    (gcloud / "configurations" / "config_default").write_text("[compute]\nregion = europe-west1\n")
    monkeypatch.setenv("TFCLOUD_STAGING_BUCKET", "gs://env-bucket")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.tfcloud]\nemulator_host = "127.0.0.1:8470"\n')
    plan = sdk.plan(script, target="vertex", project="my-project", spot=True, target_options={"timeout": "600"})
    sources = {name: row["from"] for name, row in plan.to_dict()["sources"].items() if name != "state_dir"}
    assert sources == {"target": "target= (keyword)", "project": "project= (keyword)", "spot": "spot= (keyword)",
                       "timeout": "target_options['timeout']", "staging_bucket": "TFCLOUD_STAGING_BUCKET",
                       "emulator_host": f"[tool.tfcloud] in {tmp_path / 'pyproject.toml'}",
                       "region": f"gcloud configuration {gcloud / 'configurations' / 'config_default'}"}
    assert plan.target == VertexTarget(project="my-project", spot=True, timeout_s=600, region="europe-west1",
                                            staging_bucket="gs://env-bucket", emulator_host="127.0.0.1:8470")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "other-project")
    plan = sdk.plan(script, target=VertexTarget(spot=True))  # a value: its unset options are filled the same way
    sources = {name: row["from"] for name, row in plan.to_dict()["sources"].items()}
    assert sources["spot"] == "VertexTarget(spot=...)" and sources["project"] == "GOOGLE_CLOUD_PROJECT"
    assert plan.target.project == "other-project"  # type: ignore[attr-defined]


def test_a_verb_on_existing_jobs_takes_the_place_only(capsys: pytest.CaptureFixture[str]) -> None:
    """A job option's flag is an unknown option there, and one given by name (-o, a keyword) is refused naming it."""
    assert main(["list", "--max-restarts", "3"]) == 2
    assert "No such option: --max-restarts" in capsys.readouterr().err
    assert main(["status", "local-a-20260101-120000-ab12", "--spot"]) == 2
    assert "No such option: --spot" in capsys.readouterr().err
    assert main(["list", "--vertex", "-o", "spot=1"]) == 2
    assert capsys.readouterr().err.splitlines()[:2] == [
        "Error: Invalid `-o spot`: expected a place option of the vertex target (project, region, emulator_host), "
        "received 'spot, a job option'.",
        "spot sets up a job: give it to submit, plan, build or tune, not to a verb that talks to existing jobs."]
    with pytest.raises(ValidationError) as err:
        sdk.attach("1234", spot=True)
    assert err.value.field == "spot" and "a place option of the vertex target" in err.value.expected
    with pytest.raises(ValidationError) as err:
        sdk.list_jobs(target="ray", target_options={"ray_cpus": "2"})
    assert err.value.field == "ray_cpus" and "(ray_address)" in err.value.expected
