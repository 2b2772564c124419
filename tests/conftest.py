"""Shared fixtures. Every test runs isolated: no TFCLOUD_* variables from the outside, its own tfcloud
state dir, a temporary working directory, and loopback excluded from any proxy."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ci_guard import pytest_sessionfinish, pytest_terminal_summary  # noqa: F401 (the suite's end: issue 38)
from tests.parallel import _shared_machine, pytest_collection_modifyitems, quiet_machine  # noqa: F401 (issue 38)
from tests.rayengines import _ray_engines, pytest_runtest_teardown, ray_cluster, two_host_ray  # noqa: F401

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = REPO_ROOT / "examples"

# A suite started in the background by a script (`.ci/run &`: no job control) inherits SIGINT ignored, and so
# would every process a test starts: the Ctrl-C tests (tests/test_cli_interrupt.py, the Ray and emulator ones)
# would wait for a command that cannot hear it. A handler here is reset to the default in each child.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in list(os.environ):
        if name.startswith(("TFCLOUD_", "CLOUDSDK_")) or name in (
                "GOOGLE_CLOUD_PROJECT", "DOCKER_HOST", "STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS",
                "XDG_CONFIG_HOME"):
            monkeypatch.delenv(name)
    # No user config (~/.config/tfcloud/config.toml) and no gcloud configuration unless a test writes one.
    config = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(config / "gcloud"))
    home = tmp_path_factory.mktemp("tfcloud-home")
    monkeypatch.setenv("TFCLOUD_HOME", str(home))
    work = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(work)
    for var in ("no_proxy", "NO_PROXY", "no_grpc_proxy"):
        monkeypatch.setenv(var, ",".join(filter(None, [os.environ.get(var), "127.0.0.1", "localhost"])))
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    yield work


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """A trivial entry point."""
    path = tmp_path / "train.py"
    path.write_text("print('training')\n")
    return path


@pytest.fixture
def python() -> str:
    return sys.executable


# --- a real Docker engine + registry on loopback, once per test session ----------------------------------------
@pytest.fixture(scope="session")
def engine() -> Iterator[object]:
    """Debian's dockerd + docker-registry on loopback (tfcloud.testing.dockerd); skips when not installed."""
    pytest.importorskip("docker", reason="the Docker tests need tfcloud[docker]")
    from tfcloud.testing.dockerd import docker_engine, dockerd_available

    reason = dockerd_available()
    if reason:
        pytest.skip(f"no Docker engine for tests: {reason} (.ci/install-docker installs it)")
    with docker_engine() as eng:
        yield eng


@pytest.fixture(scope="session")
def python_base(engine: object) -> str:
    """A small base image (busybox + this machine's python3), made locally: Docker Hub is not reachable."""
    from tfcloud.testing.dockerd import python_base_image

    client = engine.client()  # type: ignore[attr-defined]
    try:
        return python_base_image(client)
    finally:
        client.close()


@pytest.fixture(scope="session")
def tensorflow_base(engine: object) -> str:
    """A TensorFlow + tf-keras base image made from this interpreter's site-packages (~20 s, once)."""
    pytest.importorskip("tensorflow", reason="the TensorFlow image needs TensorFlow installed")
    from tfcloud.testing.dockerd import tensorflow_base_image

    client = engine.client()  # type: ignore[attr-defined]
    try:
        return tensorflow_base_image(client)
    finally:
        client.close()
