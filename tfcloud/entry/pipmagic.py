"""``pip install`` lines in a notebook (``%pip install``, ``!pip install``, ``!python -m pip install``, ``!uv pip
install``, with ``sudo``): the requirements they name, read without running anything. :mod:`tfcloud.entry.notebook`
makes them the job's requirements; the job itself then does nothing for the line.

Kept: package specifiers, ``-e PATH``, ``--pre``, the index options (``-i``/``--index-url``,
``--extra-index-url``, ``-f``/``--find-links``, ``--trusted-host``) and what ``-r FILE`` lists (recursively;
a file written by an earlier ``%%writefile`` cell is read from that cell). Dropped: the options that only
say how pip runs (``--upgrade``, ``--quiet``, ``--target``...). A URL with credentials anywhere in the line or in
a file it reads (``-i https://alice:S3cret@host``, ``--proxy``...) is a :class:`PipLineError` that shows it
masked: the job's requirements and the notebook itself go into every image and package. A requirement that
depends on a Python value (``$name``, ``{expr}``) cannot be known before the notebook runs: a
:class:`PipLineError`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PipInstall", "PipLineError", "install_args", "parse_pip_install", "quote", "shell_tokens"]

_PIP_VALUE_KEPT = {"-i": "--index-url", "--index-url": "--index-url", "--extra-index-url": "--extra-index-url",
                   "-f": "--find-links", "--find-links": "--find-links", "--trusted-host": "--trusted-host"}
_PIP_VALUE_DROPPED = {
    "--progress-bar", "--upgrade-strategy", "-t", "--target", "--prefix", "--root", "--src", "--platform",
    "--python-version", "--implementation", "--abi", "--only-binary", "--no-binary", "--proxy", "--timeout",
    "--retries", "--log", "--cache-dir", "-C", "--config-settings", "--global-option", "--install-option",
    "--report", "--root-user-action", "--exists-action", "-c", "--constraint",
}  # fmt: skip
_PIP_FLAGS_KEPT = {"--pre"}
_REDIRECTS = {">", ">>", ">&", "&>", "<", "|", "|&", "&>>"}
_CHAINS = {"&&", "||", ";", "&"}


def shell_tokens(command: str) -> list[str] | None:
    """``command`` split as a POSIX shell splits it (operators such as ``&&`` and ``>`` are tokens of their
    own), or None when its quotes do not close."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return None


def quote(text: str) -> str:
    """``text`` on one line between backticks, as messages and notes quote what the notebook says."""
    return "`" + re.sub(r"\s+", " ", text.strip()).replace("`", "'") + "`"


def parse_pip_install(command: str, *, shown: str, folder: Path, written: Mapping[str, str]) -> PipInstall | None:
    """The requirements the ``pip install`` command ``command`` names, or None when it is not one. ``shown`` is
    the line as messages quote it; ``-r FILE`` reads ``FILE`` from ``written`` (the notebook's ``%%writefile``
    cells so far), else from ``folder`` (the notebook's). A :class:`PipLineError` when it cannot be read."""
    tokens = shell_tokens(command)
    if not tokens:
        return None
    if any(t in _CHAINS for t in tokens):
        return None  # `cd lib && pip install .`: a shell command that runs as written
    rest = install_args(tokens)
    if rest is None:
        return None
    cut = len(rest)
    for i, token in enumerate(rest):
        if token in _REDIRECTS:
            cut = i - 1 if i > 0 and rest[i - 1].isdigit() else i  # `2>&1`: the 2 is not a package
            break
    _refuse_credentials(command)  # any option: the notebook itself travels with the job's files
    reader = _Reader(folder=folder, written=written)
    found = _install_args(rest[:cut], shown, reader)
    for requirement in found:  # and what -r files added
        _refuse_credentials(requirement)
    return PipInstall(requirements=tuple(found), files=tuple(reader.files))


def _refuse_credentials(text: str) -> None:
    """A URL with credentials in the line (``-i https://alice:S3cret@host``), or in a file it reads: the job's
    requirements go into every image and package, so it is refused, the URL masked (the line is not quoted)."""
    from tfcloud.image.secretscan import CREDENTIALS_HINT, url_credentials

    masked = url_credentials(text)
    if masked is not None:
        raise PipLineError(f"the `pip install` line names a URL with credentials ({masked}); the job's "
                           "requirements go into every image and package.", hint=CREDENTIALS_HINT)


def _install_args(args: list[str], shown: str, reader: _Reader) -> list[str]:
    found: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        option, _, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        takes_value = option in _PIP_VALUE_KEPT or option in _PIP_VALUE_DROPPED or option in (
            "-r", "--requirement", "-e", "--editable")
        value = None
        if takes_value:
            if inline:
                value = inline
            elif len(option) == 2 and len(token) > 2:  # -rfile
                option, value = token[:2], token[2:]
            elif i + 1 < len(args):
                i += 1
                value = args[i]
            else:
                raise PipLineError(f"{quote(shown)}: {option} expects a value.")
        i += 1
        if value is not None and re.search(r"\$|\{", value):
            raise _value_error(shown, value)
        if option in ("-r", "--requirement"):
            assert value is not None
            found.extend(reader.read(value, shown))
        elif option in ("-e", "--editable"):
            found.append(f"-e {value}")
        elif option in _PIP_VALUE_KEPT:
            found.append(f"{_PIP_VALUE_KEPT[option]} {value}")
        elif takes_value:
            continue
        elif token in _PIP_FLAGS_KEPT:
            found.append(token)
        elif token.startswith("-"):
            continue
        else:
            if re.search(r"\$|\{", token):
                raise _value_error(shown, token)
            found.append(token)
    return found


def _value_error(shown: str, value: str) -> PipLineError:
    return PipLineError(
        f"{quote(shown)}: the requirement {quote(value)} depends on a Python value, which is only known when the "
        "notebook runs.",
        hint="Write the requirement out in full (e.g. `%pip install tensorflow-datasets==4.9.4`), or pass "
        "requirements_txt=.",
    )


class PipLineError(Exception):
    """A ``pip install`` line whose requirements cannot be known: ``what`` is wrong, ``hint`` says what to do."""

    def __init__(self, what: str, *, hint: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint


@dataclass(frozen=True, kw_only=True)
class PipInstall:
    """What a ``pip install`` line names: its requirements (in order, each once as written), and the
    requirements files it read as ``(name, where it was read from)``."""

    requirements: tuple[str, ...]
    files: tuple[tuple[str, str], ...] = ()


@dataclass
class _Reader:
    """Reads ``-r FILE`` (from ``written``, else beside the notebook) and keeps which files it read."""

    folder: Path
    written: Mapping[str, str]
    files: list[tuple[str, str]] = field(default_factory=list)

    def read(self, name: str, shown: str) -> list[str]:
        if name in self.written:
            text = self.written[name]
            origin = f"written by %%writefile {name} earlier in the notebook"
        else:
            file = (self.folder / name).expanduser()
            if not file.is_file():
                raise PipLineError(
                    f"{quote(shown)}: no requirements file {name} next to the notebook ({file}).",
                    hint="Keep the file beside the notebook, or pass requirements_txt=.",
                )
            text = file.read_text(encoding="utf-8")
            origin = str(file)
        found: list[str] = []
        for raw in text.splitlines():
            entry = re.sub(r"(^|\s)#.*$", "", raw).strip()
            if not entry:
                continue
            if entry.startswith(("-r ", "--requirement ")):
                found.extend(self.read(entry.split(None, 1)[1], shown))
            else:
                found.append(entry)
        self.files.append((name, origin))
        return found


def install_args(tokens: list[str]) -> list[str] | None:
    """The arguments after ``install`` when ``tokens`` run ``pip install``; None otherwise."""
    i = 0
    if tokens and tokens[0] == "sudo":
        i += 1
    rest = tokens[i:]
    program = rest[0] if rest else ""
    base = program.rsplit("/", 1)[-1]
    if re.fullmatch(r"pip(3(\.\d+)?)?", base):
        rest = rest[1:]
    elif base == "uv" and rest[1:2] == ["pip"]:
        rest = rest[2:]
    elif (re.fullmatch(r"python(3(\.\d+)?)?", base) or program in ("{sys.executable}", "$sys.executable")) and (
        rest[1:3] == ["-m", "pip"]
    ):
        rest = rest[3:]
    else:
        return None
    if not rest or rest[0] != "install":
        return None
    return rest[1:]
