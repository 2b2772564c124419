"""Benchmark: a code-only change resubmitted to Vertex AI (the tfcloud emulator), the image path against
``--no-build``, on one small project (a training script, a helper module, a 20 kB data file).

For each path: a first submission (clients warm up, the base layers or the package go up once), then the
script changes (one line) and is submitted again; that resubmission is measured: tfcloud's own wall time
(``tfcloud.sdk.submit``: validation, context, build or package, push or upload, the CustomJob created) and the
bytes that went up (the registry's storage grew by / the staging bucket's objects grew by).

Both paths use a real dockerd and registry on loopback (tfcloud.testing.dockerd) and one emulator, which runs
replicas as containers. Skipped (and said so) when dockerd is not installed.

- Image path: a small Python base image made locally; each change builds and pushes the job's image.
- ``--no-build``: the first submission builds the job's base image (a TensorFlow image made locally as its parent)
  and pushes it once; the package goes to the storage emulator. The resubmission looks the base image up, builds
  and pushes nothing, and uploads only the package.

Goal for ``--no-build``: under 2 s of tfcloud's own time, under 100 kB uploaded, nothing pushed.

Run: ``python benchmarks/bench_nobuild.py`` (``.ci/install-docker`` installs dockerd); ``--quick`` (CI runs it:
tests/test_benchmarks.py) is the same single round: the project is already small.

A running engine can be handed over instead of starting one (the suite hands its own:
:func:`tfcloud.testing.dockerd.engine_env`): ``BENCH_DOCKER_HOST``, ``BENCH_REGISTRY`` and ``BENCH_REGISTRY_ROOT``,
with ``BENCH_PYTHON_BASE`` and ``BENCH_TENSORFLOW_BASE`` naming base images already in it (else they are made).
Images go to ``REGISTRY/tfcloud``, where the suite's ``--no-build`` tests push theirs: on the suite's engine, with
the TensorFlow parent those tests use, the job's base image may be there already, and the first submission then
only looks it up. The resubmission, the one with a goal, is the same either way.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tfcloud import sdk
from tfcloud.image.context import format_size
from tfcloud.job.spec import DockerConfig

BUCKET = "bench-staging"
REPOSITORY = "tfcloud"  # in the engine's registry; the suite's tests push there too
GOAL_S, GOAL_BYTES = 2.0, 100_000


def make_project(root: Path) -> Path:
    proj = root / "project"
    proj.mkdir()
    (proj / "train.py").write_text("from helpers import greet\nprint(greet('bench'))\n")
    # This run's own: an engine handed over may hold the images of an earlier run, which would then not be built.
    (proj / "helpers.py").write_text("def greet(name):\n    return 'hello ' + name\n" + "# helper\n" * 50
                                     + f"# run {uuid.uuid4().hex}\n")
    (proj / "labels.csv").write_text("".join(f"{i},{i % 10}\n" for i in range(2000)))  # ~20 kB of data
    return proj


def change_code(proj: Path, round_: int) -> None:
    (proj / "train.py").write_text(f"from helpers import greet\nprint(greet('bench'), {round_})\n")


@contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def measure(submit: Callable[[], object], grown: Callable[[], int]) -> tuple[float, int]:
    before = grown()
    started = time.perf_counter()
    job = submit()
    elapsed = time.perf_counter() - started
    job.close()  # type: ignore[attr-defined]
    return elapsed, grown() - before


def bucket_bytes(emulator: object) -> int:
    client = emulator.storage_client()  # type: ignore[attr-defined]
    try:
        return sum(blob.size or 0 for blob in client.list_blobs(BUCKET))
    finally:
        client.close()


def dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def no_build_path(proj: Path, emulator: Any, engine: Any, parent: str) -> tuple[tuple[float, int, int], ...]:
    """(seconds, bytes uploaded to the bucket, bytes pushed to the registry) for the first submission and the
    code-only resubmission."""
    registry_data = engine.registry.root / "data"
    client = emulator.storage_client()
    client.create_bucket(BUCKET)
    client.close()
    env = {**emulator.settings.env, "TFCLOUD_PROJECT": "tfcloud-bench", "TFCLOUD_STAGING_BUCKET": BUCKET,
           "DOCKER_HOST": engine.docker_host, "TFCLOUD_IMAGE_REPOSITORY": f"{engine.registry.address}/{REPOSITORY}"}
    with environ(env):
        def submit() -> object:
            return sdk.submit(str(proj / "train.py"), target="vertex", build=False, chief_config="CPU",
                              distribution_strategy=None, docker_config=DockerConfig(parent_image=parent))

        rows = []
        for round_ in (1, 2):
            pushed = dir_bytes(registry_data)
            seconds, uploaded = measure(submit, lambda: bucket_bytes(emulator))
            rows.append((seconds, uploaded, dir_bytes(registry_data) - pushed))
            change_code(proj, round_)
    return tuple(rows)


def image_path(proj: Path, emulator: Any, engine: Any, base: str) -> tuple[tuple[float, int], tuple[float, int]]:
    """(seconds, bytes pushed to the registry) for the first submission and the code-only resubmission (no
    staging bucket: the image carries the code)."""
    env = {**emulator.settings.env, "TFCLOUD_PROJECT": "tfcloud-bench", "DOCKER_HOST": engine.docker_host,
           "TFCLOUD_IMAGE_REPOSITORY": f"{engine.registry.address}/{REPOSITORY}"}
    registry_data = engine.registry.root / "data"
    with environ(env):
        def submit() -> object:
            return sdk.submit(str(proj / "train.py"), target="vertex", chief_config="CPU",
                              distribution_strategy=None, docker_config=DockerConfig(parent_image=base))

        first = measure(submit, lambda: dir_bytes(registry_data))
        change_code(proj, 2)
        changed = measure(submit, lambda: dir_bytes(registry_data))
    return first, changed


def main() -> None:
    import argparse

    from tfcloud.emulator import Emulator
    from tfcloud.testing.dockerd import dockerd_available, handed_engine, python_base_image, tensorflow_base_image

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same single round (the project is small)")
    parser.parse_args()

    logging.basicConfig(level=logging.WARNING)
    reason = None if os.environ.get("BENCH_DOCKER_HOST") else dockerd_available()
    if reason:
        print(f"skipped: {reason} (.ci/install-docker installs dockerd)")
        return
    with tempfile.TemporaryDirectory(prefix="tfcloud-bench-nobuild-") as name, handed_engine(os.environ) as engine:
        tmp = Path(name)
        proj = make_project(tmp)
        client = engine.client()
        base = os.environ.get("BENCH_PYTHON_BASE") or python_base_image(client)
        tensorflow = os.environ.get("BENCH_TENSORFLOW_BASE") or tensorflow_base_image(client)
        client.close()
        with Emulator(project="tfcloud-bench", docker_host=engine.docker_host,
                      local_output_root=tmp / "outputs") as emulator:
            nobuild = no_build_path(proj, emulator, engine, tensorflow)
            change_code(proj, 0)
            image = image_path(proj, emulator, engine, base)
    print("\n== A code-only change resubmitted to Vertex AI (the emulator) ==")
    print(f"{'path':28}{'first submit':>14}{'up':>10}{'resubmit':>12}{'up':>10}{'pushed':>10}")
    (t1, b1), (t2, b2) = image
    print(f"{'image (build + push)':28}{t1:>13.2f}s{format_size(b1):>10}{t2:>11.2f}s{format_size(b2):>10}"
          f"{format_size(b2):>10}")
    (t1, b1, p1), (t2, b2, p2) = nobuild
    print(f"{'--no-build (base + package)':28}{t1:>13.2f}s{format_size(b1 + p1):>10}{t2:>11.2f}s"
          f"{format_size(b2 + p2):>10}{format_size(p2):>10}")
    ok = t2 < GOAL_S and b2 + p2 < GOAL_BYTES and p2 == 0
    print(f"\n--no-build resubmit: {t2:.2f} s (goal < {GOAL_S:g} s), {format_size(b2)} uploaded, "
          f"{format_size(p2)} pushed (goal < {format_size(GOAL_BYTES)} in all, nothing pushed): "
          f"{'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
