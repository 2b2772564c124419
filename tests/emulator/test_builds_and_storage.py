"""Cloud Build and Cloud Storage on the emulator (no Docker engine here: builds that need one fail clearly)."""

from __future__ import annotations

import io
import tarfile
import time
from typing import Any

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
from google.cloud.devtools import cloudbuild_v1 as cloudbuild
from google.cloud.logging_v2.types import ListLogEntriesRequest

from tests.emulator.conftest import wait_until

pytestmark = pytest.mark.emulator

PROJECT = "build-project"


def stage_source(client: storage.Client, bucket: str, files: dict[str, str]) -> str:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    target = client.bucket(bucket)
    if not target.exists():
        client.create_bucket(bucket)
    target.blob("source.tar.gz").upload_from_string(buffer.getvalue(), content_type="application/gzip")
    return "source.tar.gz"


def test_storage_client_reads_the_env_the_fixture_exports(tfcloud_emulator_env: Any) -> None:
    client = storage.Client(project="any", credentials=AnonymousCredentials())  # STORAGE_EMULATOR_HOST
    try:
        bucket = client.create_bucket("env-bucket")
        bucket.blob("a/b.txt").upload_from_string(b"hello")
        assert client.bucket("env-bucket").blob("a/b.txt").download_as_bytes() == b"hello"
        assert [blob.name for blob in client.list_blobs("env-bucket", prefix="a/")] == ["a/b.txt"]
    finally:
        client.close()
    assert tfcloud_emulator_env.env["TFCLOUD_EMULATOR_HOST"] == tfcloud_emulator_env.endpoint


def test_a_build_fetches_its_source_then_fails_without_an_engine(emulator: Any, builds: Any, logs: Any) -> None:
    client = emulator.storage_client()
    try:
        obj = stage_source(client, "build-src", {"Dockerfile": "FROM scratch\n"})
    finally:
        client.close()
    build = cloudbuild.Build(
        source=cloudbuild.Source(storage_source=cloudbuild.StorageSource(bucket="build-src", object_=obj)),
        steps=[cloudbuild.BuildStep(name="gcr.io/cloud-builders/docker", args=["build", "-t", "x", "."])],
        images=["x"])
    operation = builds.create_build(project_id=PROJECT, build=build)
    assert operation.metadata.build.status.name == "QUEUED"
    with pytest.raises(exceptions.GoogleAPICallError, match="Build failed; check build logs for details"):
        operation.result(timeout=60)

    build_id = operation.metadata.build.id
    finished = builds.get_build(project_id=PROJECT, id=build_id)
    assert finished.status.name == "FAILURE"
    assert "No Docker engine" in finished.status_detail
    assert finished.name == f"projects/{PROJECT}/locations/global/builds/{build_id}"
    assert finished.create_time <= finished.start_time <= finished.finish_time
    assert finished.steps[0].status.name == "FAILURE"
    lines = [entry.text_payload for entry in logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{PROJECT}"],
        filter=f'resource.type="build" AND resource.labels.build_id="{build_id}"'))]
    assert "FETCHSOURCE" in lines
    assert "Fetching storage object: gs://build-src/source.tar.gz" in lines
    assert any(line.startswith("Step #0: ERROR: No Docker engine") for line in lines)


def test_non_docker_steps_fail_with_a_clear_status(emulator: Any, builds: Any) -> None:
    operation = builds.create_build(project_id=PROJECT, build=cloudbuild.Build(
        steps=[cloudbuild.BuildStep(name="gcr.io/cloud-builders/gcloud", args=["version"])]))
    with pytest.raises(exceptions.GoogleAPICallError):
        operation.result(timeout=60)
    assert "only Docker builder steps" in builds.get_build(project_id=PROJECT, id=operation.metadata.build.id) \
        .status_detail


def test_cancel_list_and_errors(emulator: Any, builds: Any) -> None:
    emulator.faults.hold_queued()
    steps = [cloudbuild.BuildStep(name="docker", args=["version"])]
    operations = [builds.create_build(project_id="list-project", build=cloudbuild.Build(steps=steps, tags=[f"t{i}"]))
                  for i in range(3)]
    ids = [op.metadata.build.id for op in operations]
    time.sleep(0.3)
    assert builds.get_build(project_id="list-project", id=ids[0]).status.name == "QUEUED"

    cancelled = builds.cancel_build(project_id="list-project", id=ids[0])
    assert cancelled.status.name == "CANCELLED"
    with pytest.raises(exceptions.Cancelled):
        operations[0].result(timeout=30)
    with pytest.raises(exceptions.FailedPrecondition):
        builds.cancel_build(project_id="list-project", id=ids[0])
    for build_id in ids[1:]:
        builds.cancel_build(project_id="list-project", id=build_id)

    pages = list(builds.list_builds(request={"project_id": "list-project", "page_size": 2}).pages)
    assert [len(page.builds) for page in pages] == [2, 1]
    assert [b.id for page in pages for b in page.builds] == list(reversed(ids))
    assert len(list(builds.list_builds(project_id="list-project", filter='status="CANCELLED"'))) == 3
    assert list(builds.list_builds(project_id="list-project", filter='status="SUCCESS"')) == []
    assert [b.id for b in builds.list_builds(project_id="list-project", filter='tags="t1"')] == [ids[1]]
    assert len(list(builds.list_builds(project_id="list-project", filter='tags!="t1"'))) == 2

    with pytest.raises(exceptions.NotFound):
        builds.get_build(project_id="list-project", id="no-such-build")
    with pytest.raises(exceptions.InvalidArgument, match="at least one step"):
        builds.create_build(project_id="list-project", build=cloudbuild.Build())
    with pytest.raises(exceptions.InvalidArgument, match="project_id"):
        builds.create_build(project_id="", build=cloudbuild.Build(steps=steps))


def test_build_status_goes_queued_working_and_ends(emulator: Any, builds: Any) -> None:
    operation = builds.create_build(project_id=PROJECT, build=cloudbuild.Build(
        steps=[cloudbuild.BuildStep(name="docker", args=["version"])]))
    build_id = operation.metadata.build.id
    seen: list[str] = []

    def finished() -> bool:
        status = builds.get_build(project_id=PROJECT, id=build_id).status.name
        if not seen or seen[-1] != status:
            seen.append(status)
        return status in ("SUCCESS", "FAILURE")

    wait_until(finished, timeout=30, interval=0.01)
    assert seen[0] in ("QUEUED", "WORKING") and seen[-1] == "FAILURE"


def test_logs_bucket_gets_the_build_log_as_log_id_txt(emulator: Any, builds: Any) -> None:
    client = emulator.storage_client()
    try:
        obj = stage_source(client, "logs-src", {"Dockerfile": "FROM scratch\n"})
        client.create_bucket("my-build-logs")
        operation = builds.create_build(project_id=PROJECT, build=cloudbuild.Build(
            source=cloudbuild.Source(storage_source=cloudbuild.StorageSource(bucket="logs-src", object_=obj)),
            steps=[cloudbuild.BuildStep(name="gcr.io/cloud-builders/docker", args=["build", "."])],
            logs_bucket="gs://my-build-logs"))
        with pytest.raises(exceptions.GoogleAPICallError):
            operation.result(timeout=60)
        build_id = operation.metadata.build.id
        text = client.bucket("my-build-logs").blob(f"log-{build_id}.txt").download_as_text()
    finally:
        client.close()
    lines = text.splitlines()
    assert lines[:2] == [f'starting build "{build_id}"', "FETCHSOURCE"]
    assert any(line.startswith("Step #0: ERROR: No Docker engine") for line in lines)
    assert lines[-1].startswith("ERROR: Build step 0")


def test_a_build_timeout_must_be_positive(builds: Any) -> None:
    with pytest.raises(exceptions.InvalidArgument, match="timeout must be positive"):
        builds.create_build(project_id=PROJECT, build=cloudbuild.Build(
            steps=[cloudbuild.BuildStep(name="gcr.io/cloud-builders/docker", args=["build", "."])],
            timeout={"seconds": -5}))
