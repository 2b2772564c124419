"""The docs hold together without building them: every relative link in README.md and docs/ reaches a file
(and a heading, when it names one), and the README's test command is what CI runs. `nox -s docs` builds the
site with `mkdocs build --strict` on top of this; the README is not part of that site, so only this checks it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"(`+).+?\1", re.DOTALL)
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _prose(text: str) -> str:
    """The page without its code blocks and code spans (a link shown as code is not a link)."""
    return _CODE.sub("", _FENCE.sub("", text))


def _anchors(page: Path) -> set[str]:
    """The page's anchors as mkdocs makes them (``tfcloud docs`` reads them the same way: one rule,
    :func:`tfcloud.config.docpages.anchored`; GitHub's differ for ``--flag`` headings, which keep every hyphen)."""
    from tfcloud.config.docpages import anchored

    return {anchor for anchor, _ in anchored(page.read_text(encoding="utf-8"))}


def _links(page: Path) -> list[str]:
    return [target for target in _LINK.findall(_prose(page.read_text(encoding="utf-8")))
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto:


def test_the_pages_have_links_to_check() -> None:
    """Guards the pattern itself: the README links the docs, and the docs link each other."""
    readme = _links(ROOT / "README.md")
    assert "docs/cli.md" in readme and "docs/architecture.md" in readme
    assert "recovery.md#checkpoint-and-resume" in _links(ROOT / "docs" / "strategies.md")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in _links(page):
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
            continue
        if page.is_relative_to(ROOT / "docs") and not dest.is_relative_to(ROOT / "docs"):
            broken.append(f"{target}: outside docs/, so not on the docs site (name it as a repository path)")
            continue
        # An object's anchor in the API reference (`#tfcloud.sdk.JobOptions`) is mkdocstrings'; --strict checks it.
        if anchor and dest.suffix == ".md" and "." not in anchor and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)} has broken links:\n" + "\n".join(broken)


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci_command = re.search(r"^exec (python3 -m nox .+)$", ci, re.MULTILINE)
    assert ci_command is not None, ".ci/run no longer ends with `exec python3 -m nox ...`"
    readme_commands = re.findall(r"&& (python3 -m nox -s .+)$", (ROOT / "README.md").read_text(encoding="utf-8"),
                                 re.MULTILINE)
    assert len(readme_commands) >= 2, "the README's set-up section lost its two commands"
    assert shlex.split(readme_commands[1]) == shlex.split(ci_command[1])


def _svg_lines(path: Path) -> list[str]:
    """The lines of a terminal picture that rich's ``export_svg`` wrote (its <text> runs, by row)."""
    import html

    rows: dict[float, str] = {}
    for y, text in re.findall(r'<text\b[^>]*\by="([\d.]+)"[^>]*>([^<]*)</text>', path.read_text(encoding="utf-8")):
        rows[float(y)] = rows.get(float(y), "") + html.unescape(text).replace("\xa0", " ")
    return [rows[y].rstrip() for y in sorted(rows)]


def test_the_help_picture_shows_every_command() -> None:
    """docs/images/help.svg (docs/captures.py; `nox -s captures -- help` makes it again) lists the commands that
    `tfcloud --help` lists: a command added or removed makes this picture stale."""
    import typer.main

    from tfcloud.cli import app

    lines = _svg_lines(ROOT / "docs" / "images" / "help.svg")
    assert "Commands:" in lines, lines
    shown = [m[1] for line in lines[lines.index("Commands:") + 1:] if (m := re.match(r"^  (\S+)", line))]
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    names = group.list_commands(None)  # type: ignore[arg-type]  # the commands are made when asked for
    assert shown == [name for name in names if not group.get_command(None, name).hidden]  # type: ignore[arg-type,union-attr]


def test_the_target_options_table_is_generated_from_the_specs() -> None:
    """docs/cli.md's table of the targets' options is the one their option specs make (a new option shows up
    there, or this fails and says how to make it again)."""
    from tests.docgen import generator

    gen = generator("gen_options")
    MARK_END, MARK_START, options_table = gen.MARK_END, gen.MARK_START, gen.options_table

    text = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    block = text.partition(MARK_START + "\n")[2].partition(MARK_END)[0]
    assert block == options_table(), "run `python docs/captures.py options` and commit docs/cli.md"


def test_the_clis_target_flags_are_generated_from_the_specs() -> None:
    """tfcloud/cli/_target_flags.py (what `tfcloud submit --help` shows) is what the targets' specs say now."""
    from tests.docgen import generator
    from tfcloud.cli._target_flags import FLAGS

    gen = generator("gen_options")
    flag_rows, flags_module = gen.flag_rows, gen.flags_module

    path = Path(__file__).resolve().parent.parent / "tfcloud" / "cli" / "_target_flags.py"
    assert flag_rows() == FLAGS and path.read_text(encoding="utf-8") == flags_module(), \
        "run `python docs/captures.py options` and commit tfcloud/cli/_target_flags.py"


def test_the_root_helps_command_summaries_are_generated_from_the_commands() -> None:
    """tfcloud/cli/_summaries.py (what `tfcloud --help` lists, read instead of importing every command's module) is
    what the commands' docstrings say now, and lists every command."""
    from tests.docgen import generator
    from tfcloud.cli._summaries import SUMMARIES

    gen = generator("gen_options")
    path = Path(__file__).resolve().parent.parent / "tfcloud" / "cli" / "_summaries.py"
    assert gen.summaries() == SUMMARIES and path.read_text(encoding="utf-8") == gen.summaries_module(), \
        "run `python docs/captures.py options` and commit tfcloud/cli/_summaries.py"
