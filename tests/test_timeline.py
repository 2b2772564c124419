"""Stage timings (tfcloud.records.timeline): the recorder, the job's whole timeline, its record, the Gantt chart; a
real local run through the CLI (``status --timeline``, ``--json``) and ``tfcloud logs`` with its options."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
import stat
from pathlib import Path

import pytest
from rich.console import Console

from tfcloud.cli import main
from tfcloud.records.timeline import (
    STAGES,
    Recorder,
    Stage,
    Timeline,
    format_duration,
    job_timeline,
    load,
    record_path,
    render_timeline,
    save,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_recorder_ends_each_stage_when_the_next_begins() -> None:
    clock = Clock()
    recorder = Recorder(clock)
    for name, seconds in (("context", 0.5), ("build", 3.0), ("push", 2.0), ("submit", 0.25)):
        recorder.begin(name)
        clock.now += seconds
    recorder.end()
    assert recorder.stages == (Stage(name="context", start=1000.0, end=1000.5),
                               Stage(name="build", start=1000.5, end=1003.5),
                               Stage(name="push", start=1003.5, end=1005.5),
                               Stage(name="submit", start=1005.5, end=1005.75))
    with pytest.raises(ValueError, match="unknown stage 'deploy'"):
        recorder.begin("deploy")


def test_the_job_timeline_adds_queued_and_run_in_order() -> None:
    recorded = (Stage(name="submit", start=10.0, end=11.0),)
    # The service's clock said the job was created a little before the submit call began: it never goes back.
    done = job_timeline(recorded, created=9.5, started=20.0, ended=50.0, running=False)
    assert [(s.name, s.start, s.end) for s in done.stages] == [
        ("submit", 10.0, 11.0), ("queued", 10.0, 20.0), ("run", 20.0, 50.0)]
    assert done.total() == 40.0
    assert done.summary() == "submit 1.0s · queued 10.0s · run 30.0s (total 40.0s)"

    queued = job_timeline(recorded, created=11.0, started=None, ended=None, running=True)
    assert [(s.name, s.end) for s in queued.stages] == [("submit", 11.0), ("queued", None)]
    assert queued.stages[-1].duration(now=71.0) == 60.0
    assert queued.summary(now=91.0) == "submit 1.0s · queued 1m20s+ (total 1m21s)"

    # Cancelled while queued: the queue ends with the job.
    cancelled = job_timeline((), created=5.0, started=None, ended=8.0, running=False)
    assert [(s.name, s.start, s.end) for s in cancelled.stages] == [("queued", 5.0, 8.0)]


def test_durations_read_as_people_say_them() -> None:
    assert [format_duration(s) for s in (0.04, 12.34, 59.9, 80, 3599, 7500)] == \
        ["0.0s", "12.3s", "59.9s", "1m20s", "59m59s", "2h05m"]


def test_the_record_is_private_and_survives_a_bad_file(tmp_path: Path) -> None:
    stages = (Stage(name="build", start=1.0, end=2.5), Stage(name="push", start=2.5, end=4.0))
    path = record_path(tmp_path / "state", "1234567890")
    assert path == tmp_path / "state" / "timelines" / "1234567890.json"
    save(path, stages)
    assert load(path) == stages
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    path.write_text('{"stages": [{"stage": "nap", "start": 1}]}')
    assert load(path) == ()
    assert load(tmp_path / "missing.json") == ()
    (tmp_path / "state" / "jobs" / "local-x").mkdir(parents=True)
    assert record_path(tmp_path / "state", "local-x") == tmp_path / "state" / "jobs" / "local-x" / "timeline.json"


def test_the_gantt_chart_draws_every_stage_on_one_axis() -> None:
    timeline = Timeline(stages=(Stage(name="context", start=0.0, end=1.0), Stage(name="build", start=1.0, end=5.0),
                                Stage(name="queued", start=5.0, end=9.0), Stage(name="run", start=9.0, end=None)))
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(render_timeline(timeline, width=20, now=10.0))
    rows = console.export_text().splitlines()
    assert rows[0].split() == ["stage", "at", "took"]
    bars = {row.split()[0]: row for row in rows[1:5]}
    assert [bars[name].index("█") for name in ("context", "build", "queued")] == sorted(
        bars[name].index("█") for name in ("context", "build", "queued"))
    assert bars["run"].rstrip().split()[-2:] == ["+9.0s", "1.0s+"] and "▶" in bars["run"]
    assert rows[5].split() == ["total", "10.0s"]
    assert set(STAGES) >= {"context", "build", "push", "submit", "queued", "run"}


# --- a real local run --------------------------------------------------------------------------------------
SCRIPT = """
import os, time
me = os.environ["TFCLOUD_REPLICA"]
for i in range(3):
    print("step", i, "on", me, flush=True)
    time.sleep(0.05)
"""


@pytest.fixture
def finished_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    script = tmp_path / "steps.py"
    script.write_text(SCRIPT)
    assert main(["submit", str(script), "--strategy", "none", "--worker-count", "1"]) == 0
    err = capsys.readouterr().err
    return err.split("Submitted job ", 1)[1].split(".")[0]


def test_a_local_run_keeps_its_timeline(finished_job: str, capsys: pytest.CaptureFixture[str]) -> None:
    record = Path(os.environ["TFCLOUD_HOME"]) / "jobs" / finished_job / "timeline.json"
    assert [s.name for s in load(record)] == ["submit"]
    assert stat.S_IMODE(record.stat().st_mode) == 0o600

    assert main(["status", finished_job, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    stages = shown["timeline"]
    assert [s["stage"] for s in stages] == ["submit", "queued", "run"]
    starts = [dt.datetime.fromisoformat(s["start"]) for s in stages]
    assert starts == sorted(starts)
    assert all(s["duration_s"] >= 0 and s["end"] for s in stages)
    assert stages[-1]["end"] == shown["ended"]

    assert main(["status", finished_job, "--timeline"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{finished_job}  succeeded"
    out = out[out.index(""):]  # the timeline follows the status, after a blank line
    assert [row.split()[0] for row in out[2:]] == ["submit", "queued", "run", "total"]
    assert all(re.search(r"\d+\.\ds$", row) for row in out[2:])


def test_logs_options_through_the_cli(finished_job: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", finished_job, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 6 and all(set(row) == {"time", "replica", "text", "stream"} for row in rows)
    assert {row["replica"] for row in rows} == {"chief-0", "worker-0"} and rows[0]["stream"] == "stdout"
    times = [dt.datetime.fromisoformat(row["time"]) for row in rows]
    assert times == sorted(times)

    assert main(["logs", finished_job, "--tail", "2", "--json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == rows[-2:]

    assert main(["logs", finished_job, "--replica", "chief-0", "--tail", "1", "--timestamps"]) == 0
    stamp = dt.datetime.fromisoformat(next(r for r in reversed(rows) if r["replica"] == "chief-0")["time"])
    assert capsys.readouterr().out == \
        f"chief-0 | {stamp.strftime('%Y-%m-%dT%H:%M:%S.')}{stamp.microsecond // 1000:03d}Z step 2 on chief-0\n"

    # --since: an ISO time picks the lines from then on; a duration back from now takes them all.
    assert main(["logs", finished_job, "--since", rows[-2]["time"], "--json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == rows[-2:]
    assert main(["logs", finished_job, "--since", "1h", "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 6

    assert main(["logs", finished_job, "--tail", "-3"]) == 2
    assert capsys.readouterr().err.startswith(
        "Error: Invalid `--tail`: expected a number of lines from 0 to 1000000 (e.g. 100), received '-3'.")
    assert main(["logs", finished_job, "--since", "yesterday"]) == 2
    assert capsys.readouterr().err.startswith(
        "Error: Invalid `--since`: expected a duration like 30s, 10m, 2h or 1d, or an ISO 8601 time like "
        "2026-11-23T14:05:00Z, received 'yesterday'.")
