"""The dashboard hides what the terminal hides (issue 33): in a failed job's log stream, tfcloud's launcher and
``runpy`` frames of a traceback come marked hidden ("Show everything" shows them), the script's own frames
and its error do not. A real local job, a real ``tfcloud ui``, its server-sent events read as a browser would."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

from tests.ui.conftest import start_ui, stop_ui
from tfcloud.cli import main

pytest.importorskip("starlette")
TOKEN = "log-filter-token-0123456789"


def test_the_log_stream_marks_the_launchers_frames_hidden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "fail.py"
    script.write_text("def fit():\n    raise ValueError('no labels')\nfit()\n")
    assert main(["submit", str(script), "--strategy", "none"]) == 1
    job_id = capsys.readouterr().err.split("Submitted job ", 1)[1].split(".")[0]

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    proc, url = start_ui(env, "--token", TOKEN, "--target", "local")
    try:
        request = urllib.request.Request(url.split("/?", 1)[0] + f"/api/jobs/{job_id}/logs",
                                         headers={"X-Tfcloud-Token": TOKEN})
        lines: list[dict[str, object]] = []
        with urllib.request.urlopen(request, timeout=60) as stream:
            event = None
            for raw in stream:
                text = raw.decode("utf-8").rstrip("\n")
                if text.startswith("event: "):
                    event = text[len("event: "):]
                elif text.startswith("data: ") and event == "lines":
                    lines += json.loads(text[len("data: "):])
                elif text.startswith("data: ") and event in ("end", "problem"):
                    break
    finally:
        stop_ui(proc)
    shown = [str(line["x"]) for line in lines if not line["n"]]
    hidden = [str(line["x"]) for line in lines if line["n"]]
    assert "Traceback (most recent call last):" in shown and "ValueError: no labels" in shown
    assert any(f'File "{script}", line 3, in <module>' in x for x in shown)
    assert any("tfcloud_launcher.py" in x for x in hidden) and not any("tfcloud_launcher.py" in x for x in shown)
    assert not any("runpy" in x for x in shown)
