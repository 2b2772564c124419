"""`import tfcloud` and the fast commands (`--help`, `machines`, `status` of a local job) stay light: no TensorFlow,
Google Cloud, gRPC, Docker, Ray or pydantic (benchmarks/bench_cli.py times them; this checks what they load)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("tensorflow", "tf_keras", "keras", "google.cloud", "google.api_core", "grpc", "docker", "nbformat",
         "IPython", "ray", "pydantic", "optuna", "matplotlib", "starlette", "uvicorn", "selenium")

# Compared with what the bare interpreter already holds (site's .pth files may pre-load namespace packages).
PROBE = """
import json, sys
before = set(sys.modules)
{body}
heavy = sorted({{m for m in set(sys.modules) - before if m.split(".")[0] in {roots!r}
                or m.startswith("google.cloud") or m.startswith("google.api_core")}})
print(json.dumps(heavy))
"""


def _loaded(body: str) -> list[str]:
    roots = {h for h in HEAVY if "." not in h}
    code = PROBE.format(body=body, roots=roots)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd="/")
    assert proc.returncode == 0, proc.stderr
    loaded: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return loaded


def test_import_tfcloud_is_light() -> None:
    assert _loaded("import tfcloud; tfcloud.remote(); tfcloud.MachineConfig; tfcloud.run; tfcloud.tune; "
                   "tfcloud.report; tfcloud.ui") == []


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["submit", "--help"], ["tune", "--help"], ["status", "-h"],
                                  ["ui", "--help"], ["machines"], ["machines", "--json"]])
def test_cli_help_is_light(argv: list[str]) -> None:
    body = (
        f"sys.argv = ['tfcloud', *{argv!r}]\n"
        "from tfcloud.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    assert _loaded(body) == []


def test_dry_run_needs_no_tensorflow(tmp_path: pytest.TempPathFactory) -> None:
    body = (
        "import pathlib, tempfile\n"
        "d = pathlib.Path(tempfile.mkdtemp()); (d / 't.py').write_text('import tensorflow')\n"
        "from tfcloud.cli import main\n"
        "main(['submit', str(d / 't.py'), '--worker-count', '2', '--vertex', '--dry-run'])\n"
    )
    assert _loaded(body) == []


def test_status_of_a_local_job_is_light(tmp_path: Path) -> None:
    (tmp_path / "hello.py").write_text("print('hello')\n")
    from tfcloud.cli import main

    assert main(["-q", "submit", str(tmp_path / "hello.py"), "--strategy", "none"]) == 0
    from tfcloud.targets.local.backend import LocalBackend

    (job_id,) = LocalBackend().job_ids()
    body = (
        f"sys.argv = ['tfcloud', 'status', {job_id!r}]\n"
        "from tfcloud.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code in (0, None), exc.code\n"
    )
    assert _loaded(body) == []
