"""Benchmarks cannot rot: each ``benchmarks/bench_*.py`` runs in its quick mode (``--quick``: one small round),
and must finish (exit 0) and print its figures. A benchmark with a bound (bench_ui: the dashboard's 1 s and
200 ms; bench_cli) checks it on the same load in its quick mode and exits non-zero past it; ``nox -s bench`` runs
the full rounds. A benchmark whose engine is absent here (dockerd, chromium, Ray, network
namespaces) is skipped, saying which.

The benchmarks that run on a Docker engine (:data:`ON_DOCKER`) take the suite's (the session's ``engine`` and its
base images, handed over in environment variables: :func:`tfcloud.testing.dockerd.engine_env`) instead of starting
their own, and run in its group (tests/parallel.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dockervertex import google_base

__all__ = ["google_base"]  # a fixture, imported for bench_nobuild

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))
#: What each one prints when it has measured something (a line per figure, by a pattern).
FIGURES = {
    "bench_cli": [r"bench_cli: (PASS|FAIL) tfcloud --help +[0-9.]+x", r"bench_cli: (PASS|FAIL) tfcloud status",
                  r"bench_cli: (PASS|FAIL) tfcloud machines", r"bench_cli: (PASS|FAIL) python -c 'import tfcloud'"],
    "bench_context": [r"tensorflow-cloud 0\.1\.16 +[0-9]+ ", r"tfcloud +[0-9]+ +[0-9.]+ [kMG]?B",
                      r"tfcloud first build\+push +[0-9.]+ s", r"tfcloud unchanged resubmit +[0-9.]+ s"],
    "bench_data": [r"new +[0-9.]+ ?[kMG]?i?B +[0-9.]+ ?[kMG]?i?B +[0-9.]+", r"unchanged +0 ?B? +0 ?B?",
                   r"one file changed +[0-9.]+ ?[kMG]?i?B +[0-9.]+ ?[kMG]?i?B"],
    "bench_emulator_lifecycle": [r"launcher: direct [0-9]+ ms, through the launcher [0-9]+ ms",
                                 r"sigkill: the replica and its child were gone [0-9]+ ms",
                                 r"cancel/timeout: skipped|cancel: CancelBuild answered"],
    "bench_local": [r'"benchmark": "local-overhead", "by_hand_ms": [0-9.]+, "tfcloud_ms": [0-9.]+'],
    "bench_logs": [r"short lines +rate tfcloud / unbuffered pipe: [0-9.]+",
                   r"2 kB lines +rate tfcloud / unbuffered pipe: [0-9.]+", r"tfcloud submit --local +wall +[0-9.]+s"],
    "bench_nobuild": [r"image \(build \+ push\) +[0-9.]+s", r"--no-build \(base \+ package\) +[0-9.]+s",
                      r"--no-build resubmit: [0-9.]+ s"],
    "bench_package_memory": [r"uploaded [0-9.]+ MB: peak RSS [0-9]+ MiB"],
    "bench_ray_hosts": [r"two-host cluster (up in [0-9.]+ s|given: http://\S+)",
                        r"median replacement \(1 round\(s\)\): detect_s"],
    "bench_ui": [r"jobs page: first contentful paint +median", r"job page: DOM complete +median",
                 r"log line: file created -> in the page +median",
                 r"200000-line log: its last line in the page +median",
                 r"bench_ui: PASS jobs page with Vertex AI down: first contentful paint",
                 r"bench_ui: PASS 200000-line log: its last line in the page",
                 r"bench_ui: PASS 200000-line log: a 50 ms timer's longest gap while it loads"],
}


#: The benchmarks that run on a Docker engine: each variable they read to name a base image in it, and the suite's
#: fixture that makes that image. bench_nobuild's TensorFlow parent is the one the suite's --no-build tests use
#: (tests/dockervertex.py): the job's base image it needs is then pushed once in a session, not twice.
ON_DOCKER = {
    "bench_context": {"BENCH_PYTHON_BASE": "python_base"},
    "bench_emulator_lifecycle": {"BENCH_PYTHON_BASE": "python_base"},
    "bench_nobuild": {"BENCH_PYTHON_BASE": "python_base", "BENCH_TENSORFLOW_BASE": "google_base"},
}


def _missing(name: str) -> str | None:
    """Why ``name`` cannot run here (None: it can)."""
    def module(mod: str) -> bool:
        import importlib.util

        return importlib.util.find_spec(mod) is not None

    if name == "bench_ui" and not (module("selenium") and Path("/usr/bin/chromedriver").exists()):
        return "needs selenium and Debian's chromium + chromium-driver (.ci/install-browser)"
    if name == "bench_ray_hosts" and not module("ray"):
        return "needs Ray (tfcloud[ray])"
    return None


def test_every_benchmark_has_its_figures_here() -> None:
    assert sorted(FIGURES) == [p.stem for p in BENCHMARKS]


def test_an_engine_handed_over_is_the_same_engine_on_the_other_side(tmp_path: Path) -> None:
    from tfcloud.testing.dockerd import Engine, Registry, engine_env, handed_engine

    root = tmp_path / "registry"
    registry = Registry(address="127.0.0.1:5000", root=root, log=root / "registry.log")
    engine = Engine(docker_host=f"unix://{tmp_path}/docker.sock", registry=registry, root=tmp_path)
    with handed_engine(engine_env(engine)) as handed:
        assert handed == engine
    half = {name: value for name, value in engine_env(engine).items() if name != "BENCH_REGISTRY_ROOT"}
    with pytest.raises(RuntimeError, match="BENCH_REGISTRY_ROOT not set"), handed_engine(half):
        pass


#: The benchmarks whose bounds are latencies (they exit 1 past one): they run with no other test on the machine
#: (tests/parallel.py's quiet_machine), so a bound measures tfcloud, not the other xdist worker's load.
ON_A_QUIET_MACHINE = {"bench_cli", "bench_ui"}


@pytest.mark.slow
@pytest.mark.bench
@pytest.mark.parametrize("script", [p for p in BENCHMARKS if p.stem not in {*ON_DOCKER, *ON_A_QUIET_MACHINE,
                                                                            "bench_ray_hosts"}], ids=lambda p: p.stem)
def test_the_quick_benchmark_runs_and_prints_its_figures(script: Path, tmp_path: Path) -> None:
    _run(script, tmp_path, {})


@pytest.mark.slow
@pytest.mark.bench
@pytest.mark.parametrize("script", [p for p in BENCHMARKS if p.stem in ON_A_QUIET_MACHINE], ids=lambda p: p.stem)
def test_the_quick_benchmark_meets_its_latency_bounds_on_a_quiet_machine(script: Path, tmp_path: Path,
                                                                        quiet_machine: None) -> None:
    _run(script, tmp_path, {})


@pytest.mark.slow
@pytest.mark.bench
@pytest.mark.ray
def test_the_quick_bench_ray_hosts_runs_on_the_suites_two_host_cluster(two_host_ray: Any, tmp_path: Path) -> None:
    """bench_ray_hosts --quick on the suite's two-host cluster (tests/rayengines.py), not a third one of its own."""
    _run(ROOT / "benchmarks" / "bench_ray_hosts.py", tmp_path, {}, "--ray-address", two_host_ray.address,
         "--hosts", two_host_ray.hosts.describe())


def _run(script: Path, cwd: Path, handed: dict[str, str], *argv: str) -> None:
    """Run ``script --quick`` with ``handed`` in its environment; it finishes and prints its figures (or says why
    it cannot run here: a skip)."""
    reason = _missing(script.stem)
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           **handed}
    done = subprocess.run([sys.executable, str(script), "--quick", *argv], capture_output=True, text=True, env=env,
                          cwd=cwd, check=False, timeout=540)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    skipped = re.search(r"^(?:SKIP \S+|skipped): (.*)$", done.stdout, re.MULTILINE)
    if skipped:  # the benchmark says why it cannot run here (no network namespaces)
        pytest.skip(skipped.group(1))
    missing = [pattern for pattern in FIGURES[script.stem] if not re.search(pattern, done.stdout)]
    assert missing == [], done.stdout[-3000:]


@pytest.fixture
def handed(request: pytest.FixtureRequest, engine: Any) -> dict[str, str]:
    """The environment that hands the suite's engine and base images to ``request.param``, a benchmark on Docker
    (the images are made here, in the test's setup, when no other test made them yet)."""
    from tfcloud.testing.dockerd import engine_env

    images = {variable: request.getfixturevalue(fixture) for variable, fixture in ON_DOCKER[request.param].items()}
    return {**engine_env(engine), **images}


@pytest.mark.slow
@pytest.mark.bench
@pytest.mark.docker
@pytest.mark.parametrize("handed", sorted(ON_DOCKER), indirect=True)
def test_the_quick_benchmark_runs_on_the_suites_engine(handed: dict[str, str], request: pytest.FixtureRequest,
                                                       tmp_path: Path) -> None:
    name = request.node.callspec.params["handed"]
    _run(ROOT / "benchmarks" / f"{name}.py", tmp_path, handed)
