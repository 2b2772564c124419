"""`--data [NAME=]DIR`: every replica reads the data set at $TFCLOUD_DATA_<NAME> (tfcloud.data("name")). Local jobs
use the directory in place; Vertex AI jobs (the emulator, --no-build: replicas are containers of the job's base
image) get it uploaded once to the staging bucket by content, and an unchanged resubmission uploads 0 bytes, a
one-file change that file only. A gs:// source reaches the replica through the storage client. Plain Python
replicas, but for one TensorFlow test."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dockervertex import docker_emulator, google_base, vertex_env
from tfcloud.cli import main
from tfcloud.job.datasets import DataSet, parse_data, scan

__all__ = ["google_base"]  # a fixture, imported for its tests

SCRIPT = """
import hashlib, os
import tfcloud

root = tfcloud.data("train")
assert root == os.environ["TFCLOUD_DATA_TRAIN"], (root, os.environ["TFCLOUD_DATA_TRAIN"])
digest, total, count = hashlib.sha256(), 0, 0
for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
    dirnames.sort()
    for name in sorted(filenames):
        path = os.path.join(dirpath, name)
        data = open(path, "rb").read()
        digest.update(os.path.relpath(path, root).encode() + b"\\0" + data)
        total += len(data)
        count += 1
print("data", count, total, digest.hexdigest())
"""


def expected(directory: Path) -> str:
    digest, total, count = hashlib.sha256(), 0, 0
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            data = path.read_bytes()
            digest.update(path.relative_to(directory).as_posix().encode() + b"\0" + data)
            total += len(data)
            count += 1
    return f"data {count} {total} {digest.hexdigest()}"


def make_data(root: Path, files: int, size: int) -> Path:
    root.mkdir(parents=True)
    (root / "nested").mkdir()
    for i in range(files):
        where = root / "nested" if i % 3 == 0 else root
        (where / f"part-{i:03d}.bin").write_bytes(os.urandom(size))
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "train.py").write_text(SCRIPT)
    return root


# --- the gate and the plan ------------------------------------------------------------------------------------
def test_names_default_to_the_directory_and_must_be_unique(tmp_path: Path) -> None:
    (tmp_path / "my-data").mkdir()
    (tmp_path / "other").mkdir()
    sets = parse_data([str(tmp_path / "my-data"), f"eval={tmp_path / 'other'}", "gs://bucket-1/some/path/"])
    assert [(d.name, d.var) for d in sets] == [("my_data", "TFCLOUD_DATA_MY_DATA"), ("eval", "TFCLOUD_DATA_EVAL"),
                                               ("path", "TFCLOUD_DATA_PATH")]
    assert sets[2].source == "gs://bucket-1/some/path"
    from tfcloud.errors import ValidationError

    with pytest.raises(ValidationError, match="given twice"):
        parse_data([f"x={tmp_path / 'my-data'}", f"x={tmp_path / 'other'}"])
    with pytest.raises(ValidationError, match="an existing directory"):
        parse_data(str(tmp_path / "missing"))


def test_the_plan_lists_each_data_set_and_vertex_without_a_bucket_is_refused(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = make_data(tmp_path / "train", 4, 1000)
    assert main(["submit", str(project / "train.py"), "--dry-run", "--json", "--data", f"train={data}"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["data"] == [{"name": "train", "variable": "TFCLOUD_DATA_TRAIN", "source": str(data), "files": 4,
                             "size": 4000, "upload": "nothing: used in place", "kept_out": [], "let_in": [],
                             "outside_links": [], "dangling_links": []}]
    code = main(["submit", str(project / "train.py"), "--vertex", "--project", "my-project", "--no-build",
                 "--data", f"train={data}"])
    err = capsys.readouterr().err
    assert code == 2
    assert "a place on the vertex target to ship local data sets to" in err and "--staging-bucket" in err


def test_a_local_replica_reads_the_directory_in_place(project: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data = make_data(tmp_path / "train", 5, 2000)
    code = main(["submit", str(project / "train.py"), "--strategy", "none", "--data", f"train={data}"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    assert expected(data) in captured.out


# --- what ships: the secret deny-list, symbolic links ------------------------------------------------------------
SHIP = ["--vertex", "--project", "my-project", "--staging-bucket", "gs://my-bucket", "--no-build"]
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"


def _credentials(root: Path) -> Path:
    """A data set with credential files beside its data: by name (.env, .ssh/id_rsa, sa.pem) and by content."""
    make_data(root, 2, 10)
    (root / ".env").write_text("API_TOKEN=s3cret-from-dotenv\n")
    (root / ".env.example").write_text("API_TOKEN=\n")  # a template: ships
    (root / ".ssh").mkdir()
    (root / ".ssh" / "id_rsa").write_text(KEY)
    (root / ".ssh" / "known_hosts").write_text("host ssh-ed25519 AAAA\n")
    (root / "nested" / "notes.txt").write_text(KEY)  # a private key under an ordinary name
    (root / "nested" / "labels.json").write_text('{"type": "service_account", "private_key_id": "x"}')
    return root


def _plan(project: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code = main(["submit", str(project / "train.py"), *SHIP, "--dry-run", "--json", *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-2000:]
    plan: dict[str, object] = json.loads(captured.out)
    return plan


def test_credential_files_are_kept_out_of_a_shipped_data_set_and_named(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _credentials(tmp_path / "train")
    plan = _plan(project, "--data", f"train={data}", capsys=capsys)
    [row] = plan["data"]  # type: ignore[misc]
    assert row["kept_out"] == [{"path": ".env", "reason": "environment file"},
                               {"path": ".ssh/", "reason": "SSH directory"},
                               {"path": "nested/labels.json", "reason": "service-account key"},
                               {"path": "nested/notes.txt", "reason": "private key"}]
    assert row["files"] == 3 and row["size"] == 20 + len("API_TOKEN=\n")  # the parts and .env.example
    warnings = plan["warnings"]
    assert ("Kept out of data set train (secret deny-list): .env (environment file), .ssh/ (SSH directory), "
            "nested/labels.json (service-account key), nested/notes.txt (private key). To ship a file, add a line "
            "`!path` for it to the data directory's .dockerignore (e.g. `!.env`).") in warnings  # type: ignore[operator]
    assert main(["submit", str(project / "train.py"), *SHIP, "--dry-run", "--data", f"train={data}"]) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Data:   kept out: .ssh/ (SSH directory; secret deny-list)" in text
    assert "s3cret" not in text

    from tfcloud.job.datasets import scan

    shipped = {path for path, _, _ in scan(_set(data)).files}  # what the data stage hashes and uploads
    assert shipped == {"part-001.bin", "nested/part-000.bin", ".env.example"}


def test_a_path_line_in_the_data_directory_dockerignore_lets_one_in(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The images' override, read from the data directory: `!path` lines without wildcards."""
    data = _credentials(tmp_path / "train")
    (data / ".dockerignore").write_text("!.env\n!.ssh/known_hosts\n!*.txt\n")
    plan = _plan(project, "--data", f"train={data}", capsys=capsys)
    [row] = plan["data"]  # type: ignore[misc]
    assert row["let_in"] == [{"path": ".env", "reason": "environment file"},
                             {"path": ".ssh/known_hosts", "reason": "SSH directory"}]
    assert row["kept_out"] == [{"path": ".ssh/id_rsa", "reason": "SSH directory"},  # a wildcard lets none in
                               {"path": "nested/labels.json", "reason": "service-account key"},
                               {"path": "nested/notes.txt", "reason": "private key"}]
    assert ("Shipped with data set train by `!path` lines in its .dockerignore, despite the deny-list: .env "
            "(environment file), .ssh/known_hosts (SSH directory).") in plan["warnings"]  # type: ignore[operator]

    from tfcloud.job.datasets import scan

    assert {".env", ".ssh/known_hosts"} <= {path for path, _, _ in scan(_set(data)).files}


def test_a_line_docker_refuses_in_the_data_directory_dockerignore_is_exit_2(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = make_data(tmp_path / "train", 1, 10)
    (data / ".dockerignore").write_text("!.env\n!\n")
    assert main(["submit", str(project / "train.py"), *SHIP, "--dry-run", "--data", f"train={data}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: Invalid `data train: .dockerignore line 2`: expected a pattern Docker accepts, "
                          "received '!'."), err


def test_a_data_set_used_in_place_is_read_as_it_is(project: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Local: nothing is shipped, so nothing is kept out (the replicas read the directory itself)."""
    data = _credentials(tmp_path / "train")
    assert main(["submit", str(project / "train.py"), "--dry-run", "--json", "--data", f"train={data}"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["data"][0]["kept_out"] == [] and plan["data"][0]["files"] == 8
    assert not any("data set" in w for w in plan["warnings"])


def test_a_symlink_loop_is_refused_before_anything_is_uploaded(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = make_data(tmp_path / "train", 3, 10)
    (data / "nested" / "again").symlink_to("..")  # 3 files would become 123 entries, 40 levels deep
    code = main(["submit", str(project / "train.py"), *SHIP, "--dry-run", "--data", f"train={data}"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"Error: Invalid `data`: expected a directory without a symbolic link loop, received "
                          f"<train: nested/again -> {data}>."), err
    assert "Traceback" not in err

    from tfcloud.errors import ValidationError
    from tfcloud.job.datasets import stage_data

    store = tmp_path / "store"  # the data stage itself (Ray's directory store): refused before any upload
    with pytest.raises(ValidationError, match="nested/again"):
        stage_data(parse_data(f"train={data}"), str(store))
    assert not store.exists()


def test_links_that_leave_the_directory_are_followed_and_named(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = make_data(tmp_path / "train", 2, 10)
    elsewhere = make_data(tmp_path / "elsewhere", 1, 10)
    (elsewhere / ".env").write_text("TOKEN=x\n")
    (data / "more").symlink_to(elsewhere)
    (data / "gone").symlink_to(tmp_path / "missing")
    plan = _plan(project, "--data", f"train={data}", capsys=capsys)
    [row] = plan["data"]  # type: ignore[misc]
    assert row["outside_links"] == ["more"] and row["dangling_links"] == ["gone"]
    assert row["files"] == 3  # what `more` reaches ships, but for its .env
    assert row["kept_out"] == [{"path": "more/.env", "reason": "environment file"}]
    assert ("Symbolic links in data set train that point outside its directory (followed: what they reach is "
            "shipped): more.") in plan["warnings"]  # type: ignore[operator]
    assert "Symbolic links in data set train that point to nothing (left out): gone." in plan["warnings"]  # type: ignore[operator]


def test_data_inside_the_project_stays_out_of_the_package(project: Path) -> None:
    from tfcloud.image.context import collect_context
    from tfcloud.job.datasets import data_excludes

    data = make_data(project / "data", 2, 10)
    assert collect_context(project).get("data/part-001.bin") is not None
    context = collect_context(project, exclude=data_excludes(parse_data(str(data)), project))
    assert context.get("train.py") is not None
    assert not any(f.path.startswith("data/") for f in context.files)


# --- Vertex AI, on the emulator -----------------------------------------------------------------------------------
BUCKET = "data-staging"
PROJECT = "tfcloud-data"


@pytest.fixture(scope="module")
def emulator(engine: object) -> Iterator[object]:
    yield from docker_emulator(engine, PROJECT, [BUCKET, "public-data"])


@pytest.fixture
def cloud(emulator: object, engine: object, google_base: str, monkeypatch: pytest.MonkeyPatch) -> object:
    vertex_env(monkeypatch, emulator, engine, project=PROJECT, bucket=BUCKET)
    return emulator


def _vertex(base: str) -> list[str]:
    return ["--vertex", "--no-build", "--parent-image", base, "--chief-config", "CPU"]


UPLOADED = re.compile(r"Data train: (\d+) files, [^;]+; uploaded (\d+) \(")


def _objects(cloud: object) -> dict[str, int]:
    storage = cloud.storage_client()  # type: ignore[attr-defined]
    try:
        return {b.name: b.generation for b in storage.list_blobs(BUCKET, prefix="tfcloud-data/objects/")}
    finally:
        storage.close()


@pytest.mark.emulator
def test_a_50_mb_data_set_is_uploaded_once_then_only_what_changed(
        cloud: object, google_base: str, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = make_data(tmp_path / "train", 25, 2 * 1024 * 1024)  # 50 MiB
    argv = ["submit", str(project / "train.py"), *_vertex(google_base),
            "--strategy", "none", "--data", f"train={data}"]

    code = main(argv)
    first = capsys.readouterr()
    assert code == 0, first.err[-3000:] + first.out[-3000:]
    assert UPLOADED.search(first.err).groups() == ("25", "25"), first.err[-2000:]  # type: ignore[union-attr]
    assert expected(data) in first.out  # the replica read every byte at $TFCLOUD_DATA_TRAIN
    stored = _objects(cloud)
    assert len(stored) == 25
    package = re.search(r"Package (gs://\S+) uploaded \((\S+ \S+)", first.err)
    assert package is not None and "MB" not in package.group(2)  # the data is not in the package

    assert main([*argv, "--detach"]) == 0  # unchanged: nothing uploaded
    again = capsys.readouterr()
    assert UPLOADED.search(again.err).groups() == ("25", "0"), again.err[-2000:]  # type: ignore[union-attr]
    assert _objects(cloud) == stored
    assert main(["cancel", again.out.strip().splitlines()[-1]]) == 0
    capsys.readouterr()

    changed = data / "nested" / "part-003.bin"
    changed.write_bytes(os.urandom(2 * 1024 * 1024))
    code = main(argv)
    third = capsys.readouterr()
    assert code == 0, third.err[-3000:]
    assert UPLOADED.search(third.err).groups() == ("25", "1"), third.err[-2000:]  # type: ignore[union-attr]
    now = _objects(cloud)
    assert set(now) - set(stored) == {f"tfcloud-data/objects/{d}" for p, d, _ in scan(_set(data)).files
                                      if p == "nested/part-003.bin"}
    assert all(now[name] == generation for name, generation in stored.items())  # none written again
    assert expected(data) in third.out


@pytest.mark.emulator
def test_credentials_never_reach_the_bucket_and_a_loop_uploads_nothing(
        cloud: object, google_base: str, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On the emulator: the replica sees the data set without .env and .ssh/id_rsa, whose contents are in no object
    of the bucket; a symbolic link loop added then is refused (exit 2) with nothing more uploaded."""
    data = make_data(tmp_path / "train", 3, 100)
    shipped = expected(data)
    (data / ".env").write_text("API_TOKEN=s3cret-from-dotenv\n")
    (data / ".ssh").mkdir()
    (data / ".ssh" / "id_rsa").write_text(KEY)
    argv = ["submit", str(project / "train.py"), *_vertex(google_base), "--strategy", "none",
            "--data", f"train={data}"]
    before = _objects(cloud)  # the emulator is the module's: other tests' objects may be there
    code = main(argv)
    first = capsys.readouterr()
    assert code == 0, first.err[-3000:] + first.out[-3000:]
    assert shipped in first.out  # the replica read the three parts, and nothing else
    assert "Kept out of data set train (secret deny-list): .env (environment file), .ssh/ (SSH directory)." in \
        " ".join(first.err.split())
    stored = _objects(cloud)
    assert len(set(stored) - set(before)) == 3
    secrets = {hashlib.sha256(p.read_bytes()).hexdigest() for p in (data / ".env", data / ".ssh" / "id_rsa")}
    assert not {name.rsplit("/", 1)[-1] for name in stored} & secrets

    (data / "nested" / "again").symlink_to("..")
    (data / "new.bin").write_bytes(b"not uploaded")
    code = main(argv)
    second = capsys.readouterr()
    assert code == 2, second.err[-2000:]
    assert "Invalid `data`: expected a directory without a symbolic link loop" in second.err
    assert _objects(cloud) == stored


@pytest.mark.emulator
def test_a_gs_source_reaches_the_replica_offline(cloud: object, google_base: str, project: Path,
                                                 capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    local = make_data(tmp_path / "public", 4, 3000)
    storage = cloud.storage_client()  # type: ignore[attr-defined]
    try:
        for path in local.rglob("*"):
            if path.is_file():
                storage.bucket("public-data").blob(f"sets/train/{path.relative_to(local).as_posix()}") \
                    .upload_from_filename(str(path))
    finally:
        storage.close()
    code = main(["submit", str(project / "train.py"), *_vertex(google_base),
                 "--strategy", "none", "--data", "train=gs://public-data/sets/train"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    assert expected(local) in captured.out


TF_SCRIPT = """
import os
import tensorflow as tf
import tfcloud

files = sorted(tf.io.gfile.glob(os.path.join(tfcloud.data("lines"), "*.txt")))
lines = tf.data.TextLineDataset(files).map(tf.strings.to_number)
print("tensorflow read", len(files), "files", int(lines.reduce(0.0, lambda a, b: a + b).numpy()))
"""


@pytest.mark.emulator
@pytest.mark.tensorflow
def test_a_gs_source_reaches_a_tensorflow_replica_offline(cloud: object, google_base: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tensorflow", reason="the replica reads with tf.data")
    storage = cloud.storage_client()  # type: ignore[attr-defined]
    try:
        for i in range(3):
            storage.bucket("public-data").blob(f"tf/lines/part-{i}.txt").upload_from_string(
                "".join(f"{i * 10 + k}\n" for k in range(10)))
    finally:
        storage.close()
    project = tmp_path / "tfproject"
    project.mkdir()
    (project / "read.py").write_text(TF_SCRIPT)
    code = main(["submit", str(project / "read.py"), *_vertex(google_base),
                 "--data", "lines=gs://public-data/tf/lines"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    assert "tensorflow read 3 files 435" in captured.out, captured.out[-3000:]


def test_a_replica_reads_shipped_objects_where_cloud_storage_fuse_shows_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On Vertex AI the bucket is under /gcs/ (Cloud Storage FUSE): the data set's links point there and nothing is
    fetched. Here a directory stands for /gcs (the store is written as Cloud Storage would hold it)."""
    import tfcloud.runtime.datamount as datamount
    from tfcloud.job.datasets import stage_data

    gcs = tmp_path / "gcs"
    data = make_data(tmp_path / "train", 4, 500)
    env, reports = stage_data(parse_data(f"train={data}"), str(gcs / "bucket-1" / "tfcloud-data"))
    assert reports[0].uploaded_files == 4
    manifest = Path(env["TFCLOUD_DATA_TRAIN"]).relative_to(gcs)
    monkeypatch.setattr(datamount, "_GCS_ROOT", str(gcs))
    monkeypatch.setenv("TFCLOUD_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    environ = {"TFCLOUD_DATA_TRAIN": f"gs://{manifest.as_posix()}"}
    assert datamount.mount_all(environ) == {"train": environ["TFCLOUD_DATA_TRAIN"]}
    root = Path(environ["TFCLOUD_DATA_TRAIN"])
    links = sorted(p for p in root.rglob("*") if p.is_symlink())
    assert len(links) == 4
    assert all(Path(os.readlink(p)).is_relative_to(gcs / "bucket-1" / "tfcloud-data" / "objects") for p in links)
    assert expected(data) == expected(root)
    assert not (tmp_path / "cache" / "objects").exists()  # nothing fetched


def test_a_gs_source_copy_follows_rewritten_and_removed_objects(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no /gcs/ shows the bucket, a gs:// data set is copied into the cache through the Cloud Storage client
    (here the storage emulator): a second start fetches an object rewritten with the same size, and drops one
    that is gone."""
    pytest.importorskip("gcp_storage_emulator", reason="the storage emulator needs tfcloud[emulator]")
    import tfcloud.runtime.datamount as datamount
    from tfcloud.emulator.storage import StorageEmulator

    server = StorageEmulator()
    server.start()
    try:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.endpoint)
        monkeypatch.setenv("TFCLOUD_DATA_CACHE", str(tmp_path / "cache"))
        monkeypatch.setattr(datamount, "_GCS_ROOT", str(tmp_path / "no-gcs"))
        client = datamount._client()
        try:
            bucket = client.create_bucket("src-bucket")
            bucket.blob("sets/a/one.txt").upload_from_string(b"first")
            bucket.blob("sets/a/two.txt").upload_from_string(b"second")
            environ = {"TFCLOUD_DATA_A": "gs://src-bucket/sets/a"}
            datamount.mount_all(environ)
            root = Path(environ["TFCLOUD_DATA_A"])
            assert sorted(p.name for p in root.iterdir()) == ["one.txt", "two.txt"]
            bucket.blob("sets/a/one.txt").upload_from_string(b"FIRST")  # the same size
            bucket.blob("sets/a/two.txt").delete()
            environ = {"TFCLOUD_DATA_A": "gs://src-bucket/sets/a"}
            datamount.mount_all(environ)
            assert Path(environ["TFCLOUD_DATA_A"]) == root
            assert sorted(p.name for p in root.iterdir()) == ["one.txt"]
            assert (root / "one.txt").read_bytes() == b"FIRST"
            inode = (root / "one.txt").stat().st_ino
            datamount.mount_all({"TFCLOUD_DATA_A": "gs://src-bucket/sets/a"})  # nothing changed
            assert (root / "one.txt").stat().st_ino == inode  # not fetched again
        finally:
            client.close()
    finally:
        server.stop()


def _set(directory: Path) -> DataSet:
    return DataSet(name="train", source=str(directory.resolve()))


def test_an_unchanged_file_is_not_hashed_again(tmp_path: Path) -> None:
    """scan() keeps each file's digest by size, modification time and inode: a file those say is unchanged is not
    read again (shown by changing its bytes behind the scan's back, its size and time kept)."""
    data = make_data(tmp_path / "train", 3, 100)
    hashes: dict[str, list[object]] = {}
    first = scan(_set(data), hashes)  # type: ignore[arg-type]
    part = data / "part-001.bin"
    st = part.stat()
    part.write_bytes(b"x" * 100)
    os.utime(part, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert scan(_set(data), hashes) == first  # type: ignore[arg-type]  # judged unchanged: not read
    assert scan(_set(data)) != first  # read: the new bytes
    part.write_bytes(b"y" * 100)
    os.utime(part, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a new modification time: read again
    assert scan(_set(data), hashes) == scan(_set(data))  # type: ignore[arg-type]


def test_uploads_show_a_progress_bar_with_bytes_and_rate(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from tfcloud.job.datasets import stage_data

    data = make_data(tmp_path / "train", 3, 400_000)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=140, color_system=None)
    stage_data(parse_data(f"train={data}"), str(tmp_path / "store"), console=console)
    text = out.getvalue()
    assert "Uploading data to" in text
    assert "1.2/1.2 MB" in text  # bytes done / total
    assert re.search(r"\d+(\.\d+)? [kMG]?B/s", text), text[-500:]  # the rate
    assert "Data train: 3 files, 1.2 MB; uploaded 3 (1.2 MB)" in text
