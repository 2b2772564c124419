"""The package's layers only import downwards: cli → sdk/api → pipeline/plan → stages and backends → values.

Read from the source (no imports run), so a new module that reaches back up fails here with its line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tfcloud"
#: The edge of the package: these may import anything (the dashboard, ``tfcloud ui``, is an edge as the CLI is:
#: it reads everything through the SDK, :func:`test_the_cli_and_the_dashboard_call_the_sdk_only`).
EDGE = {"tfcloud", "tfcloud.cli", "tfcloud.api", "tfcloud.sdk", "tfcloud.__main__", "tfcloud.ui", "tfcloud.ui.app",
        "tfcloud.ui.command", "tfcloud.ui.server", "tfcloud.ui.views"}
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
    if module in EDGE:
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


@pytest.mark.parametrize("path", [PACKAGE / "cli.py", *sorted((PACKAGE / "ui").glob("*.py"))],
                         ids=lambda p: _module(p))
def test_the_cli_and_the_dashboard_call_the_sdk_only(path: Path) -> None:
    forbidden = ("tfcloud.backends", "tfcloud.pipeline", "tfcloud.validate", "tfcloud.spec", "tfcloud.settings",
                 "tfcloud.tuning")
    found = [(line, target) for line, target, _ in _imports(path) if target.startswith(forbidden)]
    assert found == []


def test_nothing_below_the_edge_imports_the_dashboard() -> None:
    found = [(_module(path), line) for path in SOURCES if _module(path) not in EDGE
             for line, target, _ in _imports(path) if target.startswith("tfcloud.ui")]
    assert found == []
