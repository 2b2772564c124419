"""The package's layers only import downwards: cli → sdk/api → pipeline/plan → stages and backends → values.

Read from the source (no imports run), so a new module that reaches back up fails here with its line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tfcloud"
#: The edge of the package: these may import anything.
EDGE = {"tfcloud", "tfcloud.cli", "tfcloud.api", "tfcloud.sdk", "tfcloud.__main__"}
EDGE |= {"tfcloud.printers"}  # what the commands show people: plans, studies
#: The command-line package: every module in it is part of the edge.
CLI = "tfcloud.cli"
#: Modules that sequence stages: only the edge (and plan, which runs the pure stages, and the local tuner,
#: which submits each trial through the pipeline) may import them.
ORCHESTRATION = {"tfcloud.pipeline", "tfcloud.plan", "tfcloud.tuning"}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) for every ``import`` and ``from ... import`` in the file, nested ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module, tuple(alias.name for alias in node.names)))
    return found


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "emulator" not in p.parts and "testing" not in p.parts)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: _module(p))
def test_no_import_runs_back_up_the_layers(path: Path) -> None:
    module = _module(path)
    if module in EDGE or module.startswith(CLI + "."):
        return
    problems = []
    for line, target, names in _imports(path):
        if target == "tfcloud" and any(name != "_version" for name in names):
            problems.append(f"line {line}: imports the package face (from tfcloud import {', '.join(names)})")
        if target in EDGE - {"tfcloud"}:
            problems.append(f"line {line}: imports {target}, the edge")
        if target in ORCHESTRATION and module not in ORCHESTRATION:
            problems.append(f"line {line}: imports {target}, which sequences the stages")
        if module.startswith(("tfcloud.backends", "tfcloud.builders")) and target in ("tfcloud.validate",):
            problems.append(f"line {line}: a backend or builder imports {target}")
    assert problems == []


def test_the_cli_calls_the_sdk_only() -> None:
    forbidden = ("tfcloud.backends", "tfcloud.pipeline", "tfcloud.validate", "tfcloud.spec", "tfcloud.settings")
    found = [(path.name, line, target) for path in (PACKAGE / "cli").glob("*.py")
             for line, target, _ in _imports(path) if target.startswith(forbidden)]
    assert found == []
