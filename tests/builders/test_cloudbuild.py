"""The Cloud Build builder: the request body as a value; staging against the storage emulator; end to end
against tfcloud's emulator (Cloud Build + Cloud Logging + Storage), which runs the build on the real dockerd
and pushes to the real registry on loopback."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rich.console import Console

from tfcloud.errors import BuildError, ConfigurationError
from tfcloud.google.staging.cloudbuild import STAGING_PREFIX, CloudBuildBuilder, build_request, manifest_exists
from tfcloud.image.builders import Builder
from tfcloud.image.containerize import containerize, plan_image
from tfcloud.job.artifacts import PreparedJob
from tfcloud.testing.dockerd import Engine

MakeJob = Callable[..., PreparedJob]  # the make_job fixture (conftest.py)

pytestmark = [pytest.mark.docker, pytest.mark.emulator]

PROJECT = "tfcloud-test"
BUCKET = "tfcloud-staging"


def test_build_request_is_a_value() -> None:
    body = build_request(image="r/train:abc", bucket="b", object_name="tfcloud/contexts/x.tar.gz",
                         cache_from="r/train:latest", extra_tags=["r/train:latest"], timeout_s=600,
                         machine_type="E2_HIGHCPU_8")
    assert body == {
        "source": {"storage_source": {"bucket": "b", "object_": "tfcloud/contexts/x.tar.gz"}},
        "steps": [{
            "id": "build",
            "name": "gcr.io/cloud-builders/docker",
            "args": ["build", "-f", ".tfcloud/Dockerfile", "-t", "r/train:abc", "-t", "r/train:latest",
                     "--cache-from", "r/train:latest", "--build-arg", "BUILDKIT_INLINE_CACHE=1", "."],
            "env": ["DOCKER_BUILDKIT=1"],
        }],
        "images": ["r/train:abc", "r/train:latest"],
        "timeout": {"seconds": 600},
        "options": {"logging": "CLOUD_LOGGING_ONLY", "machine_type": "E2_HIGHCPU_8"},
        "tags": ["tfcloud"],
    }
    from google.cloud.devtools.cloudbuild_v1 import Build

    assert Build(body).timeout.total_seconds() == 600  # the client library takes it as is
    plain = build_request(image="r/t:1", bucket="b", object_name="o")
    assert plain["steps"][0] == {"id": "build", "name": "gcr.io/cloud-builders/docker",
                                 "args": ["build", "-f", ".tfcloud/Dockerfile", "-t", "r/t:1", "."]}
    assert plain["timeout"] == {"seconds": 1800}


@pytest.fixture(scope="module")
def emulator(engine: Engine) -> Iterator[Any]:
    pytest.importorskip("google.cloud.devtools.cloudbuild_v1")
    from tfcloud.emulator import Emulator

    with Emulator(project=PROJECT, docker_host=engine.docker_host) as emu:
        storage = emu.storage_client()
        try:
            storage.create_bucket(BUCKET)
        finally:
            storage.close()
        yield emu


@pytest.fixture
def cloud(emulator: Any) -> Iterator[CloudBuildBuilder]:
    with CloudBuildBuilder(project=PROJECT, bucket=f"gs://{BUCKET}", endpoint=emulator.endpoint,
                           storage_endpoint=emulator.settings.storage_endpoint, poll_interval=0.2) as builder:
        yield builder


def _builds(emulator: Any) -> int:
    client = emulator.build_client()
    try:
        return len(list(client.list_builds(project_id=PROJECT)))
    finally:
        client.transport.close()


def _staged(cloud: CloudBuildBuilder) -> list[str]:
    return [b.name for b in cloud.storage().list_blobs(BUCKET, prefix=STAGING_PREFIX)]


def test_builder_satisfies_the_protocol(cloud: CloudBuildBuilder) -> None:
    assert isinstance(cloud, Builder)


def test_build_on_cloud_build_then_resubmit_unchanged(engine: Engine, emulator: Any, cloud: CloudBuildBuilder,
                                                     make_job: MakeJob, repository: str) -> None:
    job = make_job({"requirements.txt": "pip\n", "model.py": "W = 3\n"}, requirements_txt="requirements.txt")
    out = io.StringIO()
    cloud.console = Console(file=out, width=200)
    cloud.stream_logs = True
    ref = containerize(job, builder=cloud, repository=repository, console=cloud.console)
    assert ref.built and ref.digest and ref.digest.startswith("sha256:")
    shown = out.getvalue()
    assert "Uploading the build context" in shown and "Step #0 - \"build\": Step 1/" in shown
    # The context's own size was said on the line before; this one says what it measures (the gzipped tar).
    assert re.search(r"Uploading the build context to gs://\S+ \([\d.]+ k?B compressed\)", shown), shown
    assert _staged(cloud) == []  # cleaned up after the build
    rules = list(cloud.storage().get_bucket(BUCKET).lifecycle_rules)
    assert {"action": {"type": "Delete"}, "condition": {"age": 7, "matchesPrefix": [STAGING_PREFIX]}} in rules

    client = engine.client()
    try:
        client.images.remove(ref.uri)
        client.images.pull(ref.uri)  # Cloud Build pushed it (and :latest, the next build's cache)
        client.images.pull(ref.uri.rsplit(":", 1)[0] + ":latest")
        listing = client.containers.run(ref.uri, entrypoint=["ls", "/app"], network_mode="none", remove=True)
    finally:
        client.close()
    assert listing.decode().split() == ["model.py", "requirements.txt", "tfcloud_launcher.py", "train.py"]

    builds, before = _builds(emulator), len(engine.registry.requests())
    again = containerize(job, builder=cloud, repository=repository)
    requests = engine.registry.requests()[before:]
    assert again.uri == ref.uri and not again.built
    assert _builds(emulator) == builds  # no build
    assert requests == [f"HEAD /v2/{ref.uri.split('/', 1)[1].replace(':', '/manifests/')}"]  # one look-up


def test_staging_is_skipped_when_the_same_context_is_there(cloud: CloudBuildBuilder, make_job: MakeJob,
                                                          repository: str) -> None:
    ctx = plan_image(make_job({"stage.py": "1"}), repository=repository).context
    name = cloud.stage(ctx)
    assert name == f"{STAGING_PREFIX}{ctx.digest()[:32]}.tar.gz"
    blob = cloud.storage().bucket(BUCKET).get_blob(name)
    generation, size = blob.generation, blob.size
    out = io.StringIO()
    cloud.console = Console(file=out, width=200)
    assert cloud.stage(ctx) == name
    assert cloud.storage().bucket(BUCKET).get_blob(name).generation == generation
    assert "already staged" in out.getvalue() and "Uploading" not in out.getvalue()
    buf = io.BytesIO()
    ctx.write_tar(buf, compress=True)
    assert size == len(buf.getvalue())
    cloud.storage().bucket(BUCKET).blob(name).delete()


def test_a_damaged_staged_context_is_uploaded_again(cloud: CloudBuildBuilder, make_job: MakeJob,
                                                    repository: str) -> None:
    ctx = plan_image(make_job({"damaged.py": "1"}), repository=repository).context
    name = cloud.stage(ctx)
    cloud.storage().bucket(BUCKET).blob(name).upload_from_string(b"not a tarball")  # damaged at the same name
    out = io.StringIO()
    cloud.console = Console(file=out, width=200)
    assert cloud.stage(ctx) == name
    assert "again: the staged one is damaged" in out.getvalue()
    buf = io.BytesIO()
    ctx.write_tar(buf, compress=True)
    assert cloud.storage().bucket(BUCKET).blob(name).download_as_bytes() == buf.getvalue()
    cloud.storage().bucket(BUCKET).blob(name).delete()


def test_a_staging_upload_cut_every_time_ends_at_the_deadline(emulator: Any, make_job: MakeJob,
                                                              repository: str) -> None:
    from tfcloud.google.cloud.gcloud import RetryPolicy
    from tfcloud.testing.proxy import failing_proxy

    ctx = plan_image(make_job({"cut.py": "1"}), repository=repository).context
    storage = emulator.settings.storage_endpoint
    with failing_proxy(storage.removeprefix("http://"), fail=lambda method, path: "/upload/" in path) as proxy, \
            CloudBuildBuilder(project=PROJECT, bucket=BUCKET, endpoint=emulator.endpoint,
                              storage_endpoint=f"http://{proxy.address}", retry=RetryPolicy.from_setting("2"),
                              lifecycle_days=None) as cut:
        with pytest.raises(BuildError) as raised:
            cut.stage(ctx)
        uploads = [status for _, path, status in proxy.requests if "/upload/" in path]
    assert raised.value.step == "upload" and raised.value.exit_code == 1
    assert "gave up after 2 s (TFCLOUD_RETRY_DEADLINE)" in str(raised.value)
    assert "Nothing was built" in str(raised.value) and f"gcloud storage ls gs://{BUCKET}/" in str(raised.value)
    assert len(uploads) >= 2 and set(uploads) == {500}
    client = emulator.storage_client()
    try:
        assert cut.staged_object(ctx) not in [b.name for b in client.list_blobs(BUCKET)]
    finally:
        client.close()


def test_failing_step_gives_its_log_tail(emulator: Any, cloud: CloudBuildBuilder, make_job: MakeJob,
                                         repository: str) -> None:
    job = make_job({"requirements.txt": "./no-such-directory\n"}, requirements_txt="requirements.txt")
    with pytest.raises(BuildError) as info:
        containerize(job, builder=cloud, repository=repository)
    err = info.value
    assert err.step == 'Step #0 - "build"'
    assert str(err).startswith("Cloud Build ") and 'failed at Step #0 - "build"' in str(err)
    assert "returned a non-zero code: 1" in err.log_tail
    assert all(line.startswith('Step #0 - "build": ') for line in err.log_tail.splitlines())
    assert len(_staged(cloud)) == 1  # kept for a retry; the lifecycle rule removes it eventually
    for name in _staged(cloud):
        cloud.storage().bucket(BUCKET).blob(name).delete()


def test_manifest_exists_against_the_registry(engine: Engine) -> None:
    assert manifest_exists(f"{engine.registry.address}/tfcloud/none:1") is False
    with pytest.raises(ConfigurationError, match=r"Cannot reach the registry 127\.0\.0\.1:9"):
        manifest_exists("127.0.0.1:9/a/b:1", timeout=2)


def test_a_build_past_its_timeout_is_cancelled(emulator: Any, cloud: CloudBuildBuilder, make_job: MakeJob,
                                               repository: str) -> None:
    cloud.timeout, cloud.cancel_grace = 1, 0.5
    emulator.faults.hold_queued()  # the build never leaves the queue
    try:
        with pytest.raises(BuildError) as info:
            containerize(make_job({"slow.py": ""}), builder=cloud, repository=repository)
    finally:
        emulator.faults.release_queued()
    assert info.value.step == "timeout"
    assert str(info.value).startswith("Cloud Build ") and "did not finish within 1 s; cancelled." in str(info.value)
    client = emulator.build_client()
    try:
        latest = next(iter(client.list_builds(project_id=PROJECT)))
    finally:
        client.transport.close()
    assert latest.status.name == "CANCELLED" and latest.timeout.total_seconds() == 1
    for name in _staged(cloud):
        cloud.storage().bucket(BUCKET).blob(name).delete()
