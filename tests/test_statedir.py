"""The state directory: its root from the settings, the check that names where the path came from, and its
layout (one function per kind of path)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfcloud.errors import ValidationError
from tfcloud.flow.settings import resolve_settings
from tfcloud.records import statedir


def test_the_root_comes_from_the_settings_else_tfcloud_home_else_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert statedir.state_dir(resolve_settings({"state_dir": str(tmp_path / "given")})) == tmp_path / "given"
    monkeypatch.setenv("TFCLOUD_HOME", str(tmp_path / "env"))
    assert statedir.state_dir(resolve_settings({})) == tmp_path / "env"
    assert statedir.state_dir() == tmp_path / "env"
    monkeypatch.delenv("TFCLOUD_HOME")
    assert statedir.state_dir(resolve_settings({})) == Path("~/.local/state/tfcloud").expanduser()


def test_a_state_dir_from_tfcloud_home_that_is_a_file_names_tfcloud_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("TFCLOUD_HOME", str(tmp_path / "file" / "state"))
    settings = resolve_settings({})
    with pytest.raises(ValidationError) as caught:
        statedir.check_state_dir(statedir.state_dir(settings), source=statedir.source_of(settings))
    assert caught.value.field == "TFCLOUD_HOME"
    assert f"{tmp_path / 'file'} is not a directory" in str(caught.value)


def test_a_state_dir_from_pyproject_names_the_setting_and_its_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TFCLOUD_HOME")
    (tmp_path / "file").write_text("x")
    (tmp_path / "pyproject.toml").write_text(f'[tool.tfcloud]\nstate_dir = "{tmp_path / "file"}"\n')
    monkeypatch.chdir(tmp_path)
    settings = resolve_settings({})
    with pytest.raises(ValidationError) as caught:
        statedir.check_state_dir(statedir.state_dir(settings), source=statedir.source_of(settings))
    assert caught.value.field == "state_dir"
    assert f"(it is set in [tool.tfcloud] in {tmp_path / 'pyproject.toml'})" in str(caught.value)


def test_a_path_with_no_such_home_directory_is_refused_with_its_setting() -> None:
    with pytest.raises(ValidationError) as caught:
        statedir.state_path("~nosuchuser/state", source="state_dir")
    assert caught.value.field == "state_dir"
    assert "No such home directory." in str(caught.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere: no unwritable directory to test with")
def test_an_unwritable_state_dir_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(ValidationError, match="is not writable"):
        statedir.check_state_dir(locked / "state", source="TFCLOUD_HOME")
    statedir.check_state_dir(tmp_path / "new" / "state")  # a directory that will be made is fine


def test_the_layout(tmp_path: Path) -> None:
    assert statedir.job_dir(tmp_path, "local-x") == tmp_path / "jobs" / "local-x"
    assert statedir.study_dir(tmp_path, "study-x") == tmp_path / "studies" / "study-x"
    assert statedir.rerun_record(tmp_path, "projects/p/locations/r/hyperparameterTuningJobs/1") == (
        tmp_path / "vertex-studies" / "projects_p_locations_r_hyperparameterTuningJobs_1.json")
    lock = statedir.build_lock(statedir.locks_dir(tmp_path), "registry:5000/app:1")
    assert lock.parent == tmp_path / "locks" and lock.name.startswith("build-") and lock.suffix == ".lock"
    assert lock != statedir.build_lock(statedir.locks_dir(tmp_path), "registry:5000/app:2")


def test_a_timeline_record_sits_in_a_local_jobs_directory_else_in_timelines(tmp_path: Path) -> None:
    assert statedir.timeline_record(tmp_path, "123") == tmp_path / "timelines" / "123.json"
    statedir.job_dir(tmp_path, "local-x").mkdir(parents=True)
    assert statedir.timeline_record(tmp_path, "local-x") == tmp_path / "jobs" / "local-x" / "timeline.json"
