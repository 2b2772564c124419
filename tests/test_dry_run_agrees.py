"""A dry run runs every check the submission runs before its first side effect: what `submit` refuses for its
inputs, `submit --dry-run` (and `run(..., dry_run=True)`) refuses with the same message, and nothing happens."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tfcloud
from tfcloud.cli import main
from tfcloud.errors import ValidationError

CASES = {
    "--no-build without a staging bucket": (["--vertex", "--project", "proj-one", "--no-build"],
                                           "Invalid `staging_bucket`: expected a Cloud Storage bucket"),
    "vertex --data with nowhere to ship it": (["--vertex", "--project", "proj-one", "--data", "shards"],
                                              "Invalid `data`: expected a place on the vertex target to ship local "
                                              "data sets"),
    "ray --data without an output dir": (["--ray", "http://127.0.0.1:1", "--data", "shards"],
                                         "Invalid `data`: expected a place on the ray target to ship local "
                                         "data sets"),
    "a local env: secret whose variable is unset": (["--secret", "TOKEN=env:TFCLOUD_TEST_UNSET"],
                                                    "Invalid `secrets['TOKEN']`: expected env:VARIABLE naming a "
                                                    "variable set here"),
}


@pytest.fixture
def job_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "train.py").write_text("print('training')\n")
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / "a.txt").write_text("a\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TFCLOUD_TEST_UNSET", raising=False)
    return tmp_path


def _jobs() -> list[str]:
    jobs = Path(os.environ["TFCLOUD_HOME"]) / "jobs"
    return sorted(p.name for p in jobs.iterdir()) if jobs.is_dir() else []


@pytest.mark.parametrize(("flags", "message"), CASES.values(), ids=CASES.keys())
def test_a_dry_run_refuses_what_submit_refuses_with_the_same_message(
        job_dir: Path, flags: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "train.py", *flags, "--dry-run"]) == 2
    planned = capsys.readouterr().err
    assert main(["submit", "train.py", *flags, "--yes", "--detach"]) == 2
    submitted = capsys.readouterr().err
    assert message in planned
    assert planned == submitted
    assert "Traceback" not in planned
    assert _jobs() == []  # nothing started


def test_the_sdk_dry_run_refuses_it_too(job_dir: Path) -> None:
    with pytest.raises(ValidationError, match="a variable set here") as refused:
        tfcloud.run("train.py", secrets={"TOKEN": "env:TFCLOUD_TEST_UNSET"}, dry_run=True)
    assert refused.value.hint == ("Set it first (`export TFCLOUD_TEST_UNSET=...`), or pass the secret as "
                                  "--secret TOKEN=file:PATH.")


def test_an_env_secret_whose_variable_is_set_plans_and_only_ray_reads_it_elsewhere(
        job_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TFCLOUD_TEST_SET", "s3cr3t")
    assert main(["submit", "train.py", "--secret", "TOKEN=env:TFCLOUD_TEST_SET", "--dry-run", "--json"]) == 0
    assert "s3cr3t" not in capsys.readouterr().out
    # Ray's replicas start from their nodes' environment, not this one: the variable need not be set here.
    assert main(["submit", "train.py", "--ray", "http://127.0.0.1:1", "--secret", "TOKEN=env:TFCLOUD_TEST_UNSET",
                 "--dry-run"]) == 0
