"""`tfcloud artifacts JOB --download DIR` fetches a checkpoint a local job or a Vertex AI job (the emulator,
--no-build) wrote to its gs:// output directory (`--output-dir gs://...`, the storage emulator), and resumes: a
file already there whole is not fetched again, a damaged or missing one is. The replica writes its checkpoint
through the real Cloud Storage client to the storage emulator."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dockervertex import docker_emulator, google_base, vertex_env
from tfcloud.cli import main

__all__ = ["google_base"]  # a fixture, imported for its tests

pytestmark = pytest.mark.emulator

BUCKET = "ckpt-bucket"
PROJECT = "tfcloud-artifacts"
SCRIPT = """
import os
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

uri = os.environ["AIP_CHECKPOINT_DIR"]
bucket, _, prefix = uri[len("gs://"):].partition("/")
client = storage.Client(project="p", credentials=AnonymousCredentials(),
                        client_options={"api_endpoint": os.environ["STORAGE_EMULATOR_HOST"]})
for i in range(3):
    client.bucket(bucket).blob(prefix + "ckpt-%d.data" % i).upload_from_string(bytes([i]) * 300000)
client.bucket(bucket).blob(prefix + "checkpoint").upload_from_string("latest: ckpt-2")
print("saved", uri)
"""


@pytest.fixture(scope="module")
def emulator(engine: object) -> Iterator[object]:
    yield from docker_emulator(engine, PROJECT, [BUCKET])  # AIP_* are gs:// URIs, as Vertex AI gives them


@pytest.mark.slow
@pytest.mark.parametrize("target", ["local", "vertex"])
def test_artifacts_download_fetches_a_checkpoint_from_gcs_and_resumes(
        emulator: object, engine: object, google_base: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], target: str) -> None:
    vertex_env(monkeypatch, emulator, engine, project=PROJECT, bucket=BUCKET)
    project = tmp_path / "project"
    project.mkdir()
    (project / "save.py").write_text(SCRIPT)
    where = ["--vertex", "--no-build", "--parent-image", google_base, "--chief-config", "CPU"] \
        if target == "vertex" else []
    code = main(["submit", str(project / "save.py"), *where, "--strategy", "none",
                 "--output-dir", f"gs://{BUCKET}/runs/{target}"])
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:] + captured.out[-3000:]
    job_id = re.search(r"Submitted job (\S+)\.", captured.err).group(1)  # type: ignore[union-attr]

    downloaded = tmp_path / "downloaded"
    assert main(["artifacts", job_id, "--download", str(downloaded)]) == 0
    out = capsys.readouterr().out
    assert f"4 file(s) from gs://{BUCKET}/runs/{target} in {downloaded} (0 already there)" in out
    checkpoints = downloaded / "checkpoints"
    assert (checkpoints / "checkpoint").read_text() == "latest: ckpt-2"
    assert (checkpoints / "ckpt-1.data").read_bytes() == b"\x01" * 300000

    (checkpoints / "ckpt-0.data").write_bytes(b"\x00" * 1000)  # an interrupted copy: too short
    (checkpoints / "ckpt-2.data").unlink()
    (checkpoints / "checkpoint").write_text("latest: ckpt-x")  # same size, other bytes: the MD5 differs
    assert main(["artifacts", job_id, "--download", str(downloaded)]) == 0
    out = capsys.readouterr().out
    assert "4 file(s)" in out and "(1 already there)" in out
    assert (checkpoints / "ckpt-0.data").read_bytes() == b"\x00" * 300000
    assert (checkpoints / "ckpt-2.data").read_bytes() == b"\x02" * 300000
    assert (checkpoints / "checkpoint").read_text() == "latest: ckpt-2"
    assert not list(downloaded.rglob("*.part"))
