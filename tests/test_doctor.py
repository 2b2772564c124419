"""``tfcloud doctor``: each line with its fix; exit 0 when the chosen target can run, 2 otherwise (issue 33)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tfcloud.cli import main
from tfcloud.pytest_plugin import tfcloud_emulator, tfcloud_emulator_env  # noqa: F401 (the fixtures)


def _lines(out: str) -> dict[str, str]:
    """check name -> its line (the mark, then the name, then what was found)."""
    found = {}
    for line in out.splitlines():
        if line[:3].strip() in ("ok", "FIX", "-"):
            name = line[5:25].strip()
            found[name] = line
    return found


def test_local_can_run_and_every_line_says_what_it_found(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--local"]) == 0
    out = capsys.readouterr().out
    lines = _lines(out)
    assert {"extra tensorflow", "extra cloud", "extra docker", "Docker engine", "Google credentials", "project",
            "region", "staging bucket", "image registry", "Ray address", "TensorFlow"} <= set(lines)
    assert lines["extra tensorflow"].startswith(" ok")
    assert out.endswith("\nThe local target can run jobs here.\n")


def test_a_missing_extra_names_its_install_command(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if `ray` were not installed
    assert main(["doctor", "--ray", "http://127.0.0.1:1"]) == 2
    out = capsys.readouterr().out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "extra ray" in line)
    assert lines[at].startswith("FIX") and "not installed (ray missing)  (needed)" in lines[at]
    assert lines[at + 1].strip() == 'fix: pip install "tfcloud[ray]"'
    assert "Ray address         http://127.0.0.1:1 unreachable" in out  # and the address too
    assert out.endswith("The ray target cannot run a job here yet: fix the lines marked FIX (needed).\n")


def test_an_unreachable_docker_engine_and_no_project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TFCLOUD_DOCKER_HOST", "tcp://127.0.0.1:1")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))  # no gcloud configuration, no credentials
    for name in ("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT", "TFCLOUD_PROJECT",
                 "GOOGLE_APPLICATION_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    assert main(["doctor", "--vertex"]) == 2
    lines = _lines(capsys.readouterr().out)
    assert lines["Docker engine"].startswith("FIX  Docker engine       Cannot reach a Docker engine at "
                                             "tcp://127.0.0.1:1")
    assert lines["project"] == "FIX  project             not set  (needed)"
    assert lines["Google credentials"].startswith("FIX")
    assert lines["image registry"].startswith("FIX")

    # The project from gcloud's configuration: said so. The same checks as JSON.
    config = tmp_path / "gcloud" / "configurations"
    config.mkdir(parents=True)
    (config / "config_default").write_text("[core]\nproject = my-proj\n[compute]\nregion = europe-west4\n")
    assert main(["doctor", "--vertex", "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    rows = {row["check"]: row for row in data["checks"]}
    assert data["target"] == "vertex" and data["can_run"] is False
    assert rows["project"]["ok"] is True and rows["project"]["found"].startswith("my-proj (from gcloud configuration")
    assert rows["region"]["found"].startswith("europe-west4 (from gcloud configuration")
    assert rows["image registry"]["found"] == ("europe-west4-docker.pkg.dev/my-proj/tfcloud "
                                               "(from the project and region)")
    assert rows["Docker engine"]["ok"] is False and rows["Docker engine"]["needed"] is True

    # A bad project in a variable is a line to fix, naming the variable and a value that fits (not a crash).
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "x")
    assert main(["doctor", "--vertex", "--json"]) == 2
    rows = {row["check"]: row for row in json.loads(capsys.readouterr().out)["checks"]}
    assert rows["Vertex AI settings"]["ok"] is False and rows["Vertex AI settings"]["needed"] is True
    assert rows["Vertex AI settings"]["found"].startswith("Invalid `GOOGLE_CLOUD_PROJECT`: expected a Google "
                                                             "Cloud project id")
    assert rows["Vertex AI settings"]["fix"] == ("Give a value such as 'my-project' there, or remove it (a flag "
                                                    "overrides it: --project).")


# -- one fact each: the base image's TensorFlow, the builder, the endpoint (issue 40) -----------------------------
def _rows(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    return {row["check"]: row for row in json.loads(capsys.readouterr().out)["checks"]}


def test_doctor_names_the_tensorflow_and_base_image_the_build_path_uses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What a --no-build plan says its base image carries is what doctor says, from the same function."""
    from tfcloud.image.dockerfile import installed_tensorflow_version

    version = installed_tensorflow_version()
    if version is None:
        pytest.skip("needs TensorFlow installed (tfcloud[tensorflow])")
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    assert main(["submit", str(script), "--vertex", "--no-build", "--staging-bucket", "gs://stg-bkt",
                 "--chief-config", "CPU", "--dry-run"]) == 0
    captured = capsys.readouterr()  # the plan's text goes to stderr
    base = next(line for line in (captured.out + captured.err).splitlines() if line.startswith("Base image: Tensor"))
    tensorflow, parent = base.removeprefix("Base image: TensorFlow ").split(";")[0].split(" on ")
    assert main(["doctor", "--json"]) == 0
    found = str(_rows(capsys)["TensorFlow"]["found"])
    assert tensorflow == version and f"TensorFlow {version}" in found and parent in found
    assert f"images are built on tensorflow/tensorflow:{version} " in found
    assert "2.17" not in found  # Google's last prebuilt TensorFlow image: no job runs on it


def test_the_hints_name_only_flags_doctor_takes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import re

    monkeypatch.setenv("TFCLOUD_DOCKER_HOST", "tcp://127.0.0.1:1")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    assert main(["doctor", "--vertex"]) == 2
    fixes = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("fix:")]
    assert any("--image-build-bucket" in line for line in fixes)
    assert main(["doctor", "--help"]) == 0
    help_text = capsys.readouterr().out
    flags = {flag for line in fixes for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", line)}
    assert flags and {flag for flag in flags if flag not in help_text} == set()


@pytest.mark.emulator
def test_a_cloud_build_setup_without_docker_passes(tfcloud_emulator_env: object,  # noqa: F811
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Cloud Build as the builder (the setting, or the flag as submit takes it): no Docker engine needed, and the
    endpoint answers one cheap call (here the emulator's)."""
    monkeypatch.setenv("TFCLOUD_DOCKER_HOST", "tcp://127.0.0.1:1")  # no engine
    assert main(["doctor", "--vertex", "--json"]) == 2  # the Docker engine is the builder: needed
    assert _rows(capsys)["Docker engine"]["needed"] is True
    assert main(["doctor", "--vertex", "--image-build-bucket", "my-builds", "--json"]) == 0
    rows = _rows(capsys)
    assert rows["image builder"]["ok"] is True and "gs://my-builds (from --image-build-bucket)" in str(
        rows["image builder"]["found"])
    assert rows["Docker engine"]["needed"] is False and rows["Docker engine"]["ok"] is None
    assert rows["Vertex AI endpoint"]["ok"] is True
    assert str(rows["Vertex AI endpoint"]["found"]).startswith("the emulator at 127.0.0.1:")
    monkeypatch.setenv("TFCLOUD_IMAGE_BUILD_BUCKET", "my-builds")
    assert main(["doctor", "--vertex"]) == 0
    assert "image builder       Cloud Build, sources staged in gs://my-builds (from TFCLOUD_IMAGE_BUILD_BUCKET)" in (
        capsys.readouterr().out)


@pytest.mark.emulator
def test_the_endpoint_call_names_a_refusal(tfcloud_emulator_env: object, tfcloud_emulator: Any,  # noqa: F811
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Credentials Google refuses (PERMISSION_DENIED on the one ListCustomJobs): a line to fix, not a pass."""
    monkeypatch.setenv("TFCLOUD_IMAGE_BUILD_BUCKET", "my-builds")
    tfcloud_emulator.faults.fail("ListCustomJobs", code="PERMISSION_DENIED", message="caller lacks permission")
    assert main(["doctor", "--vertex", "--json"]) == 2
    row = _rows(capsys)["Vertex AI endpoint"]
    assert row["ok"] is False and row["needed"] is True
    assert str(row["found"]).startswith("the emulator at 127.0.0.1:") and "refused a call" in str(row["found"])


@pytest.mark.emulator
def test_doctor_takes_the_place_as_every_other_verb(tfcloud_emulator_env: Any,  # noqa: F811
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The endpoint and project given as flags (nothing in the environment): the endpoint line reaches them. A job
    option is not doctor's: an unknown flag, or refused by name."""
    host = tfcloud_emulator_env.env["TFCLOUD_EMULATOR_HOST"]
    monkeypatch.delenv("TFCLOUD_EMULATOR_HOST")
    monkeypatch.setenv("TFCLOUD_IMAGE_BUILD_BUCKET", "my-builds")
    assert main(["doctor", "--vertex", "--emulator-host", host, "--project", tfcloud_emulator_env.project,
                 "--region", "us-central1", "--json"]) == 0
    rows = _rows(capsys)
    assert rows["Vertex AI endpoint"]["ok"] is True
    assert str(rows["Vertex AI endpoint"]["found"]).startswith(f"the emulator at {host}")
    assert main(["doctor", "--vertex", "--spot"]) == 2
    assert "No such option: --spot" in capsys.readouterr().err
    assert main(["doctor", "--vertex", "-o", "spot=1"]) == 2
    assert "Invalid `-o spot`: expected a place option of the vertex target" in capsys.readouterr().err
