"""gitignore's patterns (gitwildmatch, through pathspec) as :mod:`tfcloud.image.context` applies them: nested
``.gitignore`` files rebased onto the context's root, and the lines git would skip skipped."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["gitignore_spec", "glob_escape", "has_negation", "invalid_line", "read_lines", "rebase", "valid_lines"]

logger = logging.getLogger("tfcloud")

_NESTED_SET = re.compile(r"\[\[|--|&&|~~|\|\|")  # what `re` calls a possible nested set or set operation



def gitignore_spec(lines: Iterable[str]) -> Any:
    """A pathspec ``GitIgnoreSpec`` of ``lines``."""
    import warnings

    import pathspec

    lines = list(lines)
    if not any("[" in line and _NESTED_SET.search(line) for line in lines):
        return pathspec.GitIgnoreSpec.from_lines(lines)
    with warnings.catch_warnings():  # `re` warns about a set like `[[]` (rare: not on every call, not thread-safe)
        warnings.simplefilter("ignore", FutureWarning)
        return pathspec.GitIgnoreSpec.from_lines(lines)


@functools.lru_cache(maxsize=4096)
def invalid_line(line: str) -> bool:
    """Whether gitwildmatch refuses ``line`` (a lone ``!``, a trailing ``\\``...)."""
    try:
        gitignore_spec([line])
    except (ValueError, re.error):  # pathspec's GitIgnorePatternError; a range like `[z-a]`
        return True
    return False


def valid_lines(lines: list[str], source: str) -> list[str]:
    """``lines`` of the ``.gitignore`` ``source``, without the invalid ones (skipped, as git does)."""
    out = []
    for number, line in enumerate(lines, 1):
        if not invalid_line(line):
            out.append(line)
        else:
            logger.debug("Skipped invalid pattern in %s line %d: %r", source, number, line)
    return out


def read_lines(path: Path) -> list[str]:
    """The lines of an ignore file; none when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()  # bytes as file names have them
    except OSError:
        return []


def glob_escape(text: str) -> str:
    """``text`` with the glob's special characters escaped (a literal path as a pattern)."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def rebase(lines: Iterable[str], prefix: str) -> list[str]:
    """Turn a nested ``.gitignore``'s lines (relative to ``prefix/``) into root-relative lines."""
    out = []
    prefix = glob_escape(prefix)
    for raw in lines:
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        neg = line.startswith("!")
        body = line[1:] if neg else line
        anchored = "/" in body.rstrip("/")
        body = body.lstrip("/")
        rebased = f"{prefix}/{body}" if anchored else f"{prefix}/**/{body}"
        rebased = ("!" if neg else "") + "/" + rebased
        if not invalid_line(rebased):
            out.append(rebased)
    return out


def has_negation(lines: Iterable[str]) -> bool:
    """Whether a line brings something back (``!pattern``)."""
    return any(line.strip().startswith("!") for line in lines)
