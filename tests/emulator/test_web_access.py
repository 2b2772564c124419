"""``enable_web_access`` on the emulator: each replica of a running job has a web-access URI (a loopback shell
endpoint, tfcloud.emulator.webaccess) that runs commands in the replica's environment; ``tfcloud status`` shows
them; they are gone once the job ends; a job without it has none. In Docker mode the shell opens in the replica's
container."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.emulator.conftest import wait_until
from tests.emulator.test_jobs import TERMINAL, custom_job, job_id, pool
from tfcloud.cli import main

pytestmark = pytest.mark.emulator

WAIT = "import time; print('ready', flush=True); time.sleep(120)"


def shell(uri: str, script: str, *, token: str | None = None) -> str:
    """Run ``script`` through the endpoint at ``uri`` (its token first) and return what came back."""
    parts = urlsplit(uri)
    assert parts.scheme == "shell" and parts.hostname == "127.0.0.1"
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as conn:
        received = b""
        try:
            conn.sendall(((token if token is not None else parts.path.strip("/")) + "\n" + script).encode())
            conn.shutdown(socket.SHUT_WR)
            while chunk := conn.recv(4096):
                received += chunk
        except OSError:  # a wrong token: the endpoint hung up without reading what was sent
            pass
    return received.decode()


def running(jobs: Any, name: str) -> Any:
    return wait_until(lambda: (job := jobs.get_custom_job(name=name)).state.name == "JOB_STATE_RUNNING" and job)


def test_a_web_access_job_has_a_shell_per_replica_until_it_ends(
    emulator: Any, jobs: Any, tfcloud_emulator_env: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    created = jobs.create_custom_job(
        parent=emulator.parent, custom_job=custom_job(pool(WAIT), pool(WAIT), enable_web_access=True)
    )
    job = running(jobs, created.name)
    uris = dict(job.web_access_uris)
    assert sorted(uris) == ["workerpool0-0", "workerpool1-0"]
    assert len(set(uris.values())) == 2
    try:
        assert shell(uris["workerpool0-0"], "echo hi\n") == "hi\n"
        said = shell(uris["workerpool1-0"], "echo $CLOUD_ML_JOB_ID\necho $CLUSTER_SPEC\n").splitlines()
        assert said[0] == job_id(created)  # the replica's environment: the worker's own
        assert json.loads(said[1])["task"]["type"] == "workerpool1"
        assert shell(uris["workerpool0-0"], "echo hi\n", token="wrong") == ""  # the token is required

        capsys.readouterr()
        assert main(["status", job_id(created)]) == 0
        out = capsys.readouterr().out
        assert f"shell     chief-0   {uris['workerpool0-0']}" in out, out
        assert f"          worker-0  {uris['workerpool1-0']}" in out, out
        assert main(["status", job_id(created), "--json"]) == 0
        shown = {r["name"]: r["web_access_uri"] for r in json.loads(capsys.readouterr().out)["replicas"]}
        assert shown == {"chief-0": uris["workerpool0-0"], "worker-0": uris["workerpool1-0"]}
    finally:
        jobs.cancel_custom_job(name=created.name)
    ended = wait_until(lambda: (j := jobs.get_custom_job(name=created.name)).state.name in TERMINAL and j)
    assert dict(ended.web_access_uris) == {}
    for uri in uris.values():  # the endpoints are closed with the job
        with pytest.raises(OSError):
            shell(uri, "echo hi\n")


def test_without_web_access_no_replica_has_a_uri(
    emulator: Any, jobs: Any, tfcloud_emulator_env: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool(WAIT)))
    try:
        job = running(jobs, created.name)
        assert dict(job.web_access_uris) == {}
        capsys.readouterr()
        assert main(["status", job_id(created)]) == 0
        assert "shell" not in capsys.readouterr().out
        assert main(["stacks", job_id(created)]) == 2  # its replicas are not on this machine: the shell is the way
        assert capsys.readouterr().err.splitlines() == [
            "Error: Invalid `JOB`: expected a job whose replicas can show their stacks (local, --container, Ray), "
            f"received '{job_id(created)} (a vertex job)'.",
            f"On Vertex AI, submit with --web-access and open a replica's shell (`tfcloud status {job_id(created)}` "
            "shows each URI); there, `py-spy dump --pid 1`.",
        ]
    finally:
        jobs.cancel_custom_job(name=created.name)


def test_the_request_sets_enable_web_access_only_when_asked() -> None:
    from tfcloud.flow.validate import build_job

    for given, expected in ((True, True), (False, None)):
        spec, target = build_job(entry_point=__file__, target="vertex", project="my-project", web_access=given)
        body = target.request(spec, image_uri="us-docker.pkg.dev/p/r/i:1")
        assert body is not None
        assert body["job_spec"].get("enable_web_access") is expected


@pytest.mark.docker
def test_in_docker_mode_the_shell_opens_in_the_replicas_container(
    engine: Any, python_base: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The replica is a container (the emulator in Docker mode): its URI opens a shell in that container (``docker
    exec``), shown by ``tfcloud status``. The test image is busybox's: its ``sh`` stands in for bash."""
    from tfcloud.emulator import Emulator

    client = engine.client()
    try:
        dockerfile = (
            f"FROM {python_base}\n"
            "RUN printf '#!/usr/bin/busybox sh\\nexec busybox sh \"$@\"\\n' > /usr/bin/bash && chmod +x /usr/bin/bash\n"
            "RUN echo replica-image > /marker\n"
        )
        image, _ = client.images.build(
            fileobj=io.BytesIO(dockerfile.encode()), tag=f"tfcloud-test/webaccess:{tmp_path.name.lower()}", rm=True
        )
    finally:
        client.close()
    tag = image.tags[0]
    with Emulator(project="tfcloud-web", storage=False, docker_host=engine.docker_host) as emulator:
        for key, value in emulator.settings.env.items():
            monkeypatch.setenv(key, value)
        jobs = emulator.job_client()
        try:
            replica = pool(WAIT)
            replica.container_spec.image_uri = tag
            replica.container_spec.command = ["python3", "-c", WAIT]
            created = jobs.create_custom_job(
                parent=emulator.parent, custom_job=custom_job(replica, enable_web_access=True)
            )
            try:
                job = running(jobs, created.name)
                uri = dict(job.web_access_uris)["workerpool0-0"]
                said = shell(uri, "cat /marker\ntest -f /.dockerenv && echo in-a-container\necho $CLOUD_ML_JOB_ID\n")
                assert said.splitlines() == ["replica-image", "in-a-container", job_id(created)]
                capsys.readouterr()
                assert main(["status", job_id(created)]) == 0
                shown = capsys.readouterr().out
                assert f"shell     chief-0  {uri}" in shown, shown
            finally:
                jobs.cancel_custom_job(name=created.name)
        finally:
            jobs.transport.close()
