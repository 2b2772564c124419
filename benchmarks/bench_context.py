"""Build context and resubmit time: tfcloud against tensorflow-cloud 0.1.16, side by side on one fixture.

The fixture (made in a temp dir, never committed; sparse, so it takes seconds): a few sources, a 1 GB
virtualenv next to them (a real ``python -m venv`` with ~1 GB of packages in it) and a 50 MB data folder.

1. Context: what each tool sends to the engine. tensorflow-cloud's own code makes its tarball
   (``ContainerBuilder._get_tar_file_path``, loaded from the 0.1.16 wheel installed with ``--no-deps``; the
   imports that path never uses (googleapiclient) and its GCP project look-up are stubbed).
2. Build + push on a real dockerd and registry on loopback (tfcloud.testing.dockerd), both from the same
   locally made base image: tensorflow-cloud's ``LocalContainerBuilder.get_docker_image`` (it tags every
   build with a random uuid, so a resubmit is a full rebuild) against tfcloud's ``containerize`` first
   build and unchanged resubmit.

Run: ``.venv/bin/python benchmarks/bench_context.py [--skip-tfc-build] [--quick]`` (needs dockerd, see
``.ci/install-docker``; pip installs tensorflow-cloud==0.1.16 into a temp dir). ``--quick``: a fixture a hundred
times smaller, and tensorflow-cloud's tarball only (CI runs it: tests/test_benchmarks.py). A running engine can be
handed over instead of starting one (the suite hands its own: :func:`tfcloud.testing.dockerd.engine_env`):
``BENCH_DOCKER_HOST``, ``BENCH_REGISTRY`` and ``BENCH_REGISTRY_ROOT``, with ``BENCH_PYTHON_BASE`` naming the base
image already in it (else it is made).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import logging
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
import types
from pathlib import Path

from tfcloud.entry.launcher import LAUNCHER_NAME, render_launcher
from tfcloud.flow.validate import build_spec
from tfcloud.image.builders.docker import DockerBuilder
from tfcloud.image.containerize import containerize, plan_image
from tfcloud.image.context import format_size
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.spec import DockerConfig
from tfcloud.targets.local import LocalTarget
from tfcloud.testing.dockerd import handed_engine, python_base_image

TFC_VERSION = "0.1.16"


def make_fixture(root: Path, *, scale: int = 1) -> Path:
    """Sources + a ~1 GB virtualenv + a 50 MB data folder, in ``root/project`` (``scale``: that many times
    smaller)."""
    proj = root / "project"
    (proj / "model").mkdir(parents=True)
    (proj / "train.py").write_text("import model.net\nprint('training', model.net.WIDTH)\n")
    (proj / "model" / "__init__.py").write_text("")
    (proj / "model" / "net.py").write_text("WIDTH = 64\n" + "# layer\n" * 200)
    (proj / "README.md").write_text("# demo\n")
    (proj / "__pycache__").mkdir()
    (proj / "__pycache__" / "train.cpython-311.pyc").write_bytes(b"\0" * 4096)
    (proj / ".git" / "objects").mkdir(parents=True)
    (proj / ".git" / "objects" / "pack.pack").write_bytes(os.urandom(2_000_000))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(proj / ".venv")], check=True)
    site = next((proj / ".venv" / "lib").glob("python3*")) / "site-packages"
    rng = random.Random(0)
    for pkg in range(max(1, 40 // scale)):  # ~2,000 small source files
        d = site / f"pkg{pkg}"
        d.mkdir(parents=True)
        for i in range(50):
            (d / f"mod{i}.py").write_text("".join(rng.choices("abcdef \n", k=4000)))
    for name, size in (("libtensorflow_cc.so.2", 600), ("libtensorflow_framework.so.2", 300), ("_pywrap.so", 92)):
        with open(site / name, "wb") as f:  # sparse: big on paper, nothing on disk
            f.truncate(size * 1_000_000 // scale)
    data = proj / "data"
    data.mkdir()
    for i in range(20):
        (data / f"shard-{i:02d}.bin").write_bytes(os.urandom(2_500_000 // scale))
    return proj


def install_tfc(target: Path) -> subprocess.Popen[bytes]:
    """pip installing tensorflow-cloud into ``target``, in the background (its ``wait()`` says when it is done)."""
    return subprocess.Popen([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                             f"tensorflow-cloud=={TFC_VERSION}"])


def load_tfc_containerize(target: Path) -> types.ModuleType:
    """tensorflow-cloud's containerize module, without running its package ``__init__`` (which imports the
    tuner, TensorFlow and more). Only imports the tarball and local-build path never calls are stubbed."""
    base = target / "tensorflow_cloud"
    for name, path in (("tensorflow_cloud", base), ("tensorflow_cloud.core", base / "core"),
                       ("tensorflow_cloud.utils", base / "utils")):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module
    gapi = types.ModuleType("googleapiclient")
    for sub in ("discovery", "errors", "http"):
        m = types.ModuleType(f"googleapiclient.{sub}")
        setattr(gapi, sub, m)
        sys.modules[f"googleapiclient.{sub}"] = m
    sys.modules["googleapiclient"] = gapi
    for name in ("google_api_client", "tf_utils"):
        sys.modules[f"tensorflow_cloud.utils.{name}"] = types.ModuleType(name)
    for name in ("gcp", "docker_config", "machine_config", "containerize"):
        spec = importlib.util.spec_from_file_location(f"tensorflow_cloud.core.{name}", base / "core" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        if name == "gcp":  # it asks google.auth for a project: no credentials here, and none needed
            module.get_project_name = lambda: "bench-project"  # type: ignore[attr-defined]
    return sys.modules["tensorflow_cloud.core.containerize"]


def tfc_builder(tfc: types.ModuleType, proj: Path, *, image: str | None, parent: str) -> object:
    docker_config = sys.modules["tensorflow_cloud.core.docker_config"].DockerConfig(image=image, parent_image=parent)
    return tfc.LocalContainerBuilder(entry_point=str(proj / "train.py"), preprocessed_entry_point=None,
                                     chief_config=None, worker_config=None, docker_config=docker_config)


def tar_stats(path: str) -> tuple[int, int]:
    count = total = 0
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if member.isfile():
                count += 1
                total += member.size
    return count, total


def job_for(proj: Path, parent: str, work: Path) -> PreparedJob:
    # a target that builds an image: the local one with --container (its image stays in the engine; the benchmark
    # pushes it itself, as Vertex AI's would be)
    spec = build_spec(entry_point=str(proj / "train.py"), docker_config=DockerConfig(parent_image=parent),
                      target=LocalTarget(use_container=True))
    launcher = work / LAUNCHER_NAME
    launcher.write_text(render_launcher(spec, script="train.py"))
    return PreparedJob(spec=spec, workdir=proj, launcher=launcher, script=proj / "train.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-tfc-build", action="store_true", help="measure tensorflow-cloud's tarball only")
    parser.add_argument("--quick", action="store_true", help="a fixture 100x smaller; tensorflow-cloud's tarball "
                                                             "only")
    args = parser.parse_args()
    if args.quick:
        args.skip_tfc_build = True
    logging.basicConfig(level=logging.WARNING)
    for name in ("tensorflow_cloud", "tfcloud", "absl"):
        logging.getLogger(name).setLevel(logging.WARNING)

    with tempfile.TemporaryDirectory(prefix="tfcloud-bench-") as tmp_name:
        tmp = Path(tmp_name)
        installing = install_tfc(tmp / "tfc")  # while the fixture is made
        t = time.perf_counter()
        proj = make_fixture(tmp, scale=100 if args.quick else 1)
        print(f"fixture: {proj} made in {time.perf_counter() - t:.1f} s")
        if installing.wait() != 0:
            raise SystemExit(f"pip could not install tensorflow-cloud=={TFC_VERSION} (exit {installing.returncode})")
        tfc = load_tfc_containerize(tmp / "tfc")

        with handed_engine(os.environ) as engine:
            client = engine.client()
            parent = os.environ.get("BENCH_PYTHON_BASE") or python_base_image(client)
            client.close()
            # tensorflow-cloud calls docker.APIClient(version="auto"): the default socket. Point it at ours.
            import docker

            tfc.docker = types.SimpleNamespace(  # type: ignore[attr-defined]
                APIClient=functools.partial(docker.APIClient, base_url=engine.docker_host, timeout=600))
            repository = f"{engine.registry.address}/bench"

            # -- context -------------------------------------------------------------------------------------
            job = job_for(proj, parent, tmp)
            t = time.perf_counter()
            plan = plan_image(job, repository=repository)
            ours_collect = time.perf_counter() - t
            with tempfile.TemporaryFile() as f:
                t = time.perf_counter()
                plan.context.write_tar(f, compress=True)
                ours_tar_s, ours_gz = time.perf_counter() - t, f.tell()

            old = tfc_builder(tfc, proj, image=None, parent=parent)
            os.chdir(proj.parent)
            t = time.perf_counter()
            old._get_tar_file_path()  # type: ignore[attr-defined]
            tfc_tar_s = time.perf_counter() - t
            tfc_gz = os.path.getsize(old.tar_file_path)  # type: ignore[attr-defined]
            tfc_count, tfc_total = tar_stats(old.tar_file_path)  # type: ignore[attr-defined]
            for p, fd in old.get_generated_files(return_descriptors=True):  # type: ignore[attr-defined]
                os.close(fd)
                os.remove(p)

            ctx = plan.context
            print("\n== Build context (what is sent to the engine) ==")
            print(f"{'':24}{'files':>8}{'bytes':>12}{'tar.gz':>12}{'time':>9}")
            print(f"{'tensorflow-cloud ' + TFC_VERSION:24}{tfc_count:>8}{format_size(tfc_total):>12}"
                  f"{format_size(tfc_gz):>12}{tfc_tar_s:>8.1f}s")
            print(f"{'tfcloud':24}{ctx.file_count:>8}{format_size(ctx.total_size):>12}"
                  f"{format_size(ours_gz):>12}{ours_collect + ours_tar_s:>8.1f}s")
            print(f"  tfcloud: {tfc_total / max(ctx.total_size, 1):.0f}x fewer bytes; of its "
                  f"{ctx.file_count} files, {sum(1 for f in ctx.files if f.path.startswith('.tfcloud/'))} are "
                  "tfcloud's own (its package for remote()/run(), the launcher, the Dockerfile)")
            print("  (tensorflow-cloud follows the venv's lib64 -> lib link: the virtualenv goes in twice)")

            # -- build, push, resubmit ----------------------------------------------------------------------
            print("\n== Build + push to a registry on loopback (same base image) ==")
            with DockerBuilder(docker_host=engine.docker_host) as builder:
                t = time.perf_counter()
                first = containerize(job, builder=builder, repository=repository)
                ours_first = time.perf_counter() - t
            with DockerBuilder(docker_host=engine.docker_host) as builder:
                t = time.perf_counter()
                again = containerize(job, builder=builder, repository=repository)
                ours_again = time.perf_counter() - t
            assert first.built and not again.built and first.uri == again.uri
            print(f"{'tfcloud first build+push':38}{ours_first:7.1f} s  ({first.uri})")
            print(f"{'tfcloud unchanged resubmit':38}{ours_again:7.2f} s  (one look-up; nothing built or pushed)")
            if not args.skip_tfc_build:
                for run in (1, 2):
                    image = f"{repository}/tf_cloud_train:run{run}"  # stands in for its random uuid tag
                    old = tfc_builder(tfc, proj, image=image, parent=parent)
                    t = time.perf_counter()
                    old.get_docker_image()  # type: ignore[attr-defined]
                    took = time.perf_counter() - t
                    for p, fd in old.get_generated_files(return_descriptors=True):  # type: ignore[attr-defined]
                        os.close(fd)
                        os.remove(p)
                    label = "first build+push" if run == 1 else "unchanged resubmit"
                    note = "tar + build + push" if run == 1 else "tar + build (engine cache) + push, new tag"
                    print(f"{'tensorflow-cloud ' + label:38}{took:7.1f} s  ({note})")
            os.chdir(tmp)


if __name__ == "__main__":
    main()
