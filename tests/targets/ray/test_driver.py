"""The Ray driver across two separate hosts (``two_host_ray``, tests/rayengines.py: once per test session): a head
at 192.168.77.1 and a worker node at 192.168.77.2 in two network namespaces. Replicas are placed over both, their
``TF_CONFIG`` holds both hosts' addresses, `tfcloud stacks` reads a replica's stacks on its node, a lost host's
replicas are placed again on the nodes alive (a replacement node) and training resumes from the checkpoint under
``--output-dir``, a path both hosts reach.

The host-loss test replaces host b's node: the tests after it (here, or bench_ray_hosts) find a node there again.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.rayengines import TwoHostRay
from tests.targets.ray.test_ray import wait_gone
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.validate import build_job
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.states import JobState

SCRIPT = Path(__file__).resolve().parent / "scripts" / "train_hosts.py"
HOSTS = {"192.168.77.1", "192.168.77.2"}
REPO = Path(__file__).resolve().parents[3]
#: TensorFlow's ParameterServerStrategy failing inside its own gRPC (docs/ray.md, Limits): a flake of
#: TensorFlow's, retried once by tests/backends/test_ray.py too.
TF_PS_FLAKE = "Unable to parse request"

pytestmark = [pytest.mark.ray]


def submit(cluster: TwoHostRay, *args: str, **kwargs: Any) -> Any:
    """Submit train_hosts.py through the pipeline's stages, one CPU per replica."""
    from tfcloud.targets.ray.backend import RayBackend

    kwargs.setdefault("worker_config", "CPU")
    kwargs.setdefault("env", {"TF_CPP_MIN_LOG_LEVEL": "2"})
    spec, target = build_job(entry_point=SCRIPT, target="ray", ray_address=cluster.address, entry_point_args=list(args),
                             **kwargs)
    with tempfile.TemporaryDirectory() as tmp:
        job, _ = prepare(spec, target, Path(tmp))
        assert isinstance(job, PreparedJob)
        return RayBackend(target=target, num_cpus=1).submit(job)


def explain(handle: Any) -> str:
    return "\n".join(f"{ln.replica} | {ln.text}" for ln in handle.logs())[-8000:]


def tf_configs(handle: Any) -> dict[str, dict[str, Any]]:
    """The TF_CONFIG each replica printed, by replica (the last attempt's)."""
    return {ln.replica: json.loads(ln.text.removeprefix("TF_CONFIG ")) for ln in handle.logs()
            if ln.text.startswith("TF_CONFIG ")}


def hosts_of(tf_config: dict[str, Any]) -> set[str]:
    return {a.rsplit(":", 1)[0] for addresses in tf_config["cluster"].values() for a in addresses}


def load(out: Path, replica: str) -> dict[str, np.ndarray]:
    with np.load(out / f"{replica}.npz") as data:
        return {k: data[k] for k in data.files}


def tfcloud(*argv: str, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    if path is not None:
        env["PATH"] = str(path)
    return subprocess.run([sys.executable, "-m", "tfcloud.cli", *argv], capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.slow
@pytest.mark.tensorflow
def test_multi_worker_mirrored_over_two_hosts(two_host_ray: TwoHostRay, tmp_path: Path) -> None:
    pytest.importorskip("tf_keras")
    out, shared = tmp_path / "weights", tmp_path / "shared"
    out.mkdir()
    handle = submit(two_host_ray, str(out), "3", worker_count=2, distribution_strategy="multi_worker_mirrored",
                    base_output_dir=str(shared))
    info = handle.wait(400)
    assert info.state is JobState.SUCCEEDED, explain(handle)
    assert info.exit_code == 0
    assert {r.name: r.state for r in info.replicas} == {
        "chief-0": JobState.SUCCEEDED, "worker-0": JobState.SUCCEEDED, "worker-1": JobState.SUCCEEDED}
    assert info.output_dir == str(shared)
    chief_says = [ln.text for ln in handle.logs(replica="chief-0")]
    assert "strategy: CollectiveAllReduceStrategy" in chief_says
    assert any("with 3 replica(s) in sync" in text for text in chief_says), explain(handle)
    assert wait_gone(handle.job_id) == []  # nothing of the job is left on either host
    seen = tf_configs(handle)
    assert sorted(seen) == ["chief-0", "worker-0", "worker-1"]
    for tf_config in seen.values():  # both hosts, each by its own address; no loopback anywhere
        assert hosts_of(tf_config) == HOSTS, tf_config
    weights = {name: load(out, name) for name in seen}
    chief = weights["chief-0"]
    assert chief["loss"][-1] < chief["loss"][0]
    for name in ("worker-0", "worker-1"):
        assert sorted(weights[name]) == sorted(chief)
        for key in chief:
            np.testing.assert_allclose(weights[name][key], chief[key], rtol=0, atol=1e-6)
    # The AIP_* directories were under --output-dir, and `tfcloud artifacts` finds the model there.
    listed = tfcloud("artifacts", handle.job_id, "--ray", two_host_ray.address, "--json")
    assert listed.returncode == 0, listed.stderr
    shown = json.loads(listed.stdout)
    assert shown["output_dir"] == str(shared)
    assert "model/model.keras" in [a["path"] for a in shown["artifacts"]]
    # `tfcloud tensorboard` runs on its logs/ (a stand-in shows the command line it was given).
    fake = tmp_path / "bin" / "tensorboard"
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\nimport sys\nprint('ARGS', sys.argv[1:])\n")
    fake.chmod(0o755)
    board = tfcloud("tensorboard", handle.job_id, "--ray", two_host_ray.address, path=fake.parent)
    assert board.returncode == 0, board.stderr
    assert f"ARGS ['--logdir', '{shared}/logs/']" in board.stdout


@pytest.mark.tensorflow
def test_parameter_server_job_over_two_hosts(two_host_ray: TwoHostRay, tmp_path: Path) -> None:
    pytest.importorskip("tf_keras")
    out = tmp_path / "weights"
    out.mkdir()
    for _ in range(2):  # one more submission only on TensorFlow's own coordinator flake
        handle = submit(two_host_ray, str(out), "2", worker_count=2, ps_count=1, base_output_dir=str(tmp_path / "o"))
        info = handle.wait(400)
        if info.state is JobState.SUCCEEDED or TF_PS_FLAKE not in explain(handle):
            break
    assert info.state is JobState.SUCCEEDED, explain(handle)
    assert info.exit_code == 0
    states = {r.name: r.state for r in info.replicas}
    assert states["chief-0"] is JobState.SUCCEEDED
    assert {states[n] for n in ("worker-0", "worker-1", "ps-0")} == {JobState.CANCELLED}  # they only serve
    assert "strategy: ParameterServerStrategyV2" in [ln.text for ln in handle.logs(replica="chief-0")]
    assert hosts_of(tf_configs(handle)["chief-0"]) == HOSTS
    assert load(out, "chief-0")["loss"][-1] < load(out, "chief-0")["loss"][0]
    assert wait_gone(handle.job_id) == []  # tfcloud stopped the workers and the parameter server


def test_restarts_without_an_output_dir_are_refused_on_two_nodes(two_host_ray: TwoHostRay) -> None:
    from tfcloud.targets.ray.backend import RayBackend

    before = [i.job_id for i in RayBackend(address=two_host_ray.address).list()]
    result = tfcloud("submit", str(SCRIPT), "--ray", two_host_ray.address, "--ray-cpus", "1", "--worker-count", "1",
                     "--worker-config", "CPU", "--max-restarts", "1", "--", "/tmp", "1")
    assert result.returncode == 2, result.stderr
    assert "--max-restarts 1 on a Ray cluster of 2 nodes needs --output-dir" in result.stderr
    assert "/mnt/shared/out" in result.stderr
    assert "Submitted job" not in result.stderr  # refused before anything was submitted
    assert [i.job_id for i in RayBackend(address=two_host_ray.address).list()] == before


def test_a_data_set_and_a_secret_reach_replicas_on_both_hosts(two_host_ray: TwoHostRay, tmp_path: Path) -> None:
    """--data goes once, by content, to --output-dir's tfcloud-data/ (a path both hosts reach); every replica, on
    either host, reads the same bytes at $TFCLOUD_DATA_TRAIN and gets --secret's value, masked when printed."""
    import hashlib

    value = "two-host-s3cret-77"
    secret = tmp_path / "token.txt"
    secret.write_text(value)
    data = tmp_path / "data"
    data.mkdir()
    for i in range(3):
        (data / f"part-{i}.bin").write_bytes(bytes([i + 1]) * 40_000)
    digest = hashlib.sha256(b"".join(bytes([i + 1]) * 40_000 for i in range(3))).hexdigest()
    project = tmp_path / "project"
    project.mkdir()
    (project / "read.py").write_text(
        "import hashlib, json, os, tfcloud\n"
        "root = tfcloud.data('train')\n"
        "blob = b''.join(open(os.path.join(root, n), 'rb').read() for n in sorted(os.listdir(root)))\n"
        "task = json.loads(os.environ['TF_CONFIG'])['task']\n"
        "host = json.loads(os.environ['TF_CONFIG'])['cluster'][task['type']][task['index']].rsplit(':', 1)[0]\n"
        "print('on', host, 'data', hashlib.sha256(blob).hexdigest(), 'token', os.environ['TOKEN'], flush=True)\n"
        # past Python's streams: a child process and os.write (the launcher masks fds 1 and 2: tests/test_masking.py)
        "import subprocess; subprocess.run(['sh', '-c', 'echo child $TOKEN'], check=True)\n"
        "os.write(1, ('os.write ' + os.environ['TOKEN'] + '\\n').encode())\n")
    result = tfcloud("submit", str(project / "read.py"), "--ray", two_host_ray.address, "--ray-cpus", "1",
                     "--worker-count", "3", "--worker-config", "CPU", "--strategy", "none",
                     "--output-dir", str(tmp_path / "out"), "--data", f"train={data}",
                     "--secret", f"TOKEN=file:{secret}")
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    lines = re.findall(r"\| on (\S+) data (\w+) token (\S+)$", result.stdout, re.M)
    assert len(lines) == 4, result.stdout[-3000:]
    assert {host for host, _, _ in lines} == HOSTS  # both hosts
    assert {(d, t) for _, d, t in lines} == {(digest, "****")}
    assert re.findall(r"\| (child|os\.write) (\S+)$", result.stdout, re.M).count(("child", "****")) == 4
    assert re.findall(r"\| (child|os\.write) (\S+)$", result.stdout, re.M).count(("os.write", "****")) == 4
    assert value not in result.stdout + result.stderr
    assert len(list((tmp_path / "out" / "tfcloud-data" / "objects").iterdir())) == 3  # shipped once, by content


HANG = (
    "import os, time\n"
    "def waiting_for_the_other_host():\n"
    "    print('started', flush=True)\n"
    "    time.sleep(600)\n"
    "waiting_for_the_other_host()\n"
)


def test_stacks_shows_where_a_hung_replica_on_the_other_host_waits(two_host_ray: TwoHostRay, tmp_path: Path) -> None:
    """`tfcloud stacks JOB --ray ADDRESS` reads each running replica's stacks on its own node (a task pinned there,
    through Ray: no ssh): the one on host b names the function it hangs in."""
    from tfcloud.targets.ray.backend import RayBackend

    (tmp_path / "hang.py").write_text(HANG)
    spec, target = build_job(entry_point=tmp_path / "hang.py", target="ray", ray_address=two_host_ray.address,
                             worker_count=1, worker_config="CPU", distribution_strategy=None)
    with tempfile.TemporaryDirectory() as tmp:
        job, _ = prepare(spec, target, Path(tmp))
        assert isinstance(job, PreparedJob)
        handle = RayBackend(target=target, num_cpus=1).submit(job)
    try:
        started: set[str] = set()
        for line in handle.logs(follow=True):
            if line.text == "started":
                started.add(line.replica)
            if started == {"chief-0", "worker-0"}:
                break
        placed = {ln.text.split()[0]: ln.text.split("(")[1].split(",")[1].strip().split(":")[0]
                  for ln in handle.logs(replica="tfcloud") if " runs on node " in ln.text}
        assert set(placed.values()) == HOSTS, placed  # SPREAD: one replica on each host
        shown = tfcloud("stacks", handle.job_id, "--ray", two_host_ray.address, "--json")
        assert shown.returncode == 0, shown.stderr
        found = json.loads(shown.stdout)
        assert sorted(found) == ["chief-0", "worker-0"]
        for name, text in found.items():  # each in the function it hangs in, on either host
            assert re.search(r'File ".*hang\.py", line 4 in waiting_for_the_other_host$', text, re.M), (name, text)
        # hostile inputs: a replica the job lacks, a job the cluster lacks (its id with markup in it)
        absent = tfcloud("stacks", handle.job_id, "--ray", two_host_ray.address, "--replica", "ps-0")
        assert absent.returncode == 2 and "ps-0" in absent.stderr and "Traceback" not in absent.stderr, absent.stderr
        unknown = handle.job_id[:-4] + "[b]x"
        nobody = tfcloud("stacks", unknown, "--ray", two_host_ray.address)
        assert nobody.returncode == 2 and "Traceback" not in nobody.stderr, nobody.stderr
        assert unknown in nobody.stderr.replace("\n", ""), nobody.stderr  # printed as given, not as markup
        # the helper job is gone, and never listed as a tfcloud job
        assert [i.job_id for i in RayBackend(address=two_host_ray.address).list(state=JobState.RUNNING)] == \
            [handle.job_id]
    finally:
        handle.cancel()
    assert handle.wait(120).state is JobState.CANCELLED
    gone = tfcloud("stacks", handle.job_id, "--ray", two_host_ray.address)
    assert gone.returncode == 2 and "expected a running job" in gone.stderr, gone.stderr


@pytest.mark.slow
@pytest.mark.tensorflow
def test_a_lost_host_restarts_the_cluster_on_a_replacement_and_fit_resumes(two_host_ray: TwoHostRay,
                                                                           tmp_path: Path) -> None:
    """Host b's Ray node (raylet, actors, replicas: every process in its namespace) is killed while training
    waits in epoch 3; a new node joins on host b; the whole cluster is placed again and resumes at epoch 3."""
    pytest.importorskip("tf_keras")
    from tfcloud.testing.netns import ray_node

    hosts = two_host_ray.hosts
    out, shared = tmp_path / "weights", tmp_path / "shared"
    out.mkdir()
    handle = submit(two_host_ray, str(out), "5", "3", worker_count=2, distribution_strategy="multi_worker_mirrored",
                    base_output_dir=str(shared), max_restarts=1)
    for line in handle.logs(follow=True):
        if line.text == "PAUSED 3":
            break
    assert hosts.kill_host(hosts.b)
    replacement = threading.Thread(target=ray_node, args=(hosts, hosts.b, hosts.a, f"node-{time.time_ns()}"))
    replacement.start()
    try:
        info = handle.wait(400)
    finally:
        replacement.join()
    assert info.state is JobState.SUCCEEDED, explain(handle)
    said = [ln.text for ln in handle.logs(replica="tfcloud")]
    failed = [t for t in said if t.startswith("tfcloud: attempt 1 failed: ")]
    assert len(failed) == 1 and failed[0].endswith("Restarting the cluster (restart 1 of 1)."), explain(handle)
    assert "tfcloud: attempt 2 of 2: placing 3 replica(s) again on the nodes that are alive." in said
    lost = [t for t in said if re.fullmatch(r"(chief|worker)-\d's actor died \(\w+\); its node may be gone\.", t)]
    assert lost, "\n".join(said)  # the driver saw host b's replicas go with their node
    for replica in ("chief-0", "worker-0", "worker-1"):
        lines = [ln.text for ln in handle.logs(replica=replica)]
        attempts = [i for i, t in enumerate(lines) if t.startswith("TF_CONFIG ")]
        assert len(attempts) == 2, explain(handle)
        second = [int(t.split()[1]) for t in lines[attempts[1]:] if t.startswith("EPOCH_BEGIN ")]
        assert second == [3, 4, 5], explain(handle)  # epochs 1-2 came from the backup
        resumed = [t for t in lines if "model.fit resumed at epoch" in t]
        assert len(resumed) == 1, explain(handle)
        assert int(resumed[0].split("resumed at epoch ")[1].split()[0]) == 3 > 1
        assert lines[-1] == f"DONE {replica}"
    for tf_config in tf_configs(handle).values():  # the second attempt spans both hosts again
        assert hosts_of(tf_config) == HOSTS
    assert (shared / "model" / "model.keras").is_file()
