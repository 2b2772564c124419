"""``.dockerignore`` with Docker's own rules (moby/patternmatcher), not gitignore's.

The differences that matter (docs/containers.md, "Ignore files"):

- A pattern is a path **relative to the context root**: ``*.csv`` matches ``a.csv`` only, never ``data/x.csv``
  (gitignore would drop both); ``**/*.csv`` matches at any depth. A leading ``/`` changes nothing
  (``/a`` = ``a``), and neither does a trailing one (``data/`` also matches a *file* named ``data``).
- Each line is cleaned as Go's ``filepath.Clean`` does (``a//b/../c`` = ``a/c``; ``.`` matches nothing).
- ``*`` and ``?`` do not cross ``/``; ``**`` matches any number of directories (also none); ``[...]`` is a
  character class (``[^a]`` negates); ``\\`` escapes the next character.
- A pattern that matches a directory matches everything under it. The **last** pattern that matches decides;
  ``!pattern`` lines bring back what an earlier line excluded.
- A line Go's ``filepath.Match`` refuses (an unclosed ``[``, a trailing ``\\``), a lone ``!``, or a pattern
  whose translation is not a valid regular expression (``[z-a]``) is an error, as ``docker build`` says.

Nothing here needs the docker SDK: :func:`tfcloud.image.context.collect_context` uses it to list the build context
at plan time. ``tests/test_dockerignore.py`` compares it with the docker SDK's own matcher.
"""

from __future__ import annotations

import posixpath
import re
import warnings
from dataclasses import dataclass

__all__ = ["DockerIgnore", "DockerIgnoreError", "DockerPattern", "clean", "read_patterns"]

#: Characters that mean something to a regular expression but nothing to ``filepath.Match`` (moby's list).
_ESCAPED = frozenset(".+()|{}$")


class DockerIgnoreError(ValueError):
    """A ``.dockerignore`` line Docker refuses. ``number`` is 1-based; ``reason`` says why."""

    def __init__(self, number: int, line: str, reason: str) -> None:
        super().__init__(f"line {number}: {line!r}: {reason}")
        self.number = number
        self.line = line
        self.reason = reason


def clean(path: str) -> str:
    """Go's ``filepath.Clean`` on a slash-separated path (``posixpath.normpath``, but ``//a`` is ``/a``)."""
    out = posixpath.normpath(path)
    if out.startswith("//"):
        out = "/" + out.lstrip("/")
    return out


def read_patterns(text: str) -> list[tuple[int, str]]:
    """The patterns of a ``.dockerignore`` file as ``(line number, pattern)``, as moby's ``ignorefile.ReadAll``
    reads them: a UTF-8 BOM dropped, ``#`` lines skipped, spaces trimmed, each cleaned, a leading ``/`` dropped,
    ``!`` kept in front."""
    out: list[tuple[int, str]] = []
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.removesuffix("\r")
        if number == 1:
            line = line.removeprefix("\ufeff")
        if line.startswith("#"):
            continue
        pattern = line.strip()
        if not pattern:
            continue
        invert = pattern.startswith("!")
        if invert:
            pattern = pattern[1:].strip()
        if pattern:
            pattern = clean(pattern)
            if len(pattern) > 1 and pattern.startswith("/"):
                pattern = pattern[1:]
        out.append((number, "!" + pattern if invert else pattern))
    return out


def _bad_pattern(pattern: str) -> str | None:
    """Why Go's ``filepath.Match`` refuses ``pattern`` (ErrBadPattern), or None: an unclosed or empty class,
    a range bound missing, a trailing ``\\``."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return "a trailing backslash (it escapes nothing)"
            i += 2
            continue
        if c != "[":
            i += 1
            continue
        i += 1
        if i < n and pattern[i] == "^":
            i += 1
        ranges = 0
        while True:
            if i < n and pattern[i] == "]" and ranges > 0:
                i += 1
                break
            for _bound in range(2):  # lo, then hi after a '-'
                if i >= n or pattern[i] in "-]":
                    return "a character class ([...]) that is empty, unclosed or misses a range bound"
                if pattern[i] == "\\":
                    i += 1
                    if i >= n:
                        return "a trailing backslash (it escapes nothing)"
                i += 1
                if i >= n:
                    return "an unclosed character class ([...])"
                if pattern[i] != "-" or _bound == 1:
                    break
                i += 1
            ranges += 1
    return None


@dataclass(frozen=True, kw_only=True)
class DockerPattern:
    """One cleaned pattern, compiled as moby does: an exact path, a prefix (``a/**``), a suffix (``**/a``), or a
    regular expression."""

    text: str
    exclusion: bool
    kind: str
    regex: re.Pattern[str] | None = None

    @classmethod
    def compile(cls, text: str, *, exclusion: bool) -> DockerPattern:
        reg = "^"
        kind = "exact"
        i, n = 0, len(text)
        first = True
        while i < n:
            c = text[i]
            i += 1
            if c == "*":
                if i < n and text[i] == "*":
                    i += 1
                    if i < n and text[i] == "/":  # `**/` is `**`
                        i += 1
                    if i >= n:  # a trailing `**` accepts everything
                        if kind == "exact":
                            kind = "prefix"
                        else:
                            reg += ".*"
                            kind = "regexp"
                    else:
                        reg += "(.*/)?"
                        kind = "regexp"
                    if first:
                        kind = "suffix"
                else:
                    reg += "[^/]*"
                    kind = "regexp"
            elif c == "?":
                reg += "[^/]"
                kind = "regexp"
            elif c in _ESCAPED:
                reg += "\\" + c
            elif c == "\\":
                if i < n:
                    reg += "\\" + text[i]
                    i += 1
                    kind = "regexp"
                else:
                    reg += "\\\\"
            elif c in "[]":
                reg += c
                kind = "regexp"
            else:
                reg += c
            first = False
        regex = None
        if kind == "regexp":
            with warnings.catch_warnings():  # `[[`, `--`, `&&` inside a class: literal for Go, a warning for `re`
                warnings.simplefilter("ignore", FutureWarning)
                regex = re.compile(reg + r"\Z")  # Go's `$`: the end of the text, not before a last newline
        return cls(text=text, exclusion=exclusion, kind=kind, regex=regex)

    def match(self, path: str) -> bool:
        if self.kind == "exact":
            return path == self.text
        if self.kind == "prefix":
            return path.startswith(self.text[:-2])
        if self.kind == "suffix":
            suffix = self.text[2:]
            return path.endswith(suffix) or (suffix.startswith("/") and path == suffix[1:])
        assert self.regex is not None
        return self.regex.match(path) is not None

    def matches_or_parent(self, path: str) -> bool:
        """Whether this pattern matches ``path`` or one of the directories above it."""
        if self.match(path):
            return True
        parts = path.split("/")[:-1]
        return any(self.match("/".join(parts[: i + 1])) for i in range(len(parts)))

    @property
    def literal(self) -> str | None:
        """The one path this pattern names when it has no wildcard (escapes resolved), else None."""
        out, i, n = [], 0, len(self.text)
        while i < n:
            c = self.text[i]
            if c == "\\" and i + 1 < n:
                out.append(self.text[i + 1])
                i += 2
                continue
            if c in "*?[":
                return None
            out.append(c)
            i += 1
        return "".join(out)


@dataclass(frozen=True, kw_only=True)
class DockerIgnore:
    """The patterns of one ``.dockerignore``, in order. Build it with :meth:`parse`."""

    patterns: tuple[DockerPattern, ...]

    @classmethod
    def parse(cls, text: str) -> DockerIgnore:
        """Raises :class:`DockerIgnoreError` for a line Docker refuses."""
        patterns = []
        for number, line in read_patterns(text):
            exclusion = line.startswith("!")
            body = line[1:] if exclusion else line
            if exclusion and not body:
                raise DockerIgnoreError(number, line, "a lone `!`")
            reason = _bad_pattern(body)
            if reason is not None:
                raise DockerIgnoreError(number, line, reason)
            try:
                patterns.append(DockerPattern.compile(body, exclusion=exclusion))
            except re.error as exc:
                reason = f"a pattern that is not a valid regular expression ({exc})"
                raise DockerIgnoreError(number, line, reason) from None
        return cls(patterns=tuple(patterns))

    @property
    def exclusions(self) -> bool:
        """Whether a ``!pattern`` line may bring something back."""
        return any(p.exclusion for p in self.patterns)

    def decide(self, path: str) -> bool | None:
        """True when ``path`` (relative, slash-separated) is ignored, False when a ``!`` line brings it back,
        None when no line matches it or a directory above it."""
        decision: bool | None = None
        for pattern in self.patterns:
            if pattern.matches_or_parent(path):
                decision = not pattern.exclusion
        return decision

    def may_bring_back_under(self, directory: str) -> bool:
        """Whether a ``!`` line may bring back something under ``directory`` (else an ignored directory need
        not be walked): a wildcard exception may (BuildKit walks then), a literal one when it lies inside."""
        return any(p.exclusion and (p.literal is None or (p.literal + "/").startswith(directory + "/"))
                   for p in self.patterns)
