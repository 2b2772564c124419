"""A real Jupyter kernel runs a notebook that calls tfcloud.run(entry_point=None, dry_run=True).

The kernel is started the way jupyter_server starts one (connection file ``kernel-<id>.json`` in Jupyter's
runtime directory); the server's ``api/sessions`` is a loopback stand-in (see conftest.py), since
jupyter_server itself is not a test dependency. VS Code's ``__vsc_ipynb_file__`` is tried in the same kernel.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import nbformat
import pytest

nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")


_EXECUTE = """
import sys, warnings
warnings.simplefilter("ignore")
import nbformat, nbclient
from jupyter_client.manager import AsyncKernelManager
path, connection_file, out, cells = sys.argv[1:]
nb = nbformat.read(path, as_version=4)
# As jupyter_server starts kernels: the connection file is kernel-<id>.json in the runtime directory.
km = AsyncKernelManager(kernel_name="python3", connection_file=connection_file)
resources = {"metadata": {"path": path.rsplit("/", 1)[0]}}  # the kernel starts in the notebook's directory
client = nbclient.NotebookClient(nb, km=km, timeout=90, shutdown_kernel="immediate", resources=resources)
with client.setup_kernel():
    for index in map(int, cells.split(",")):
        client.execute_cell(nb.cells[index], index)
nbformat.write(nb, out)
"""


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def _errors(cell) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.get("output_type") == "error"]


@pytest.mark.timeout(120)
def test_run_from_a_kernel_submits_the_running_notebook(jupyter_server, tmp_path, monkeypatch):
    from tests.notebook.nbhelpers import notebook

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    root = tmp_path / "root"
    path = notebook(
        root / "experiments" / "Train é.ipynb",
        ("markdown", "# Training"),
        "%pip install -q tensorflow-datasets\n%matplotlib inline",  # cell 2: not executed in the kernel
        "import json, tfcloud\nplan = tfcloud.run(entry_point=None, dry_run=True, worker_count=1)\n"
        "print(json.dumps(plan.to_dict()))",
        "print('kernel still alive', tfcloud.remote())",
        f"__vsc_ipynb_file__ = {str(root / 'vscode.ipynb')!r}\nplan = tfcloud.run(dry_run=True)\n"
        "print(json.dumps(plan.to_dict()))",
    )
    notebook(root / "vscode.ipynb", "!echo from vscode")
    kernel_id = str(uuid.uuid4())
    jupyter_server.add_session(kernel_id, "experiments/Train é.ipynb")
    connection_file = tmp_path / "runtime" / f"kernel-{kernel_id}.json"
    # nbclient runs in a child process: its zmq sockets are closed by garbage collection, which pytest's
    # `filterwarnings = error` would turn into errors at the end of the session.
    executed = tmp_path / "executed.ipynb"
    subprocess.run(
        [sys.executable, "-c", _EXECUTE, str(path), str(connection_file), str(executed), "2,3,4"],
        check=True, timeout=100,
    )
    nb = nbformat.read(executed, as_version=4)

    from_server = json.loads(_text(nb.cells[2]).strip().splitlines()[-1])
    assert not _errors(nb.cells[2])
    assert from_server["entry_point"] == str(path.resolve())
    assert from_server["requirements"] == ["tensorflow-datasets"]
    assert from_server["notes"][:2] == [
        "cell 2, line 1: `%pip install -q tensorflow-datasets` → the job's requirements: tensorflow-datasets "
        "(installed before the job starts).",
        "cell 2, line 2: `%matplotlib inline` dropped (display only: nothing is shown in a job).",
    ]
    assert [p["role"] for p in from_server["pools"]] == ["chief", "worker"]
    assert jupyter_server.requests == ["/api/sessions"]

    assert _text(nb.cells[3]) == "kernel still alive False\n"  # run() returned; the kernel did not exit

    from_vscode = json.loads(_text(nb.cells[4]).strip().splitlines()[-1])
    assert from_vscode["entry_point"] == str((root / "vscode.ipynb").resolve())
    assert from_vscode["notes"][0] == "cell 1, line 1: `!echo from vscode` runs in the job as a shell command."
