"""tfcloud.report(): the metrics file as cloudml-hypertune writes it, from the chief only; a study's info read
back from its JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tfcloud
from tfcloud.job.states import JobState
from tfcloud.job.study import StudyInfo, TrialInfo, make_study, read_measurements, read_metric, trial_args
from tfcloud.runtime.reporting import is_chief


def test_report_appends_measurements_and_the_last_is_the_trials_result(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hp" / "output.metrics"
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(path))
    monkeypatch.setenv("CLOUD_ML_TRIAL_ID", "7")
    monkeypatch.delenv("TF_CONFIG", raising=False)
    monkeypatch.delenv("TFCLOUD_REPORTED", raising=False)
    assert tfcloud.report(val_accuracy=0.5, step=1) == path
    assert tfcloud.report(val_accuracy=0.75, loss=0.3, step=2) == path
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(x["trial"], x["global_step"], x["val_accuracy"]) for x in lines] == [("7", "1", "0.5"), ("7", "2", "0.75")]
    assert read_metric(path, "val_accuracy") == 0.75
    assert read_metric(path, "loss") == 0.3
    assert read_metric(path, "auc") is None


def test_measurements_are_read_by_step_and_steps_always_increase(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "output.metrics"
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(path))
    monkeypatch.delenv("TF_CONFIG", raising=False)
    tfcloud.report(acc=0.1, step=1)
    tfcloud.report(loss=9.0, step=2)  # another metric: not a measurement of acc
    tfcloud.report(acc=0.3, step=3)
    tfcloud.report(acc=0.4)  # no step (written as 0): the next one
    tfcloud.report(acc=0.5, step=4)  # not above the previous step: the next one too
    with path.open("a") as out:
        out.write("not json\n" + json.dumps({"acc": "nan", "global_step": "9"}) + "\n")
        out.write(json.dumps({"acc": "0.7", "global_step": "20"}) + "\n")
    assert read_measurements(path, "acc") == [(1, 0.1), (3, 0.3), (4, 0.4), (5, 0.5), (20, 0.7)]
    assert read_measurements(path, "loss") == [(2, 9.0)]
    assert read_measurements(tmp_path / "none", "acc") == []


@pytest.mark.parametrize(("tf_config", "chief"), [
    (None, True),
    ({"cluster": {"chief": ["a"], "worker": ["b"]}, "task": {"type": "chief", "index": 0}}, True),
    ({"cluster": {"chief": ["a"], "worker": ["b"]}, "task": {"type": "worker", "index": 0}}, False),
    ({"cluster": {"worker": ["a", "b"]}, "task": {"type": "worker", "index": 0}}, True),
    ({"cluster": {"worker": ["a", "b"]}, "task": {"type": "worker", "index": 1}}, False),
    ({"cluster": {"chief": ["a"], "ps": ["b"]}, "task": {"type": "ps", "index": 0}}, False),
])
def test_only_the_chief_reports(tf_config: dict[str, object] | None, chief: bool) -> None:
    env = {} if tf_config is None else {"TF_CONFIG": json.dumps(tf_config)}
    assert is_chief(env) is chief


def test_a_worker_reports_nothing_and_says_so_by_returning_none(tmp_path: Path) -> None:
    path = tmp_path / "m"
    code = "import tfcloud; print(tfcloud.report(acc=1.0))"
    tf_config = json.dumps({"cluster": {"chief": ["a"], "worker": ["b"]}, "task": {"type": "worker", "index": 0}})
    env = {"CLOUD_ML_HP_METRIC_FILE": str(path), "TF_CONFIG": tf_config, "PATH": "/usr/bin:/bin",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"
    assert not path.exists()


def test_a_study_reads_back_from_its_json() -> None:
    study = make_study(["lr=double:1e-4:1e-1:log", "units=int:32:512", "opt=categorical:adam,sgd",
                        "batch=discrete:64,32"], metric="val_accuracy", goal="minimize", max_trials=5,
                       parallel_trials=2, algorithm="random", early_stopping=True)
    trials = (
        TrialInfo(trial_id="1", params={"lr": 0.01, "units": 64, "opt": "adam", "batch": 32.0},
                  state=JobState.SUCCEEDED, metric=0.2, started=1.0, ended=3.0, job_id="local-x"),
        TrialInfo(trial_id="2", params={"lr": 0.001, "units": 40, "opt": "sgd", "batch": 64.0},
                  state=JobState.SUCCEEDED, metric=0.1, started=1.0, ended=4.0),
        TrialInfo(trial_id="3", params={"lr": 0.1, "units": 32, "opt": "sgd", "batch": 64.0},
                  state=JobState.FAILED, message="boom"),
        TrialInfo(trial_id="4", params={"lr": 0.05, "units": 33, "opt": "sgd", "batch": 64.0},
                  state=JobState.SUCCEEDED, metric=0.9, message="Stopped early at step 2", stopped_at=2),
    )
    info = StudyInfo(study_id="study-x", target="local", state=JobState.SUCCEEDED, study=study, trials=trials)
    again = StudyInfo.from_dict(json.loads(json.dumps(info.to_dict())))
    assert again == info
    assert again.best_trial is not None and again.best_trial.trial_id == "2"  # minimize
    assert trial_args(study, trials[0].params) == ("--lr=0.01", "--units=64", "--opt=adam", "--batch=32")
    assert trials[0].duration == 2.0


def test_processes_writing_one_metrics_file_at_once_never_fail(tmp_path: Path) -> None:
    """Replicas of a local cluster (or of one emulated trial) can share a metrics file: each write replaces the
    file through a temporary file of its own, so no writer finds its temporary file taken by another."""
    path = tmp_path / "output.metrics"
    writer = ("import sys; from pathlib import Path; from tfcloud.job.study import write_metric\n"
              "for step in range(1, 151):\n"
              "    write_metric({'score': float(sys.argv[2])}, step=step, path=Path(sys.argv[1]))\n")
    env = {**os.environ, "PYTHONPATH": str(Path(tfcloud.__file__).resolve().parent.parent)}
    procs = [subprocess.Popen([sys.executable, "-c", writer, str(path), str(n)], env=env, stderr=subprocess.PIPE,
                              text=True) for n in range(4)]
    results = [(p.returncode, err) for p in procs for _, err in [p.communicate(timeout=120)]]
    assert [code for code, _ in results] == [0, 0, 0, 0], [err for _, err in results]
    assert read_metric(path, "score") in {0.0, 1.0, 2.0, 3.0}
    assert not list(tmp_path.glob("*.tmp"))
