"""run(entry_point=None): finding the running script or notebook."""

from __future__ import annotations

import sys
import types

import pytest

from tfcloud.entry import discovery
from tfcloud.errors import ValidationError


class FakeKernelShell:
    def __init__(self, **user_ns: object) -> None:
        self.kernel = object()
        self.user_ns = dict(user_ns)


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch):
    """Pretend to be inside a Jupyter kernel: IPython.get_ipython() returns a shell with a kernel."""
    shell = FakeKernelShell()
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    return shell


def test_from_a_script(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text("")
    monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace(__file__=str(script)))
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert discovery.current_entry_point() == (script.resolve(), False)
    assert discovery.in_notebook() is False


def test_from_an_interactive_session(monkeypatch):
    monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace())
    monkeypatch.setattr(sys, "argv", ["-c"])
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    with pytest.raises(ValidationError) as err:
        discovery.current_entry_point()
    assert str(err.value) == (
        "Invalid `entry_point`: expected a .py script or .ipynb notebook to run (with None, the running script; "
        'this Python session runs none), received None.\nPass the file: tfcloud.run(entry_point="train.py", ...).'
    )


def test_vscode_variable(kernel, tmp_path):
    nb = tmp_path / "vs.ipynb"
    nb.write_text("{}")
    kernel.user_ns["__vsc_ipynb_file__"] = str(nb)
    assert discovery.in_notebook() is True
    assert discovery.current_entry_point() == (nb.resolve(), True)


def test_colab_asks_for_entry_point(kernel, monkeypatch):
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    with pytest.raises(ValidationError) as err:
        discovery.current_entry_point()
    assert str(err.value) == (
        "Invalid `entry_point`: expected a .py script or .ipynb notebook to run (with None, the running "
        "notebook's file; Colab keeps it in Google Drive, not on this runtime's disk), received None.\n"
        "Save the notebook onto the runtime (File > Download > Download .ipynb, then upload it to /content), "
        'and pass it: tfcloud.run(entry_point="/content/train.ipynb", ...).'
    )


def test_jpy_session_name(kernel, tmp_path, monkeypatch):
    nb = tmp_path / "session.ipynb"
    nb.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))
    assert discovery.current_entry_point() == (nb.resolve(), True)


def test_jupyter_server_sessions(kernel, jupyter_server, tmp_path, monkeypatch):
    import ipykernel.connect

    root = tmp_path / "root"
    (root / "sub").mkdir()
    nb = root / "sub" / "Train model.ipynb"
    nb.write_text("{}")
    jupyter_server.add_session("other-kernel", "other.ipynb")
    jupyter_server.add_session("1234-abcd", "sub/Train model.ipynb")
    monkeypatch.setattr(ipykernel.connect, "get_connection_file", lambda app=None: "/rt/kernel-1234-abcd.json")
    assert discovery.current_entry_point() == (nb.resolve(), True)
    assert jupyter_server.requests == ["/api/sessions"]


def test_nothing_found_names_what_was_tried(kernel, jupyter_server, monkeypatch):
    import ipykernel.connect

    monkeypatch.setattr(ipykernel.connect, "get_connection_file", lambda app=None: "/rt/kernel-5678.json")
    kernel.user_ns["__vsc_ipynb_file__"] = "/nowhere/x.ipynb"
    with pytest.raises(ValidationError) as err:
        discovery.current_entry_point()
    assert str(err.value) == (
        "Invalid `entry_point`: expected a .py script or .ipynb notebook to run (with None, the running "
        "notebook's file, which could not be found), received None.\n"
        "Tried VS Code's __vsc_ipynb_file__ (/nowhere/x.ipynb: no such file); the 1 Jupyter server(s) on this "
        "machine (no session for kernel 5678).\n"
        'Pass the notebook: tfcloud.run(entry_point="train.ipynb", ...).'
    )


def test_discovery_imports_nothing_heavy():
    import subprocess

    heavy = ("IPython", "ipykernel", "nbformat", "tensorflow")
    code = f"import sys, tfcloud.entry.discovery; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
