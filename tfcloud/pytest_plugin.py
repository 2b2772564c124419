"""tfcloud's pytest plugin (entry point ``pytest11: tfcloud``): the offline Google Cloud emulator as fixtures.

- ``tfcloud_emulator`` (session): a running :class:`tfcloud.emulator.Emulator`, local-process replicas.
  Use its ``settings`` (endpoint, storage endpoint, project, ``env``) and its clients (``job_client()``,
  ``build_client()``, ``logging_client()``, ``storage_client()``), or arm ``faults``.
- ``tfcloud_emulator_env`` (function): the emulator's :class:`~tfcloud.emulator.EmulatorSettings`, with
  ``settings.env`` exported for the test (``TFCLOUD_EMULATOR_HOST``, ``STORAGE_EMULATOR_HOST``,
  ``GOOGLE_CLOUD_PROJECT``, ...); faults are cleared after the test.

Options: ``--tfcloud-emulator-project`` (default ``tfcloud-test``), ``--tfcloud-emulator-docker-host``
(run replicas and builds on that Docker engine). This module imports neither grpc nor google at import time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tfcloud.emulator import Emulator, EmulatorSettings

__all__ = ["tfcloud_emulator", "tfcloud_emulator_env"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tfcloud", "tfcloud Google Cloud emulator")
    group.addoption("--tfcloud-emulator-project", default="tfcloud-test",
                    help="project id the emulator reports (default: tfcloud-test)")
    group.addoption("--tfcloud-emulator-docker-host", default=None,
                    help="Docker engine for the emulator's replicas and builds (default: local processes)")


def _option(config: pytest.Config, name: str, default: str | None) -> str | None:
    try:
        value = config.getoption(name)
    except ValueError:  # the plugin's options were not registered (fixtures imported by a conftest)
        return default
    return value if isinstance(value, str) else default


@pytest.fixture(scope="session")
def tfcloud_emulator(pytestconfig: pytest.Config) -> Iterator[Emulator]:
    """A running emulator for the whole test session; stopped (replicas included) at the end."""
    from tfcloud.emulator import Emulator

    emulator = Emulator(
        project=_option(pytestconfig, "tfcloud_emulator_project", "tfcloud-test") or "tfcloud-test",
        docker_host=_option(pytestconfig, "tfcloud_emulator_docker_host", None),
    )
    with emulator:
        yield emulator


@pytest.fixture
def tfcloud_emulator_env(tfcloud_emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorSettings]:
    """The emulator's settings, exported as environment variables for one test; faults cleared afterwards."""
    settings = tfcloud_emulator.settings
    for key, value in settings.env.items():
        monkeypatch.setenv(key, value)
    try:
        yield settings
    finally:
        tfcloud_emulator.faults.clear()
