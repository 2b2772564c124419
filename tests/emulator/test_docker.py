"""Docker mode: a Build makes an image in the loopback registry, and a CustomJob runs from that image.

Uses :mod:`tfcloud.testing.dockerd` (Debian's dockerd + docker-registry on loopback, TESTBED §1); skips, saying
why, when that helper or the engine's packages are missing.
"""

from __future__ import annotations

import io
import tarfile
import textwrap
from typing import Any

import pytest
from google.cloud import aiplatform_v1 as vertex
from google.cloud.devtools import cloudbuild_v1 as cloudbuild
from google.cloud.logging_v2.types import ListLogEntriesRequest

from tests.emulator.test_jobs import follow, job_id

pytestmark = [pytest.mark.emulator, pytest.mark.docker]

TRAIN = textwrap.dedent("""
    import json, os, sys
    spec = json.loads(os.environ["CLUSTER_SPEC"])
    task = spec["task"]
    print(f"replica {task['type']}-{task['index']} of {sorted(spec['cluster'])} in a container")
    print("model dir", os.environ.get("AIP_MODEL_DIR"), file=sys.stderr)
""")


# `engine`: the session's Docker engine + registry (tests/conftest.py).


def test_a_build_pushes_an_image_and_a_job_runs_from_it(engine: Any) -> None:
    from tfcloud.emulator import Emulator
    from tfcloud.testing import dockerd

    client = engine.client()
    try:
        base = dockerd.python_base_image(client)
        image = f"{engine.registry.address}/emulator/train:1"
        with Emulator(project="docker-project", docker_host=engine.docker_host) as emulator:
            storage = emulator.storage_client()
            try:
                storage.create_bucket("staging").blob("ctx.tar.gz").upload_from_string(_context(base))
            finally:
                storage.close()

            builds = emulator.build_client()
            jobs = emulator.job_client()
            logs = emulator.logging_client()
            try:
                operation = builds.create_build(project_id="docker-project", build=cloudbuild.Build(
                    source=cloudbuild.Source(storage_source=cloudbuild.StorageSource(
                        bucket="staging", object_="ctx.tar.gz")),
                    steps=[cloudbuild.BuildStep(name="gcr.io/cloud-builders/docker",
                                                args=["build", "-t", image, "."])],
                    images=[image]))
                built = operation.result(timeout=180)
                assert built.status.name == "SUCCESS", built.status_detail
                assert built.results.images[0].name == image
                assert built.results.images[0].digest.startswith("sha256:")
                assert any(r.startswith("PUT /v2/emulator/train/manifests/1") for r in engine.registry.requests())
                build_lines = [e.text_payload for e in logs.list_log_entries(request=ListLogEntriesRequest(
                    resource_names=["projects/docker-project"],
                    filter=f'resource.type="build" AND resource.labels.build_id="{built.id}"'))]
                assert any(line.startswith("Step #0: Successfully built") for line in build_lines)

                client.images.remove(image)  # the job must pull it from the registry
                pool = vertex.WorkerPoolSpec(
                    replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                    container_spec=vertex.ContainerSpec(image_uri=image))
                created = jobs.create_custom_job(parent=emulator.parent, custom_job=vertex.CustomJob(
                    display_name="from-image", job_spec=vertex.CustomJobSpec(
                        worker_pool_specs=[pool, pool],
                        base_output_directory=vertex.GcsDestination(output_uri_prefix="gs://staging/out"))))
                finished, _ = follow(jobs, created.name, timeout=120)
                assert finished.state.name == "JOB_STATE_SUCCEEDED", finished.error
                entries = list(logs.list_log_entries(request=ListLogEntriesRequest(
                    resource_names=["projects/docker-project"],
                    filter=f'resource.labels.job_id="{job_id(created)}" AND resource.labels.task_name!="service"')))
                texts = {(e.resource.labels["task_name"], e.severity, e.text_payload) for e in entries}
                cluster = "['workerpool0', 'workerpool1']"
                assert ("workerpool0-0", 200, f"replica workerpool0-0 of {cluster} in a container") in texts
                assert ("workerpool1-0", 200, f"replica workerpool1-0 of {cluster} in a container") in texts
                assert ("workerpool1-0", 500, "model dir gs://staging/out/model/") in texts
            finally:
                for owned in (builds, jobs, logs):
                    owned.transport.close()
        assert client.containers.list(all=True, filters={"name": "tfcloud-emulator-"}) == []
    finally:
        client.close()


def _context(base: str) -> bytes:
    files = {
        "Dockerfile": f'FROM {base}\nCOPY train.py /app/train.py\nENTRYPOINT ["python3", "/app/train.py"]\n',
        "train.py": TRAIN,
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
