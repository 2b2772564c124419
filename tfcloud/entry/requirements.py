"""Requirements: check that the current Python environment satisfies a requirements file.

A local run uses the current environment as it is: tfcloud never installs into it. Before starting any
replica, :func:`ensure_requirements` checks every requirement (from ``requirements_txt`` and any extra
requirement strings, such as a notebook's ``%pip install`` lines) against the installed distributions and
raises a :class:`~tfcloud.errors.ConfigurationError` that lists exactly what is missing or has the wrong
version, with the ``pip install`` command that fixes it.

Understood in a requirements file: one requirement per line (PEP 508, with extras, version specifiers and
environment markers), comments, blank lines, ``\\`` continuations, ``-r``/``--requirement`` includes.
Other options (``--index-url``, ``-c``, ``--hash`` ...) are ignored here.
:func:`bundle_requirements` gathers the file and every file it includes (``-r``, ``-c``) for an image or a Ray
job's working directory, each include rewritten to the copy beside it, so that pip inside the build (or on a Ray
node) reads the same requirements.
:func:`validate_requirements_file` (called by validation, before anything is built) refuses a file that
is not UTF-8 text, a line that is neither a requirement, a URL or path, nor one of pip's requirement-file
options, an include that does not exist, and a URL with credentials in it (``--index-url
https://alice:S3cret@host``, ``-i``, ``--extra-index-url``, ``--find-links``, ``pkg @ https://TOKEN@host/...``,
in the file or any file it includes: the file travels in every image and package), naming the file and line
without echoing the secret. Editable installs (``-e``) and bare paths
or URLs without a name cannot be checked and are listed as unchecked. A requirement's extras are not
checked, only the distribution itself.
"""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tfcloud.errors import ConfigurationError, ValidationError

__all__ = [
    "MAIN_FILE",
    "Problem",
    "bundle_requirements",
    "check_remote_includes",
    "check_requirements",
    "ensure_requirements",
    "local_path_requirements",
    "parse_requirements_file",
    "validate_requirements_file",
]

#: The options pip accepts in a requirements file (pip's own list, ``pip/_internal/req/req_file.py``).
PIP_FILE_OPTIONS = frozenset({
    "-i", "--index-url", "--extra-index-url", "--no-index", "-c", "--constraint", "-r", "--requirement",
    "-e", "--editable", "-f", "--find-links", "--no-binary", "--only-binary", "--prefer-binary",
    "--require-hashes", "--pre", "--trusted-host", "--use-feature", "--hash", "--config-settings",
    "--global-option", "-Z", "--always-unzip",
})
_LINE_EXPECTED = ("one requirement per line (PEP 508, e.g. numpy>=1.26), a URL or path, or a pip "
                  "requirements-file option")


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One requirement the environment does not satisfy. ``installed`` is None when it is not installed."""

    requirement: str
    source: str  # "requirements.txt:3" or "extra requirement"
    installed: str | None
    reason: str  # "not installed", "2.1.0 is installed", "cannot be checked (editable install)"

    def describe(self) -> str:
        return f"{self.requirement} ({self.source}): {self.reason}"


def _logical_lines(path: Path) -> Iterable[tuple[int, str]]:
    """(line number, text) with comments stripped and ``\\`` continuations joined."""
    pending = ""
    start = 0
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError("requirements_txt", "a UTF-8 text file", f"<{path.name}: not UTF-8 at byte "
                              f"{exc.start}>", hint="Save it as UTF-8.") from None
    except OSError as exc:
        raise ValidationError("requirements_txt", "a readable requirements file", str(path),
                              hint=f"It cannot be read: {exc.strerror or exc}.") from None
    if "\0" in content:
        raise ValidationError("requirements_txt", "a text file", f"<{path.name}: a binary file (NUL bytes)>")
    for number, raw in enumerate(content.splitlines(), start=1):
        line = raw
        if line.lstrip().startswith("#"):
            line = ""
        elif " #" in line or "\t#" in line:
            line = line[: min(i for i in (line.find(" #"), line.find("\t#")) if i >= 0)]
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        text = " ".join((pending + line).split())
        pending = ""
        if text:
            yield start, text
    if pending.strip():
        yield start, pending.strip()


def parse_requirements_file(path: Path, *, _seen: frozenset[Path] = frozenset()) -> list[tuple[str, str]]:
    """The requirement lines of ``path`` (following ``-r`` includes) as ``(requirement, source)`` pairs."""
    path = path.resolve()
    if path in _seen:
        return []
    if not path.is_file():
        raise ConfigurationError(f"Requirements file {path} does not exist.")
    found: list[tuple[str, str]] = []
    for number, text in _logical_lines(path):
        source = f"{path.name}:{number}"
        if text.startswith(("-r", "--requirement")):
            target = text.removeprefix("--requirement").removeprefix("-r").lstrip(" =")
            found.extend(parse_requirements_file(path.parent / target, _seen=_seen | {path}))
        elif text.startswith(("-e ", "--editable")):
            found.append((text, source))
        elif text.startswith("-"):
            continue  # --index-url, -c, --hash, -f ...: not about what is installed
        else:
            # "--hash=..." options may follow a requirement on the same line.
            found.append((text.split(" --", 1)[0].strip(), source))
    return found


def _check_one(text: str, source: str) -> Problem | None:
    from packaging.requirements import InvalidRequirement, Requirement

    if text.startswith(("-e ", "--editable")):
        return Problem(requirement=text, source=source, installed=None,
                       reason="cannot be checked (editable install); install it yourself")
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        return Problem(requirement=text, source=source, installed=None,
                       reason=f"cannot be checked (not a valid requirement: {exc})")
    if req.marker is not None and not req.marker.evaluate():
        return None
    try:
        version = importlib.metadata.version(req.name)
    except importlib.metadata.PackageNotFoundError:
        return Problem(requirement=text, source=source, installed=None, reason="not installed")
    if req.specifier and not req.specifier.contains(version, prereleases=True):
        return Problem(requirement=text, source=source, installed=version,
                       reason=f"{version} is installed, {req.specifier} is required")
    return None


def check_requirements(requirements_txt: Path | None = None,
                       extra: Sequence[str] = ()) -> list[Problem]:
    """Every requirement of ``requirements_txt`` and ``extra`` that the current environment does not satisfy."""
    items: list[tuple[str, str]] = []
    if requirements_txt is not None:
        items.extend(parse_requirements_file(requirements_txt))
    items.extend((text.strip(), "extra requirement") for text in extra if text.strip())
    problems = []
    for text, source in items:
        problem = _check_one(text, source)
        if problem is not None:
            problems.append(problem)
    return problems


def ensure_requirements(requirements_txt: Path | None = None, extra: Sequence[str] = ()) -> None:
    """Raise :class:`ConfigurationError` listing every unsatisfied requirement; do nothing when all are met."""
    problems = check_requirements(requirements_txt, extra)
    if not problems:
        return
    lines = "\n".join(f"  - {p.describe()}" for p in problems)
    fixes = []
    if requirements_txt is not None and any(p.source != "extra requirement" for p in problems):
        fixes.append(f"{sys.executable} -m pip install -r {shlex.quote(str(requirements_txt))}")
    missing_extra = [p.requirement for p in problems if p.source == "extra requirement"]
    if missing_extra:
        fixes.append(f"{sys.executable} -m pip install " + " ".join(shlex.quote(r) for r in missing_extra))
    raise ConfigurationError(
        f"The current Python environment ({sys.executable}) does not satisfy the job's requirements "
        f"({len(problems)} problem{'s' if len(problems) != 1 else ''}):\n{lines}\n"
        "A local run uses this environment as it is and installs nothing into it.",
        hint="Install them with: " + " && ".join(fixes),
    )


def _local_path(text: str) -> bool:
    """Whether a requirement line names a path on this machine: ``./mylib``, ``/opt/x.whl``, ``~/lib``,
    ``file:...``, ``-e ./mylib``, ``pkg @ file:///...``, a bare ``.``, an archive by its file name
    (``mylib-1.0-py3-none-any.whl``: pip looks for it in the current directory); not ``name``, a URL or a VCS URL."""
    text = text.strip()
    for option in ("--editable", "-e"):
        if text.startswith(option):
            text = text[len(option):].lstrip(" =")
            break
    location = text.split(" @ ", 1)[1].strip() if " @ " in text else text
    location = location.split(" --", 1)[0].split(";", 1)[0].strip()
    if location.lower().startswith("file:"):
        return True
    if "://" in location or location.startswith(("git+", "hg+", "svn+", "bzr+")):
        return False
    return location.startswith((".", "/", "~")) or location in (".", "..") or (
        "/" in location and not location.startswith("-")) or location.endswith((".whl", ".tar.gz", ".zip"))


def local_path_requirements(requirements_txt: Path | None, extra: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The requirements (of ``requirements_txt``, its ``-r`` includes, and ``extra``) that name a path on this
    machine, as ``(line, "file:LINE")``: nothing a Python package installed elsewhere can reach."""
    items: list[tuple[str, str]] = []
    if requirements_txt is not None:
        items.extend(parse_requirements_file(requirements_txt))
    items.extend((text.strip(), "extra requirement") for text in extra if text.strip())
    return [(text, source) for text, source in items if not text.startswith("--") and _local_path(text)]


def _is_location(text: str) -> bool:
    """A URL, a path or an archive pip installs directly (``./pkg``, ``https://.../x.whl``)."""
    return ("://" in text or text.startswith((".", "/", "~")) or text.endswith((".whl", ".tar.gz", ".zip")))


def _option(text: str) -> str:
    """The option name at the start of ``text`` (``--hash=x`` → ``--hash``, ``-r file`` → ``-r``)."""
    words = text.split("=", 1)[0].split(None, 1)
    return words[0] if words else text


def _check_credentials(text: str, source: str) -> None:
    """A URL with credentials in a requirement or a pip option (``--index-url https://alice:S3cret@host``): refused
    naming the file and line, the URL shown masked (the secret is never echoed)."""
    from tfcloud.image.secretscan import CREDENTIALS_HINT, url_credentials

    masked = url_credentials(text)
    if masked is not None:
        raise ValidationError("requirements_txt", "requirements and pip options without credentials in their URLs "
                              "(the file goes into every image and package)", f"<{source}: {masked}>",
                              hint=CREDENTIALS_HINT)


def _check_line(text: str, source: str) -> None:
    from packaging.requirements import InvalidRequirement, Requirement

    _check_credentials(text, source)
    shown = f"<{source}: {text!r}>"
    options = [text] if text.startswith("-") else ["--" + part for part in text.split(" --")[1:]]
    for given in options:
        option = _option(given)
        if option not in PIP_FILE_OPTIONS and option[:2] not in PIP_FILE_OPTIONS - {"--"}:
            raise ValidationError("requirements_txt", _LINE_EXPECTED, shown,
                                  hint=f"{option!r} is not an option pip accepts in a requirements file.")
    if text.startswith("-"):
        return
    requirement = text.split(" --", 1)[0].strip()  # "name==1.0 --hash=sha256:..." options after a requirement
    if _is_location(requirement):
        return
    try:
        Requirement(requirement)
    except InvalidRequirement as exc:
        first = str(exc).splitlines()[0] if str(exc) else "not a valid requirement"
        raise ValidationError("requirements_txt", _LINE_EXPECTED, shown, hint=first) from None


def validate_requirements_file(path: Path, *, _seen: frozenset[Path] = frozenset()) -> None:
    """Every line of ``path`` (and of its ``-r`` includes) must be something pip can install: raises
    :class:`ValidationError` naming the file and line of the first that is not."""
    path = path.resolve()
    if path in _seen:
        return
    lines = list(_logical_lines(path))  # first: a file that is not UTF-8 text is refused as such
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        _check_credentials(raw, f"{path.name}:{number}")  # comments too: the file is copied as it is
    for number, text in lines:
        source = f"{path.name}:{number}"
        _check_line(text, source)
        if text.startswith(("-r", "--requirement", "-c", "--constraint")):
            target = _include_target(text)
            if "://" in target:
                continue  # pip fetches it
            include = path.parent / target
            if not target or not include.is_file():
                raise ValidationError("requirements_txt", "includes (-r FILE, -c FILE) of existing files",
                                      f"<{source}: {text!r}>", hint=f"No file at {include}.")
            validate_requirements_file(include, _seen=_seen | {path})


def _include_target(text: str) -> str:
    target = text.split(None, 1)[-1] if " " in text else text
    for option in ("--requirement", "--constraint", "-r", "-c"):
        target = target.removeprefix(option)
    return target.lstrip(" =")


def check_remote_includes(path: Path, *, timeout: float = 10.0, _seen: frozenset[Path] = frozenset()) -> None:
    """Every ``-r URL`` / ``-c URL`` include of ``path`` (and of its file includes) must be fetchable from here:
    a :class:`ValidationError` naming the file and line before anything is built, not pip's error inside the
    image build. Called for a submission or build only (a plan reaches no network)."""
    import urllib.error
    import urllib.request

    path = path.resolve()
    if path in _seen:
        return
    for number, text in _logical_lines(path):
        if not text.startswith(("-r", "--requirement", "-c", "--constraint")):
            continue
        target = _include_target(text)
        if "://" not in target:
            include = path.parent / target
            if include.is_file():
                check_remote_includes(include, timeout=timeout, _seen=_seen | {path})
            continue
        if not target.lower().startswith(("http://", "https://")):  # pip's schemes are case-insensitive
            continue  # file://, or a scheme pip resolves itself
        try:
            with urllib.request.urlopen(urllib.request.Request(target, method="GET"), timeout=timeout) as answer:
                answer.read(1)
            reason = None
        except urllib.error.HTTPError as exc:
            reason = f"the server answered {exc.code} {exc.reason}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            why = getattr(exc, "reason", None) or exc
            reason = f"it cannot be fetched ({why})"
        if reason is not None:
            raise ValidationError("requirements_txt", "includes (-r URL, -c URL) that can be fetched",
                                  f"<{path.name}:{number}: {text!r}>",
                                  hint=f"{target}: {reason}; pip would fail the same way inside the image build. "
                                       "Fix the URL or make it reachable from here, or save the file beside "
                                       f"{path.name} and include it by its name (-r FILE).")


#: The name of the top requirements file in a bundle (:func:`bundle_requirements`).
MAIN_FILE = "requirements.txt"
#: An include line: ``-r FILE``, ``-rFILE``, ``--requirement=FILE``, ``-c FILE``, ``--constraint FILE``.
_INCLUDE = re.compile(r"^(?P<head>\s*(?:--requirement|--constraint|-r|-c)(?:\s*=\s*|\s+|(?=[^\s=-])))"
                      r"(?P<path>\S+)(?P<rest>.*)$")


def bundle_requirements(requirements_txt: Path | None, extra: Sequence[str] = ()) -> dict[str, bytes]:
    """The files pip needs to install ``requirements_txt`` (and ``extra`` requirement lines, appended to it)
    somewhere else: ``{name: content}``, all in one directory. :data:`MAIN_FILE` is the top file; every file
    it includes with ``-r``/``-c`` (recursively; URLs stay as they are) is copied beside it under its own name
    (numbered when two share one) and the include line is rewritten to that name. Empty when there is
    nothing to install."""
    out: dict[str, bytes] = {}
    names: dict[Path, str] = {}

    def name_for(path: Path) -> str:
        if path in names:
            return names[path]
        name = path.name
        n = 1
        while name in out or name in names.values() or name == MAIN_FILE:
            n += 1
            name = f"{n}-{path.name}"
        names[path] = name
        out[name] = b""  # reserved; written below
        out[name] = add(path)
        return name

    def add(path: Path) -> bytes:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValidationError("requirements_txt", "a readable requirements file", str(path)) from exc
        lines = []
        for line in text.splitlines():
            match = _INCLUDE.match(line)
            target = match["path"] if match else ""
            if match and "://" not in target and "$" not in target and (path.parent / target).is_file():
                line = match["head"] + name_for((path.parent / target).resolve()) + match["rest"]
            lines.append(line)
        return ("\n".join(lines) + "\n").encode() if lines else b""

    parts: list[bytes] = []
    if requirements_txt is not None:
        top = Path(requirements_txt).resolve()
        names[top] = MAIN_FILE
        parts.append(add(top))
    if extra:
        parts.append(("# found in the entry point (e.g. a notebook's %pip install lines)\n"
                      + "".join(f"{r}\n" for r in extra)).encode())
    if not parts:
        return {}
    out[MAIN_FILE] = b"".join(parts)
    return {MAIN_FILE: out.pop(MAIN_FILE), **dict(sorted(out.items()))}
