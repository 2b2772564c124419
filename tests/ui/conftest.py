"""Fixtures for the dashboard's tests: ``tfcloud ui`` as a real process on loopback, and a real headless browser
(Debian's chromium through selenium and Debian's chromium-driver; .ci/install-browser installs them)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the dashboard needs tfcloud[ui]")
pytest.importorskip("uvicorn", reason="the dashboard needs tfcloud[ui]")

REPO_ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Set to 1 to save each page's screenshot into docs/images/ (kept off in CI: the tree stays clean).
SCREENSHOTS = os.environ.get("TFCLOUD_UI_SCREENSHOTS") == "1"


@dataclass(frozen=True)
class Served:
    """A running ``tfcloud ui``: its address (``http://127.0.0.1:PORT``), its token, its state dir."""

    base: str
    token: str
    home: Path
    process: subprocess.Popen[str]

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"


def start_ui(env: Mapping[str, str], *args: str) -> tuple[subprocess.Popen[str], str]:
    """``tfcloud ui --port 0 --no-browser ARGS`` in a child process; the process and the address it printed."""
    proc = subprocess.Popen([sys.executable, "-m", "tfcloud.cli", "ui", "--port", "0", "--no-browser", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(env))
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("http://"):
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"tfcloud ui printed {line!r}; stderr:\n{err}")
    return proc, line


def stop_ui(proc: subprocess.Popen[str]) -> None:
    """Stop it (SIGTERM, then SIGKILL) and close its pipes."""
    proc.terminate()
    try:
        proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=10)


def _browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install 'tfcloud[test]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (.ci/install-browser installs Debian's chromium and chromium-driver)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless chromium driven by selenium (one per test module)."""
    reason = _browser_missing()
    if reason:
        pytest.skip(f"no browser for the dashboard's tests: {reason}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900", "--no-proxy-server", "--disable-extensions"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console: CSP violations show there
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: object, name: str) -> None:
    """Save the page as docs/images/NAME.png, only with TFCLOUD_UI_SCREENSHOTS=1."""
    if not SCREENSHOTS:
        return
    height = driver.execute_script("return document.documentElement.scrollHeight")  # type: ignore[attr-defined]
    driver.set_window_size(1280, min(int(height) + 20, 1800))  # type: ignore[attr-defined]
    try:
        driver.save_screenshot(str(REPO_ROOT / "docs" / "images" / f"{name}.png"))  # type: ignore[attr-defined]
    finally:
        driver.set_window_size(1280, 900)  # type: ignore[attr-defined]



def csp_violations(driver: object) -> list[str]:
    """The console's messages since the last call that say the content security policy refused something."""
    return [entry["message"] for entry in driver.get_log("browser")  # type: ignore[attr-defined]
            if "Content Security Policy" in entry["message"]]
