"""`tfcloud list`: job ids are never cut, at any terminal width (every error says "`tfcloud list` shows the
ids")."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfcloud
from tfcloud.cli import main
from tfcloud.job.states import JobState
from tfcloud.view.jobview import jobs_lines

ROW = {"job_id": "local-unicode-donn-es-entra-nement-tr-s-long-20261125-032432-3f2a", "state": "failed",
       "exit_code": 1, "created": "2026-11-25T03:24:32.123456Z", "display_name": "tfcloud-unicode_données",
       "cost": {"shown": "not billed"}}


def test_columns_when_they_fit_two_lines_a_job_when_they_do_not() -> None:
    assert jobs_lines([ROW], width=200) == [
        "JOB ID".ljust(len(ROW["job_id"]) + 2) + "STATE   EXIT  CREATED (UTC)     COST        NAME",
        f"{ROW['job_id']}  failed  1     2026-11-25 03:24  not billed  tfcloud-unicode_données",
    ]
    assert jobs_lines([ROW], width=100) == [
        ROW["job_id"],
        "  failed (exit 1)  created 2026-11-25 03:24  cost not billed  tfcloud-unicode_données",
    ]


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_list_shows_whole_job_ids_at_80_and_100_columns(columns: int, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "unicode_données_entraînement_très_long_nom.py"
    script.write_text("print(1)\n")
    job = tfcloud.run(entry_point=str(script), distribution_strategy=None)
    assert job.wait(60).state is JobState.SUCCEEDED
    assert len(job.job_id) > 50
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["list", "--local"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert job.job_id in [word for line in out for word in line.split()]
    assert all(len(line) <= columns for line in out)


def test_list_of_no_jobs_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--local"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "No local jobs.\n"
