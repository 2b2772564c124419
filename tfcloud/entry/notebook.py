"""Notebook entry points: a ``.ipynb`` file in, one self-contained Python script out.

Each code cell goes through IPython's own input transformer (the one a Jupyter kernel uses), so everything
IPython accepts is parsed the way IPython parses it: ``!cmd``, ``x = !cmd``, ``%magic``, ``%%magic`` cells,
``x?`` and, for single-line cells, automagic (``pip install x``, ``cd data``). The result is checked here,
before anything is built or submitted; the job then runs it with a small stand-in for IPython's shell at the
top of the script (``templates/notebook_shim.py.j2``), so the job needs neither IPython nor Jupyter.

What happens to each kind of IPython syntax (the table in docs/notebooks.md says the same):

- shell lines (``!cmd``, ``!!cmd``, ``x = !cmd``, ``%sx``, ``%system``, ``%%bash``, ``%%sh``, ``%%script``,
  the default aliases ``%ls``, ``%cp``...) run in the job in order, their output in the job's log, with
  IPython's ``$name`` / ``{expr}`` expansion;
- ``%pip install`` and ``!pip install`` lines become the job's requirements and do nothing in the job;
- ``%env``, ``%set_env``, ``%cd``, ``%pwd``, ``%pushd``, ``%popd``, ``%%writefile`` / ``%%file`` do what
  they do in Jupyter; ``%time``, ``%%time``, ``%prun``, ``%%prun``, ``%%capture`` and ``%run`` run their
  code as in Jupyter;
- display and interactive magics (``%matplotlib``, ``%timeit``, ``%load_ext``, ``%tensorboard``,
  ``%%html``...) are dropped, each with one note;
- anything else raises :class:`~tfcloud.errors.NotebookError`.

**Cell numbers.** "Cell N" is the cell's position in the notebook counting every cell, Markdown and raw
included, from 1 at the top: the N-th cell you scroll past. Lines count from 1 within the cell. Where the
saved notebook has an execution count, the message shows it too (``In [7]``).

Markdown and raw cells are ignored, outputs are never read, and cells tagged ``tfcloud-skip`` are left out.
"""

from __future__ import annotations

import ast
import builtins
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfcloud.config.docsite import page
from tfcloud.entry.ipysyntax import (
    BLOCK_CELLS,
    DROPPED_CELL_MAGICS,
    DROPPED_LINE_MAGICS,
    ENV_FILE_LINE,
    REJECTED,
    RUN_CODE_LINE,
    SCRIPT_CELLS,
    SHELL_ALIASES,
    SHELL_CELLS,
    bound_names,
    cell_magic_call,
    ipython_line_magics,
    is_shell_call,
    prun_statement,
    string_continuation_lines,
    transform,
)
from tfcloud.entry.pipmagic import PipLineError, parse_pip_install
from tfcloud.entry.pipmagic import quote as _quote
from tfcloud.entry.pipmagic import shell_tokens as _shell_tokens
from tfcloud.errors import NotebookError, ValidationError, require

__all__ = [
    "DROPPED_CELL_MAGICS",
    "DROPPED_LINE_MAGICS",
    "SKIP_TAG",
    "ConvertedNotebook",
    "check_notebook",
    "convert_notebook",
]

#: Cells carrying this tag (cell metadata ``tags``) are left out of the job.
SKIP_TAG = "tfcloud-skip"

_SKIP_HINT = (f"Remove it, or tag the cell `{SKIP_TAG}` to leave the cell out of the job (see "
              f"{page('notebooks')}).")


@dataclass(frozen=True, kw_only=True)
class ConvertedNotebook:
    """A notebook turned into a script.

    - ``script``: the Python source the job runs (self-contained: standard library only).
    - ``requirements``: from ``%pip install`` / ``!pip install`` lines, in order, without duplicates;
      each is one line of a requirements file (a requirement, ``-e PATH``, or an index option).
    - ``notes``: one line per thing the conversion did, for the dry-run plan.
    """

    source: Path
    script: str
    requirements: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def convert_notebook(path: Path) -> ConvertedNotebook:
    """Convert the notebook at ``path``. Raises :class:`NotebookError` naming the cell and line of the first
    thing that cannot run in a job (a syntax error, an unsupported magic)."""
    require("IPython", feature="Running a notebook", extra="notebook")
    path = Path(path)
    nb = check_notebook(path, require_code=False)
    return _Converter(path, nb).convert()


_NOTEBOOK_EXPECTED = "a Jupyter notebook (.ipynb, nbformat 4) with at least one code cell"


def _bad(path: Path, reason: str) -> ValidationError:
    return ValidationError("entry_point", _NOTEBOOK_EXPECTED, f"<{path.name}: {reason}>",
                           hint="Open and save it again in Jupyter, or pass a .py script as entry_point.")


def check_notebook(path: Path, *, require_code: bool = True) -> Any:
    """Read the notebook and check its structure (what conversion relies on); return it, as nbformat 4.

    Refused with a :class:`ValidationError` on ``entry_point``: a file that is not UTF-8 JSON, JSON that is
    not a notebook, cells of the wrong shape, and (``require_code``) a notebook without a non-empty code cell
    that is not skipped."""
    import json

    require("nbformat", feature="Running a notebook", extra="notebook")
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _bad(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise _bad(path, "not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise _bad(path, f"not valid JSON ({str(exc)[:200]})") from None
    if not isinstance(data, dict):
        raise _bad(path, f"a JSON {type(data).__name__}, not a notebook object")
    major = data.get("nbformat")
    if not isinstance(major, int) or isinstance(major, bool) or major not in (3, 4):
        raise _bad(path, f"nbformat {major!r} (tfcloud reads nbformat 3 and 4)")
    try:
        nb = _read(path)
    except NotebookError as exc:
        cause = exc.__cause__
        raise _bad(path, f"nbformat cannot read it ({type(cause).__name__}: {str(cause)[:200]})"
                   if cause is not None else exc.message) from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise _bad(path, "no list of cells")
    meta = nb.get("metadata", {})
    if not isinstance(meta, dict) or not all(isinstance(meta.get(k) or {}, dict)
                                             for k in ("kernelspec", "language_info")):
        raise _bad(path, "notebook metadata of the wrong shape")
    runnable = 0
    for index, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise _bad(path, f"cell {index} is not a cell (no cell_type)")
        source = cell.get("source", "")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            raise _bad(path, f"cell {index}'s source is neither a string nor a list of strings")
        metadata = cell.get("metadata", {})
        tags = metadata.get("tags", []) if isinstance(metadata, dict) else None
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise _bad(path, f"cell {index}'s metadata or tags are of the wrong shape")
        count = cell.get("execution_count")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
            raise _bad(path, f"cell {index}'s execution_count is not a number")
        text = "".join(source) if isinstance(source, list) else source
        if "\0" in text:
            raise _bad(path, f"cell {index} holds a NUL byte")
        if cell["cell_type"] == "code" and text.strip() and SKIP_TAG not in tags:
            runnable += 1
    if require_code and not runnable:
        raise _bad(path, "no code cell to run")
    return nb


def _read(path: Path) -> Any:
    import nbformat as nbformat_module

    nbformat: Any = nbformat_module
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # missing cell ids, old minor versions: not the user's problem here
            return nbformat.read(path, as_version=4)
    except OSError as exc:
        raise NotebookError(f"Cannot read the notebook {path}: {exc.strerror or exc}.") from exc
    except Exception as exc:  # nbformat raises JSON, validation and version errors of many types
        raise NotebookError(
            f"{path.name} is not a Jupyter notebook nbformat can read ({type(exc).__name__}: {exc}). "
            "Open and save it again in Jupyter, or pass a .py script as entry_point."
        ) from exc


# ---------------------------------------------------------------------------------------------------------


@dataclass
class _Converter:
    path: Path
    nb: Any
    requirements: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    requirement_calls: set[tuple[str, str]] = field(default_factory=set)
    bound: set[str] = field(default_factory=set)
    written: dict[str, str] = field(default_factory=dict)
    futures: list[str] = field(default_factory=list)
    imports_ipython: bool = False
    known_line_magics: set[str] = field(default_factory=set)
    # the cell being converted
    cell: int = 0
    label: str = ""
    cell_lines: list[str] = field(default_factory=list)

    def convert(self) -> ConvertedNotebook:
        from tfcloud._version import __version__
        from tfcloud.entry.templates import render

        self._check_language()
        self.known_line_magics = (
            ipython_line_magics() | set(DROPPED_LINE_MAGICS) | set(REJECTED) | set(SHELL_ALIASES)
        )
        cells: list[dict[str, Any]] = []
        for index, cell in enumerate(self.nb.cells, start=1):
            if cell.get("cell_type") != "code":
                continue
            self.cell = index
            count = cell.get("execution_count")
            self.label = f"{self.path.name}, cell {index}" + (f" (In [{count}])" if count else "")
            source = cell.get("source", "")
            if isinstance(source, list):
                source = "".join(source)
            tags = cell.get("metadata", {}).get("tags", [])
            if SKIP_TAG in tags:
                self.notes.append(f"cell {index}: left out (tagged {SKIP_TAG}).")
                continue
            if not source.strip():
                continue
            self.cell_lines = source.splitlines()
            lines = self._convert_code(source, first_line=1)
            cells.append({"number": index, "count": count, "code": "\n".join(lines).rstrip("\n")})
        if self.imports_ipython and "ipython" not in self.requirements:
            self.requirements.append("ipython")
            self.notes.append("requirement ipython added: the notebook imports IPython.")
        script = render(
            "notebook_script.py.j2",
            version=__version__,
            notebook=self.path.name,
            futures=self.futures,
            cells=cells,
            requirement_calls=sorted(self.requirement_calls),
            dropped_line=sorted(DROPPED_LINE_MAGICS),
            dropped_cell=sorted(DROPPED_CELL_MAGICS),
            aliases=SHELL_ALIASES,
        )
        try:
            compile(script, f"<{self.path.name} converted>", "exec", dont_inherit=True)
        except SyntaxError as exc:  # pragma: no cover - a tfcloud bug, not the user's
            raise NotebookError(
                f"tfcloud produced invalid Python from {self.path.name} (line {exc.lineno}: {exc.msg}). "
                "Please report this with the notebook attached."
            ) from exc
        return ConvertedNotebook(
            source=self.path,
            script=script,
            requirements=tuple(dict.fromkeys(self.requirements)),
            notes=tuple(self.notes),
        )

    def _check_language(self) -> None:
        meta = self.nb.get("metadata", {})
        language = (meta.get("kernelspec", {}) or {}).get("language") or (
            meta.get("language_info", {}) or {}
        ).get("name")
        if language and str(language).lower() not in ("python", "python3", "ipython", "ipython3"):
            raise NotebookError(
                f"{self.path.name} is a {language} notebook (its kernel's language); tfcloud runs Python "
                "notebooks."
            )

    # -- errors and notes ----------------------------------------------------------------------------

    def _error(self, line: int, what: str, *, hint: str | None = None) -> NotebookError:
        message = f"{self.label}, line {line}: {what}"
        if hint:
            message += f"\n{hint}"
        return NotebookError(message, cell=self.cell, line=line)

    def _note(self, line: int, what: str) -> None:
        self.notes.append(f"cell {self.cell}, line {line}: {what}")

    # -- one cell (or the body of a cell magic) -------------------------------------------------------

    def _transformed(self, source: str, *, first_line: int) -> tuple[str, list[int]]:
        """:func:`~tfcloud.entry.ipysyntax.transform`, its tokenizer's errors (a bad unindent beside a magic) as this
        cell's error."""
        try:
            return transform(source)
        except SyntaxError as exc:
            at = exc.lineno or 1
            lines = source.splitlines()
            text = lines[at - 1].strip() if 0 < at <= len(lines) else ""
            raise self._error(first_line - 1 + at, exc.msg + (f": {_quote(text)}" if text else "")) from None

    def _convert_code(self, source: str, *, first_line: int) -> list[str]:
        code, origin = self._transformed(source, first_line=first_line)
        automagic = self._automagic(code)
        if automagic is not None:
            code, origin = self._transformed(automagic, first_line=first_line)
            self._note(first_line + origin[0] - 1, f"{_quote(source)} runs as {_quote(automagic)} "
                       "(IPython's automagic).")
        origin = [first_line - 1 + o for o in origin]
        tree = self._parse(code, origin)
        magic = cell_magic_call(tree)
        if magic is not None:
            return self._cell_magic(*magic, code=code, source=source, at=origin[0])
        self._check_calls(tree, origin)
        self.bound |= bound_names(tree)
        lines = code.rstrip("\n").split("\n")
        return self._hoist_futures(tree, lines)

    def _automagic(self, code: str) -> str | None:
        """IPython's automagic for single-line cells (``pip install x``, ``cd data``): the same rule as its
        prefilter, with names bound in earlier cells standing for the user's namespace."""
        from IPython.core.splitinput import LineInfo

        if code.count("\n") != 1 or "get_ipython()" in code:
            return None
        line = code.strip()
        info = LineInfo(line)
        if info.esc or info.pre or not info.ifun or info.ifun not in self.known_line_magics:
            return None
        head = info.ifun.split(".", 1)[0]
        if head in self.bound or hasattr(builtins, head):
            return None
        if info.the_rest and info.the_rest[0] in "=,":
            return None
        return "%" + line

    def _parse(self, code: str, origin: list[int]) -> ast.Module:
        try:
            compile(code, self.label, "exec", dont_inherit=True)
            return ast.parse(code)
        except SyntaxError as exc:
            lineno = exc.lineno or 1
            line = origin[min(lineno, len(origin)) - 1] if origin else 1
            text = self.cell_lines[line - 1].strip() if 0 < line <= len(self.cell_lines) else ""
            what = f"{exc.msg}" + (f": {_quote(text)}" if text else "")
            hint = None
            if "await" in (exc.msg or "") and "outside" in (exc.msg or ""):
                hint = ("Jupyter runs top-level `await`; a script cannot. Wrap the code in an `async def` and "
                        "run it with `asyncio.run(...)`.")
            raise self._error(line, what, hint=hint) from None

    def _hoist_futures(self, tree: ast.Module, lines: list[str]) -> list[str]:
        """``from __future__`` imports must come first in a script: move them to its top."""
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                statement = ast.get_source_segment("\n".join(lines), node) or ""
                if node.lineno == node.end_lineno and lines[node.lineno - 1].strip() == statement:
                    self.futures.extend(a.name for a in node.names if a.name not in self.futures)
                    lines[node.lineno - 1] = lines[node.lineno - 1].replace(
                        statement, "pass  # tfcloud: moved to the top of the script: " + statement
                    )
        return lines

    # -- calls IPython's transformer produced (and the notebook's own get_ipython() calls) -------------

    def _check_calls(self, tree: ast.Module, origin: list[int]) -> None:
        nodes = sorted(ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                names = [module] if module else [a.name for a in node.names]
                if any(n and n.split(".")[0] == "IPython" for n in names):
                    self.imports_ipython = True
                continue
            if not (isinstance(node, ast.Call) and is_shell_call(node.func)):
                continue
            assert isinstance(node.func, ast.Attribute)
            method = node.func.attr
            args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
            line = origin[min(node.lineno, len(origin)) - 1]
            if method in ("system", "getoutput") and args and isinstance(args[0], str):
                self._shell_line(method, args[0], line)
            elif method == "run_line_magic" and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
                self._line_magic(str(args[0]), str(args[1]), line)
            elif method == "run_cell_magic" and args and isinstance(args[0], str):
                name = args[0]
                if name not in SCRIPT_CELLS | SHELL_CELLS | {"writefile", "file"} | set(DROPPED_CELL_MAGICS):
                    raise self._error(line, f"`%%{name}` cannot run in a job.", hint=_SKIP_HINT)

    def _shell_line(self, method: str, command: str, line: int) -> None:
        shown = ("!!" if method == "getoutput" else "!") + command
        if self._pip(command, line, shown=shown) is not None:
            self.requirement_calls.add((method, command))
            return
        if re.search(r"\bpip3?\s+install\b", command):
            self._note(line, f"{_quote(shown)} runs in the job as a shell command: it installs packages while the "
                       "job runs (a `!pip install` line of its own would install them with the image).")
            return
        self._note(line, f"{_quote(shown)} runs in the job as a shell command.")

    def _line_magic(self, name: str, args: str, line: int) -> None:
        shown = f"%{name} {args.strip()}".rstrip()
        if name in ("pip", "uv"):
            command = ("pip " if name == "pip" else "uv ") + args
            if self._pip(command, line, shown=shown) is not None:
                self.requirement_calls.add((name, args))
            else:
                self._note(line, f"{_quote(shown)} runs in the job.")
        elif name in SHELL_ALIASES or name in ("sx", "system"):
            self._shell_line("system", args if name in ("sx", "system") else f"{name} {args}".strip(), line)
        elif name in ENV_FILE_LINE:
            self._note(line, f"{_quote(shown)} runs in the job as in Jupyter.")
        elif name in RUN_CODE_LINE:
            self._check_statement(name, args, line)
        elif name == "run":
            self._check_run(args, line)
            self._note(line, f"{_quote(shown)} runs in the job as in Jupyter.")
        elif name in DROPPED_LINE_MAGICS:
            self._note(line, f"{_quote(shown)} dropped ({DROPPED_LINE_MAGICS[name]}).")
        elif name in REJECTED:
            raise self._error(line, f"{_quote(shown)} cannot run in a job: {REJECTED[name]}.", hint=_SKIP_HINT)
        else:
            raise self._error(line, f"{_quote(shown)}: `%{name}` is not a magic tfcloud can run in a job.",
                              hint=_SKIP_HINT)

    def _check_statement(self, name: str, statement: str, line: int) -> None:
        if name == "prun":
            statement = prun_statement(statement)
        code, _ = self._transformed(statement, first_line=line)
        if code.strip() != statement.strip():
            raise self._error(line, f"`%{name}` of IPython syntax ({_quote(statement)}) cannot run in a job.",
                              hint="Time plain Python, or put the shell line or magic on its own line.")
        try:
            compile(statement.strip() + "\n", self.label, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise self._error(line, f"{exc.msg}: {_quote(statement)}") from None

    def _check_run(self, args: str, line: int) -> None:
        tokens = _shell_tokens(args) or []
        target = None
        for i, token in enumerate(tokens):
            if token in ("-i", "-n", "-e", "-t"):
                continue
            if token == "-m":
                target = tokens[i + 1] if i + 1 < len(tokens) else None
                break
            if token.startswith("-"):
                raise self._error(line, f"`%run {args.strip()}`: the option {token} cannot be used in a job.",
                                  hint="tfcloud's %run knows -i, -n, -e, -t and -m.")
            target = token
            break
        if target is None:
            raise self._error(line, f"`%run {args.strip()}`: expected a script to run.")
        if target.endswith(".ipynb"):
            raise self._error(
                line, f"`%run {target}` cannot run in a job: it runs another notebook.",
                hint="Convert that notebook to a script (`jupyter nbconvert --to script`) and %run the .py file.",
            )

    # -- pip ---------------------------------------------------------------------------------------------

    def _pip(self, command: str, line: int, *, shown: str) -> list[str] | None:
        """The requirements a ``pip install`` command names (:mod:`tfcloud.entry.pipmagic`), now the job's; None
        when ``command`` is not one."""
        try:
            found = parse_pip_install(command, shown=shown, folder=self.path.parent, written=self.written)
        except PipLineError as exc:
            raise self._error(line, exc.what, hint=exc.hint) from None
        if found is None:
            return None
        for name, origin in found.files:
            self._note(line, f"requirements read from {name} ({origin}).")
        for requirement in found.requirements:
            if requirement not in self.requirements:
                self.requirements.append(requirement)
        listed = ", ".join(found.requirements) if found.requirements else "nothing"
        self._note(line, f"{_quote(shown)} → the job's requirements: {listed} (installed before the job starts).")
        return list(found.requirements)

    # -- %%magic cells -----------------------------------------------------------------------------------

    def _cell_magic(self, name: str, args: str, body: str, *, code: str, source: str, at: int) -> list[str]:
        shown = f"%%{name} {args.strip()}".rstrip()
        body_line = at + 1
        if name in BLOCK_CELLS:
            header = self._block_header(name, args, at)
            self._note(at, f"{_quote(shown)} runs its cell as in Jupyter.")
            inner = self._convert_code(body, first_line=body_line) if body.strip() else ["pass"]
            inside = string_continuation_lines("\n".join(inner) + "\n")
            indented = [ln if (i in inside or not ln.strip()) else "    " + ln for i, ln in enumerate(inner, 1)]
            return [header, *indented]
        if name in DROPPED_CELL_MAGICS:
            self._note(at, f"{_quote(shown)} cell dropped ({DROPPED_CELL_MAGICS[name]}).")
            return [f"pass  # tfcloud: dropped ({DROPPED_CELL_MAGICS[name]})",
                    *("# " + ln for ln in source.rstrip("\n").split("\n"))]
        if name in ("writefile", "file"):
            self._check_writefile(args, body, at, shown)
        elif name in SCRIPT_CELLS:
            self._check_script(name, args, at, shown)
            if re.search(r"\bpip3?\s+install\b", body):
                self._note(at, f"the {_quote(shown)} cell installs packages while the job runs; a `%pip "
                           "install` line would install them with the image instead.")
        elif name in SHELL_CELLS:
            self._note(at, f"{_quote(shown)} cell runs in the job as a shell script.")
        elif name in REJECTED:
            raise self._error(at, f"{_quote(shown)} cannot run in a job: {REJECTED[name]}.", hint=_SKIP_HINT)
        else:
            raise self._error(at, f"{_quote(shown)}: `%%{name}` is not a cell magic tfcloud can run in a job.",
                              hint=_SKIP_HINT)
        return code.rstrip("\n").split("\n")

    def _block_header(self, name: str, args: str, at: int) -> str:
        target = ""
        if name == "capture":
            tokens = _shell_tokens(args) or []
            flags = {"--no-stdout", "--no-stderr", "--no-display"}
            names = [t for t in tokens if t not in flags]
            bad = [t for t in names if t.startswith("-") or not t.isidentifier()]
            if bad or len(names) > 1:
                raise self._error(at, f"`%%capture {args.strip()}`: expected the options --no-stdout, "
                                  "--no-stderr, --no-display and at most one variable name.")
            if names:
                target = f" as {names[0]}"
                self.bound.add(names[0])
        elif name == "time" and args.strip():
            self._check_statement(name, args, at)
        return f"with get_ipython().magic_block({name!r}, {args!r}){target}:"

    def _check_writefile(self, args: str, body: str, at: int, shown: str) -> None:
        tokens = _shell_tokens(args) or []
        names = [t for t in tokens if t not in ("-a", "--append")]
        if len(names) != 1 or names[0].startswith("-"):
            raise self._error(at, f"{_quote(shown)}: expected `%%writefile [-a] FILENAME`.")
        append = len(names) != len(tokens)
        if not re.search(r"\$|\{", names[0]):
            self.written[names[0]] = (self.written.get(names[0], "") if append else "") + body
        self._note(at, f"{_quote(shown)} writes the file in the job, as in Jupyter.")

    def _check_script(self, name: str, args: str, at: int, shown: str) -> None:
        tokens = _shell_tokens(args) or []
        i = 0
        program = name if name != "script" else None
        while i < len(tokens):
            token = tokens[i]
            if token in ("--out", "--err", "--proc"):
                if i + 1 >= len(tokens) or not tokens[i + 1].isidentifier():
                    raise self._error(at, f"{_quote(shown)}: {token} expects a variable name.")
                i += 2
                continue
            if token in ("--no-raise-error", "--bg"):
                i += 1
                continue
            if token.startswith("-") or program is not None:
                raise self._error(at, f"{_quote(shown)}: unexpected argument {token}.")
            program = token
            i += 1
        if program is None:
            raise self._error(at, f"{_quote(shown)}: expected the program to run (`%%script bash`).")
        self._note(at, f"{_quote(shown)} cell runs in the job with {program}.")
