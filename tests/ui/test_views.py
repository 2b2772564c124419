"""What the pages show, rendered from real values without a server: every user's text escaped, the best trial
starred, trials that early stopping ended marked, the stage timeline as bars."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the dashboard needs tfcloud[ui]")

from tfcloud.backends.base import JobInfo
from tfcloud.errors import ValidationError
from tfcloud.job.states import JobState
from tfcloud.job.study import StudyInfo, TrialInfo, make_study
from tfcloud.records.timeline import Stage, Timeline
from tfcloud.ui.app import _templates
from tfcloud.ui.views import job_rows, parse_label, study_view, timeline_bars


def test_job_names_labels_and_ids_render_as_text() -> None:
    hostile = "<img src=x onerror=alert(1)>"
    info = JobInfo(job_id="local-x-20260101-000000-abcd", target="local", state=JobState.RUNNING,
                   display_name=hostile, labels={"team": "<b>a</b>"}, created=1.0)
    html = _templates().get_template("_jobs_table.html").render(
        rows=job_rows([info], []), notes={"ray": "<i>no</i>"}, page=1, pages=1, total=1, newer=None, older=None,
        filters={"target": "", "state": "", "label": "", "trials": ""})
    assert hostile not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "team=&lt;b&gt;a&lt;/b&gt;" in html
    assert "ray: &lt;i&gt;no&lt;/i&gt;" in html


def test_the_study_table_stars_the_best_and_marks_the_stopped_trials() -> None:
    study = make_study(["units=int:1:100"], metric="acc", goal="maximize", max_trials=3)
    trials = (
        TrialInfo(trial_id="1", params={"units": 10}, state=JobState.SUCCEEDED, metric=0.6, started=0, ended=5),
        TrialInfo(trial_id="2", params={"units": 20}, state=JobState.SUCCEEDED, metric=0.2, started=0, ended=2,
                  stopped_at=3, message="Stopped early at step 3"),
        TrialInfo(trial_id="3", params={"units": 30}, state=JobState.RUNNING, started=0),
    )
    info = StudyInfo(study_id="study-x-20260101-000000-abcd", target="local", state=JobState.RUNNING, study=study,
                     trials=trials)
    view = study_view(info, rerun="tfcloud submit 'a b.py' -- --units=10")
    html = _templates().get_template("_study_table.html").render(**view)
    assert [t["best"] for t in view["trials"]] == [True, False, False]
    assert '<tr class="best" data-trial="1">' in html and '<span class="star" title="best">★</span> 1' in html
    assert '<tr class=" stopped" data-trial="2">' in html and ">stopped at 3</span>" in html
    assert "tfcloud submit &#39;a b.py&#39; -- --units=10" in html
    assert view["done"] == 2 and not view["final"]


def test_the_timeline_is_bars_on_one_axis() -> None:
    stages = Timeline(stages=(Stage(name="submit", start=100.0, end=101.0),
                              Stage(name="queued", start=101.0, end=103.0), Stage(name="run", start=103.0, end=None)))
    bars = timeline_bars(stages, now=110.0)
    assert [(b["name"], b["left"], b["width"], b["at"], b["took"], b["open"]) for b in bars] == [
        ("submit", 0.0, 10.0, "+0.0s", "1.0s", False),
        ("queued", 10.0, 20.0, "+1.0s", "2.0s", False),
        ("run", 30.0, 70.0, "+3.0s", "7.0s+", True),
    ]
    assert timeline_bars(Timeline()) == []


def test_the_label_filter_is_key_equals_value() -> None:
    assert parse_label(" team=vision ") == {"team": "vision"}
    assert parse_label("") == {}
    with pytest.raises(ValidationError, match="expected KEY=VALUE"):
        parse_label("team")


def test_training_curves_are_read_from_tensorflow_event_files() -> None:
    """Event files TensorFlow wrote (tests/ui/data/tfevents/make_events.py): TF2 tensors and a TF1 simple value;
    a second read finds nothing new and keeps what it had."""
    from pathlib import Path

    from tfcloud.ui.curves import Curves

    curves = Curves(Path(__file__).parent / "data" / "tfevents")
    series = curves.read()
    assert sorted(series) == ["old_loss", "train/epoch_accuracy", "train/epoch_loss"]
    assert [(step, round(value, 4)) for step, value, _ in series["train/epoch_loss"]] == [
        (0, 1.0), (1, 0.5), (2, 0.3333)]
    assert series["old_loss"] == [(7, 0.25, 1.5)]
    assert curves.read() == series


def test_trial_jobs_are_one_row_under_their_study_and_internal_labels_are_hidden() -> None:
    study = make_study(["units=int:1:100"], metric="acc", goal="maximize", max_trials=2)
    jobs = [JobInfo(job_id=f"local-t-20260101-00000{i}-abcd", target="local", state=state, created=float(10 - i),
                    labels={"tfcloud-submission": "x", "team": "a"})
            for i, state in enumerate([JobState.RUNNING, JobState.SUCCEEDED, JobState.FAILED])]
    trials = tuple(TrialInfo(trial_id=str(i), params={"units": i}, state=jobs[i].state, job_id=jobs[i].job_id)
                   for i in (0, 2))
    info = StudyInfo(study_id="study-t-20260101-000000-abcd", target="local", state=JobState.RUNNING, study=study,
                     trials=trials)
    rows = job_rows(jobs, [info])
    assert [(r["kind"], r.get("study_id") or r["job"].job_id) for r in rows] == [
        ("study", info.study_id), ("job", jobs[1].job_id)]
    assert rows[0]["count"] == 2 and rows[0]["summary"] == "1 failed, 1 running"
    html = _templates().get_template("_jobs_table.html").render(
        rows=rows, notes={}, page=1, pages=1, total=2, newer=None, older=None,
        filters={"target": "", "state": "", "label": "", "trials": ""})
    assert "2 trial jobs (1 failed, 1 running)" in html and "team=a" in html and "tfcloud-submission" not in html


def test_the_job_status_shows_each_replicas_web_access_shell() -> None:
    """Vertex AI's URIs (https) are links; another scheme (the emulator's shell://, or anything hostile) is text."""
    info = JobInfo(job_id="123", target="vertex", state=JobState.RUNNING, created=1.0)
    replicas = [{"name": "chief-0", "state": "running", "exit_code": None, "css": "r0", "own": True,
                 "web_access_uri": "https://abc-dot-us-central1.aiplatform-training.googleusercontent.com/"},
                {"name": "worker-0", "state": "running", "exit_code": None, "css": "r1", "own": True,
                 "web_access_uri": "javascript:alert(1)"},
                {"name": "worker-1", "state": "running", "exit_code": None, "css": "r2", "own": True,
                 "web_access_uri": None}]
    html = _templates().get_template("_job_status.html").render(
        info=info, state="running", final=False, unreadable=None, replicas=replicas, replica_note=None,
        failure=None, bars=[], summary="", width=8)
    assert ('<a class="web-access" href="https://abc-dot-us-central1.aiplatform-training.googleusercontent.com/" '
            'target="_blank" rel="noopener">') in html
    assert '<code class="web-access">javascript:alert(1)</code>' in html and 'href="javascript' not in html
    assert html.count("shell:") == 2
