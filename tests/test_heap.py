"""tfcloud.view.heap: a process of tfcloud's own keeps freed memory for its next read (glibc's mallopt)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_keep_freed_memory_takes_its_settings_in_its_own_process() -> None:
    """In a process of its own (never this test's): True once malloc took both settings."""
    code = "from tfcloud.view.heap import keep_freed_memory as k; print(k())"
    done = subprocess.run([sys.executable, "-c", code],
                          capture_output=True, text=True, check=True)
    assert done.stdout == "True\n", done.stderr
