"""`tfcloud submit --local --container`: the replicas run from the job's image on the local Docker engine (a
real dockerd on loopback, a base image made locally), on the host network, with the same TF_CONFIG, AIP_*
directories (mounted) and logs as process replicas."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tfcloud.cli import main

pytestmark = pytest.mark.docker

SCRIPT = r'''
import json, os, sys, time
task = json.loads(os.environ["TF_CONFIG"])["task"]
name = "{type}-{index}".format(**task)
print("view", json.dumps({"name": name, "cwd": os.getcwd(), "argv": sys.argv[1:],
                          "in_image": os.path.exists("/opt/tfcloud/tfcloud"),
                          "cluster": json.loads(os.environ["TF_CONFIG"])["cluster"],
                          "model_dir": os.environ["AIP_MODEL_DIR"]}), flush=True)
with open(os.path.join(os.environ["AIP_MODEL_DIR"], name + ".txt"), "w") as f:
    f.write(open("data/input.txt").read())
'''


def test_a_three_replica_job_runs_from_the_built_image(engine: object, python_base: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import docker

    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # type: ignore[attr-defined]
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "input.txt").write_text("from the image\n")
    (project / "task.py").write_text(SCRIPT)
    code = main(["submit", str(project / "task.py"), "--local", "--container", "--worker-count", "2",
                 "--worker-config", "CPU", "--strategy", "none", "--parent-image", python_base, "--", "--flag"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    views = {}
    for line in captured.out.splitlines():
        found = re.match(r"^(\S+) +\| view (.*)$", line)
        if found:
            views[found.group(1)] = json.loads(found.group(2))
    assert sorted(views) == ["chief-0", "worker-0", "worker-1"], captured.out[-3000:]
    job_id = re.search(r"Submitted job (\S+)\.", captured.err).group(1)  # type: ignore[union-attr]
    for replica, view in views.items():
        assert view["name"] == replica
        assert view["in_image"] is True  # tfcloud's copy under /opt/tfcloud: the image, not this machine
        assert view["argv"] == ["--flag"]
        assert len(view["cluster"]["worker"]) == 2 and view["cluster"]["chief"][0].startswith("127.0.0.1:")
        output = Path(view["model_dir"])
        assert output.parts[-3:] == (job_id, "output", "model")
        assert (output / f"{replica}.txt").read_text() == "from the image\n"  # mounted: written on the host
    client = docker.DockerClient(base_url=engine.docker_host)  # type: ignore[attr-defined]
    try:
        left = [c.name for c in client.containers.list(all=True) if job_id in c.name]
    finally:
        client.close()
    assert left == []  # every replica's container was removed
    assert list(Path.cwd().iterdir()) == []


@pytest.mark.slow
@pytest.mark.tensorflow
def test_a_killed_container_restarts_the_cluster_and_fit_resumes(engine: object, tensorflow_base: str,
                                                                  tmp_path: Path) -> None:
    import shutil

    import docker

    from tests.targets.localjobs import wait_for_line
    from tfcloud.flow.pipeline import submit
    from tfcloud.flow.settings import Settings
    from tfcloud.flow.validate import build_job
    from tfcloud.job.spec import DockerConfig
    from tfcloud.job.states import JobState
    from tfcloud.targets import get_backend

    project = tmp_path / "project"
    project.mkdir()
    script = project / "train_resume.py"
    shutil.copy(Path(__file__).parent.parent / "scripts" / "train_resume.py", script)
    spec, target = build_job(entry_point=script, worker_count=1, worker_config="CPU", max_restarts=1, container=True,
                             docker_config=DockerConfig(parent_image=tensorflow_base),
                             entry_point_args=["4", "worker-0", "2", "wait"], env={"TF_CPP_MIN_LOG_LEVEL": "2"})
    settings = Settings(docker_host=engine.docker_host)  # type: ignore[attr-defined]
    handle, _ = submit(spec, target, settings, get_backend(target, settings=settings))
    try:
        wait_for_line(handle, "PREEMPT_ME", replica="worker-0", timeout=240)
        client = docker.DockerClient(base_url=engine.docker_host)  # type: ignore[attr-defined]
        try:  # the python in a container is its PID 1, which cannot SIGKILL itself: kill it from outside
            client.containers.get(f"tfcloud-{handle.job_id}-worker-0-1").kill()
        finally:
            client.close()
        info = handle.wait(300)
        lines = {r: [ln.text for ln in handle.logs(replica=r)] for r in ("chief-0", "worker-0")}
        assert info.state is JobState.SUCCEEDED, "\n".join(lines["chief-0"][-30:] + lines["worker-0"][-30:])
    finally:
        if not handle.info().state.is_final:
            handle.cancel()
            handle.wait(60)
    assert handle.raw_status()["restarts"][0]["replica"] == "worker-0"
    for replica, text in lines.items():
        epochs = [int(t.split()[1]) for t in text if t.startswith("EPOCH_BEGIN ")]
        assert epochs == [1, 2, 2, 3, 4], text[-40:]
        assert any("model.fit resumed at epoch 2" in t for t in text)
        assert f"DONE {replica}" in text
    assert (handle.job_dir / "output" / "model" / "model.keras").is_file()


def test_a_data_set_and_secrets_reach_container_replicas(engine: object, python_base: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--data inside the project stays out of the image and is mounted read-only at its path; --secret env: and
    file: reach the container by reference (the variable passed through, the file mounted), masked in its
    output."""
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # type: ignore[attr-defined]
    monkeypatch.setenv("MY_SOURCE", "container-env-s3cret")
    secret = tmp_path / "token.txt"
    secret.write_text("container-file-s3cret\n")
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "input.txt").write_text("from the host\n")
    (project / "task.py").write_text(
        "import os, tfcloud\n"
        "root = tfcloud.data('input')\n"
        "print('read', open(os.path.join(root, 'input.txt')).read().strip(), root == os.environ['TFCLOUD_DATA_INPUT'],"
        " os.path.exists('/opt/tfcloud/data/input.txt'), flush=True)\n"
        "print('secrets', os.environ['A'], os.environ['B'], len(os.environ['A']), len(os.environ['B']), flush=True)\n")
    code = main(["submit", str(project / "task.py"), "--local", "--container", "--strategy", "none",
                 "--parent-image", python_base, "--data", f"input={project / 'data'}",
                 "--secret", "A=env:MY_SOURCE", "--secret", f"B=file:{secret}"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    assert re.search(r"^chief-0 +\| read from the host True False$", captured.out, re.M), captured.out[-2000:]
    assert re.search(r"^chief-0 +\| secrets \*\*\*\* \*\*\*\* 20 21$", captured.out, re.M), captured.out[-2000:]
    assert "s3cret" not in captured.out + captured.err


def test_docker_inspect_shows_no_secret_value(engine: object, python_base: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An env: secret reaches the container's launcher through a 0600 file mounted read-only (a file: reference),
    never through the container's configuration: `docker inspect` of the running replica holds no value, the job
    still reads it, and the file's directory is gone once the job ends."""
    import hashlib

    import docker

    from tests.targets.localjobs import wait_for_line
    from tfcloud.flow.pipeline import submit
    from tfcloud.flow.settings import Settings
    from tfcloud.flow.validate import build_job
    from tfcloud.job.spec import DockerConfig
    from tfcloud.job.states import JobState
    from tfcloud.targets import get_backend
    from tfcloud.targets.local.backend import LocalJob

    value = "inspect-me-s3cret-7f3a"
    monkeypatch.setenv("MY_SOURCE", value)
    project = tmp_path / "project"
    project.mkdir()
    script = project / "task.py"
    script.write_text(
        "import hashlib, os, time\n"
        "print('digest', hashlib.sha256(os.environ['A'].encode()).hexdigest(), flush=True)\n"
        "go = os.path.join(os.environ['AIP_MODEL_DIR'], 'go')\n"
        "while not os.path.exists(go):\n"
        "    time.sleep(0.2)\n")
    spec, target = build_job(entry_point=script, container=True, distribution_strategy="none",
                             docker_config=DockerConfig(parent_image=python_base),
                             secrets={"A": "env:MY_SOURCE"})
    settings = Settings(docker_host=engine.docker_host)  # type: ignore[attr-defined]
    handle, _ = submit(spec, target, settings, get_backend(target, settings=settings))
    assert isinstance(handle, LocalJob)
    try:
        wait_for_line(handle, "digest", replica="chief-0", timeout=120)
        client = docker.DockerClient(base_url=engine.docker_host)  # type: ignore[attr-defined]
        try:
            attrs = client.api.inspect_container(f"tfcloud-{handle.job_id}-chief-0-1")
        finally:
            client.close()
        (handle.job_dir / "output" / "model" / "go").write_text("")
        info = handle.wait(120)
        text = [ln.text for ln in handle.logs(replica="chief-0")]
        assert info.state is JobState.SUCCEEDED, text[-30:]
    finally:
        if not handle.info().state.is_final:
            handle.cancel()
            handle.wait(60)
    inspected = json.dumps(attrs)
    assert value not in inspected
    assert not any(e.startswith("MY_SOURCE=") for e in attrs["Config"]["Env"])
    refs = json.loads(next(e for e in attrs["Config"]["Env"] if e.startswith("TFCLOUD_SECRET_REFS="))
                      .partition("=")[2])
    kind, _, path = refs["A"].partition(":")
    assert kind == "file"
    mount = next(m for m in attrs["Mounts"] if m["Destination"] == str(Path(path).parent))
    assert mount["RW"] is False
    assert not Path(mount["Source"]).exists()  # removed once the container was
    assert f"digest {hashlib.sha256(value.encode()).hexdigest()}" in text


def test_tfcloud_stacks_shows_where_a_container_replica_waits(engine: object, python_base: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """SIGUSR1 to a --container replica's process is passed on to its container, whose launcher writes every
    thread's stack to the replica's stacks file (mounted at the same path): `tfcloud stacks` reads it there."""
    from tests.targets.localjobs import wait_for_line
    from tfcloud.flow.pipeline import submit
    from tfcloud.flow.settings import Settings
    from tfcloud.flow.validate import build_job
    from tfcloud.job.spec import DockerConfig
    from tfcloud.job.states import JobState
    from tfcloud.targets import get_backend
    from tfcloud.targets.local.backend import LocalJob

    project = tmp_path / "project"
    project.mkdir()
    script = project / "task.py"
    script.write_text(
        "import time\n"
        "def waiting_in_the_container():\n"
        "    print('ready', flush=True)\n"
        "    while True:\n"
        "        time.sleep(0.1)\n"
        "waiting_in_the_container()\n")
    spec, target = build_job(entry_point=script, container=True, distribution_strategy="none",
                             docker_config=DockerConfig(parent_image=python_base))
    settings = Settings(docker_host=engine.docker_host)  # type: ignore[attr-defined]
    handle, _ = submit(spec, target, settings, get_backend(target, settings=settings))
    assert isinstance(handle, LocalJob)
    try:
        wait_for_line(handle, "ready", replica="chief-0", timeout=120)
        capsys.readouterr()
        assert main(["stacks", handle.job_id]) == 0
        out = capsys.readouterr().out
        assert out.startswith("== chief-0 ==\n") and "in waiting_in_the_container" in out, out
    finally:
        handle.cancel()
        assert handle.wait(60).state is JobState.CANCELLED
