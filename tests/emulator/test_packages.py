"""python_package_spec pools on the emulator, driven by the real clients: the package is fetched from the storage
emulator, pip-installed, and run with `python -m MODULE ARGS`; a package that is not there fails the job."""

from __future__ import annotations

import io
import tarfile
from typing import Any

import pytest
from google.cloud import aiplatform_v1 as vertex

from tests.emulator.test_jobs import custom_job, follow
from tests.emulator.test_logs_and_faults import listed

pytestmark = pytest.mark.emulator

BUCKET = "emulator-packages"
MODULE = "hello_pkg"


def _sdist() -> bytes:
    """A minimal installable source distribution (setuptools-free in-tree backend, as tfcloud's own)."""
    files = {
        "PKG-INFO": "Metadata-Version: 2.1\nName: hello_pkg\nVersion: 1.0\n",
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
        "backend.py": (
            "import os, zipfile\n"
            "def build_wheel(d, config_settings=None, metadata_directory=None):\n"
            "    name = 'hello_pkg-1.0-py3-none-any.whl'\n"
            "    with zipfile.ZipFile(os.path.join(d, name), 'w') as z:\n"
            "        for path in ('hello_pkg/__init__.py', 'hello_pkg/__main__.py'):\n"
            "            z.writestr(path, open(path).read())\n"
            "        z.writestr('hello_pkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: hello_pkg\\n"
            "Version: 1.0\\n')\n"
            "        z.writestr('hello_pkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\n"
            "Tag: py3-none-any\\n')\n"
            "        z.writestr('hello_pkg-1.0.dist-info/RECORD', '')\n"
            "    return name\n"),
        "hello_pkg/__init__.py": "",
        "hello_pkg/__main__.py": "import os, sys\nprint('hello from', os.environ['CLOUD_ML_JOB_ID'], sys.argv[1:])\n",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, text in files.items():
            info = tarfile.TarInfo(f"hello_pkg-1.0/{path}")
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


def _package_pool(uri: str, *args: str) -> vertex.WorkerPoolSpec:
    return vertex.WorkerPoolSpec(
        replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
        python_package_spec=vertex.PythonPackageSpec(
            executor_image_uri="us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest",
            package_uris=[uri], python_module=MODULE, args=list(args)))


@pytest.fixture
def package_uri(emulator: Any) -> str:
    storage = emulator.storage_client()
    try:
        bucket = storage.lookup_bucket(BUCKET) or storage.create_bucket(BUCKET)
        bucket.blob("pkgs/hello_pkg-1.0.tar.gz").upload_from_string(_sdist())
    finally:
        storage.close()
    return f"gs://{BUCKET}/pkgs/hello_pkg-1.0.tar.gz"


def test_a_package_pool_is_installed_and_run_with_python_m(emulator: Any, jobs: Any, logs: Any,
                                                           package_uri: str) -> None:
    created = jobs.create_custom_job(parent=emulator.parent,
                                     custom_job=custom_job(_package_pool(package_uri, "--epochs", "2")))
    finished, _ = follow(jobs, created.name)
    assert finished.state.name == "JOB_STATE_SUCCEEDED", finished.error.message
    job_id = created.name.rsplit("/", 1)[1]
    lines = listed(logs, emulator.project, f'resource.labels.job_id="{job_id}" AND '
                                           'resource.labels.task_name="workerpool0-0"')
    assert f"hello from {job_id} ['--epochs', '2']" in lines


def test_a_missing_package_fails_the_job_saying_so(emulator: Any, jobs: Any, package_uri: str) -> None:
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(
        _package_pool(f"gs://{BUCKET}/pkgs/missing.tar.gz")))
    finished, _ = follow(jobs, created.name)
    assert finished.state.name == "JOB_STATE_FAILED"
    assert finished.error.message.startswith(f"The package gs://{BUCKET}/pkgs/missing.tar.gz could not be fetched")


# --- Cloud Storage FUSE: the /gcs/ paths a container spec names ----------------------------------------------------
def test_a_container_reads_the_objects_its_command_names_under_gcs(emulator: Any, jobs: Any, logs: Any) -> None:
    """What a --no-build job's base image does: its command names the package as /gcs/BUCKET/OBJECT (Vertex AI
    mounts the buckets there); the emulator copies the objects named into its stand-in for /gcs."""
    storage = emulator.storage_client()
    try:
        bucket = storage.lookup_bucket(BUCKET) or storage.create_bucket(BUCKET)
        bucket.blob("code/run.py").upload_from_string("import sys\nprint('read from gcs', sys.argv[1:])\n")
    finally:
        storage.close()
    pool = vertex.WorkerPoolSpec(
        replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
        container_spec=vertex.ContainerSpec(image_uri="us-central1-docker.pkg.dev/p/r/base:1",
                                            command=["python3", f"/gcs/{BUCKET}/code/run.py"], args=["--x", "1"]))
    created = jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(pool))
    finished, _ = follow(jobs, created.name)
    assert finished.state.name == "JOB_STATE_SUCCEEDED", finished.error.message
    job_id = created.name.rsplit("/", 1)[1]
    lines = listed(logs, emulator.project, f'resource.labels.job_id="{job_id}"')
    assert "read from gcs ['--x', '1']" in lines

    missing = vertex.WorkerPoolSpec(
        replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
        container_spec=vertex.ContainerSpec(image_uri="us-central1-docker.pkg.dev/p/r/base:1",
                                            command=["python3", f"/gcs/{BUCKET}/code/gone.py"]))
    failed, _ = follow(jobs, jobs.create_custom_job(parent=emulator.parent, custom_job=custom_job(missing)).name)
    assert failed.state.name == "JOB_STATE_FAILED"
    assert f"gs://{BUCKET}/code/gone.py could not be fetched" in failed.error.message
