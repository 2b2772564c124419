"""`import tfcloud` and `tfcloud --help` stay light: no TensorFlow, Google Cloud, gRPC, Docker or Ray."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("tensorflow", "tf_keras", "keras", "google.cloud", "google.api_core", "grpc", "docker", "nbformat",
         "IPython", "ray", "optuna", "matplotlib")

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
                   "tfcloud.report") == []


@pytest.mark.parametrize("argv", [["--help"], ["submit", "--help"], ["tune", "--help"], ["machines"]])
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
