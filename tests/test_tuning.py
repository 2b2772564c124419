"""The local tuner: real studies whose trials are real local jobs (a tf.keras model on sklearn's digits, and a
plain script), optuna choosing, metrics read back as Vertex AI's tuning service reads them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import tfcloud
from tfcloud.cli import main
from tfcloud.job.states import JobState
from tfcloud.job.study import read_metric
from tfcloud.targets.local.backend import LocalBackend

pytest.importorskip("optuna", reason="local tuning needs tfcloud[tune]")
pytest.importorskip("matplotlib", reason="the study's plots need tfcloud[tune]")

KERAS_SCRIPT = textwrap.dedent('''
    import argparse, json, os, sys

    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--epochs", type=int)
    p.add_argument("--optimizer")
    p.add_argument("--units", type=int)
    a = p.parse_args()
    with open(os.path.join(a.out, "args-" + os.environ["CLOUD_ML_TRIAL_ID"] + ".json"), "w") as f:
        json.dump(sys.argv[1:], f)
    if a.optimizer == "bad":
        raise SystemExit("no such optimizer: bad")

    import tensorflow as tf
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x, y = x[:600] / 16.0, y[:600]
    model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(a.units, activation="relu"),
                                 tf.keras.layers.Dense(10, activation="softmax")])
    model.compile(a.optimizer, "sparse_categorical_crossentropy", metrics=["accuracy"])
    callbacks = []
    if a.units == 16:  # this trial reports itself: the launcher's automatic reporting must stay quiet
        import tfcloud

        callbacks.append(tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: tfcloud.report(
            val_accuracy=logs["val_accuracy"], explicit=1, step=epoch + 1)))
    model.fit(x, y, epochs=a.epochs, batch_size=64, validation_split=0.25, verbose=0, callbacks=callbacks)
''')


@pytest.mark.tensorflow
def test_a_keras_study_runs_every_trial_with_its_args_and_keeps_the_best(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sklearn", reason="the digits data set needs scikit-learn (tfcloud[test])")
    script = tmp_path / "train.py"
    script.write_text(KERAS_SCRIPT)
    out = tmp_path / "out"
    out.mkdir()
    # The grid covers every point: 3 optimizers (one that fails) x 2 sizes (one that reports itself) = 6 trials.
    study = tfcloud.tune(script, params=["optimizer=categorical:adam,sgd,bad", "units=discrete:8,16"],
                         metric="val_accuracy", goal="maximize", max_trials=6, parallel_trials=2, algorithm="grid",
                         entry_point_args=["--out", str(out), "--epochs", "2"])
    info = study.wait(timeout=540)
    assert info.state is JobState.SUCCEEDED, info

    assert len(info.trials) == 6
    assert {(t.params["optimizer"], t.params["units"]) for t in info.trials} == {
        (o, float(u)) for o in ("adam", "sgd", "bad") for u in (8, 16)}
    for trial in info.trials:  # each trial's script got the study's arguments, then its own values
        received = json.loads((out / f"args-{trial.trial_id}.json").read_text())
        assert received == ["--out", str(out), "--epochs", "2", f"--optimizer={trial.params['optimizer']}",
                            f"--units={int(trial.params['units'])}"]
        assert trial.job_id is not None and trial.job_id.startswith("local-")
    # Two trials at a time: the first two overlapped, and never more than two ran together.
    spans = [(t.started, t.ended) for t in info.trials]
    assert all(s is not None and e is not None for s, e in spans)
    assert max(sum(1 for s2, e2 in spans if s2 <= s < e2) for s, _ in spans) == 2  # type: ignore[operator]

    failed = [t for t in info.trials if t.params["optimizer"] == "bad"]
    assert [t.state for t in failed] == [JobState.FAILED, JobState.FAILED]
    assert all(t.message for t in failed)
    succeeded = [t for t in info.trials if t.state is JobState.SUCCEEDED]
    assert len(succeeded) == 4 and all(t.metric is not None and 0 <= t.metric <= 1 for t in succeeded)

    # Metrics as Vertex AI reads them: from fit's epoch logs (the launcher's callback), or the script's own.
    trials_dir = study.handle.path / "trials"  # type: ignore[attr-defined]
    for trial in succeeded:
        lines = [json.loads(x) for x in (trials_dir / trial.trial_id / "output.metrics").read_text().splitlines()]
        assert [line["global_step"] for line in lines] == ["1", "2"]
        assert all(line["trial"] == trial.trial_id for line in lines)
        explicit = int(trial.params["units"]) == 16
        assert all(("explicit" in line) is explicit for line in lines), lines
        assert trial.metric == float(lines[-1]["val_accuracy"]) == read_metric(
            trials_dir / trial.trial_id / "output.metrics", "val_accuracy")

    best = info.best_trial
    assert best is not None and best.metric == max(t.metric for t in succeeded if t.metric is not None)
    assert study.best_trial == best
    command = study.rerun_command()
    assert command is not None and command.startswith(f"tfcloud submit {script} -- --out {out} --epochs 2 ")
    assert command.endswith(f"--optimizer={best.params['optimizer']} --units={int(best.params['units'])}")

    # Another process's view (`tfcloud status STUDY --json`) is the same study.
    capsys.readouterr()
    assert main(["status", study.study_id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == info.to_dict()
    assert main(["status", study.study_id]) == 0
    table = capsys.readouterr().out
    assert f"* {best.trial_id} " in table and "failed" in table and "succeeded" in table

    png, page = study.plot_paths  # type: ignore[misc]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "data:image/png;base64," in page.read_text()


PLAIN_SCRIPT = textwrap.dedent('''
    import argparse
    import tfcloud

    p = argparse.ArgumentParser()
    p.add_argument("--x", type=float)
    p.add_argument("--kind")
    p.add_argument("--shift", type=float, default=0.0)
    a = p.parse_args()
    tfcloud.report(loss=(a.x - 0.3) ** 2 + (0.5 if a.kind == "b" else 0.0) + a.shift)
''')


def test_the_cli_tunes_a_script_and_prints_the_command_that_reruns_the_best(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "fit.py"
    script.write_text(PLAIN_SCRIPT)
    plot = tmp_path / "plots" / "study.html"
    code = main(["tune", str(script), "--param", "x=double:0.01:1:log", "--param", "kind=categorical:a,b",
                 "--metric", "loss", "--goal", "minimize", "--trials", "6", "--parallel", "3", "--strategy", "none",
                 "--worker-count", "1", "--plot", str(plot), "--", "--shift", "1"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    study_id = next(w for w in captured.err.split() if w.startswith("study-")).rstrip(":")
    info = tfcloud.sdk.attach_study(study_id).info()
    assert info.state is JobState.SUCCEEDED and len(info.trials) == 6
    for trial in info.trials:  # the metric is what the script computed from its own arguments
        x, kind = float(trial.params["x"]), trial.params["kind"]
        assert trial.metric == pytest.approx((x - 0.3) ** 2 + (0.5 if kind == "b" else 0.0) + 1)
    # Each trial is a chief and a worker that both run the script: only the chief's report is written.
    metrics = tfcloud.sdk.attach_study(study_id).handle.path / "trials"  # type: ignore[attr-defined]
    assert [len((metrics / t.trial_id / "output.metrics").read_text().splitlines()) for t in info.trials] == [1] * 6
    best = info.best_trial
    assert best is not None and best.metric == min(t.metric for t in info.trials if t.metric is not None)
    assert captured.out.strip().splitlines()[-1] == (
        f"tfcloud submit {script} --worker-count 1 --strategy none -- --shift 1 --x={best.params['x']!r} "
        f"--kind={best.params['kind']}")
    assert f"* {best.trial_id} " in captured.err  # the live table, the best marked
    assert plot.read_text().startswith("<!doctype html>")


def test_a_trial_that_reports_nothing_fails_and_a_study_without_success_exits_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "quiet.py"
    script.write_text("print('no metric')\n")
    code = main(["tune", str(script), "--param", "n=int:1:3", "--metric", "acc", "--trials", "2",
                 "--strategy", "none", "--algorithm", "random"])
    err = capsys.readouterr().err
    assert code == 1
    assert "no trial succeeded" in err
    assert "reported no `acc`" in err


def test_status_of_an_unknown_study_names_the_recent_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "study-nothing-here"]) == 2
    err = capsys.readouterr().err
    assert "No local study `study-nothing-here`" in err and "Traceback" not in err


def test_ctrl_c_cancels_the_study_and_its_running_trials(tmp_path: Path) -> None:
    proc, study_id, jobs = _start_slow_study(tmp_path)
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=90)
    err = proc.communicate()[1]
    assert code == 130, err
    assert f"Interrupted: cancelling {study_id}." in err and "Traceback" not in err
    info = tfcloud.sdk.attach_study(study_id).info()
    assert info.state is JobState.CANCELLED
    assert [t.state for t in info.trials] == [JobState.CANCELLED, JobState.CANCELLED]  # no third trial started
    backend = LocalBackend(home=os.environ["TFCLOUD_HOME"])
    assert {backend.attach(j).info().state for j in jobs} == {JobState.CANCELLED}


def _start_slow_study(tmp_path: Path) -> tuple[subprocess.Popen[str], str, list[str]]:
    """`tfcloud tune` of a script that sleeps, in a child process, once both its first trials are running:
    the process, the study id and the two trials' job ids."""
    script = tmp_path / "slow.py"
    script.write_text("import time\nprint('started', flush=True)\ntime.sleep(300)\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfcloud.cli", "tune", str(script), "--param", "n=int:1:9", "--metric", "acc",
         "--trials", "4", "--parallel", "2", "--strategy", "none"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    studies = Path(os.environ["TFCLOUD_HOME"]) / "studies"
    backend = LocalBackend(home=os.environ["TFCLOUD_HOME"])
    deadline = time.monotonic() + 120
    jobs: list[str] = []
    found: list[Path] = []
    while len(jobs) < 2 and time.monotonic() < deadline:  # both trials' scripts are running
        time.sleep(0.2)
        found = list(studies.glob("*/study.json")) if studies.is_dir() else []
        try:
            trials = json.loads(found[0].read_text())["trials"] if found else []
        except ValueError:
            continue
        logs = [(t["job_id"], backend.jobs_dir / t["job_id"] / "logs" / "chief-0.log") for t in trials if t["job_id"]]
        jobs = [job for job, log in logs if log.is_file() and "started" in log.read_text(errors="replace")]
    if len(jobs) < 2:
        proc.kill()
        pytest.fail("no trial started: " + (proc.communicate()[1] or ""))
    return proc, found[0].parent.name, jobs


def test_cancel_from_another_process_stops_the_study_and_its_trials(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    proc, study_id, jobs = _start_slow_study(tmp_path)
    try:
        assert main(["cancel", study_id]) == 0
        assert capsys.readouterr().out == f"{study_id}\tcancelled\n"
        code = proc.wait(timeout=90)
    finally:
        proc.kill()
        err = proc.communicate()[1]
    assert code == 1, err  # the command that ran the study: no trial succeeded
    backend = LocalBackend(home=os.environ["TFCLOUD_HOME"])
    assert {backend.attach(j).info().state for j in jobs} == {JobState.CANCELLED}


def test_a_study_whose_tuner_died_reads_as_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_dir = Path(os.environ["TFCLOUD_HOME"]) / "studies" / "study-train-20250101-000000-abcd"
    study_dir.mkdir(parents=True)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (study_dir / "study.json").write_text(json.dumps({
        "study_id": study_dir.name, "target": "local", "state": "running", "metric": "acc", "goal": "maximize",
        "params": ["n=int:1:9"], "max_trials": 4, "parallel_trials": 2, "algorithm": "default",
        "tuner_pid": int(gone.stdout), "trials": [], "entry_point": str(tmp_path / "t.py")}))
    assert main(["status", study_dir.name, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "failed"


STEPS_SCRIPT = textwrap.dedent('''
    import argparse, os, time
    import tfcloud

    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--bad", default="")
    p.add_argument("--steps", type=int)
    p.add_argument("--units", type=int)
    a = p.parse_args()
    trial = os.environ["CLOUD_ML_TRIAL_ID"]
    with open(os.path.join(a.out, "pid-" + trial), "w") as f:
        f.write(str(os.getpid()))
    bad = trial in a.bad.split(",")
    for step in range(1, a.steps + 1):
        tfcloud.report(acc=(0.1 if bad else 0.5) + 0.01 * step, step=step)
        with open(os.path.join(a.out, "step-" + trial), "w") as f:
            f.write(str(step))
        time.sleep(0.3)
''')


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def test_early_stopping_stops_the_bad_trials_and_lets_the_good_ones_finish(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "steps.py"
    script.write_text(STEPS_SCRIPT)
    out = tmp_path / "out"
    out.mkdir()
    # Two at a time: trials 1 and 2 finish before 3 and 4 start, so trials 4 and 6 (bad from their first step)
    # meet the median of at least two finished trials, and stop at step 2 (the first step the rule judges).
    code = main(["tune", str(script), "--param", "units=int:1:100", "--metric", "acc", "--trials", "6",
                 "--parallel", "2", "--strategy", "none", "--early-stopping",
                 "--", "--out", str(out), "--bad", "4,6", "--steps", "10"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    study_id = next(w for w in captured.err.split() if w.startswith("study-")).rstrip(":")
    info = tfcloud.sdk.attach_study(study_id).info()
    assert info.state is JobState.SUCCEEDED and info.study.early_stopping
    by_id = {t.trial_id: t for t in info.trials}
    assert sorted(by_id) == ["1", "2", "3", "4", "5", "6"]
    backend = LocalBackend(home=os.environ["TFCLOUD_HOME"])
    for trial_id in ("4", "6"):
        trial = by_id[trial_id]
        reached = int((out / f"step-{trial_id}").read_text())
        assert trial.state is JobState.SUCCEEDED and trial.stopped_at is not None
        assert 2 <= trial.stopped_at <= reached < 10  # stopped before its last step
        assert trial.message is not None and trial.message.startswith(f"Stopped early at step {trial.stopped_at}")
        assert trial.metric is not None and trial.metric < 0.5  # its last measurement
        assert trial.job_id is not None and backend.attach(trial.job_id).info().state is JobState.CANCELLED
        assert not _alive(int((out / f"pid-{trial_id}").read_text()))  # no process left
    for trial_id in ("1", "2", "3", "5"):
        trial = by_id[trial_id]
        assert trial.state is JobState.SUCCEEDED and trial.stopped_at is None, trial
        assert (out / f"step-{trial_id}").read_text() == "10"
        assert trial.metric == pytest.approx(0.6)
    best = info.best_trial
    assert best is not None and best.stopped_at is None
    assert "stopped at " in captured.err  # the live table marks the stopped trials
    assert main(["status", study_id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["early_stopping"] is True
    assert {t["trial_id"]: t["stopped_at"] for t in shown["trials"]} == {t.trial_id: t.stopped_at for t in info.trials}


def test_list_studies_gives_the_local_studies_newest_first(tmp_path: Path) -> None:
    script = tmp_path / "fit.py"
    script.write_text(PLAIN_SCRIPT)
    ids = []
    for _ in range(2):
        with tfcloud.tune(script, params=["x=double:0.1:1", "kind=categorical:a"], metric="loss", goal="minimize",
                          max_trials=1, distribution_strategy=None) as study:
            made = int(time.time())  # the study's id carries the second it was made (this one or an earlier one)
            study.wait(120)
            ids.append(study.study_id)
            while int(time.time()) <= made:  # the next id is made in a later second
                time.sleep(0.01)
    found = tfcloud.sdk.list_studies()
    assert [info.study_id for info in found] == ids[::-1]
    assert [info.state for info in found] == [JobState.SUCCEEDED] * 2
    assert [info.study_id for info in tfcloud.sdk.list_studies(limit=1)] == ids[1:]
    with pytest.raises(tfcloud.ValidationError,
                       match="Invalid `target`: expected a target that runs tuning studies: local, vertex"):
        tfcloud.sdk.list_studies(target="ray")


TALKING_SCRIPT = textwrap.dedent('''
    import sys
    import tfcloud

    n = int(sys.argv[-1].split("=")[1])
    print(f"trial says n={n}", flush=True)
    tfcloud.report(acc=n)
''')


def test_follow_trial_streams_one_trials_logs_and_logs_reads_a_trial_by_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "talk.py"
    script.write_text(TALKING_SCRIPT)
    code = main(["tune", str(script), "--param", "n=int:1:1000", "--metric", "acc", "--trials", "2",
                 "--strategy", "none", "--algorithm", "random", "--follow-trial", "2"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    study_id = next(w for w in captured.err.split() if w.startswith("study-")).rstrip(":")
    trials = {t.trial_id: t for t in tfcloud.sdk.attach_study(study_id).info().trials}
    said = f"trial says n={trials['2'].params['n']}"
    assert f"2/chief-0 | {said}" in captured.err.splitlines()  # trial 2's lines, with their prefix
    assert "1/chief-0" not in captured.err  # and only trial 2's

    assert main(["logs", study_id, "--trial", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"chief-0 | trial says n={trials['1'].params['n']}"]
    assert main(["logs", study_id, "--trial", "7"]) == 2
    assert "one of the study's trials: 1, 2" in capsys.readouterr().err


def test_verbose_tune_streams_every_trials_logs_prefixed_by_its_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "talk.py"
    script.write_text(TALKING_SCRIPT)
    code = main(["-v", "tune", str(script), "--param", "n=int:1:1000", "--metric", "acc", "--trials", "2",
                 "--parallel", "2", "--strategy", "none", "--algorithm", "random"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    study_id = next(w for w in captured.err.split() if w.startswith("study-")).rstrip(":")
    for trial in tfcloud.sdk.attach_study(study_id).info().trials:
        assert f"{trial.trial_id}/chief-0 | trial says n={trial.params['n']}" in captured.err.splitlines()


def test_follow_trial_and_detach_are_refused_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "talk.py"
    script.write_text(TALKING_SCRIPT)
    assert main(["tune", str(script), "--param", "n=int:1:3", "--metric", "acc", "--follow-trial", "1",
                 "--detach"]) == 2
    assert "--follow-trial" in capsys.readouterr().err
    assert main(["tune", str(script), "--param", "n=int:1:3", "--metric", "acc", "--trials", "2",
                 "--follow-trial", "3"]) == 2
    assert "expected a trial's number, 1 to 2 (--trials), received 3" in capsys.readouterr().err
