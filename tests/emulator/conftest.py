"""Fixtures for the emulator's own tests: the plugin's fixtures, and the real clients bound to the emulator."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

# The plugin is registered through the ``pytest11`` entry point once tfcloud is installed; importing its
# fixtures here keeps these tests working from a plain checkout too.
from tfcloud.pytest_plugin import tfcloud_emulator, tfcloud_emulator_env  # noqa: F401


@pytest.fixture
def emulator(tfcloud_emulator: Any) -> Iterator[Any]:  # noqa: F811
    yield tfcloud_emulator
    tfcloud_emulator.faults.clear()


@pytest.fixture
def jobs(emulator: Any) -> Iterator[Any]:
    client = emulator.job_client()
    yield client
    client.transport.close()


@pytest.fixture
def builds(emulator: Any) -> Iterator[Any]:
    client = emulator.build_client()
    yield client
    client.transport.close()


@pytest.fixture
def logs(emulator: Any) -> Iterator[Any]:
    client = emulator.logging_client()
    yield client
    client.transport.close()


def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s")
        time.sleep(interval)
