"""Tuning on Vertex AI against the emulator: VertexStudies with the real aiplatform_v1 client, trials run as
local processes through the launcher (the emulator maps the image URI to it), nothing patched.

The trial script parses ``--x``/``--y`` as Vertex AI passes them and reports ``score`` in the hypertune metrics
file (``tfcloud.job.study.write_metric``, what cloudml-hypertune writes), so that every trial's metric can be
checked against the function of its own parameters.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI tests need tfcloud[cloud]")

from tfcloud.errors import JobNotFoundError
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.settings import Settings
from tfcloud.flow.validate import build_job
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.vertex.backend import VertexBackend
from tfcloud.google.vertex.tuning import VertexStudies, VertexStudy
from tfcloud.job.artifacts import ImageRef, PreparedJob
from tfcloud.job.states import JobState
from tfcloud.job.study import StudySpec, make_study
from tfcloud.targets import VertexTarget

pytestmark = pytest.mark.emulator

PROJECT = "tfcloud-tuning"
IMAGE = "localhost:5000/tfcloud/tune:test"
FAST = RetryPolicy(initial=0.02, maximum=0.1, deadline=10, call_timeout=2, create_timeout=2)

#: y == "c": no metric (x < 2) or exit 3 (x >= 2); else ``score`` = f(x, y), after an earlier, worse measurement.
SCRIPT = """
import argparse, os, sys, time
from tfcloud.job.study import write_metric

parser = argparse.ArgumentParser()
parser.add_argument("--x", type=float, required=True)
parser.add_argument("--y", required=True)
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--steps", type=int, default=0)
parser.add_argument("--bad", default="")
parser.add_argument("--out", default="")
args, _ = parser.parse_known_args()  # the other parameters of a study
trial = os.environ.get("CLOUD_ML_TRIAL_ID")
print("trial", trial, "args", sys.argv[1:], flush=True)
time.sleep(args.sleep)
if args.steps:  # one measurement a step: 1 + step / 100, or -1 + step / 100 for the trials named by --bad
    with open(os.path.join(args.out, f"pid-{trial}"), "w") as f:
        f.write(str(os.getpid()))
    for step in range(1, args.steps + 1):
        write_metric({"score": (-1.0 if trial in args.bad.split(",") else 1.0) + step / 100}, step=step)
        with open(os.path.join(args.out, f"step-{trial}"), "w") as f:
            f.write(str(step))
        time.sleep(0.3)
    sys.exit(0)
if args.y == "c":
    sys.exit(3 if args.x >= 2 else 0)
write_metric({"score": -1000.0}, step=1)
write_metric({"score": -(args.x - 0.3) ** 2 + (0.5 if args.y == "b" else 0.0), "other": 1.0}, step=2)
print("reported", flush=True)
"""


def score(params: Any) -> float:
    return float(-(params["x"] - 0.3) ** 2 + (0.5 if params["y"] == "b" else 0.0))


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    app = tmp_path_factory.mktemp("image")
    (app / "train.py").write_text(SCRIPT)
    prepare(*build_job(entry_point=str(app / "train.py"), target="vertex", chief_config="CPU",
                       distribution_strategy=None), app)
    entrypoints = {IMAGE: [sys.executable, str(app / "tfcloud_launcher.py")]}
    with Emulator(project=PROJECT, storage=False, entrypoints=entrypoints) as emu:
        yield emu


@pytest.fixture
def settings() -> Settings:
    return Settings(target="vertex")


@pytest.fixture
def vertex(emulator: Any) -> VertexTarget:
    return VertexTarget(project=PROJECT, region="us-central1", emulator_host=emulator.endpoint)


@pytest.fixture
def studies(emulator: Any, settings: Settings, vertex: VertexTarget) -> Iterator[VertexStudies]:
    studies = VertexStudies(settings, target=vertex, retry=FAST)
    yield studies
    studies.close()
    emulator.faults.clear()


def _job(tmp_path: Path, display_name: str, *args: str) -> PreparedJob:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    spec, target = build_job(entry_point=str(script), target="vertex", chief_config="CPU",
                             distribution_strategy=None, display_name=display_name, entry_point_args=list(args))
    job, _ = prepare(spec, target, tmp_path)
    return replace(job, image=ImageRef(uri=IMAGE))


def _name() -> str:
    return f"study-{uuid.uuid4().hex[:8]}"


def _trial_logs(settings: Settings, vertex: VertexTarget, job_id: str) -> list[str]:
    backend = VertexBackend(settings=settings, target=vertex, retry=FAST)
    try:
        return [line.text for line in backend.attach(job_id).logs(replica="chief-0")]
    finally:
        backend.close()


def test_random_study_runs_trials_with_their_args_and_reports_the_best(
        studies: VertexStudies, settings: Settings, vertex: VertexTarget, tmp_path: Path) -> None:
    study = make_study(["x=double:-1:1", "y=categorical:a,b"], metric="score", max_trials=4, parallel_trials=2)
    handle = studies.submit(_job(tmp_path, _name(), "--sleep", "0.5"), study)
    info = handle.wait(timeout=120)

    assert info.state is JobState.SUCCEEDED, info
    assert info.study == study and info.target == "vertex" and info.study_id == handle.study_id
    assert [t.trial_id for t in info.trials] == ["1", "2", "3", "4"]
    assert all(t.state is JobState.SUCCEEDED for t in info.trials)
    assert len({t.params["x"] for t in info.trials}) == 4  # random search: every trial its own values
    for trial in info.trials:
        assert isinstance(trial.params["x"], float) and trial.params["y"] in ("a", "b")
        assert -1 <= trial.params["x"] <= 1
        # The final measurement: the last line holding the metric, the trial's function of its own arguments.
        assert trial.metric == pytest.approx(score(trial.params), abs=1e-9)
        assert trial.started is not None and trial.ended is not None and trial.started <= trial.ended
    best = info.best_trial
    assert best is not None and best.metric == max(t.metric for t in info.trials if t.metric is not None)
    # Two at a time: the first two ran together, and no third started before one of them had ended.
    spans = sorted((t.started, t.ended) for t in info.trials if t.started and t.ended)
    assert spans[1][0] < spans[0][1]
    for start, _ in spans:
        assert sum(1 for s, e in spans if s <= start < e) <= 2
    # Each trial is a CustomJob of the trial spec, with the spec's args and then its own, as Vertex AI passes them.
    assert len({t.job_id for t in info.trials}) == 4
    trial = info.trials[2]
    lines = _trial_logs(settings, vertex, trial.job_id or "")
    x_arg = f"--x={trial.params['x']!r}"
    assert f"trial 3 args ['--sleep', '0.5', '{x_arg}', '--y={trial.params['y']}']" in lines
    assert "reported" in lines
    assert studies.attach(handle.study_id).entry_point_args == ("--sleep", "0.5")  # the script's own, again


def test_grid_study_marks_failed_trials_and_the_study_succeeds(studies: VertexStudies, tmp_path: Path) -> None:
    study = make_study(["x=int:1:2", "y=categorical:a,b,c"], metric="score", goal="minimize", max_trials=10,
                       parallel_trials=2, algorithm="grid")
    info = studies.submit(_job(tmp_path, _name()), study).wait(timeout=120)

    assert info.state is JobState.SUCCEEDED
    # The grid holds 6 points: that many trials, though 10 were allowed; every point once.
    assert sorted((t.params["x"], t.params["y"]) for t in info.trials) == [
        (x, y) for x in (1, 2) for y in ("a", "b", "c")]
    assert all(isinstance(t.params["x"], int) for t in info.trials)
    failed = [t for t in info.trials if t.state is JobState.FAILED]
    assert sorted((t.params["x"], t.params["y"]) for t in failed) == [(1, "c"), (2, "c")]  # no metric; exit 3
    assert all(t.metric is None for t in failed)
    why = {t.params["x"]: t.message or "" for t in failed}
    assert "reported no value of metric 'score'" in why[1]
    assert "exited with a non-zero status of 3" in why[2]
    assert all(t.message is None for t in info.trials if t.state is JobState.SUCCEEDED)
    succeeded = [t for t in info.trials if t.state is JobState.SUCCEEDED]
    assert len(succeeded) == 4
    best = info.best_trial
    assert best is not None and best.metric == min(t.metric for t in succeeded if t.metric is not None)
    assert best.state is JobState.SUCCEEDED


def test_a_study_whose_trials_all_fail_fails(studies: VertexStudies, tmp_path: Path) -> None:
    study = make_study(["x=int:2:3", "y=categorical:c"], metric="score", max_trials=2, parallel_trials=2,
                       algorithm="grid")
    info = studies.submit(_job(tmp_path, _name()), study).wait(timeout=120)
    assert info.state is JobState.FAILED
    assert [t.state for t in info.trials] == [JobState.FAILED, JobState.FAILED]
    assert info.best_trial is None


def test_cancel_stops_the_running_trials_and_starts_no_more(
        studies: VertexStudies, settings: Settings, vertex: VertexTarget, tmp_path: Path) -> None:
    study = make_study(["x=double:0:1", "y=categorical:a"], metric="score", max_trials=6, parallel_trials=2)
    handle = studies.submit(_job(tmp_path, _name(), "--sleep", "60"), study)
    running = handle.info()
    for _ in range(600):
        running = handle.info()
        if sum(t.state is JobState.RUNNING for t in running.trials) == 2:
            break
        time.sleep(0.05)
    assert sum(t.state is JobState.RUNNING for t in running.trials) == 2, running
    handle.cancel()
    info = handle.wait(timeout=60)
    assert info.state is JobState.CANCELLED
    assert len(info.trials) == 2 and all(t.state is JobState.FAILED for t in info.trials)
    backend = VertexBackend(settings=settings, target=vertex, retry=FAST)
    try:
        for trial in info.trials:
            assert backend.attach(trial.job_id or "").wait(timeout=30).state is JobState.CANCELLED
    finally:
        backend.close()
    handle.cancel()  # a second cancel of an ended study is no error


def test_attach_and_list_find_the_study(studies: VertexStudies, tmp_path: Path) -> None:
    study = make_study(["x=double:0.01:1:log", "y=categorical:a,b", "z=discrete:1,2.5", "n=int:1:8:log"],
                       metric="score", max_trials=1, parallel_trials=1, algorithm="random")
    name = _name()
    handle = studies.submit(_job(tmp_path, name), study)
    handle.wait(timeout=120)
    again = studies.attach(handle.study_id)
    assert isinstance(again, VertexStudy) and again.study == study  # the study read back from the job
    info = again.info()
    assert info.state is JobState.SUCCEEDED and info.console_url and handle.study_id in info.console_url
    trial = info.trials[0]
    assert isinstance(trial.params["n"], int) and 1 <= trial.params["n"] <= 8
    assert trial.params["z"] in (1.0, 2.5) and 0.01 <= float(trial.params["x"]) <= 1
    assert studies.attach(again.name).study_id == handle.study_id  # by full name too
    listed = [s for s in studies.list(limit=None) if s.study_id == handle.study_id]
    assert len(listed) == 1 and listed[0].study == study and listed[0].state is JobState.SUCCEEDED
    with pytest.raises(JobNotFoundError):
        studies.attach("1234567")


@pytest.mark.parametrize("fault", ["unavailable", "answer-lost", "late-answer"])
def test_create_retried_makes_exactly_one_tuning_job(
        studies: VertexStudies, emulator: Any, tmp_path: Path, fault: str) -> None:
    if fault == "late-answer":  # created at once, answered after the client's deadline (DEADLINE_EXCEEDED)
        emulator.faults.late("CreateHyperparameterTuningJob", seconds=FAST.create_timeout + 1)
    else:
        emulator.faults.fail("CreateHyperparameterTuningJob", code="UNAVAILABLE", after=fault == "answer-lost")
    name = _name()
    study = make_study(["x=double:0:1", "y=categorical:a"], metric="score", max_trials=1)
    handle = studies.submit(_job(tmp_path, name), study)
    matching = [s for s in studies.list(limit=None) if s.study_id == handle.study_id]
    client = emulator.job_client()
    try:
        made = [j for j in client.list_hyperparameter_tuning_jobs(parent=f"projects/{PROJECT}/locations/us-central1")
                if j.display_name == name]
    finally:
        client.transport.close()
    assert len(made) == 1 and len(matching) == 1
    assert handle.wait(timeout=120).state is JobState.SUCCEEDED


def test_study_spec_round_trips_through_the_job() -> None:
    from google.cloud import aiplatform_v1

    from tfcloud.google.vertex.request import tuning_job_request
    from tfcloud.google.vertex.tuning import study_from_job

    study: StudySpec = make_study(["a=double:-2:2", "b=int:3:9", "c=categorical:p,q,r", "d=discrete:0.5,4"],
                                  metric="val/loss", goal="minimize", max_trials=7, parallel_trials=3)
    spec, target = build_job(entry_point=__file__, target="vertex", chief_config="CPU", distribution_strategy=None)
    for each in (study, replace(study, early_stopping=True)):
        request = tuning_job_request(spec, target, each, image_uri=IMAGE, submission_id="s")
        assert study_from_job(aiplatform_v1.HyperparameterTuningJob.from_json(json.dumps(request))) == each


def test_get_retried_through_unavailable_and_unknown_when_it_never_answers(
        studies: VertexStudies, emulator: Any, settings: Settings, vertex: VertexTarget, tmp_path: Path) -> None:
    from tfcloud.errors import OutcomeUnknownError

    study = make_study(["x=double:0:1", "y=categorical:a"], metric="score", max_trials=1)
    handle = studies.submit(_job(tmp_path, _name()), study)
    emulator.faults.fail("GetHyperparameterTuningJob", code="UNAVAILABLE", times=2)
    assert handle.wait(timeout=120).state is JobState.SUCCEEDED  # two failed looks, retried
    impatient = VertexStudies(settings, target=vertex, retry=RetryPolicy(initial=0.02, maximum=0.05, deadline=0.5))
    try:
        emulator.faults.fail("GetHyperparameterTuningJob", code="UNAVAILABLE", times=10_000)
        with pytest.raises(OutcomeUnknownError) as err:
            impatient.attach(handle.study_id)
        assert f"Study {handle.study_id} may still be running" in err.value.message
        assert err.value.hint == f"Its state: tfcloud status {handle.study_id}"
    finally:
        emulator.faults.clear()
        impatient.close()


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def test_early_stopping_stops_the_bad_trials_as_vertex_ai_does(
        studies: VertexStudies, settings: Settings, vertex: VertexTarget, emulator: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    study = make_study(["x=double:0:1", "y=categorical:a"], metric="score", max_trials=6, parallel_trials=2,
                       early_stopping=True)
    # Two at a time: trials 1 and 2 end before 3 and 4 start, so trials 4 and 6 (bad from their first step) meet
    # the median of at least two finished trials, and stop at step 2 (the first step the rule judges).
    handle = studies.submit(_job(tmp_path, _name(), "--steps", "10", "--bad", "4,6", "--out", str(out)), study)
    info = handle.wait(timeout=120)
    assert info.state is JobState.SUCCEEDED, info
    assert info.study.early_stopping  # read back from the job's median_automated_stopping_spec
    by_id = {t.trial_id: t for t in info.trials}
    assert sorted(by_id) == ["1", "2", "3", "4", "5", "6"]
    backend = VertexBackend(settings=settings, target=vertex, retry=FAST)
    try:
        for trial_id in ("4", "6"):
            trial = by_id[trial_id]
            reached = int((out / f"step-{trial_id}").read_text())
            assert trial.state is JobState.SUCCEEDED and trial.stopped_at is not None, trial
            assert 2 <= trial.stopped_at <= reached < 10  # stopped before its last step
            assert trial.message is not None and trial.message.startswith(f"Stopped early at step {trial.stopped_at}")
            assert trial.metric == pytest.approx(-1 + trial.stopped_at / 100)  # the last measurement is the final one
            assert backend.attach(trial.job_id or "").wait(timeout=30).state is JobState.CANCELLED
            assert not _alive(int((out / f"pid-{trial_id}").read_text()))  # no process left
    finally:
        backend.close()
    for trial_id in ("1", "2", "3", "5"):
        trial = by_id[trial_id]
        assert trial.state is JobState.SUCCEEDED and trial.stopped_at is None and trial.message is None, trial
        assert (out / f"step-{trial_id}").read_text() == "10"
        assert trial.metric == pytest.approx(1.1)
    assert info.best_trial is not None and info.best_trial.stopped_at is None

    # What the service shows: every trial's measurements by step, the final one with its step.
    client = emulator.job_client()
    try:
        job = client.get_hyperparameter_tuning_job(name=handle.name)
    finally:
        client.transport.close()
    for trial in job.trials:
        steps = [m.step_count for m in trial.measurements]
        assert steps == list(range(1, len(steps) + 1)) and trial.final_measurement.step_count == steps[-1]
        assert trial.state.name == "SUCCEEDED"
def test_status_rebuilds_the_rerun_command_from_the_job(
        studies: VertexStudies, emulator: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A study this machine did not submit (nothing kept in the state dir): `tfcloud status ID --study` rebuilds
    the job flags from the trial job spec (pools, env, labels, the script's own arguments); the script is
    ENTRY_POINT, which the job does not hold."""
    from tfcloud.cli import main

    study = make_study(["x=double:0.1:0.5", "y=categorical:b"], metric="score", max_trials=1, parallel_trials=1)
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    spec, target = build_job(entry_point=str(script), target="vertex", chief_config="CPU", worker_count=1,
                             worker_config="T4_1X", distribution_strategy=None, display_name=_name(),
                             entry_point_args=["--sleep", "0"], env={"DATA": "gs://b/d 1"},
                             job_labels={"team": "x"})
    job, _ = prepare(spec, target, tmp_path)
    handle = studies.submit(replace(job, image=ImageRef(uri=IMAGE)), study)
    info = handle.wait(timeout=120)
    assert info.state is JobState.SUCCEEDED and info.best_trial is not None, info
    x = info.best_trial.params["x"]

    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", emulator.endpoint)
    monkeypatch.setenv("TFCLOUD_PROJECT", PROJECT)
    assert main(["status", handle.study_id, "--study"]) == 0
    out = capsys.readouterr().out
    assert (f"Rerun the best trial: tfcloud submit ENTRY_POINT --vertex --chief-config CPU --worker-count 1 "
            f"--worker-config T4_1X --env 'DATA=gs://b/d 1' --label team=x -- --sleep 0 --x={x!r} --y=b\n") in out


def test_status_gives_the_rerun_command_kept_at_submit_time(
        studies: VertexStudies, emulator: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `tfcloud.tune` keeps in the state dir, by the study's resource name, is what attaching gives back:
    the script and every flag (some, like --strategy and -r, the job does not hold)."""
    from tfcloud import sdk
    from tfcloud.flow.settings import resolve_settings
    from tfcloud.google.vertex.tuning import Rerun, save_rerun

    study = make_study(["x=double:0.1:0.5", "y=categorical:a"], metric="score", max_trials=1, parallel_trials=1)
    handle = studies.submit(_job(tmp_path, _name(), "--sleep", "0"), study)
    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", emulator.endpoint)
    monkeypatch.setenv("TFCLOUD_PROJECT", PROJECT)
    state_dir = sdk.state_dir(resolve_settings({"target": "vertex"}))
    kept = Rerun(entry_point=str(tmp_path / "train.py"), args=("--sleep", "0"),
                 flags=("--strategy", "none", "-r", "requirements.txt", "--chief-config", "CPU"))
    save_rerun(state_dir, handle.name, kept)
    save_rerun(state_dir, handle.name + "0", Rerun(entry_point="other.py"))  # another study's
    assert [p.stat().st_mode & 0o777 for p in (state_dir / "vertex-studies").iterdir()] == [0o600, 0o600]
    handle.wait(timeout=120)
    with sdk.attach_study(handle.study_id) as again:
        best = again.info().best_trial
        assert best is not None
        assert again.rerun_command() == (
            f"tfcloud submit {tmp_path / 'train.py'} --vertex --strategy none -r requirements.txt --chief-config CPU "
            f"-- --sleep 0 --x={best.params['x']!r} --y=a")


def test_logs_of_a_trial_by_its_number(studies: VertexStudies, emulator: Any, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`tfcloud logs STUDY_ID --trial N`: the logs of the CustomJob Vertex AI ran trial N as."""
    from tfcloud.cli import main

    study = make_study(["x=double:0.1:0.5", "y=categorical:a"], metric="score", max_trials=2, parallel_trials=1)
    handle = studies.submit(_job(tmp_path, _name(), "--sleep", "0"), study)
    info = handle.wait(timeout=120)
    assert info.state is JobState.SUCCEEDED, info
    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", emulator.endpoint)
    monkeypatch.setenv("TFCLOUD_PROJECT", PROJECT)
    capsys.readouterr()
    assert main(["logs", handle.study_id, "--trial", "2", "--replica", "chief-0"]) == 0
    out = capsys.readouterr().out.splitlines()
    x = info.trials[1].params["x"]
    assert f"chief-0 | trial 2 args ['--sleep', '0', '--x={x!r}', '--y=a']" in out and "chief-0 | reported" in out
    assert main(["logs", handle.study_id, "--trial", "3"]) == 2
    assert "expected one of the study's trials: 1, 2" in capsys.readouterr().err
