"""Ctrl-C in `tfcloud submit` of a local job stops every replica and exits 130; nothing is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.targets.localjobs import assert_no_survivors
from tfcloud.job.states import JobState
from tfcloud.targets.local.backend import LocalBackend

SLOW = "import time\nprint('started', flush=True)\ntime.sleep(300)\n"


@pytest.mark.parametrize("workers", [0, 2])
def test_ctrl_c_cancels_a_local_job(tmp_path: Path, workers: int) -> None:
    (tmp_path / "slow.py").write_text(SLOW)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfcloud.cli", "submit", str(tmp_path / "slow.py"), "--local", "--strategy", "none",
         "--worker-count", str(workers)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    started = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.rstrip().endswith("| started"):  # one replica's line, or "3 replicas | started" for several
            label = line.split("|")[0].strip()
            started += int(label.split()[0]) if label.endswith(" replicas") else 1
        if started == workers + 1:
            break
    begin = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.stdout.read()
    code = proc.wait(timeout=60)
    reader.join(timeout=10)
    proc.stdout.close()
    proc.stderr.close()  # type: ignore[union-attr]
    assert code == 130
    assert time.monotonic() - begin < 30
    text = "".join(err)
    job_id = text.split("Interrupted: cancelling ")[1].split(".\n")[0]
    handle = LocalBackend(home=os.environ["TFCLOUD_HOME"]).attach(job_id)
    assert handle.info().state is JobState.CANCELLED
    assert_no_survivors(handle)
    assert list(Path.cwd().iterdir()) == []
