"""IPython's syntax as :mod:`tfcloud.entry.notebook` reads it: what each magic becomes in a job (the tables), and
IPython's own input transformer run step by step with a map from each output line back to the cell's line
(:func:`transform`), plus the small readers of what it writes (``get_ipython().run_cell_magic(...)``)."""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from typing import Any

__all__ = [
    "BLOCK_CELLS",
    "DROPPED_CELL_MAGICS",
    "DROPPED_LINE_MAGICS",
    "ENV_FILE_LINE",
    "REJECTED",
    "RUN_CODE_LINE",
    "SCRIPT_CELLS",
    "SHELL_ALIASES",
    "SHELL_CELLS",
    "bound_names",
    "cell_magic_call",
    "ipython_line_magics",
    "is_shell_call",
    "prun_statement",
    "string_continuation_lines",
    "transform",
]

_DISPLAY = "display only: nothing is shown in a job"
_INTERACTIVE = "interactive: there is no one at the keyboard in a job"
_SHELL_SETUP = "configures the interactive IPython shell, which a job does not have"

#: Line magics the job skips, and why (the reason is the note in the plan).
DROPPED_LINE_MAGICS: dict[str, str] = {
    **dict.fromkeys(
        ["matplotlib", "pprint", "precision", "colors", "xmode", "page", "pycat", "clear", "less", "more",
         "man", "watermark"],
        _DISPLAY,
    ),
    "tensorboard": "TensorBoard is not started in a job; the logs the job writes are kept",
    **dict.fromkeys(
        ["pinfo", "pinfo2", "pdef", "pdoc", "pfile", "psource", "psearch", "who", "whos", "who_ls",
         "history", "hist", "lsmagic", "magic", "quickref", "dhist", "tb", "notebook", "autosave",
         "qtconsole", "connect_info"],
        _INTERACTIVE,
    ),
    **dict.fromkeys(
        ["config", "autocall", "automagic", "autoawait", "doctest_mode", "load_ext", "reload_ext",
         "unload_ext", "autoreload", "aimport", "gui", "logstart", "logstop", "logon", "logoff", "logstate",
         "rehashx"],
        _SHELL_SETUP,
    ),
    "timeit": "a benchmark: the job does not time statements",
    "tensorflow_version": "Colab-only: the job uses the TensorFlow of its image",
}

#: Cell magics the job skips, and why.
DROPPED_CELL_MAGICS: dict[str, str] = {
    **dict.fromkeys(["html", "HTML", "javascript", "js", "latex", "markdown", "svg", "SVG"], _DISPLAY),
    "timeit": "a benchmark: the job does not time cells",
}

#: IPython's default shell aliases (``%ls`` and friends) and the commands they run.
SHELL_ALIASES: dict[str, str] = {
    "mkdir": "mkdir", "rmdir": "rmdir", "mv": "mv", "rm": "rm", "cp": "cp", "cat": "cat",
    "ls": "ls -F", "ll": "ls -F -o", "lf": "ls -F -o %l | grep ^-", "lk": "ls -F -o %l | grep ^l",
    "ldir": "ls -F -o %l | grep /$", "lx": "ls -F -o %l | grep ^-..x",
}  # fmt: skip

ENV_FILE_LINE = {"env", "set_env", "cd", "pwd", "pushd", "popd", "dirs", "killbgscripts"}
RUN_CODE_LINE = {"time", "prun"}
SCRIPT_CELLS = {"bash", "sh", "script", "perl", "ruby", "python", "python2", "python3", "pypy"}
SHELL_CELLS = {"sx", "system", "!"}
BLOCK_CELLS = {"time", "prun", "capture"}

REJECTED: dict[str, str] = {
    **dict.fromkeys(
        ["conda", "mamba", "micromamba"],
        "conda packages cannot be added to the job's image; use `%pip install`, or pass requirements_txt=",
    ),
    "pylab": "it fills the namespace with numpy and matplotlib names; import what the notebook uses instead "
    "(`import numpy as np`, `import matplotlib.pyplot as plt`)",
    **dict.fromkeys(["debug", "pdb"], "the debugger needs someone at the keyboard"),
    **dict.fromkeys(
        ["edit", "ed", "load", "loadpy", "recall", "rep", "rerun", "macro", "save", "pastebin", "store"],
        "it works on the notebook editor or the session's history, which a job does not have",
    ),
    **dict.fromkeys(
        ["reset", "reset_selective", "xdel", "alias", "unalias", "alias_magic", "bookmark", "sc", "code_wrap",
         "lprun", "mprun", "memit"],
        "a job has no interactive IPython shell for it to act on",
    ),
}  # fmt: skip

_TRANSFORM_LOOP_LIMIT = 500


def _remap(before: list[str], after: list[str], origin: list[int]) -> list[int]:
    """Line origins after one transform step replaced a block of ``before`` by a block of ``after``."""
    if before == after:
        return origin
    n = min(len(before), len(after))
    prefix = 0
    while prefix < n and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < n - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    anchor = origin[min(prefix, len(origin) - 1)] if origin else 1
    middle = len(after) - prefix - suffix
    return origin[:prefix] + [anchor] * middle + origin[len(before) - suffix :]


def transform(source: str) -> tuple[str, list[int]]:
    """IPython's ``TransformerManager.transform_cell``, step by step, keeping each line's origin."""
    from IPython.core import inputtransformer2

    transformer: Any = inputtransformer2  # IPython's annotations are partial
    manager = transformer.TransformerManager()
    if not source.endswith("\n"):
        source += "\n"
    lines = source.splitlines(keepends=True)
    origin = list(range(1, len(lines) + 1))
    for step in manager.cleanup_transforms + manager.line_transforms:
        new = step(lines)
        origin = _remap(lines, new, origin)
        lines = new
    with warnings.catch_warnings():
        # Lines that end in a separator str.splitlines knows but the tokenizer does not (\x1e, \x85...):
        # IPython warns that its behaviour is unspecified; the converted script is compiled and checked anyway.
        warnings.filterwarnings("ignore", message=".*make_tokens_by_line.*", category=UserWarning)
        for _ in range(_TRANSFORM_LOOP_LIMIT):
            try:
                changed, new = manager.do_one_token_transform(lines)
            except SyntaxError as exc:  # the tokenizer's IndentationError ("unindent does not match ..."):
                at = exc.lineno or 1  # on the cell's own line, for the caller's message
                exc.lineno = origin[min(at, len(origin)) - 1] if origin else 1
                raise
            if not changed:
                break
            origin = _remap(lines, new, origin)
            lines = new
    return "".join(lines), origin


def ipython_line_magics() -> set[str]:
    """The line magics a fresh IPython kernel knows (for automagic), by the Magics classes' own tables."""
    import inspect

    from IPython.core import magics

    names: set[str] = {"hist", "ed", "rep"}
    for _, cls in inspect.getmembers(magics, inspect.isclass):
        table = getattr(cls, "magics", None)
        if isinstance(table, dict):
            names |= set(table.get("line", {}))
    return names


def string_continuation_lines(code: str) -> set[int]:
    """1-based lines of ``code`` that start inside a multi-line string (they must not be re-indented)."""
    inside: set[int] = set()
    string_types = {tokenize.STRING}
    fstring_middle = getattr(tokenize, "FSTRING_MIDDLE", None)
    if fstring_middle is not None:
        string_types.add(fstring_middle)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type in string_types and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return inside


def bound_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names


def prun_statement(args: str) -> str:
    """``%prun``'s statement without its options (-D file, -l limit, -s key, -T file, -r, -q)."""
    rest = args.strip()
    while rest.startswith("-"):
        option, _, rest = rest.partition(" ")
        rest = rest.lstrip()
        if option in ("-D", "-l", "-s", "-T"):
            _, _, rest = rest.partition(" ")
            rest = rest.lstrip()
    return rest


def is_shell_call(func: ast.expr) -> bool:
    """``get_ipython().<method>``"""
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "get_ipython"
        and not func.value.args
    )


def cell_magic_call(tree: ast.Module) -> tuple[str, str, str] | None:
    """(name, line, body) when the cell is a ``%%magic`` cell, as IPython's transformer writes it."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (isinstance(call, ast.Call) and is_shell_call(call.func)):
        return None
    assert isinstance(call.func, ast.Attribute)
    if call.func.attr != "run_cell_magic" or len(call.args) != 3:
        return None
    values = [a.value if isinstance(a, ast.Constant) else None for a in call.args]
    if not all(isinstance(v, str) for v in values):
        return None
    return str(values[0]), str(values[1]), str(values[2])
