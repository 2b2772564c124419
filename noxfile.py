"""nox sessions: `nox -s demo` (the README's main job), `demo_cloud`, `tests`, `extras`, `lint`, `types`, `docs`,
`captures`, `bench`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.sessions = ["tests", "extras", "lint", "types", "docs"]
nox.options.reuse_existing_virtualenvs = True

ROOT = Path(__file__).parent
# TensorFlow for tests and the demo: the CPU wheel, and tf-keras without its dependencies (with them, pip
# pulls the full GPU `tensorflow` wheel).
TENSORFLOW = ["tensorflow-cpu==2.21.*"]
TF_KERAS = ["--no-deps", "tf-keras==2.21.*"]
EXTRAS = ".[cloud,docker,notebook,emulator,ray,tune,ui,test]"


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


def _ensure_browser(session: nox.Session) -> None:
    """The dashboard's tests drive Debian's chromium through chromium-driver; install them when missing (as root,
    on CI). Without them those tests skip and say why."""
    if os.access("/usr/bin/chromium", os.X_OK) and os.access("/usr/bin/chromedriver", os.X_OK):
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        session.run("bash", str(ROOT / ".ci" / "install-browser"), external=True)
    else:
        session.log("chromium/chromedriver missing and not root: the dashboard's browser tests will be skipped.")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (real TensorFlow, Docker engine, emulator and browser on loopback)."""
    _ensure_docker(session)
    _ensure_browser(session)
    _install(session)
    # The 30 slowest tests in CI's log, and the whole report as a file (.nox/tests-report.xml) a later session
    # can read for where the time goes.
    report = ["--durations=30", f"--junitxml={ROOT / '.nox' / 'tests-report.xml'}"]
    # One worker per core (a third worker on CI's two cores kept them busy but saved only 25 s of 16 minutes, and
    # made the load every timing rule sees heavier). Tests that share an engine or a module's fixture run together
    # on one worker (tests/parallel.py).
    parallel = ["-n", "auto", "--dist", "loadgroup"]
    session.run("pytest", *(session.posargs or ["-q", *parallel, *report]))


@nox.session
def extras(session: nox.Session) -> None:
    """The base install (no extras, no TensorFlow): each command that needs an extra names it, exits 2, shows no
    traceback and leaves no file (tests marked `extras`)."""
    session.install("-e", ".", "pytest>=8", "pytest-timeout>=2.3")
    session.run("pytest", "-m", "extras", "tests/test_extras.py", *(session.posargs or ["-q"]))


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: the digits classifier on a local cluster of a chief and 2 workers."""
    _install(session, extras=".")  # the examples need TensorFlow and tf-keras only (tfcloud[tensorflow])
    session.run("tfcloud", "submit", "examples/digits_keras.py", "--worker-count", "2", *session.posargs)


@nox.session
def demo_cloud(session: nox.Session) -> None:
    """The cloud path offline: the digits example built on a loopback Docker engine, pushed to a loopback
    registry and run on the Vertex AI emulator (a chief + 2 workers as containers); exits with the job's
    outcome and stops everything it started. Needs Debian's dockerd/docker-registry (installed when root)."""
    _ensure_docker(session)
    if not (shutil.which("dockerd") and shutil.which("docker-registry")):
        session.error("demo_cloud needs Debian's dockerd and docker-registry: run .ci/install-docker as root.")
    _install(session, extras=".[cloud,docker,emulator]")
    # On Ctrl-C, nox waits this long for the demo to stop what it started (default: 0.3 s, then it kills).
    session.run("python", "-m", "tfcloud.testing.cloud_demo", "examples/digits_keras.py", *session.posargs,
                interrupt_timeout=300, terminate_timeout=60)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the package, tests, benchmarks, examples and the docs' scripts."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", "tfcloud", "tests", "benchmarks", "examples", "docs", "noxfile.py")


@nox.session(venv_backend="none")
def types(session: nox.Session) -> None:
    """mypy, strict, on tfcloud/, in the tests session's environment (the packages mypy reads are the ones the
    tests ran with, installed once): `nox -s tests` makes it."""
    python = ROOT / ".nox" / "tests" / "bin" / "python"
    if not python.exists():
        session.error("types runs in the tests session's environment, which is missing: run `nox -s tests` first "
                      "(`nox -s tests -- --co -q` makes it without running the tests).")
    session.run(str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "mypy>=1.10",
                external=True)
    session.run(str(python), "-m", "mypy", external=True)


@nox.session
def docs(session: nox.Session) -> None:
    """The docs site with its API reference (mkdocs.yml), built with --strict: a broken link or anchor, a page
    left out of the nav or a docstring that cannot be rendered fails. The site goes to the session's temp dir
    (`mkdocs serve` previews it). Needs only the `docs` extra's packages: the reference reads the source."""
    session.install(*nox.project.load_toml("pyproject.toml")["project"]["optional-dependencies"]["docs"])
    site = Path(session.create_tmp()) / "site"
    session.run("mkdocs", "build", "--strict", "--clean", "--site-dir", str(site), env={"NO_MKDOCS_2_WARNING": "1"})
    session.log(f"The site: {site / 'index.html'}")


@nox.session
def captures(session: nox.Session) -> None:
    """The docs' terminal pictures (docs/images/*.svg): real tfcloud commands recorded by rich
    (docs/captures.py; `nox -s captures -- plan machines` makes some, `-- timeline` the timeline chart, which
    needs dockerd and the emulator). Not run by CI: read the SVGs' diff."""
    _install(session, extras=".[test]")
    session.run("python", "docs/captures.py", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Every benchmark in benchmarks/ (prints results; one with a bound exits non-zero past it). `nox -s bench --
    --quick`: one small round each, the same bounds (what CI runs: tests/test_benchmarks.py)."""
    _ensure_docker(session)
    _ensure_browser(session)
    _install(session)
    failed = []
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):  # each one's figures, even after a failure
        try:
            session.run("python", str(script), *session.posargs)
        except nox.command.CommandFailed:
            failed.append(script.name)
    if failed:
        session.error("failed: " + ", ".join(failed))
