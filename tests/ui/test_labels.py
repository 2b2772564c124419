"""The dashboard's label column and filter find a local job by the labels it was submitted with."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.ui.conftest import start_ui, stop_ui


def test_the_dashboard_filters_local_jobs_by_label(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('ok')\n")
    env = dict(os.environ)
    for label in ("team=ml", "team=ops"):
        done = subprocess.run([sys.executable, "-m", "tfcloud.cli", "submit", str(script), "--label", label,
                               "--strategy", "none"], capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr
    ids = re.findall(r"local-train-[0-9-]+-[0-9a-f]{4}", "\n".join(
        subprocess.run([sys.executable, "-m", "tfcloud.cli", "list", "--label", label], capture_output=True,
                       text=True, env=env, check=True).stdout for label in ("team=ml", "team=ops")))
    assert len(ids) == 2
    proc, url = start_ui(env, "--target", "local")
    try:
        base, _, token = url.partition("/?token=")

        def get(path: str) -> str:
            request = urllib.request.Request(base + path, headers={"X-Tfcloud-Token": token})
            with urllib.request.urlopen(request, timeout=60) as response:
                return str(response.read().decode())

        everything = get("/")
        assert ids[0] in everything and ids[1] in everything and "team=ml" in everything
        filtered = get("/fragments/jobs?label=team%3Dml")
        assert ids[0] in filtered and ids[1] not in filtered
    finally:
        stop_ui(proc)
