"""A working build on a real Docker engine: ``timeout`` ends it TIMEOUT and ``CancelBuild`` ends it CANCELLED, both
stopping its work on the engine; ``logs_bucket`` gets the build's log either way."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud.devtools import cloudbuild_v1 as cloudbuild
from google.protobuf import duration_pb2

from tests.emulator.conftest import wait_until

pytestmark = [pytest.mark.emulator, pytest.mark.docker]

PROJECT = "build-control"
SLEEP = "sleep 173"  # what the build's RUN step runs; found by it on the engine


@pytest.fixture
def docker_emulator(engine: Any) -> Iterator[Any]:
    from tfcloud.emulator import Emulator

    with Emulator(project=PROJECT, docker_host=engine.docker_host) as emulator:
        yield emulator


@pytest.fixture
def slow_source(docker_emulator: Any, python_base: str) -> cloudbuild.Source:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = f"FROM {python_base}\nRUN {SLEEP}\n".encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    client = docker_emulator.storage_client()
    try:
        client.create_bucket("slow-src").blob("ctx.tar.gz").upload_from_string(buffer.getvalue())
        client.create_bucket("build-logs")
    finally:
        client.close()
    return cloudbuild.Source(storage_source=cloudbuild.StorageSource(bucket="slow-src", object_="ctx.tar.gz"))


def sleeping_containers(engine: Any) -> list[Any]:
    client = engine.client()
    try:
        return [c for c in client.containers.list() if SLEEP in " ".join(c.attrs["Config"]["Cmd"] or [])]
    finally:
        client.close()


def build_log(emulator: Any, build_id: str) -> str:
    client = emulator.storage_client()
    try:
        return str(client.bucket("build-logs").blob(f"builds/log-{build_id}.txt").download_as_text())
    finally:
        client.close()


def slow_build(source: cloudbuild.Source, **fields: Any) -> cloudbuild.Build:
    return cloudbuild.Build(source=source, logs_bucket="gs://build-logs/builds", steps=[cloudbuild.BuildStep(
        name="gcr.io/cloud-builders/docker", args=["build", "-t", "slow:1", "."])], **fields)


def test_a_build_past_its_timeout_ends_timeout_and_stops(engine: Any, docker_emulator: Any,
                                                         slow_source: cloudbuild.Source) -> None:
    builds = docker_emulator.build_client()
    try:
        operation = builds.create_build(project_id=PROJECT, build=slow_build(
            slow_source, timeout=duration_pb2.Duration(seconds=4)))
        with pytest.raises(exceptions.GoogleAPICallError, match="Build timed out"):
            operation.result(timeout=120)
        build = builds.get_build(project_id=PROJECT, id=operation.metadata.build.id)
    finally:
        builds.transport.close()
    assert build.status.name == "TIMEOUT"
    assert build.timeout.total_seconds() == 4
    assert "timeout of 4s" in build.status_detail
    assert build.steps[0].status.name == "TIMEOUT"
    wait_until(lambda: not sleeping_containers(engine))
    log = build_log(docker_emulator, build.id)
    assert f"RUN {SLEEP}" in log
    assert log.rstrip("\n").endswith(f"ERROR: {build.status_detail}")


def test_cancelling_a_working_build_stops_it(engine: Any, docker_emulator: Any,
                                             slow_source: cloudbuild.Source) -> None:
    builds = docker_emulator.build_client()
    try:
        operation = builds.create_build(project_id=PROJECT, build=slow_build(slow_source))
        build_id = operation.metadata.build.id
        wait_until(lambda: sleeping_containers(engine), timeout=120)
        assert builds.get_build(project_id=PROJECT, id=build_id).status.name == "WORKING"
        cancelled = builds.cancel_build(project_id=PROJECT, id=build_id)
        assert cancelled.status.name == "CANCELLED"
        assert cancelled.timeout.total_seconds() == 3600  # the default Google fills in
        with pytest.raises(exceptions.GoogleAPICallError, match="Build was cancelled"):
            operation.result(timeout=30)
    finally:
        builds.transport.close()
    wait_until(lambda: not sleeping_containers(engine))
    assert "ERROR: Build was cancelled." in build_log(docker_emulator, build_id)
