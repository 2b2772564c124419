"""A job followed from a notebook (issue 33): its lines stream into one output that grows (a display updated in
place), not an output per line or per batch; the cell stays small; the Job the cell returns shows as HTML.
A real kernel runs the notebook through nbclient, as Jupyter would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.notebook.nbhelpers import notebook

pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

_EXECUTE = """
import sys, warnings
warnings.simplefilter("ignore")
import nbformat, nbclient
path, out = sys.argv[1:]
nb = nbformat.read(path, as_version=4)
where = {"metadata": {"path": path.rsplit("/", 1)[0]}}  # the kernel starts in the notebook's directory
client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=240, resources=where)
client.execute()
nbformat.write(nb, out)
"""

SCRIPT = "for i in range(5000):\n    print(f'line {i:05d}')\n"


@pytest.mark.timeout(300)
def test_a_5000_line_job_holds_one_log_output(tmp_path: Path) -> None:
    (tmp_path / "talk.py").write_text(SCRIPT)
    path = notebook(tmp_path / "follow.ipynb",
                    "import tfcloud\njob = tfcloud.run(entry_point='talk.py', distribution_strategy=None, "
                    "stream_logs=True)\njob")
    out = tmp_path / "done.ipynb"
    proc = subprocess.run([sys.executable, "-c", _EXECUTE, str(path), str(out)], capture_output=True, text=True,
                          timeout=280, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cell = nbformat.read(str(out), as_version=4).cells[0]
    outputs = cell.outputs
    assert not [o for o in outputs if o.output_type == "error"], outputs
    logs = [o for o in outputs if "line 0" in str(o.get("data", {}).get("text/plain", "")) + o.get("text", "")]
    assert len(logs) == 1, [o.output_type for o in outputs]  # one output, updated in place
    assert len(outputs) < 10, [o.output_type for o in outputs]
    shown = logs[0]["data"]["text/plain"]
    assert shown.startswith("The last 200 of 5,000 lines; job.logs() (or tfcloud logs JOB) has every one.\n")
    assert shown.endswith("chief-0 | line 04999") and "chief-0 | line 04800" in shown
    assert "line 04799" not in shown  # the cell stays small
    html = next(o for o in outputs if o.output_type == "execute_result")["data"]["text/html"]
    assert "<b>Job</b>" in html and "succeeded" in html and "job.logs()" in html
