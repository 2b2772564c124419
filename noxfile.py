"""nox sessions: `nox -s demo` (the README's main job), `tests`, `lint`, `types`, `bench`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True

ROOT = Path(__file__).parent
# TensorFlow for tests and the demo: the CPU wheel, and tf-keras without its dependencies (with them, pip
# pulls the full GPU `tensorflow` wheel).
TENSORFLOW = ["tensorflow-cpu==2.21.*"]
TF_KERAS = ["--no-deps", "tf-keras==2.21.*"]
EXTRAS = ".[cloud,docker,notebook,emulator,ray,test]"


def _install(session: nox.Session, *, extras: str = EXTRAS) -> None:
    session.install(*TENSORFLOW)
    session.install(*TF_KERAS)
    session.install("-e", extras)


def _ensure_docker(session: nox.Session) -> None:
    """The container and emulator tests use Debian's dockerd + docker-registry; install them when missing
    (as root, on CI). Without them those tests skip and say why."""
    if shutil.which("dockerd") and shutil.which("docker-registry"):
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        session.run("bash", str(ROOT / ".ci" / "install-docker"), external=True)
    else:
        session.log("dockerd/docker-registry missing and not root: the Docker tests will be skipped.")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (real TensorFlow, Docker engine and emulator on loopback)."""
    _ensure_docker(session)
    _install(session)
    session.run("pytest", *(session.posargs or ["-q"]))


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: the digits classifier on a local cluster of a chief and 2 workers."""
    _install(session, extras=".[test]")
    session.run("tfcloud", "submit", "examples/digits_keras.py", "--worker-count", "2", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the package, tests, benchmarks and examples."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", "tfcloud", "tests", "benchmarks", "examples", "noxfile.py")


@nox.session
def types(session: nox.Session) -> None:
    """mypy, strict, on tfcloud/."""
    session.install("mypy>=1.10", "-e", EXTRAS)
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Every benchmark in benchmarks/ (prints results; asserts nothing about time)."""
    _ensure_docker(session)
    _install(session)
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        session.run("python", str(script))
