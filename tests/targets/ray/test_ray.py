"""The Ray backend against a real Ray cluster on loopback (``ray_cluster``, tests/rayengines.py: a head and a
second node started with Ray's own test utilities, two logical CPUs each, once per test session). Jobs go through
the Jobs API exactly as they would to a remote cluster: the working directory and tfcloud's package travel in the
runtime environment. Training under each strategy, and data and secrets on every replica, run over two separate
hosts instead (tests/targets/ray/test_driver.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tfcloud.errors import ConfigurationError
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.validate import build_job, build_spec
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.spec import Role
from tfcloud.job.states import JobState
from tfcloud.targets.ray.driver import format_line, parse_line, parse_status, parse_timed_line
from tfcloud.view.outcome import failure

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
SLOW = "import time\nprint('started', flush=True)\ntime.sleep(300)\n"


# -- without a cluster ------------------------------------------------------------------------------------------
def test_log_lines_round_trip() -> None:
    assert parse_line(format_line("worker-1", "loss: 0.5")) == ("worker-1", "stdout", "loss: 0.5")
    assert parse_line(format_line("chief-0", "Traceback [x]", "stderr")) == ("chief-0", "stderr", "Traceback [x]")
    assert parse_line(format_line("tfcloud", "reserving")) == ("tfcloud", "stdout", "reserving")
    assert parse_line("2026-01-01 INFO job_manager.py:581 -- Runtime env is setting up.") is None
    assert parse_line('[tfcloud:status] {"state": "running"}') is None
    assert parse_status('[tfcloud:status] {"state": "running"}') == {"state": "running"}
    # Each line carries the time the replica printed it (--timestamps, --since).
    assert parse_timed_line(format_line("worker-1", "x] y", "stderr", at=1795431374.4526)) == \
        ("worker-1", "stderr", "x] y", 1795431374.453)
    assert parse_timed_line(format_line("chief-0", "no time")) == ("chief-0", "stdout", "no time", None)


def test_resources_follow_the_machine_configs(tmp_path: Path) -> None:
    from tfcloud.targets.ray.backend import replica_resources

    (tmp_path / "t.py").write_text("print(1)\n")
    spec = build_spec(entry_point=tmp_path / "t.py", target="ray", chief_config="T4_1X", worker_count=2,
                      worker_config="CPU", ps_count=1)
    assert replica_resources(spec, Role.CHIEF) == {"CPU": 8.0, "GPU": 1.0}
    assert replica_resources(spec, Role.WORKER) == {"CPU": 4.0}
    assert replica_resources(spec, Role.PS, num_cpus=0.5) == {"CPU": 0.5}


def test_no_address_says_how_to_give_one() -> None:
    from tfcloud.targets.ray.backend import RayBackend

    with pytest.raises(ConfigurationError, match="No Ray cluster address") as exc:
        RayBackend()
    assert "--ray http://HEAD:8265" in str(exc.value.hint)  # type: ignore[attr-defined]


def _pip_as_ray_runs_it(pip: list[str], workdir: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """What Ray does with a runtime_env's ``pip`` list on a node: writes it to a requirements file of its own
    (elsewhere) and runs ``pip install -r`` on it with the working dir's path in RAY_RUNTIME_ENV_CREATE_WORKING_DIR
    (ray/_private/runtime_env/pip.py). ``--dry-run --no-index``: installed requirements only, no network."""
    ray_env = tmp / "ray-env"
    ray_env.mkdir(exist_ok=True)
    (ray_env / "requirements.txt").write_text("".join(line + "\n" for line in pip))
    env = {**os.environ, "RAY_RUNTIME_ENV_CREATE_WORKING_DIR": str(workdir), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "-r",
                           "requirements.txt"], cwd=ray_env, env=env, capture_output=True, text=True, timeout=120)


def test_requirement_includes_reach_pip_on_the_nodes(tmp_path: Path) -> None:
    """``-r base.txt`` and ``-c constraints.txt`` in a requirements file: the runtime_env's ``pip`` list points
    at the bundle an image gets, shipped in the working dir, and pip (run as Ray runs it) follows both."""
    from tfcloud.targets.ray.backend import RayBackend, _stage

    project = tmp_path / "project"
    (project / "reqs").mkdir(parents=True)
    (project / "t.py").write_text("print(1)\n")
    (project / "requirements.txt").write_text("-r reqs/base.txt\n-c reqs/constraints.txt\n")
    (project / "reqs" / "base.txt").write_text("packaging  # installed in the test environment\n")
    (project / "reqs" / "constraints.txt").write_text("packaging>=1\n")
    spec, target = build_job(entry_point=project / "t.py", target="ray", requirements_txt=project / "requirements.txt")
    backend = RayBackend(address="http://127.0.0.1:9")  # no cluster: nothing here talks to it
    with tempfile.TemporaryDirectory() as tmp:
        job, _ = prepare(spec, target, Path(tmp))
        workdir, package = _stage(job, tmp_path, {"job_id": "ray-x"})
        env = backend.runtime_env(job, workdir, package, "ray-x")
    pip = env["pip"]
    assert pip[0] == "-r ${RAY_RUNTIME_ENV_CREATE_WORKING_DIR}/.tfcloud/requirements/requirements.txt"
    assert (workdir / ".tfcloud/requirements/requirements.txt").read_text() == "-r base.txt\n-c constraints.txt\n"
    ok = _pip_as_ray_runs_it(pip, workdir, tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "packaging" in ok.stdout  # "Requirement already satisfied: packaging"
    # The constraint file is read: one that the installed version breaks makes pip look for another.
    (workdir / ".tfcloud/requirements/constraints.txt").write_text("packaging<0.1\n")
    broken = _pip_as_ray_runs_it(pip, workdir, tmp_path)
    assert broken.returncode != 0 and "packaging<0.1" in broken.stdout + broken.stderr

    # Ray caches a node's virtualenv by the list: a changed include gives another list.
    (project / "reqs" / "constraints.txt").write_text("packaging>=2\n")
    with tempfile.TemporaryDirectory() as tmp:
        job, _ = prepare(spec, target, Path(tmp))
        assert backend.runtime_env(job, workdir, package, "ray-x")["pip"] != pip


# -- a real cluster (tests/rayengines.py: ray_cluster, once per session) -----------------------------------
@pytest.fixture
def ray_submit(ray_cluster: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``ray_submit(script, **build_spec_kwargs) -> RayJob`` through the pipeline's own stages (launcher in a
    temporary directory); jobs still running at the end are cancelled."""
    from tfcloud.targets.ray.backend import RayBackend, RayJob

    handles: list[RayJob] = []

    def _submit(script: Path, **kwargs: Any) -> RayJob:
        kwargs.setdefault("target", "ray")
        if kwargs.get("worker_count"):
            kwargs.setdefault("worker_config", "CPU")
        spec, target = build_job(entry_point=script, ray_address=ray_cluster, **kwargs)
        backend = RayBackend(target=target, num_cpus=1)
        with tempfile.TemporaryDirectory() as tmp:
            job, _ = prepare(spec, target, Path(tmp))
            assert isinstance(job, PreparedJob)
            handle = backend.submit(job)
        handles.append(handle)
        return handle

    yield _submit
    for handle in handles:
        if not handle.info().state.is_final:
            handle.cancel()
            handle.wait(60)


def explain(handle: Any) -> str:
    return "\n".join(f"{ln.replica} | {ln.text}" for ln in handle.logs())[-6000:]


def survivors(job_id: str) -> list[int]:
    """Processes of this machine that run for ``job_id`` (TFCLOUD_JOB_ID in their environment)."""
    import psutil

    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("TFCLOUD_JOB_ID") == job_id and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def wait_gone(job_id: str, timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := survivors(job_id)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


@pytest.mark.ray
def test_a_failing_script_fails_the_job_with_its_error(ray_submit: Any, tmp_path: Path) -> None:
    # The chief fails; the worker waits (were both to fail, whichever exited first would be the one named), and
    # is stopped with the job.
    (tmp_path / "fail.py").write_text("import os, sys, time\nprint('loading data', flush=True)\n"
                                      "if os.environ['TFCLOUD_REPLICA'] != 'chief-0':\n    time.sleep(300)\n"
                                      "sys.exit('bad input: expected 64 features, received 63')\n")
    handle = ray_submit(tmp_path / "fail.py", worker_count=1, distribution_strategy=None)
    info = handle.wait(300)
    assert info.state is JobState.FAILED, explain(handle)
    assert info.exit_code == 1
    assert info.failed_replica == "chief-0"
    assert info.message == "chief-0 exited with code 1."
    error = failure(handle)
    assert error is not None and error.exit_code == 1
    assert error.summary == f"Job {handle.job_id} failed: chief-0 exited with code 1."
    assert "bad input: expected 64 features, received 63" in error.log_tail
    assert wait_gone(handle.job_id) == []


@pytest.mark.ray
def test_cancel_an_attached_job(ray_submit: Any, ray_cluster: str, tmp_path: Path) -> None:
    from tfcloud.targets.ray.backend import RayBackend

    (tmp_path / "slow.py").write_text(SLOW)
    submitted = ray_submit(tmp_path / "slow.py", worker_count=1, distribution_strategy=None,
                           display_name="slow one", job_labels={"team": "vision"})
    backend = RayBackend(address=ray_cluster)  # another client, as `tfcloud cancel JOB` would make
    handle = backend.attach(submitted.job_id)
    started = set()
    for line in handle.logs(follow=True):
        if line.text == "started":
            started.add(line.replica)
        if started == {"chief-0", "worker-0"}:
            break
    assert handle.info().state is JobState.RUNNING
    listed = {i.job_id: i for i in backend.list()}
    assert listed[handle.job_id].display_name == "slow one"
    assert dict(listed[handle.job_id].labels) == {"team": "vision"}
    assert [i.job_id for i in backend.list(state=JobState.RUNNING)] == [handle.job_id]
    handle.cancel()
    info = handle.wait(120)
    assert info.state is JobState.CANCELLED
    assert info.exit_code == 130
    assert info.console_url == f"{ray_cluster}/#/jobs/{handle.job_id}"
    assert wait_gone(handle.job_id) == []
    err = failure(handle)
    assert err is not None and err.summary == f"Job {handle.job_id} cancelled: The job was cancelled."
    from tfcloud.errors import JobNotFoundError

    with pytest.raises(JobNotFoundError):
        backend.attach("ray-no-such-job")
    backend.close()
    # The CLI finds it again by its id (ray-...) and the address.
    status = tfcloud("status", handle.job_id, "--json", "--ray", ray_cluster)
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert (shown["target"], shown["state"], shown["exit_code"]) == ("ray", "cancelled", 130)


def tfcloud(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[3]),
                                                                      os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "tfcloud.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.ray
def test_cli_submit_of_a_failing_script_exits_1_and_shows_its_error(ray_cluster: str, tmp_path: Path) -> None:
    # The chief fails; the worker prints the same line and waits (were both to fail, whichever exited first would
    # be the one named, and the other might be stopped before it printed).
    (tmp_path / "fail.py").write_text("import os, sys, time\nprint('loading data', flush=True)\n"
                                      "if os.environ['TFCLOUD_REPLICA'] != 'chief-0':\n    time.sleep(300)\n"
                                      "raise ValueError('bad input: expected 64 features, received 63')\n")
    result = tfcloud("submit", str(tmp_path / "fail.py"), "--ray", ray_cluster, "--ray-cpus", "1",
                     "--worker-count", "1", "--worker-config", "CPU", "--strategy", "none")
    assert result.returncode == 1, result.stderr
    # (both replicas print it: shown once, with how many did)
    assert re.search(r"^(chief-0|2 replicas) +\| loading data$", result.stdout, re.M), result.stdout
    job_id = result.stderr.split("Submitted job ")[1].split(".")[0]
    assert job_id.startswith("ray-fail-")
    assert f"Job {job_id} failed: chief-0 exited with code 1." in result.stderr
    # The error streams with the chief's lines; the failure tail is not printed a second time.
    assert re.search(r"^(chief-0|2 replicas) +\| ValueError: bad input: expected 64 features, received 63$",
                     result.stdout, re.M), result.stdout
    assert "ValueError" not in result.stderr
    assert "Traceback" not in result.stderr.split(f"Job {job_id} failed")[0]  # no traceback of tfcloud's own
    assert wait_gone(job_id) == []


@pytest.mark.ray
@pytest.mark.parametrize("cancel", [False, True], ids=["detach", "cancel-on-interrupt"])
def test_ctrl_c_detaches_or_cancels(ray_cluster: str, tmp_path: Path, cancel: bool) -> None:
    """As for Vertex AI: Ctrl-C while following leaves a Ray job running (and says how to find it again);
    with --cancel-on-interrupt it cancels it. Either way the command exits 130."""
    import signal
    import threading

    from tfcloud.targets.ray.backend import RayBackend

    (tmp_path / "slow.py").write_text(SLOW)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[3]),
                                                                      os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfcloud.cli", "submit", str(tmp_path / "slow.py"), "--ray", ray_cluster,
         "--ray-cpus", "1", "--strategy", "none", *(["--cancel-on-interrupt"] if cancel else [])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.rstrip().endswith("| started"):
            break
    proc.send_signal(signal.SIGINT)
    proc.stdout.read()
    code = proc.wait(timeout=120)
    reader.join(timeout=10)
    proc.stdout.close()
    proc.stderr.close()  # type: ignore[union-attr]
    assert code == 130
    text = "".join(err)
    job_id = text.split("Submitted job ")[1].split(".")[0]
    handle = RayBackend(address=ray_cluster).attach(job_id)
    if cancel:
        assert f"Interrupted: cancelling {job_id}." in text
        assert handle.wait(60).state is JobState.CANCELLED
        assert wait_gone(job_id) == []
    else:
        assert f"Detached: {job_id} keeps running." in text
        assert handle.info().state is JobState.RUNNING
        handle.cancel()
        assert handle.wait(60).state is JobState.CANCELLED


@pytest.mark.ray
def test_a_notebook_runs_with_its_directory_shipped(ray_submit: Any, tmp_path: Path) -> None:
    """The entry point's directory travels in Ray's runtime environment (a module beside the notebook imports;
    a secret does not travel); the notebook is converted and its script runs next to the launcher."""
    pytest.importorskip("nbformat", reason="notebooks need tfcloud[notebook]")
    from tests.notebook.nbhelpers import notebook
    from tfcloud.backends.base import Backend, JobHandle
    from tfcloud.targets.ray.backend import RayBackend

    project = tmp_path / "project"
    (project / "lib").mkdir(parents=True)
    (project / "lib" / "helper.py").write_text("VALUE = 'from the shipped directory'\n")
    (project / ".env").write_text("TOKEN=secret\n")
    nb = notebook(project / "explore.ipynb", "import os\nfrom lib import helper",
                  "print(helper.VALUE)\nprint('secret shipped:', os.path.exists('.env'))")
    handle = ray_submit(nb, distribution_strategy=None)
    assert isinstance(handle, JobHandle) and isinstance(RayBackend(address="http://127.0.0.1:1"), Backend)
    info = handle.wait(300)
    assert info.state is JobState.SUCCEEDED, explain(handle)
    said = [ln.text for ln in handle.logs(replica="chief-0")]
    assert "from the shipped directory" in said
    assert "secret shipped: False" in said
    # --tail and --since select among the lines of Ray's job log, each stamped with its time.
    lines = list(handle.logs(replica="chief-0"))
    assert all(ln.timestamp for ln in lines) and list(handle.logs(replica="chief-0", tail=1)) == lines[-1:]
    # (lines printed within the same 10 ms share a stamp: --since keeps each of them)
    since = lines[-1].timestamp
    assert list(handle.logs(replica="chief-0", since=since)) == [ln for ln in lines if ln.timestamp >= since]
    assert info.created is not None and info.started is not None and info.ended is not None
    assert info.created <= info.started <= info.ended
    assert sorted(p.name for p in project.iterdir()) == [".env", "explore.ipynb", "lib"]  # nothing left there


@pytest.mark.ray
def test_a_replica_whose_actor_dies_fails_the_job_and_the_rest_are_stopped(ray_submit: Any, tmp_path: Path) -> None:
    import signal

    import psutil

    (tmp_path / "slow.py").write_text(SLOW)
    handle = ray_submit(tmp_path / "slow.py", worker_count=1, distribution_strategy=None)
    started = set()
    for line in handle.logs(follow=True):
        if line.text == "started":
            started.add(line.replica)
        if started == {"chief-0", "worker-0"}:
            break
    replica = next(p for p in map(psutil.Process, survivors(handle.job_id))
                   if p.environ().get("TFCLOUD_REPLICA") == "worker-0")
    actor = replica.parent()
    assert actor is not None and actor.environ().get("TFCLOUD_REPLICA") is None  # the Ray worker holding it
    actor.send_signal(signal.SIGKILL)
    info = handle.wait(120)
    assert info.state is JobState.FAILED, explain(handle)
    assert info.failed_replica == "worker-0"
    assert info.exit_code == 137
    assert info.message == "worker-0 was killed by SIGKILL (exit code 137)."
    assert {r.name: r.state for r in info.replicas}["chief-0"] is JobState.CANCELLED
    assert wait_gone(handle.job_id) == []


def _started(handle: Any, replicas: set[str]) -> None:
    started = set()
    for line in handle.logs(follow=True):
        if line.text == "started":
            started.add(line.replica)
        if started == replicas:
            return


@pytest.mark.ray
@pytest.mark.parametrize("frozen", ["replica", "actor"])
def test_a_replica_without_heartbeat_fails_the_job_by_its_name(ray_submit: Any, tmp_path: Path, frozen: str) -> None:
    """SIGSTOP to worker-0's process (it cannot beat), or to the Ray worker that holds it (its actor cannot
    answer): the liveness rule fails the job by worker-0's name, and nothing of the job is left."""
    import signal

    import psutil

    # (a working directory of its own: Ray may drop the package of an identical one that a finished job used)
    (tmp_path / "slow.py").write_text(f"# frozen: {frozen}\n{SLOW}")
    handle = ray_submit(tmp_path / "slow.py", worker_count=1, distribution_strategy=None, liveness_timeout=5)
    _started(handle, {"chief-0", "worker-0"})
    replica = next(p for p in map(psutil.Process, survivors(handle.job_id))
                   if p.environ().get("TFCLOUD_REPLICA") == "worker-0")
    victim = replica if frozen == "replica" else replica.parent()
    assert victim is not None
    victim.send_signal(signal.SIGSTOP)
    info = handle.wait(120)
    assert info.state is JobState.FAILED, explain(handle)
    assert (info.exit_code, info.failed_replica) == (1, "worker-0")
    assert info.message == "worker-0 sent no heartbeat for 5 s (stopped or hung)."
    assert {r.name: r.state for r in info.replicas}["chief-0"] is JobState.CANCELLED
    assert wait_gone(handle.job_id) == []


# -- what the cluster can hold ------------------------------------------------------------------------------------
def test_a_job_is_refused_only_when_it_can_never_fit() -> None:
    from tfcloud.targets.ray.capacity import shortfall

    names = ["chief-0", "worker-0", "worker-1"]
    two = [{"CPU": 2.0}, {"CPU": 2.0}]
    assert shortfall(names, [{"CPU": 4.0}] * 3, two) == \
        "chief-0 asks for 4 CPU on one node, and the largest node has 2 CPU"
    assert shortfall(names, [{"CPU": 2.0}] * 3, two) == "the replicas ask for 6 CPU in all, and the cluster has 4"
    assert shortfall(["chief-0"], [{"CPU": 1.0, "GPU": 1.0}], two) == \
        "chief-0 asks for 1 CPU + 1 GPU on one node, and the largest node has 2 CPU"
    # 12 CPU in all, as much as the cluster has, yet one 4-CPU replica fits each 6-CPU node.
    assert shortfall(names, [{"CPU": 4.0}] * 3, [{"CPU": 6.0}] * 2) == \
        "no arrangement of the replicas fits the nodes (6 CPU, 6 CPU)"
    assert shortfall(names, [{"CPU": 4.0}, {"CPU": 1.0}, {"CPU": 1.0}], [{"CPU": 2.0}, {"CPU": 4.0}]) is None
    assert shortfall(names, [{"CPU": 1.0}] * 3, two) is None
    assert shortfall(names[:2], [{"CPU": 1.0}] * 2, [{"CPU": 4.0}], strategy="STRICT_SPREAD") == \
        "STRICT_SPREAD puts each replica on a node of its own, and the cluster has 1 node(s)"
    assert shortfall(names[:2], [{"CPU": 2.0}] * 2, two, strategy="STRICT_PACK") == \
        "STRICT_PACK puts every replica on one node (4 CPU), and no node has that"
    assert shortfall(names, [{"CPU": 1.0}] * 3, []) == "the cluster has no alive node"


def test_the_autoscaler_is_read_from_the_cluster_status() -> None:
    """The dashboard's /api/cluster_status (its keys camelCased, as Ray 2.60 serves them): Ray's read-only
    autoscaler names each node's type after the node; a real one has node types of its own."""
    from tfcloud.targets.ray.capacity import read_cluster

    def status(mapping: dict[str, str]) -> dict[str, Any]:
        return {"clusterStatus": {
            "autoscalerReport": {"nodeTypeMapping": mapping},
            "loadMetricsReport": {"usageByNode": {
                "5d12": {"CPU": [1.0, 2.0], "memory": [0.0, 1e9]}, "77ab": {"CPU": [0.0, 2.0], "GPU": [1.0, 1.0]}}}}}

    fixed = read_cluster(status({"5d12": "node_5d12", "77ab": "node_77ab"}))
    assert fixed is not None and fixed.autoscaler is False
    assert fixed.totals == ({"CPU": 2.0}, {"CPU": 2.0, "GPU": 1.0})
    assert (fixed.total("CPU"), fixed.total_free("CPU"), fixed.total_free("GPU")) == (4.0, 3.0, 0.0)
    scaling = read_cluster(status({"5d12": "ray.head.default", "77ab": "ray.worker.gpu"}))
    assert scaling is not None and scaling.autoscaler is True
    assert read_cluster(status({})) is not None and read_cluster(status({})).autoscaler is None  # type: ignore[union-attr]
    assert read_cluster({"clusterStatus": None}) is None  # Ray's newer autoscaler writes no report
    # three nodes on two addresses (usage is keyed by IP): no node's shape is known, so nothing is certain
    shared = read_cluster(status({"5d12": "node_5d12", "77ab": "node_77ab", "90cd": "node_90cd"}))
    assert shared is not None and shared.autoscaler is None


@pytest.mark.ray
def test_a_job_the_fixed_cluster_can_never_hold_is_refused_before_anything_runs(ray_cluster: str,
                                                                                 tmp_path: Path) -> None:
    from tfcloud.targets.ray.backend import RayBackend

    (tmp_path / "t.py").write_text("print('never runs')\n")
    before = {i.job_id for i in RayBackend(address=ray_cluster).list()}
    for cpus, why in (("4", "chief-0 asks for 4 CPU on one node, and the largest node has 2 CPU"),
                      ("2", "the replicas ask for 6 CPU in all, and the cluster has 4")):
        result = tfcloud("submit", str(tmp_path / "t.py"), "--ray", ray_cluster, "--ray-cpus", cpus,
                         "--worker-count", "2", "--worker-config", "CPU", "--strategy", "none")
        assert result.returncode == 2, result.stderr
        assert re.search(
            rf"The Ray cluster at {re.escape(ray_cluster)} can never hold this job, and no autoscaler can add "
            rf"nodes: {re.escape(why)}\. The replicas ask for chief-0, worker-0, worker-1: {cpus} CPU each; the "
            r"cluster has 4 CPU in total over 2 node\(s\) \(2 CPU, 2 CPU\), [0-4] CPU free\.", result.stderr), \
            result.stderr
        assert "--ray-cpus N" in result.stderr and "Traceback" not in result.stderr
        assert "Submitted job" not in result.stderr
    assert {i.job_id for i in RayBackend(address=ray_cluster).list()} == before  # nothing was submitted


WEDGE = (
    "import ctypes, os, time\n"
    "def wedged_in_native_code():\n"
    "    print('started', flush=True)\n"
    "    ctypes.PyDLL(None).sleep(600)\n"
    "if os.environ['TFCLOUD_REPLICA'] == 'worker-0':\n"
    "    wedged_in_native_code()\n"
    "print('started', flush=True)\n"
    "time.sleep(300)\n"
)


@pytest.mark.ray
def test_the_watchdog_shows_the_stacks_of_the_ray_replica_it_blames(ray_submit: Any, tmp_path: Path) -> None:
    """worker-0 wedges in native code that holds the GIL (it cannot beat): the liveness rule fails the job by its
    name, and its actor has the launcher dump its stacks first, which the job's log shows."""
    (tmp_path / "wedge.py").write_text(WEDGE)
    handle = ray_submit(tmp_path / "wedge.py", worker_count=1, distribution_strategy=None, liveness_timeout=5)
    info = handle.wait(120)
    assert (info.state, info.failed_replica) == (JobState.FAILED, "worker-0"), explain(handle)
    said = [ln.text for ln in handle.logs(replica="tfcloud")]
    assert "tfcloud: the stacks of worker-0 when it was blamed:" in said, said
    assert any("in wedged_in_native_code" in line for line in said), said
