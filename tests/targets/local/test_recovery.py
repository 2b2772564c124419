"""Recovery and artifacts for local jobs: ``max_restarts`` restarts the whole cluster when a replica dies and
Keras ``fit`` resumes from the launcher's backup in ``AIP_CHECKPOINT_DIR``; every job gets the ``AIP_*``
directories Vertex AI gives; replicas split the machine's GPUs.

The quick tests run scripts without TensorFlow (``distribution_strategy=None``); the ``tensorflow`` ones train a
real MultiWorkerMirrored model whose replica SIGKILLs itself mid-training on the first attempt
(tests/targets/scripts/train_resume.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.targets.localjobs import assert_no_survivors
from tfcloud.errors import ValidationError
from tfcloud.flow.validate import build_job, build_spec
from tfcloud.job.spec import Role
from tfcloud.job.states import JobState
from tfcloud.replicas import ReplicaPlan, aip_env, split_gpus, visible_gpus
from tfcloud.targets import LocalTarget
from tfcloud.targets.local.backend import LocalJob

# Prints what it sees. worker-0 exits 3 on the attempts listed in the first argument ("1,2"; "stop1": stops itself,
# SIGSTOP, on attempt 1), else it writes a marker for the chief; the chief (like a MultiWorkerMirrored chief)
# cannot finish before its worker did.
FLAKY = r'''
import json, os, signal, sys, time
me, attempt = os.environ["TFCLOUD_REPLICA"], os.environ["TFCLOUD_ATTEMPT"]
print("view", json.dumps({k: os.environ.get(k) for k in (
    "TFCLOUD_ATTEMPT", "TFCLOUD_REPLICA", "AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR",
    "CUDA_VISIBLE_DEVICES", "TF_FORCE_GPU_ALLOW_GROWTH")}), flush=True)
failing = sys.argv[1].split(",") if len(sys.argv) > 1 else []
marker = os.path.join(os.environ["AIP_CHECKPOINT_DIR"], "worker-done-" + attempt)
if me == "worker-0":
    if attempt in failing:
        sys.exit(3)
    if "stop" + attempt in failing:
        os.kill(os.getpid(), signal.SIGSTOP)
    open(marker, "w").close()
elif me == "chief-0" and json.loads(os.environ["TF_CONFIG"])["cluster"].get("worker"):
    while not os.path.exists(marker):
        time.sleep(0.05)
print("done", me, flush=True)
'''


def views(handle: LocalJob) -> list[tuple[str, dict[str, str | None]]]:
    return [(ln.replica, json.loads(ln.text[5:])) for ln in handle.logs() if ln.text.startswith("view ")]


def explain(handle: LocalJob) -> str:
    return "\n".join(f"{ln.replica} | {ln.text}" for ln in handle.logs())[-6000:]


# -- the GPU split (pure) ------------------------------------------------------------------------------------
def replicas(*roles: tuple[Role, int]) -> list[ReplicaPlan]:
    return [ReplicaPlan(role=role, index=i, tf_config={}) for role, n in roles for i in range(n)]


def test_replicas_split_the_gpus_into_disjoint_blocks() -> None:
    cluster = replicas((Role.CHIEF, 1), (Role.WORKER, 1))
    assert split_gpus(cluster, ["0", "1", "2", "3", "4"]) == {
        "chief-0": {"CUDA_VISIBLE_DEVICES": "0,1"}, "worker-0": {"CUDA_VISIBLE_DEVICES": "2,3"}}


def test_fewer_gpus_than_replicas_are_shared_round_robin_and_ps_get_none() -> None:
    cluster = replicas((Role.CHIEF, 1), (Role.WORKER, 2), (Role.PS, 1))
    share = {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}
    assert split_gpus(cluster, ["5", "7"]) == {
        "chief-0": {"CUDA_VISIBLE_DEVICES": "5", **share}, "worker-0": {"CUDA_VISIBLE_DEVICES": "7", **share},
        "worker-1": {"CUDA_VISIBLE_DEVICES": "5", **share}, "ps-0": {"CUDA_VISIBLE_DEVICES": ""}}


def test_no_gpus_no_split() -> None:
    assert split_gpus(replicas((Role.CHIEF, 1), (Role.WORKER, 1)), []) == {}


def test_visible_gpus_come_from_cuda_visible_devices_or_dev(tmp_path: Path) -> None:
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "2,3"}, dev=tmp_path) == ["2", "3"]
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}, dev=tmp_path) == []
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "1,-1,2"}, dev=tmp_path) == ["1"]
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia10"):
        (tmp_path / name).touch()
    assert visible_gpus({}, dev=tmp_path) == ["0", "1", "10"]
    assert visible_gpus({}, dev=tmp_path / "missing") == []


def test_aip_dirs_are_vertex_ais_names_under_the_base() -> None:
    assert aip_env("gs://b/out/") == {"AIP_MODEL_DIR": "gs://b/out/model/",
                                      "AIP_CHECKPOINT_DIR": "gs://b/out/checkpoints/",
                                      "AIP_TENSORBOARD_LOG_DIR": "gs://b/out/logs/"}


# -- the options -----------------------------------------------------------------------------------------
def test_max_restarts_is_checked(script: Path) -> None:
    assert build_job(entry_point=script)[1] == LocalTarget(max_restarts=0)
    assert build_job(entry_point=script, max_restarts=2)[1] == LocalTarget(max_restarts=2)
    assert build_job(entry_point=script, target="vertex")[1].max_restarts is None  # type: ignore[union-attr]
    assert build_job(entry_point=script, target="vertex", max_restarts=0)[1].max_restarts == 0  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="max_restarts"):
        build_spec(entry_point=script, max_restarts=-1)
    with pytest.raises(ValidationError, match="max_restarts"):
        build_spec(entry_point=script, max_restarts="twice")


def test_liveness_timeout_is_checked(script: Path) -> None:
    assert build_job(entry_point=script)[1].liveness_timeout == 60  # type: ignore[union-attr]
    assert build_job(entry_point=script, liveness_timeout=0)[1].liveness_timeout == 0  # type: ignore[union-attr]
    assert build_job(entry_point=script, target="ray", liveness_timeout=5)[1].liveness_timeout == 5  # type: ignore[union-attr]
    for bad in (-1, 1, 86_401, 2.5, "60", True):
        with pytest.raises(ValidationError, match="liveness_timeout"):
            build_spec(entry_point=script, liveness_timeout=bad)


def test_the_cli_refuses_a_bad_or_misplaced_liveness_timeout(write_script, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from tfcloud.cli import main

    script = str(write_script("flaky.py", FLAKY))
    assert main(["submit", script, "--liveness-timeout", "1"]) == 2
    assert ("Invalid `liveness_timeout`: expected a number of seconds from 2 to 86400, or 0 to turn the rule off, "
            "received 1.") in capsys.readouterr().err
    assert main(["submit", script, "--vertex", "--project", "p", "--liveness-timeout", "30", "--dry-run"]) == 2
    assert "Invalid `liveness_timeout`: expected to be left unset for the vertex target" in capsys.readouterr().err


def test_a_local_output_dir_may_be_a_directory(script: Path, tmp_path: Path) -> None:
    _, target = build_job(entry_point=script, base_output_dir=str(tmp_path / "out"))
    assert target == LocalTarget(output_dir=str(tmp_path / "out"))
    with pytest.raises(ValidationError, match="base_output_dir"):
        build_spec(entry_point=script, target="vertex", base_output_dir=str(tmp_path / "out"))


# -- the supervisor: the environment it builds, restarts ------------------------------------------------------
def test_every_replica_gets_the_aip_dirs_and_its_gpu_share(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    handle = submit(write_script("flaky.py", FLAKY), distribution_strategy=None, worker_count=1,
                    env={"CUDA_VISIBLE_DEVICES": "0,1,2,3"})
    assert handle.wait(60).state is JobState.SUCCEEDED, explain(handle)
    seen = dict(views(handle))
    output = handle.job_dir / "output"
    for replica, share in (("chief-0", "0,1"), ("worker-0", "2,3")):
        assert seen[replica]["CUDA_VISIBLE_DEVICES"] == share
        assert seen[replica]["AIP_MODEL_DIR"] == f"{output}/model/"
        assert seen[replica]["AIP_CHECKPOINT_DIR"] == f"{output}/checkpoints/"
        assert seen[replica]["AIP_TENSORBOARD_LOG_DIR"] == f"{output}/logs/"
    assert sorted(p.name for p in output.iterdir()) == ["checkpoints", "logs", "model"]
    plan = json.loads((handle.job_dir / "job.json").read_text())
    assert plan["replicas"][1]["env"]["CUDA_VISIBLE_DEVICES"] == "2,3"


def test_an_output_dir_replaces_the_jobs_own(submit, write_script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(write_script("flaky.py", FLAKY), distribution_strategy=None, base_output_dir=str(tmp_path / "o"))
    assert handle.wait(60).state is JobState.SUCCEEDED, explain(handle)
    assert dict(views(handle))["chief-0"]["AIP_MODEL_DIR"] == f"{tmp_path / 'o'}/model/"
    assert (tmp_path / "o" / "checkpoints").is_dir()


def test_replicas_start_in_the_build_root_as_in_the_image(submit, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "context"
    (root / "trainer").mkdir(parents=True)
    (root / "data.txt").write_text("from the build root\n")
    script = root / "trainer" / "task.py"
    script.write_text("import os\nprint(os.getcwd())\nprint(open('data.txt').read().strip())\n")
    handle = submit(script, distribution_strategy=None, context_dir=str(root))
    assert handle.wait(60).state is JobState.SUCCEEDED, explain(handle)
    assert [ln.text for ln in handle.logs() if ln.stream == "stdout"] == [str(root), "from the build root"]


def test_a_failed_cluster_is_restarted_and_each_attempt_is_logged(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    handle = submit(write_script("flaky.py", FLAKY), distribution_strategy=None, worker_count=1, max_restarts=2,
                    entry_point_args=["1,2"])
    assert handle.wait(60).state is JobState.SUCCEEDED, explain(handle)
    attempts = [(replica, view["TFCLOUD_ATTEMPT"]) for replica, view in views(handle)]
    assert [a for r, a in attempts if r == "worker-0"] == ["1", "2", "3"]
    assert ("chief-0", "3") in attempts  # (an earlier chief may be stopped before it printed anything)
    said = [ln.text for ln in handle.logs(replica="tfcloud")]
    assert said == [
        "tfcloud: attempt 1 failed: worker-0 exited with code 3. Restarting the cluster (restart 1 of 2).",
        "tfcloud: attempt 2 of 3: starting 2 replica(s) again.",
        "tfcloud: attempt 2 failed: worker-0 exited with code 3. Restarting the cluster (restart 2 of 2).",
        "tfcloud: attempt 3 of 3: starting 2 replica(s) again.",
    ]
    info = handle.raw_status()
    assert info["attempt"] == 3
    assert [r["replica"] for r in info["restarts"]] == ["worker-0", "worker-0"]
    assert_no_survivors(handle)


def test_when_the_restarts_are_spent_the_job_fails_as_before(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    handle = submit(write_script("flaky.py", FLAKY), distribution_strategy=None, worker_count=1, max_restarts=1,
                    entry_point_args=["1,2"])
    assert handle.wait(60).state is JobState.FAILED, explain(handle)
    assert handle.info().exit_code == 3
    assert handle.info().failed_replica == "worker-0"
    assert handle.raw_status()["attempt"] == 2
    assert_no_survivors(handle)


def test_a_replica_without_heartbeat_is_a_failure_that_restarts_the_cluster(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    handle = submit(write_script("flaky.py", FLAKY), distribution_strategy=None, worker_count=1, max_restarts=1,
                    liveness_timeout=3, entry_point_args=["stop1"])
    assert handle.wait(60).state is JobState.SUCCEEDED, explain(handle)
    info = handle.raw_status()
    assert info["attempt"] == 2
    assert [(r["replica"], r["exit_code"], r["message"]) for r in info["restarts"]] == [
        ("worker-0", 1, "worker-0 sent no heartbeat for 3 s (stopped or hung).")]
    assert next(ln.text for ln in handle.logs(replica="tfcloud")) == (
        "tfcloud: attempt 1 failed: worker-0 sent no heartbeat for 3 s (stopped or hung). Restarting the cluster "
        "(restart 1 of 1).")
    assert_no_survivors(handle)


def test_without_max_restarts_nothing_restarts(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    handle = submit(write_script("flaky.py", FLAKY), distribution_strategy=None, worker_count=1,
                    entry_point_args=["1"])
    assert handle.wait(60).state is JobState.FAILED
    assert handle.raw_status()["attempt"] == 1
    assert list(handle.logs(replica="tfcloud")) == []


# -- real TensorFlow: kill a replica mid-training, resume from the checkpoint ---------------------------------
@pytest.mark.tensorflow
@pytest.mark.parametrize(("victim", "workers"), [("worker-0", 1), ("chief-0", 1), ("chief-0", 0)],
                         ids=["worker of 2 (tf-keras)", "chief of 2 (tf-keras)", "lone chief (Keras 3)"])
def test_a_killed_replica_restarts_the_cluster_and_fit_resumes_from_the_checkpoint(  # type: ignore[no-untyped-def]
        submit, scripts: Path, victim: str, workers: int) -> None:
    if workers:
        pytest.importorskip("tf_keras")
    handle = submit(scripts / "train_resume.py", worker_count=workers, max_restarts=1,
                    entry_point_args=["5", victim, "3"], env={"TF_CPP_MIN_LOG_LEVEL": "2"})
    assert handle.wait(300).state is JobState.SUCCEEDED, explain(handle)
    info = handle.raw_status()
    assert info["attempt"] == 2
    assert info["restarts"][0]["replica"] == victim and info["restarts"][0]["exit_code"] == 137
    names = ["chief-0", "worker-0"][:workers + 1]
    for replica in names:
        lines = [ln.text for ln in handle.logs(replica=replica)]
        epochs = [int(t.split()[1]) for t in lines if t.startswith("EPOCH_BEGIN ")]
        # First attempt: epochs 1-3 (killed in 3); second: resumed at 3 (epochs 1-2 came from the backup), to 5.
        assert epochs == [1, 2, 3, 3, 4, 5], explain(handle)
        resumed = [t for t in lines if "model.fit resumed" in t]
        assert len(resumed) == 1 and re.search(r"resumed at epoch 3 from the backup in .*/checkpoints/fit-1\.$",
                                               resumed[0]), explain(handle)
        assert lines[-1] == f"DONE {replica}"
    assert any(f"attempt 1 failed: {victim} was killed by SIGKILL" in ln.text for ln in handle.logs(replica="tfcloud"))
    output = handle.job_dir / "output"
    assert (output / "model" / "model.keras").is_file()
    assert (output / "checkpoints" / "final" / "checkpoint").is_file()  # the script's own CheckpointManager
    backup = output / "checkpoints" / "fit-1"
    assert not backup.exists() or not any(backup.iterdir())  # the backup is removed once fit finished
    for replica in names:
        assert len(list((output / "logs" / replica).glob("events.out.tfevents.*"))) == 2  # one per attempt
    assert_no_survivors(handle)


@pytest.mark.tensorflow
def test_a_strategy_backup_and_restore_cannot_handle_is_left_alone(submit, scripts: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("tf_keras")
    # tf-keras's BackupAndRestore refuses OneDeviceStrategy: the launcher says so and fit runs as written.
    handle = submit(scripts / "train_resume.py", entry_point_args=["2"],
                    env={"TF_CPP_MIN_LOG_LEVEL": "2", "TF_USE_LEGACY_KERAS": "1"})
    assert handle.wait(300).state is JobState.SUCCEEDED, explain(handle)
    said = [ln.text for ln in handle.logs() if ln.text.startswith("tfcloud: model.fit")]
    assert said == ["tfcloud: model.fit is not backed up: BackupAndRestore does not support OneDeviceStrategy."]


@pytest.mark.tensorflow
def test_the_auto_checkpoint_can_be_turned_off(submit, scripts: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(scripts / "train_resume.py", entry_point_args=["2"],
                    env={"TF_CPP_MIN_LOG_LEVEL": "2", "TFCLOUD_AUTO_CHECKPOINT": "0"})
    assert handle.wait(300).state is JobState.SUCCEEDED, explain(handle)
    assert not [ln.text for ln in handle.logs() if ln.text.startswith("tfcloud: model.fit")]


def test_the_cli_restarts_and_shows_each_attempt(write_script, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from tfcloud.cli import main

    script = write_script("flaky.py", FLAKY)
    code = main(["submit", str(script), "--local", "--strategy", "none", "--worker-count", "1", "--worker-config",
                 "CPU", "--max-restarts", "1", "--", "1"])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert re.search(r"^tfcloud +\| tfcloud: attempt 1 failed: worker-0 exited with code 3\. Restarting the cluster "
                     r"\(restart 1 of 1\)\.$", out, re.M), out
    assert re.search(r"^tfcloud +\| tfcloud: attempt 2 of 2: starting 2 replica\(s\) again\.$", out, re.M)
    assert re.search(r"^chief-0 +\| done chief-0$", out, re.M)


def test_the_cli_rejects_a_negative_max_restarts(write_script, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    from tfcloud.cli import main

    assert main(["submit", str(write_script("flaky.py", FLAKY)), "--max-restarts", "-1"]) == 2
    assert "Invalid `max_restarts`: expected an integer from 0 to 100, received -1." in capsys.readouterr().err
