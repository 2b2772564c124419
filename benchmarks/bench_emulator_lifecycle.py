"""How promptly the emulator stops what it started (issue 28), and what its guard costs each replica.

Printed, never asserted (timings are for people):

- ``launcher``: a replica's start through the parent-death launcher (``python -I -S`` that sets
  ``PR_SET_PDEATHSIG`` and ``exec``s) against the same command started directly, median of ``RUNS`` interleaved
  starts of ``python -c pass``;
- ``sigkill``: an emulator (``python -m tfcloud.emulator.cli start``) running a job whose replica has a child of its
  own is SIGKILLed; the time until neither process is left (the reaper's work);
- ``cancel`` / ``timeout`` (only with Debian's dockerd, as the tests use it): a build whose ``RUN sleep`` is
  running is cancelled (``CancelBuild``), or reaches its 3 s ``timeout``; the time until ``CancelBuild`` answers
  (or the build ends TIMEOUT after its deadline) and until the engine has no RUN container left.

    python benchmarks/bench_emulator_lifecycle.py [--quick]

``--quick``: three launcher starts each, then the same (CI runs it: tests/test_benchmarks.py). The builds run on an
engine handed over when there is one (the suite hands its own: :func:`tfcloud.testing.dockerd.engine_env`):
``BENCH_DOCKER_HOST``, ``BENCH_REGISTRY`` and ``BENCH_REGISTRY_ROOT``, with ``BENCH_PYTHON_BASE`` naming the base
image already in it (else it is made); else on one started here.
"""

from __future__ import annotations

import io
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Callable
from typing import Any

RUNS = int(os.environ.get("BENCH_EMULATOR_RUNS", "15"))


def _until(predicate: Callable[[], Any], timeout: float = 120.0) -> float:
    """Seconds until ``predicate()`` holds (polled every 10 ms)."""
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"not within {timeout}s")
        time.sleep(0.01)
    return time.perf_counter() - start


def launcher() -> None:
    from tfcloud.emulator._reaper import guarded_argv

    direct: list[float] = []
    guarded: list[float] = []
    for _ in range(RUNS):
        for argv, times in (([sys.executable, "-c", "pass"], direct),
                            (guarded_argv([sys.executable, "-c", "pass"]), guarded)):
            start = time.perf_counter()
            subprocess.run(argv, check=True)
            times.append(time.perf_counter() - start)
    a, b = statistics.median(direct), statistics.median(guarded)
    print(f"launcher: direct {a * 1000:.0f} ms, through the launcher {b * 1000:.0f} ms (+{(b - a) * 1000:.0f} ms "
          "per replica start)")


def sigkill() -> None:
    marker = f"bench-{uuid.uuid4().hex}"
    code = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', "
            "sys.argv[1]]); time.sleep(600)")
    process = subprocess.Popen([sys.executable, "-m", "tfcloud.emulator.cli", "start", "--no-storage"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "COLUMNS": "300"})
    # The client's imports while the emulator starts (both take seconds on a loaded machine; nothing is timed yet).
    import grpc
    import psutil
    from google.cloud import aiplatform_v1 as vertex
    from google.cloud.aiplatform_v1.services.job_service.transports.grpc import JobServiceGrpcTransport

    assert process.stdout is not None
    endpoint = ""
    for line in process.stdout:
        if match := re.search(r"listening on (\S+)", line):
            endpoint = match.group(1)
            break

    def alive() -> list[Any]:
        found = []
        for proc in psutil.process_iter(["cmdline"]):
            try:
                if marker in (proc.info["cmdline"] or []) and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
            except psutil.NoSuchProcess:
                pass
        return found

    client = vertex.JobServiceClient(transport=JobServiceGrpcTransport(channel=grpc.insecure_channel(endpoint)))
    try:
        client.create_custom_job(parent="projects/bench/locations/us-central1", custom_job=vertex.CustomJob(
            display_name="bench", job_spec=vertex.CustomJobSpec(worker_pool_specs=[vertex.WorkerPoolSpec(
                replica_count=1, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
                container_spec=vertex.ContainerSpec(image_uri="local/bench", command=[sys.executable, "-c", code],
                                                    args=[marker]))])))
        _until(lambda: len(alive()) == 2)
    finally:
        client.transport.close()  # type: ignore[no-untyped-call]
    process.send_signal(signal.SIGKILL)
    process.wait()
    print(f"sigkill: the replica and its child were gone {_until(lambda: not alive()) * 1000:.0f} ms after the "
          "emulator died")
    process.stdout.close()


def builds() -> None:
    from google.cloud.devtools import cloudbuild_v1 as cloudbuild
    from google.protobuf import duration_pb2

    from tfcloud.emulator import Emulator
    from tfcloud.testing import dockerd

    if not os.environ.get("BENCH_DOCKER_HOST") and (reason := dockerd.dockerd_available()):
        print(f"cancel/timeout: skipped ({reason})")
        return
    with dockerd.handed_engine(os.environ) as engine:
        client = engine.client()
        base = os.environ.get("BENCH_PYTHON_BASE") or dockerd.python_base_image(client)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            data = f"FROM {base}\nRUN sleep 171\n".encode()
            info = tarfile.TarInfo("Dockerfile")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))

        def sleeping() -> list[Any]:
            return [c for c in client.containers.list() if "sleep 171" in " ".join(c.attrs["Config"]["Cmd"] or [])]

        with Emulator(project="bench", docker_host=engine.docker_host) as emulator:
            storage = emulator.storage_client()
            storage.create_bucket("src").blob("ctx.tar.gz").upload_from_string(buffer.getvalue())
            storage.close()
            build_client = emulator.build_client()
            source = cloudbuild.Source(storage_source=cloudbuild.StorageSource(bucket="src", object_="ctx.tar.gz"))
            step = cloudbuild.BuildStep(name="gcr.io/cloud-builders/docker", args=["build", "."])
            try:
                operation = build_client.create_build(project_id="bench", build=cloudbuild.Build(
                    source=source, steps=[step]))
                _until(sleeping)
                start = time.perf_counter()
                answer = build_client.cancel_build(project_id="bench", id=operation.metadata.build.id)
                answered = time.perf_counter() - start
                gone = answered + _until(lambda: not sleeping())
                print(f"cancel: CancelBuild answered {answer.status.name} in {answered * 1000:.0f} ms; the RUN "
                      f"container was gone after {gone * 1000:.0f} ms")

                operation = build_client.create_build(project_id="bench", build=cloudbuild.Build(
                    source=source, steps=[step], timeout=duration_pb2.Duration(seconds=3)))
                build_id = operation.metadata.build.id
                _until(lambda: build_client.get_build(project_id="bench", id=build_id).status.name == "WORKING")
                _until(lambda: build_client.get_build(project_id="bench", id=build_id).status.name == "TIMEOUT")
                build = build_client.get_build(project_id="bench", id=build_id)
                late = (build.finish_time - build.start_time).total_seconds() - 3
                gone = _until(lambda: not sleeping())
                print(f"timeout: TIMEOUT {late * 1000:.0f} ms after the 3 s deadline; the RUN container was gone "
                      f"{gone * 1000:.0f} ms later")
            finally:
                build_client.transport.close()
        client.close()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three launcher starts each")
    if parser.parse_args().quick:
        RUNS = 3
    launcher()
    sigkill()
    builds()
