"""``tfcloud doctor``: each line with its fix; exit 0 when the chosen target can run, 2 otherwise (issue 33)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tfcloud.cli import main


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
    assert rows["Google Cloud settings"]["ok"] is False and rows["Google Cloud settings"]["needed"] is True
    assert rows["Google Cloud settings"]["found"].startswith("Invalid `GOOGLE_CLOUD_PROJECT`: expected a Google "
                                                             "Cloud project id")
    assert rows["Google Cloud settings"]["fix"] == ("Give a value such as 'my-project' there, or remove it (a flag "
                                                    "overrides it: --project).")
