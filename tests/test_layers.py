"""The package's layers only import downwards: cli → sdk/api → pipeline/plan → stages and backends → values.

Read from the source (no imports run), so a new module that reaches back up fails here with its line. The
nevers: the build stages never import a target; a target never imports another target, nor the presentation
(CLI, console, log printers, rich, plan and study printers); validate never imports a target's internals and no
target imports validate (the checks both use sit below both, in checks.py); no target imports anything above
the targets (the pipeline, the SDK, where, the registry: what it needs from there comes in as an argument); the CLI
never imports a module inside a target's package; no two modules import each other
(directly or round a circle), not even when every edge a reader follows counts (imports under ``if
TYPE_CHECKING:`` and the registry's ``"module:Class"`` strings: :func:`_strict_graph`); and every edge between
the package's rooms (``ls tfcloud/``) is one docs/architecture.md draws, and each it draws is there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tfcloud"
#: The edge of the package: these may import anything (the dashboard, ``tfcloud ui``, is an edge as the CLI is:
#: it reads everything through the SDK, :func:`test_the_cli_and_the_dashboard_call_the_sdk_only`).
EDGE = {"tfcloud", "tfcloud.cli", "tfcloud.api", "tfcloud.sdk", "tfcloud.__main__", "tfcloud.ui", "tfcloud.ui.app",
        "tfcloud.ui.command", "tfcloud.ui.server", "tfcloud.ui.views", "tfcloud.ui.logroutes",
        "tfcloud.ui.jobdata", "tfcloud.ui.records", "tfcloud.ui.logstream"}
EDGE |= {"tfcloud.view.printers", "tfcloud.view.following"}  # what people see: plans, studies, a followed job
EDGE |= {"tfcloud.flow.clusters"}  # the SDK's cluster functions: they resolve the target (where) for the vertex package
#: The command-line package: every module in it is part of the edge.
CLI = "tfcloud.cli"
#: Modules that sequence stages: only the edge (and plan, which runs the pure stages) may import them.
ORCHESTRATION = {"tfcloud.flow.pipeline", "tfcloud.flow.plan"}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, *, top_level_only: bool = False,
             type_checking: bool = True) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) for every ``import`` and ``from ... import`` in the file, nested ones included
    (``top_level_only``: only those that run when the module is imported; ``type_checking`` False: without
    those under ``if TYPE_CHECKING:``, which never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str, tuple[str, ...]]] = []
    for node in _nodes(tree, top_level_only=top_level_only, type_checking=type_checking):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module, tuple(alias.name for alias in node.names)))
    return found


def _nodes(node: ast.AST, *, top_level_only: bool, type_checking: bool) -> Iterator[ast.AST]:
    for child in ast.iter_child_nodes(node):
        if not type_checking and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            yield from (n for stmt in child.orelse for n in _nodes_of(stmt, top_level_only, type_checking))
            continue
        if top_level_only and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        yield child
        yield from _nodes(child, top_level_only=top_level_only, type_checking=type_checking)


def _nodes_of(stmt: ast.AST, top_level_only: bool, type_checking: bool) -> Iterator[ast.AST]:
    yield stmt
    yield from _nodes(stmt, top_level_only=top_level_only, type_checking=type_checking)


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "emulator" not in p.parts and "testing" not in p.parts)
#: Every module of the package, the emulator and the test helpers included.
ALL_SOURCES = sorted(PACKAGE.rglob("*.py"))
MODULES = {_module(p): p for p in ALL_SOURCES}
#: The build stages: from the build context to an image. A target runs an image; a build never knows where.
BUILD = ("tfcloud.image",)
#: What prints for people; a target returns values and lines, the edge prints them.
PRESENTATION = ("tfcloud.cli", "tfcloud.view.console", "tfcloud.view.tuneview", "tfcloud.flow.plan", "rich")
#: The printers of :mod:`tfcloud.view.logview` (its readers, such as ``last_lines``, are not presentation).
LOG_PRINTERS = {"LogPrinter", "print_lines", "replica_color"}


def _is(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


#: The built-in targets' packages (the registry's ``BUILTIN`` strings name them; the Vertex AI target lives in the
#: Google wing): :func:`test_the_target_packages_are_the_registrys` keeps this in step.
TARGET_PACKAGES = {"tfcloud.targets.local": "local", "tfcloud.targets.ray": "ray", "tfcloud.google.vertex": "vertex"}


def _target_of(module: str, names: tuple[str, ...] = ()) -> set[str]:
    """The target packages (``TARGET_PACKAGES``) an import of ``module`` (``names`` from it) reaches;
    ``tfcloud.targets`` itself and its ``_private`` helper modules are shared, not a target's."""
    reached = [f"{module}.{name}" for name in names] + [module]
    return {target for name in reached for package, target in TARGET_PACKAGES.items() if _is(name, package)}


def test_the_target_packages_are_the_registrys() -> None:
    from tfcloud.targets import BUILTIN

    assert {ref.partition(":")[0] for ref in BUILTIN.values()} == set(TARGET_PACKAGES)
    assert all((PACKAGE.parent / package.replace(".", "/")).is_dir() for package in TARGET_PACKAGES)


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
        if module.startswith(("tfcloud.backends", "tfcloud.image.builders")) and target in ("tfcloud.flow.validate",):
            problems.append(f"line {line}: a backend or builder imports {target}")
    assert problems == []


@pytest.mark.parametrize("path", [*sorted((PACKAGE / "cli").glob("*.py")), *sorted((PACKAGE / "ui").glob("*.py"))],
                         ids=lambda p: _module(p))
def test_the_cli_and_the_dashboard_call_the_sdk_only(path: Path) -> None:
    forbidden = ("tfcloud.backends", "tfcloud.flow.pipeline", "tfcloud.flow.validate", "tfcloud.job.spec",
                 "tfcloud.flow.settings", "tfcloud.targets.local.tuning")
    found = [(line, target) for line, target, _ in _imports(path) if target.startswith(forbidden)]
    assert found == []


@pytest.mark.parametrize("path", sorted((PACKAGE / "cli").glob("*.py")), ids=lambda p: _module(p))
def test_the_cli_never_imports_a_targets_modules(path: Path) -> None:
    """A command reaches a target through the SDK's edge (``tfcloud cluster``: :mod:`tfcloud.flow.clusters`), never a
    module inside a target's package (``tfcloud.google.vertex.clusters``)."""
    found = [(line, target) for line, target, names in _imports(path) if _a_targets_module(target, names)]
    assert found == []


def _a_targets_module(module: str, names: tuple[str, ...] = ()) -> bool:
    """Whether importing ``module`` (``names`` from it) reaches a module inside a target's package
    (``tfcloud.google.vertex.clusters``, or ``clusters`` from ``tfcloud.google.vertex``)."""
    reached = [f"{module}.{name}" for name in names if f"{module}.{name}" in MODULES] or [module]
    return any(name.startswith(package + ".") for name in reached for package in TARGET_PACKAGES)


def test_nothing_below_the_edge_imports_the_dashboard() -> None:
    found = [(_module(path), line) for path in SOURCES
             if _module(path) not in EDGE and not _module(path).startswith(CLI + ".")
             for line, target, _ in _imports(path) if target.startswith("tfcloud.ui")]
    assert found == []


@pytest.mark.parametrize("path", [p for p in ALL_SOURCES if _is(_module(p), *BUILD)], ids=lambda p: _module(p))
def test_a_build_stage_never_imports_a_target(path: Path) -> None:
    found = [f"line {line}: imports {target}" for line, target, _ in _imports(path)
             if _is(target, "tfcloud.targets", "tfcloud.backends")]
    assert found == []


TARGET_SOURCES = [p for p in ALL_SOURCES if _target_of(_module(p))]


@pytest.mark.parametrize("path", TARGET_SOURCES, ids=lambda p: _module(p))
def test_a_target_never_imports_another_target(path: Path) -> None:
    (own,) = _target_of(_module(path))
    found = [f"line {line}: imports {target} (target {other})" for line, target, names in _imports(path)
             for other in sorted(_target_of(target, names) - {own})]
    assert found == []


@pytest.mark.parametrize("path", TARGET_SOURCES, ids=lambda p: _module(p))
def test_a_target_never_imports_the_presentation(path: Path) -> None:
    found = [f"line {line}: imports {target}" for line, target, names in _imports(path)
             if _is(target, *PRESENTATION) or (target == "tfcloud.view.logview" and LOG_PRINTERS & set(names))
             or (target == "tfcloud" and {"cli", "console", "tuneview", "plan"} & set(names))]
    assert found == []


@pytest.mark.parametrize("path", [p for p in SOURCES if _module(p).startswith("tfcloud.targets")],
                         ids=lambda p: _module(p))
def test_no_target_calls_the_gate_back(path: Path) -> None:
    """The gate (validate) calls the targets; a target never calls the gate: the checks both use (buckets, labels,
    settings, credentials) sit below both, in :mod:`tfcloud.job.checks`."""
    found = [f"line {line}: imports {target}" for line, target, _ in _imports(path)
             if target == "tfcloud.flow.validate"]
    assert found == []


#: What sits above every target: the stages' sequence, the gate, the SDK and where a verb's target is resolved.
ABOVE_THE_TARGETS = ("tfcloud.flow.pipeline", "tfcloud.flow.validate", "tfcloud.sdk", "tfcloud.flow.where")
#: The registry: the package ``tfcloud.targets`` itself and its helpers that read it (a target's own package and
#: the shared modules below the registry, ``_base`` and ``_shared``, are not it).
REGISTRY = {"tfcloud.targets", "tfcloud.targets._given"}
#: The modules below the registry: every target's package, and what they share.
BELOW_THE_REGISTRY = [p for p in ALL_SOURCES if _target_of(_module(p))
                      or _module(p) in ("tfcloud.targets._base", "tfcloud.targets._shared")]


def _above_the_targets(module: str, names: tuple[str, ...] = ()) -> bool:
    """Whether an import of ``module`` (``names`` from it) reaches above the targets: the pipeline, validate, the
    SDK, where, or the registry (``import tfcloud.targets``, ``from tfcloud.targets import ...``)."""
    if _is(module, *ABOVE_THE_TARGETS) or module in REGISTRY:
        return True
    return module == "tfcloud" and bool({"pipeline", "validate", "sdk", "where", "targets"} & set(names))


@pytest.mark.parametrize("path", BELOW_THE_REGISTRY, ids=lambda p: _module(p))
def test_a_target_imports_only_the_layers_below_it(path: Path) -> None:
    """A target's package (and ``_base``, ``_shared``) never imports the pipeline, validate, the SDK, where or the
    registry, not even inside a function or under ``TYPE_CHECKING``: what it needs from above is passed in
    through its declared interface (the local tuner's trials: :data:`tfcloud.job.study.SubmitTrial`; the cluster
    functions' target: resolved by :mod:`tfcloud.flow.clusters`)."""
    found = [f"line {line}: imports {target}" for line, target, names in _imports(path)
             if _above_the_targets(target, names)]
    assert found == []


def test_validate_never_imports_a_targets_internals() -> None:
    found = [f"line {line}: imports {target}" for line, target, names in _imports(PACKAGE / "flow" / "validate.py")
             if _target_of(target, names)]
    assert found == []


def test_the_rules_see_what_they_forbid() -> None:
    """The helpers above would find the imports they forbid (a rule that sees nothing passes for nothing)."""
    assert _target_of("tfcloud.targets.local.backend") == {"local"}
    assert _target_of("tfcloud.targets", ("local", "LocalTarget")) == {"local"}
    assert _target_of("tfcloud.targets._values") == set() and _target_of("tfcloud.google.rules") == set()
    assert _target_of("tfcloud.google", ("vertex", "rules")) == {"vertex"}
    assert _target_of("tfcloud.replicas") == set()
    assert _is("rich.console", *PRESENTATION) and not _is("tfcloud.planner", *PRESENTATION)
    assert len(TARGET_SOURCES) >= 3 and any(_is(_module(p), "tfcloud.image.builders") for p in ALL_SOURCES)
    assert _above_the_targets("tfcloud.flow.pipeline", ("submit",)) and _above_the_targets("tfcloud.flow.where")
    assert _above_the_targets("tfcloud.targets", ("Target",)) and _above_the_targets("tfcloud", ("sdk",))
    assert _above_the_targets("tfcloud.targets._given") and _above_the_targets("tfcloud.flow.validate.x")
    assert not _above_the_targets("tfcloud.targets._base") and not _above_the_targets("tfcloud.targets.local.backend")
    assert not _above_the_targets("tfcloud.pipelines") and not _above_the_targets("tfcloud", ("_version",))
    assert {_module(p) for p in BELOW_THE_REGISTRY} >= {"tfcloud.targets._base", "tfcloud.targets.local.tuning",
                                                         "tfcloud.google.vertex.clusters"}
    assert not {_module(p) for p in BELOW_THE_REGISTRY} & REGISTRY
    assert _a_targets_module("tfcloud.google.vertex", ("clusters",))
    assert _a_targets_module("tfcloud.google.vertex.clusters", ("cluster_price",))
    assert not _a_targets_module("tfcloud.google.vertex", ("VertexTarget",))
    assert not _a_targets_module("tfcloud.flow.clusters")


def test_the_target_rule_sees_imports_in_functions_and_type_checking(tmp_path: Path) -> None:
    """The imports the local tuner and the cluster functions had (inside a function, and under ``if
    TYPE_CHECKING:``) are what :func:`test_a_target_imports_only_the_layers_below_it` finds."""
    source = tmp_path / "module.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import tfcloud.targets as targets\n"
                      "def run():\n    from tfcloud.flow.pipeline import submit\n"
                      "    from tfcloud.flow.where import resolve\n"
                      "    from tfcloud.targets._base import Target\n", encoding="utf-8")
    found = [(line, target) for line, target, names in _imports(source) if _above_the_targets(target, names)]
    assert found == [(3, "tfcloud.targets"), (5, "tfcloud.flow.pipeline"), (6, "tfcloud.flow.where")]


def _graph(*, top_level_only: bool) -> dict[str, set[str]]:
    """Module → the tfcloud modules it imports (``from tfcloud.x import y`` counts ``tfcloud.x.y`` when that
    is a module); imports under ``if TYPE_CHECKING:`` never run, so they are no edges."""
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        for _, target, names in _imports(path, top_level_only=top_level_only, type_checking=False):
            reached = [f"{target}.{name}" for name in names if f"{target}.{name}" in MODULES] or [target]
            for name in reached:
                while name and name not in MODULES:
                    name = name.rpartition(".")[0]
                if name and name != module and name != "tfcloud":  # every import runs the package's face first
                    edges.setdefault(module, set()).add(name)
    return edges


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(set(edges).union(*edges.values())):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("top_level_only", [True, False], ids=["module-level", "function-level-too"])
def test_no_import_circles(top_level_only: bool) -> None:
    """No circle among tfcloud's modules: neither through the imports that run at import time, nor counting
    the ones inside functions too (a circle there is a layering knot even when it happens not to fail)."""
    assert _circles(_graph(top_level_only=top_level_only)) == []


#: ``"tfcloud.module:attribute"`` strings: the registry's references (``BUILTIN``, ``Target.backend``/``tuner``),
#: imported when used; a reader follows them as imports.
_REFERENCE = re.compile(r"^(tfcloud(?:\.[A-Za-z_][A-Za-z0-9_]*)+):[A-Za-z_][A-Za-z0-9_.]*$")


def _strict_graph() -> dict[str, set[str]]:
    """Every edge a reader counts: imports at any level, those under ``if TYPE_CHECKING:`` too, and registry
    references (``"tfcloud.google.vertex:VertexTarget"``)."""
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        reached: list[str] = []
        for _, target, names in _imports(path, type_checking=True):
            reached += [f"{target}.{name}" for name in names if f"{target}.{name}" in MODULES] or [target]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _REFERENCE.match(node.value):
                reached.append(node.value.partition(":")[0])
        for name in reached:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module and name != "tfcloud":
                edges.setdefault(module, set()).add(name)
    return edges


def test_no_circle_in_the_strict_graph() -> None:
    """No circle either when every edge a reader follows counts: type-only imports and the registry's strings
    (issue 30, "gate below targets"). The spec names no target (the stages take the two side by side), the
    Settings value sits in :mod:`tfcloud.config.value`, and each target's value sits below its backend
    (``targets/<name>/value.py``), the package's class binding the two."""
    assert _circles(_strict_graph()) == []
    assert "tfcloud.google.vertex" in _strict_graph()["tfcloud.targets"]  # registry strings are edges
    assert "tfcloud.google.vertex.backend" in _strict_graph()["tfcloud.google.vertex"]  # and a target's too
    assert "tfcloud.job.spec" in _strict_graph()["tfcloud.targets._base"]  # an import under TYPE_CHECKING is one
    assert "tfcloud.job.spec" not in _graph(top_level_only=False)["tfcloud.targets._base"]  # (the loose graph's is not)


def test_the_circle_finder_finds_circles() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


#: Wings: an entry of ``ls tfcloud/`` whose own entries are rooms (the Google wing: catalog, rules, cloud, staging,
#: vertex).
WINGS = ("google",)


def _room(module: str) -> str:
    """The room of the house a module is in: the entry of ``ls tfcloud/`` that holds it (``tfcloud`` for the
    package's face, ``tfcloud/__init__.py``), or in a wing, the wing's entry (``google/rules``)."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] in WINGS:
        return f"{parts[1]}/{parts[2]}"
    return parts[1] if len(parts) > 1 else "tfcloud"


def _room_edges() -> dict[str, set[str]]:
    """Room → the rooms it imports: every edge of :func:`_strict_graph` (imports at any level, those under ``if
    TYPE_CHECKING:``, a package's ``__init__`` and the registry's strings), between two rooms."""
    rooms: dict[str, set[str]] = {}
    for module, targets in _strict_graph().items():
        for target in targets:
            if _room(module) != _room(target):
                rooms.setdefault(_room(module), set()).add(_room(target))
    return rooms


def _drawn_edges() -> dict[str, set[str]]:
    """The rooms' table of docs/architecture.md (between ``<!-- rooms -->`` and ``<!-- /rooms -->``): for each
    room (`` `name/` `` or `` `name.py` ``), the rooms it imports (its last column)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text.split("<!-- rooms -->", 1)[1].split("<!-- /rooms -->", 1)[0]
    drawn: dict[str, set[str]] = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        room = cells[0].strip("`").removeprefix("tfcloud/").removesuffix("/").removesuffix(".py")
        drawn[room] = {c.strip("` ").removeprefix("tfcloud/").removesuffix("/").removesuffix(".py")
                       for c in cells[-1].split(",")
                       if c.strip() and c.strip() != "—"}
    return drawn


def test_every_edge_between_the_rooms_is_drawn_and_each_drawn_is_there() -> None:
    """docs/architecture.md's rooms table is the house's plan: a room that imports one the table does not let it
    fails here with the modules that do, and an edge the table draws that no module makes is stale."""
    actual, drawn = _room_edges(), _drawn_edges()

    def entries(where: Path, prefix: str = "") -> set[str]:
        return {prefix + p.name.removesuffix(".py") for p in where.iterdir()
                if (p.suffix == ".py" or (p / "__init__.py").is_file()) and p.name != "__init__.py"}

    rooms = entries(PACKAGE) - set(WINGS) | {"tfcloud"}
    rooms |= {room for wing in WINGS for room in entries(PACKAGE / wing, f"{wing}/")} | set(WINGS)
    assert set(drawn) == rooms, "every room of ls tfcloud/ has its row"
    undrawn = sorted(f"{room} -> {other}" for room, others in actual.items() for other in others - drawn[room])
    stale = sorted(f"{room} -> {other}" for room, others in drawn.items() for other in others - actual.get(room, set()))
    assert (undrawn, stale) == ([], [])


def test_the_rooms_are_a_handful() -> None:
    """``ls tfcloud/`` shows the pipeline's rooms, not every module: at most 25 entries."""
    entries = [p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"
               and (p.is_file() or any(q.name != "__pycache__" for q in p.iterdir()))]  # not a stale bytecode dir
    assert len(entries) <= 25, sorted(entries)
