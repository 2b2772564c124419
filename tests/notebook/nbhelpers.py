"""Build real notebooks with nbformat; run a converted notebook the way a job does, without IPython."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

# Runs the script as the launcher does (runpy, as __main__), with IPython made unimportable: the job's
# image is not guaranteed to have it.
_RUNNER = (
    "import runpy, sys; sys.modules['IPython'] = None; "
    "sys.argv = [sys.argv[1], *sys.argv[2:]]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def notebook(path: Path, *cells: Any, kernel_language: str | None = "python") -> Path:
    """Write a notebook. A cell is a code string, or ("markdown"|"raw"|"code", source[, dict of options])."""
    built = []
    for cell in cells:
        if isinstance(cell, str):
            built.append(new_code_cell(cell))
            continue
        kind, source, *rest = cell
        options = rest[0] if rest else {}
        if kind == "markdown":
            built.append(new_markdown_cell(source))
        elif kind == "raw":
            built.append(new_raw_cell(source))
        else:
            code = new_code_cell(source, execution_count=options.get("count"))
            if "tags" in options:
                code.metadata["tags"] = options["tags"]
            if "output" in options:
                code.outputs = [new_output("stream", name="stdout", text=options["output"])]
            built.append(code)
    nb = new_notebook(cells=built)
    if kernel_language:
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": kernel_language}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def run_script(script: Path, *args: str, cwd: Path, env: dict[str, str] | None = None,
               timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "TFCLOUD_REMOTE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", _RUNNER, str(script), *args],
        cwd=cwd, env=full_env, capture_output=True, text=True, encoding="utf-8", timeout=timeout, check=False,
    )
