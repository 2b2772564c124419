"""A local job keeps its job options: its labels, display name, environment and arguments reach the running job
and its record, and ``tfcloud list --label`` finds it by its labels (as the dashboard's filter does:
tests/ui/test_labels.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfcloud.cli import main


def test_a_local_job_keeps_its_job_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "train.py"
    script.write_text("import os, sys\nprint('color', os.environ['COLOR'], sys.argv[1:])\n")
    code = main(["submit", str(script), "--label", "team=ml", "--label", "stage=dev", "--env", "COLOR=blue",
                 "--display-name", "my-run", "--strategy", "none", "--", "--epochs", "1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "color blue ['--epochs', '1']" in out
    assert main(["list", "--label", "team=ml", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["labels"], r["display_name"], r["state"]) for r in rows] == [
        ({"team": "ml", "stage": "dev"}, "my-run", "succeeded")]
    job_id = rows[0]["job_id"]
    assert main(["list", "--local", "--label", "team=ml", "--label", "stage=dev", "--json"]) == 0
    assert [r["job_id"] for r in json.loads(capsys.readouterr().out)] == [job_id]
    assert main(["list", "--label", "team=other", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["status", job_id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["labels"] == {"team": "ml", "stage": "dev"}
