"""``.dockerignore`` follows Docker's rules (tfcloud.image.dockerignore), checked against the docker SDK's own matcher
(``docker.utils.build.exclude_paths``) on a tricky ignore file and on generated ones, and against moby's rules
where the SDK differs from Docker (escapes, ``**x``, bad patterns)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfcloud.errors import ValidationError
from tfcloud.image.context import collect_context
from tfcloud.image.dockerignore import DockerIgnore, DockerIgnoreError, clean, read_patterns

TREE = [
    "train.py", "a.csv", "data/x.csv", "data/deep/y.csv", "data/keep.txt", "logs/run.txt", "logs/keep.txt",
    "docs/index.md", "docs/api/ref.md", "docs/api/deep/more.md", "a/z.txt", "a/b/z.txt", "a/b/c/z.txt",
    "notes/draft.md", "notes/final.md", "ac.py", "bc.py", "cc.py", "x.tmp", "sub/x.tmp", "sub/deeper/y.tmp",
    "data.json", "weird name.txt", "model/weights.h5", "model/config.yaml",
]

#: Each line exercises a rule where Docker and gitignore disagree (or a cleaning rule).
TRICKY = """\
# a comment, then the issue's example: `*.csv` is a.csv only (Docker), not data/x.csv (gitignore)
*.csv
logs/
!logs/keep.txt
**/*.tmp
docs/**
!docs/api/**
a/**/z.txt
./notes/../notes/draft.md
  [ab]c.py
/data.json
model
!model/config.yaml
weird?name.txt
"""


def make(root: Path, paths: list[str], ignore: str) -> Path:
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)
    (root / ".dockerignore").write_text(ignore)
    return root


def sdk_files(root: Path, ignore: str) -> set[str]:
    """What the docker SDK would send: its matcher, given the lines as ``docker build`` reads them."""
    build = pytest.importorskip("docker.utils.build", reason="the comparison needs the docker SDK (tfcloud[docker])")
    lines = [line.strip() for line in ignore.splitlines()]
    kept = build.exclude_paths(str(root), [line for line in lines if line and not line.startswith("#")])
    return {p for p in kept if os.path.isfile(root / p)}


def tfcloud_files(root: Path) -> set[str]:
    return {f.path for f in collect_context(root).files}


def test_the_context_is_what_the_docker_sdk_sends(tmp_path: Path) -> None:
    root = make(tmp_path, TREE, TRICKY)
    ours = tfcloud_files(root)
    assert ours == sdk_files(root, TRICKY)
    assert ours == {
        ".dockerignore", "train.py", "data/x.csv", "data/deep/y.csv", "data/keep.txt", "logs/keep.txt",
        "docs/api/ref.md", "docs/api/deep/more.md", "notes/final.md", "cc.py",
        "model/config.yaml",
    }


def test_gitignore_keeps_gitignore_rules(tmp_path: Path) -> None:
    root = make(tmp_path, ["train.py", "a.csv", "data/x.csv"], "")
    (root / ".gitignore").write_text("*.csv\n")
    assert tfcloud_files(root) == {".dockerignore", ".gitignore", "train.py"}  # gitignore: at any depth
    (root / ".gitignore").unlink()
    (root / ".dockerignore").write_text("*.csv\n")
    assert tfcloud_files(root) == {".dockerignore", "train.py", "data/x.csv"}  # Docker: from the root only


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*.csv", "a.csv", True),
    ("*.csv", "data/x.csv", False),
    ("**/*.csv", "data/x.csv", True),
    ("**/*.csv", "x.csv", True),
    ("data/", "data", True),  # a trailing slash changes nothing: it matches a file too
    ("/data", "data/x", True),  # a directory's pattern matches what is under it
    ("**x", "ax", True),  # moby: a leading ** with a literal rest is a suffix (the SDK's regex says no)
    ("a**", "abc/d", True),
    ("a/**", "a", False),
    ("a/**", "a/b", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("\\*.py", "*.py", True),  # an escape: a literal star (the SDK has no escapes)
    ("\\*.py", "a.py", False),
    ("[^a]c", "bc", True),
    ("[^a]c", "ac", False),
    ("?", "ab", False),
    ("a//b/./c/../d", "a/b/d", True),
    (".", "a", False),  # "for historical reasons, the pattern . is ignored"
    ("a.b", "axb", False),  # regex characters are literal
    ("a+(b)", "a+(b)", True),
    ("x$", "x$", True),
])
def test_moby_rules(pattern: str, path: str, expected: bool) -> None:
    assert (DockerIgnore.parse(pattern).decide(path) is True) is expected


def test_the_last_matching_line_decides_and_unmatched_is_none() -> None:
    ignore = DockerIgnore.parse("data\n!data/keep\ndata/keep/no\n")
    assert ignore.decide("data/a") is True
    assert ignore.decide("data/keep/yes") is False
    assert ignore.decide("data/keep/no") is True
    assert ignore.decide("train.py") is None


def test_reading_follows_ignorefile_readall() -> None:
    text = "\ufefftest1\n/test2\n/a/file/here\n\nlastfile\n# comment\n! /inverted/abs/path\n  #not a comment\r\n"
    assert [p for _, p in read_patterns(text)] == [
        "test1", "test2", "a/file/here", "lastfile", "!inverted/abs/path", "#not a comment"]
    assert clean("//a//b/") == "/a/b" and clean("") == "." and clean("a/../..") == ".."


@pytest.mark.parametrize(("line", "reason"), [
    ("!", "a lone `!`"),
    ("a\\", "a trailing backslash"),
    ("[", "unclosed"),
    ("[]", "empty"),
    ("[a-]", "range bound"),
    ("a[b", "unclosed"),
    ("[z-a]", "regular expression"),
])
def test_lines_docker_refuses(line: str, reason: str) -> None:
    with pytest.raises(DockerIgnoreError) as info:
        DockerIgnore.parse(f"ok\n{line}\n")
    assert info.value.number == 2 and reason in info.value.reason


def test_a_refused_line_is_a_validation_error_naming_it(tmp_path: Path) -> None:
    make(tmp_path, ["train.py"], "*.csv\n[abc\n")
    with pytest.raises(ValidationError) as info:
        collect_context(tmp_path)
    assert str(info.value).splitlines()[0] == (
        "Invalid `.dockerignore line 2`: expected a pattern Docker accepts, received '[abc'.")


# --- generated ignore files, compared with the docker SDK ------------------------------------------------------
# Where the SDK itself departs from Docker, the generator stays out: no escapes or negated classes (the SDK has
# neither), lower case only (the SDK lowercases), `**` only as a whole segment and never with `!` lines (the
# SDK checks only one parent directory), and `!` lines are literal paths (the SDK walks into an ignored
# directory only for an exception that starts with its name; BuildKit, for a wildcard exception, always).
_NAMES = ["a", "b", "c", "ab", "x.csv", "y.txt"]
_GLOB = st.sampled_from(["a", "b", "ab", "c", "*", "?", "a*", "*.csv", "[ab]", "[a-b]*", "x.csv", "*.txt"])
_TREE_PATHS = st.lists(
    st.lists(st.sampled_from(_NAMES), min_size=1, max_size=4).map("/".join), min_size=1, max_size=25)


def _decorate(draw: st.DrawFn, body: str) -> str:
    return draw(st.sampled_from(["", "/", "./"])) + body + draw(st.sampled_from(["", "/"]))


@st.composite
def _ignore_file(draw: st.DrawFn) -> str:
    lines = []
    double_star = draw(st.booleans())
    for _ in range(draw(st.integers(1, 6))):
        segments = draw(st.lists((_GLOB | st.just("**")) if double_star else _GLOB, min_size=1, max_size=3))
        lines.append(_decorate(draw, "/".join(segments)))
    if not double_star:
        for _ in range(draw(st.integers(0, 3))):
            segments = draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3))
            lines.insert(draw(st.integers(0, len(lines))), "!" + _decorate(draw, "/".join(segments)))
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tree=_TREE_PATHS, ignore=_ignore_file())
def test_generated_ignore_files_agree_with_the_docker_sdk(tmp_path_factory: pytest.TempPathFactory,
                                                          tree: list[str], ignore: str) -> None:
    files = sorted(set(tree))
    # a path cannot be both a file and a directory: keep the deepest ones
    files = [p for p in files if not any(q.startswith(p + "/") for q in files)]
    root = make(tmp_path_factory.mktemp("tree"), files, ignore)
    ours = tfcloud_files(root) - {".dockerignore"}
    assert ours == sdk_files(root, ignore) - {".dockerignore"}, ignore
