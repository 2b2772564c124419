"""The --no-build package in Cloud Storage (the storage emulator, the real google-cloud-storage client, a real
failing HTTP proxy in front of it): a stored package is trusted only when its size and hash match, a damaged one
is replaced; uploads cut every time and storage out of reach end at the retry deadline with exit 1 and the
command to look, with exactly the objects expected; links in the project reach the package as copies."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gcp_storage_emulator", reason="the storage emulator needs tfcloud[emulator]")
pytest.importorskip("google.cloud.storage", reason="uploads need tfcloud[cloud]")

from tfcloud.errors import SubmitError
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.validate import build_job
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.staging.package import PackagePlan, plan_package, upload_package
from tfcloud.testing.proxy import failing_proxy

BUCKET = "packages-test"


@pytest.fixture(scope="module")
def storage_endpoint() -> Iterator[str]:
    from tfcloud.emulator.storage import StorageEmulator

    server = StorageEmulator()
    server.start()
    try:
        yield server.endpoint
    finally:
        server.stop()


def _client(endpoint: str) -> Any:
    import google.cloud.storage as storage
    from google.auth.credentials import AnonymousCredentials

    return storage.Client(project="p", credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                          client_options={"api_endpoint": endpoint})


@pytest.fixture
def client(storage_endpoint: str) -> Iterator[Any]:
    client = _client(storage_endpoint)
    if client.lookup_bucket(BUCKET) is None:
        client.create_bucket(BUCKET)
    for blob in client.list_blobs(BUCKET):
        blob.delete()
    try:
        yield client
    finally:
        client.close()


def _plan(tmp_path: Path, files: dict[str, str] | None = None) -> PackagePlan:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "train.py").write_text("print(open('data/x.txt').read())\n")
    for name, text in (files or {}).items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    spec, target = build_job(entry_point=str(project / "train.py"), target="vertex", build=False, chief_config="CPU")
    work = tmp_path / f"work{len(list(tmp_path.iterdir()))}"
    work.mkdir()
    job, _ = prepare(spec, target, work)
    return plan_package(job)


def _objects(client: Any) -> dict[str, int]:
    return {b.name: int(b.generation) for b in client.list_blobs(BUCKET)}


def test_a_damaged_stored_package_is_replaced_and_an_intact_one_reused(
        client: Any, tmp_path: Path) -> None:
    plan = _plan(tmp_path, {"data/x.txt": "hello\n"})
    first = upload_package(plan, storage=client, bucket=BUCKET)
    assert first.uploaded == first.size > 0
    name = plan.object_name()
    assert list(_objects(client)) == [name]
    again = upload_package(plan, storage=client, bucket=BUCKET)
    assert again.uploaded == 0  # same size and MD5: up to date
    client.bucket(BUCKET).blob(name).upload_from_string(b"not a package")  # damaged at the same name
    repaired = upload_package(plan, storage=client, bucket=BUCKET)
    assert repaired.uploaded == repaired.size == first.size
    assert client.bucket(BUCKET).blob(name).download_as_bytes() == plan.data()
    assert list(_objects(client)) == [name]


def test_uploads_cut_every_time_end_at_the_deadline_with_no_object(
        client: Any, storage_endpoint: str, tmp_path: Path) -> None:
    plan = _plan(tmp_path, {"data/x.txt": "hello\n"})
    host = storage_endpoint.removeprefix("http://")
    with failing_proxy(host, fail=lambda method, path: "/upload/" in path) as proxy:
        cut = _client(f"http://{proxy.address}")
        try:
            with pytest.raises(SubmitError) as raised:
                upload_package(plan, storage=cut, bucket=BUCKET, policy=RetryPolicy.from_setting("3"))
        finally:
            cut.close()
        uploads = [r for r in proxy.requests if "/upload/" in r[1]]
    error = raised.value
    assert error.exit_code == 1
    assert "gave up after 3 s (TFCLOUD_RETRY_DEADLINE)" in error.message
    assert "Nothing was submitted" in (error.hint or "") and f"gcloud storage ls gs://{BUCKET}/" in (error.hint or "")
    assert len(uploads) >= 2 and {status for _, _, status in uploads} == {500}  # retried, every one cut
    assert _objects(client) == {}


def test_storage_out_of_reach_ends_at_the_deadline(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    plan = _plan(tmp_path, {"data/x.txt": "hello\n"})
    unreachable = _client(f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(SubmitError) as raised:
            upload_package(plan, storage=unreachable, bucket=BUCKET, policy=RetryPolicy.from_setting("2"))
    finally:
        unreachable.close()
    assert raised.value.exit_code == 1 and "Looking for the job's package" in raised.value.message
    assert "gave up after 2 s" in raised.value.message and "gcloud storage" in (raised.value.hint or "")


def test_a_missing_bucket_is_a_configuration_error(client: Any, tmp_path: Path) -> None:
    from tfcloud.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="gs://no-such-bucket does not exist"):
        upload_package(_plan(tmp_path), storage=client, bucket="no-such-bucket", policy=RetryPolicy.from_setting("3"))


def test_links_inside_the_project_reach_the_installed_package(tmp_path: Path) -> None:
    plan = _plan(tmp_path, {"realdata/x.txt": "the data\n", "realdata/sub/y.txt": "more\n", "notes.txt": "n\n"})
    project = tmp_path / "project"
    os.symlink("realdata", project / "data")  # a directory link, as `ln -s realdata data`
    os.symlink("notes.txt", project / "notes-link.txt")
    os.symlink("/etc", project / "outside")  # leaves the project: dropped, as from an image
    (project / ".dockerignore").write_text("hidden/\n")
    (project / "hidden").mkdir()
    (project / "hidden" / "z.txt").write_text("z\n")
    os.symlink("hidden", project / "to-hidden")  # points at what the context leaves out
    plan = _plan(tmp_path)
    top = f"tfcloud_job-{plan.version}/tfcloud_job/job/"
    with tarfile.open(fileobj=io.BytesIO(plan.data()), mode="r:gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert not any(m.issym() or m.islnk() for m in members.values())
        assert tar.extractfile(members[top + "data/x.txt"]).read() == b"the data\n"  # type: ignore[union-attr]
        assert tar.extractfile(members[top + "data/sub/y.txt"]).read() == b"more\n"  # type: ignore[union-attr]
        assert tar.extractfile(members[top + "notes-link.txt"]).read() == b"n\n"  # type: ignore[union-attr]
        assert top + "realdata/x.txt" in members and not any("outside" in n or "to-hidden" in n for n in members)
        tar.extractall(tmp_path / "sdist", filter="data")
    assert plan.dropped_links == ("to-hidden",)
    assert any("to-hidden" in w for w in plan.warnings())
    # the package's own build backend (what pip runs on Vertex AI) puts the copies in the wheel
    source = tmp_path / "sdist" / f"tfcloud_job-{plan.version}"
    (tmp_path / "wheel").mkdir()
    subprocess.run([sys.executable, "-c", "import sys, _tfcloud_build as b; b.build_wheel(sys.argv[1])",
                    str(tmp_path / "wheel")], cwd=source, check=True)
    (wheel,) = (tmp_path / "wheel").iterdir()
    with zipfile.ZipFile(wheel) as whl:
        assert whl.read("tfcloud_job/job/data/x.txt") == b"the data\n"
        assert whl.read("tfcloud_job/job/data/sub/y.txt") == b"more\n"


def test_the_archive_is_spooled_with_its_hashes(tmp_path: Path) -> None:
    import base64
    import hashlib

    plan = _plan(tmp_path, {"data/x.txt": "hello\n"})
    data = plan.data()
    with plan.spool() as (f, archive):
        assert f.read() == data
    assert archive.size == len(data) == plan.measure().size
    assert archive.md5 == base64.b64encode(hashlib.md5(data).digest()).decode()


def test_artifacts_of_storage_out_of_reach_end_at_the_deadline_as_unknown(
        client: Any, storage_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tfcloud.errors import OutcomeUnknownError
    from tfcloud.flow.outputs import download_artifacts, list_artifacts

    client.bucket(BUCKET).blob("job/model/weights.bin").upload_from_string(b"w")
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", storage_endpoint)
    assert [a.path for a in list_artifacts(f"gs://{BUCKET}/job")] == ["model/weights.bin"]
    host = storage_endpoint.removeprefix("http://")
    with failing_proxy(host, fail=lambda method, path: True) as proxy:  # every request answered 500
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", f"http://{proxy.address}")
        monkeypatch.setenv("TFCLOUD_RETRY_DEADLINE", "2")  # the setting, read as for every call
        for attempt in (lambda: list_artifacts(f"gs://{BUCKET}/job"),
                        lambda: download_artifacts(f"gs://{BUCKET}/job", tmp_path / "copy")):
            with pytest.raises(OutcomeUnknownError) as raised:
                attempt()
            assert raised.value.exit_code == 3 and "gave up after 2 s" in raised.value.message
            assert f"gcloud storage ls --recursive gs://{BUCKET}/job/" in (raised.value.hint or "")
        assert len(proxy.requests) >= 4  # retried, each time cut
    assert not (tmp_path / "copy").exists() or not any((tmp_path / "copy").rglob("*"))


def test_the_size_warning_is_said_before_the_upload(client: Any, tmp_path: Path) -> None:
    from rich.console import Console

    project = tmp_path / "project"
    project.mkdir()
    with open(project / "big.bin", "wb") as f:
        f.truncate(110 * 1000 * 1000)  # sparse: 110 MB of zeros, a small archive
    plan = _plan(tmp_path)
    out = io.StringIO()
    upload_package(plan, storage=client, bucket=BUCKET, console=Console(file=out, width=300))
    text = out.getvalue()
    warning = text.find("The job's files are 110.")
    assert 0 <= warning < text.find(" uploaded ("), text
    assert "biggest entries: big.bin 110.0 MB" in text
