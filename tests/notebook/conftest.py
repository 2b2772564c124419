"""Fixtures for the notebook tests: build a notebook, convert it, run the script as a job would."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.notebook.nbhelpers import notebook, run_script
from tfcloud.entry.notebook import ConvertedNotebook, convert_notebook

DATA = Path(__file__).parent / "data"


@pytest.fixture
def make_notebook(tmp_path: Path) -> Callable[..., Path]:
    def make(*cells: Any, name: str = "nb.ipynb", **options: Any) -> Path:
        return notebook(tmp_path / name, *cells, **options)

    return make


@pytest.fixture
def convert(make_notebook: Callable[..., Path]) -> Callable[..., ConvertedNotebook]:
    def run(*cells: Any, **options: Any) -> ConvertedNotebook:
        return convert_notebook(make_notebook(*cells, **options))

    return run


@pytest.fixture
def job(tmp_path: Path, make_notebook: Callable[..., Path]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Convert the cells and run the script in a fresh directory, as the launcher would."""

    def run(*cells: Any, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        converted = convert_notebook(make_notebook(*cells))
        workdir = tmp_path / "job"
        workdir.mkdir(exist_ok=True)
        script = workdir / "tfcloud_notebook_nb.py"
        script.write_text(converted.script, encoding="utf-8")
        return run_script(script, cwd=workdir, env=env)

    return run


class FakeJupyterServer:
    """A Jupyter server's ``api/sessions`` on loopback, announced by a ``jpserver-*.json`` runtime file."""

    def __init__(self, runtime_dir: Path, root_dir: Path, token: str = "secret-token") -> None:
        import http.server
        import json
        import threading

        self.sessions: list[dict[str, Any]] = []
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                if self.headers.get("Authorization") != f"token {token}":
                    self.send_response(403)
                    self.end_headers()
                    return
                body = json.dumps(server.sessions).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        port = self.httpd.server_address[1]
        runtime_dir.mkdir(parents=True, exist_ok=True)
        (runtime_dir / f"jpserver-{port}.json").write_text(json.dumps({
            "base_url": "/", "hostname": "localhost", "password": False, "pid": 1, "port": port,
            "root_dir": str(root_dir), "secure": False, "sock": "", "token": token,
            "url": f"http://localhost:{port}/", "version": "2.14.2",
        }))

    def add_session(self, kernel_id: str, path: str) -> None:
        self.sessions.append({"id": "s1", "path": path, "name": Path(path).name, "type": "notebook",
                              "kernel": {"id": kernel_id, "name": "python3"}, "notebook": {"path": path}})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def jupyter_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    runtime = tmp_path / "runtime"
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    server = FakeJupyterServer(runtime, root)
    yield server
    server.close()
