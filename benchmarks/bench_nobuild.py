"""Benchmark: a code-only change resubmitted to Vertex AI (the tfcloud emulator), the image path against
``--no-build``, on one small project (a training script, a helper module, a 20 kB data file).

For each path: a first submission (clients warm up, the base layers or the package go up once), then the
script changes (one line) and is submitted again; that resubmission is measured: tfcloud's own wall time
(``tfcloud.sdk.submit``: validation, context, build or package, push or upload, the CustomJob created) and the
bytes that went up (the registry's storage grew by / the staging bucket's objects grew by).

- Image path: a real dockerd and registry on loopback (tfcloud.testing.dockerd), a small Python base image made
  locally; the emulator runs replicas as containers. Skipped (and said so) when dockerd is not installed.
- ``--no-build``: the storage emulator; the emulator runs replicas as local processes. No Docker at all.

Goal for ``--no-build``: under 2 s of tfcloud's own time and under 100 kB uploaded.

Run: ``python benchmarks/bench_nobuild.py`` (``.ci/install-docker`` installs dockerd for the image path);
``--quick``: the ``--no-build`` path only (CI runs it: tests/test_benchmarks.py).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tfcloud import sdk
from tfcloud.context import format_size
from tfcloud.spec import DockerConfig

BUCKET = "bench-staging"
GOAL_S, GOAL_BYTES = 2.0, 100_000


def make_project(root: Path) -> Path:
    proj = root / "project"
    proj.mkdir()
    (proj / "train.py").write_text("from helpers import greet\nprint(greet('bench'))\n")
    (proj / "helpers.py").write_text("def greet(name):\n    return 'hello ' + name\n" + "# helper\n" * 50)
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


def no_build_path(proj: Path, tmp: Path) -> tuple[tuple[float, int], tuple[float, int]]:
    from tfcloud.emulator import Emulator

    with Emulator(project="tfcloud-bench", local_output_root=tmp / "outputs") as emulator:
        client = emulator.storage_client()
        client.create_bucket(BUCKET)
        client.close()
        env = {**emulator.settings.env, "TFCLOUD_PROJECT": "tfcloud-bench", "TFCLOUD_STAGING_BUCKET": BUCKET}
        with environ(env):
            def submit() -> object:
                return sdk.submit(str(proj / "train.py"), target="vertex", build=False, chief_config="CPU",
                                  distribution_strategy=None)

            first = measure(submit, lambda: bucket_bytes(emulator))
            change_code(proj, 1)
            changed = measure(submit, lambda: bucket_bytes(emulator))
    return first, changed


def image_path(proj: Path, tmp: Path) -> tuple[tuple[float, int], tuple[float, int]] | str:
    from tfcloud.testing.dockerd import docker_engine, dockerd_available, python_base_image

    reason = dockerd_available()
    if reason:
        return reason
    from tfcloud.emulator import Emulator

    with docker_engine() as engine:
        client = engine.client()
        base = python_base_image(client)
        client.close()
        with Emulator(project="tfcloud-bench", docker_host=engine.docker_host, storage=False) as emulator:
            env = {**emulator.settings.env, "TFCLOUD_PROJECT": "tfcloud-bench", "DOCKER_HOST": engine.docker_host,
                   "TFCLOUD_IMAGE_REPOSITORY": f"{engine.registry.address}/bench"}
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

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the --no-build path only")
    quick = parser.parse_args().quick
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="tfcloud-bench-nobuild-") as name:
        tmp = Path(name)
        proj = make_project(tmp)
        nobuild = no_build_path(proj, tmp)
        change_code(proj, 0)
        image = "--quick" if quick else image_path(proj, tmp)
    print("\n== A code-only change resubmitted to Vertex AI (the emulator) ==")
    print(f"{'path':28}{'first submit':>14}{'up':>10}{'resubmit':>12}{'up':>10}")
    rows = [("--no-build (package)", nobuild)]
    if isinstance(image, str):
        print(f"image path: skipped ({image})")
    else:
        rows.insert(0, ("image (build + push)", image))
    for label, ((t1, b1), (t2, b2)) in rows:
        print(f"{label:28}{t1:>13.2f}s{format_size(b1):>10}{t2:>11.2f}s{format_size(b2):>10}")
    (_, _), (seconds, uploaded) = nobuild
    ok = seconds < GOAL_S and uploaded < GOAL_BYTES
    print(f"\n--no-build resubmit: {seconds:.2f} s (goal < {GOAL_S:g} s), {format_size(uploaded)} uploaded "
          f"(goal < {format_size(GOAL_BYTES)}): {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
