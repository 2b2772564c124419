"""The docs as shipped in the package: ``docs/*.md`` (``tfcloud/_docs`` in the wheel, ``docs/`` beside the
package in a checkout), their pages, their headings' anchors and a page's section, for ``tfcloud docs`` and the
links that help texts and hints print (:func:`tfcloud.config.docsite.page`).

A heading's anchor is what Python-Markdown's ``toc`` extension makes for mkdocs (mkdocs.yml's
``markdown_extensions``), so ``tfcloud docs data#secrets`` and the site's ``data/#secrets`` name one heading: the
heading's text as rendered (code spans keep their text, links keep their label, emphasis and HTML tags go),
slugified by ``markdown.extensions.toc.slugify`` (NFKD to ASCII, everything but word characters, spaces and
``-`` dropped, lower case, runs of spaces and the separator made one separator) and made unique the way ``toc``
does (a second ``Usage`` is ``usage_1``). An explicit ``{#id}`` (``attr_list``) is the anchor as written; an
object that mkdocstrings renders (``::: tfcloud.sdk.submit``) is an anchor of its full path.
tests/docsite.py checks these against mkdocs.yml's settings.
"""

from __future__ import annotations

import difflib
import html
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tfcloud.errors import ValidationError

__all__ = ["Heading", "Page", "Section", "docs_dir", "find", "heading_text", "headings", "pages", "slugify",
           "unique"]


def docs_dir() -> Path:
    """Where the pages are: ``tfcloud/_docs`` in an installed wheel, else ``docs/`` beside the package."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "_docs", package.parent / "docs"):
        if (candidate / "index.md").is_file():
            return candidate
    raise FileNotFoundError(f"tfcloud's docs are in neither {package / '_docs'} nor {package.parent / 'docs'}")


def slugify(text: str, separator: str = "-", *, keep_unicode: bool = False) -> str:
    """``markdown.extensions.toc.slugify`` (and ``slugify_unicode`` with ``keep_unicode``)."""
    if not keep_unicode:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(rf"[{re.escape(separator)}\s]+", separator, text)


def unique(anchor: str, used: set[str]) -> str:
    """``toc``'s ``unique``: the anchor, or with ``_1``, ``_2``, ... when a heading before took it."""
    while anchor in used or not anchor:
        numbered = re.match(r"^(.*)_([0-9]+)$", anchor)
        anchor = f"{numbered[1]}_{int(numbered[2]) + 1}" if numbered else f"{anchor}_1"
    used.add(anchor)
    return anchor


_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_LINK = re.compile(r"!?\[((?:[^\]\[]|\[[^\]]*\])*)\](?:\([^)]*\)|\[[^\]]*\])")
_STRONG_EM = re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1|(?<!\w)(_{1,3})(?=\S)(.+?)(?<=\S)\3(?!\w)")
_TAG = re.compile(r"<[^>]+>")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|:\"'])")


def heading_text(source: str) -> str:
    """A heading's Markdown as the text it renders to (what ``toc`` slugifies)."""
    spans: list[str] = []

    def stash(match: re.Match[str]) -> str:
        spans.append(match[2].strip())
        return f"\x02{len(spans) - 1}\x03"

    text = _CODE_SPAN.sub(stash, source)  # a code span's text is literal: its `_` and `*` stay
    text = _ESCAPE.sub(lambda m: f"\x02e{ord(m[1])}\x03", text)
    text = _LINK.sub(lambda m: m[1], text)
    previous = None
    while previous != text:
        previous, text = text, _STRONG_EM.sub(lambda m: m[2] if m[1] else m[4], text)
    text = _TAG.sub("", text)
    text = re.sub(r"\x02e(\d+)\x03", lambda m: chr(int(m[1])), text)
    text = re.sub(r"\x02(\d+)\x03", lambda m: spans[int(m[1])], text)
    return html.unescape(text).strip()


_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})")
_ATX = re.compile(r"^(#{1,6})((?:\\.|[^\\])*?)#*\s*$")  # Python-Markdown's: no space needed, none before
_ATTRS = re.compile(r"\s*\{:?\s*([^}]*)\}\s*$")
_SETEXT = re.compile(r"^[=-]+ *$")
_ADMONITION = re.compile(r"^(\s*)(?:!!!|\?\?\?\+?)\s")
_AUTODOC = re.compile(r"^:::\s+([\w.]+)\s*$")


@dataclass(frozen=True, kw_only=True)
class Heading:
    """A heading of a page: its Markdown text, its explicit ``{#id}`` (or None), its level (1 to 6; an object
    mkdocstrings renders is 2, its ``heading_level``) and the index of the line it starts on."""

    text: str
    explicit: str | None
    level: int
    line: int


def headings(markdown: str) -> Iterator[Heading]:
    """Each heading of a page outside code blocks, as Python-Markdown finds them (an ATX heading starts its line,
    even inside a paragraph; a setext underline follows a block's first line; an admonition's body counts); an
    object mkdocstrings renders comes with text "" and its path as its explicit id."""
    fence: str | None = None
    indents = [0]  # the admonitions' bodies this line may be in
    previous, block_start = "", True
    for number, raw in enumerate(markdown.splitlines()):
        if fence is not None:
            closing = _FENCE_OPEN.match(raw)
            if closing and closing[1][0] == fence[0] and len(closing[1]) >= len(fence) and \
                    not raw.strip().lstrip(fence[0]):
                fence = None
            previous, block_start = "", True
            continue
        if not raw.strip():
            previous, block_start = "", True
            continue
        width = len(raw) - len(raw.lstrip())
        while width < indents[-1]:
            indents.pop()
        line = raw[indents[-1]:]
        if (opened := _FENCE_OPEN.match(raw)) is not None:
            fence = opened[1]
        elif (admonition := _ADMONITION.match(line)) is not None:
            indents.append(indents[-1] + len(admonition[1]) + 4)
        elif (autodoc := _AUTODOC.match(line)) is not None:
            yield Heading(text="", explicit=autodoc[1], level=2, line=number)
        elif (atx := _ATX.match(line)) is not None:
            text, explicit = _split_attrs(atx[2].strip())
            yield Heading(text=text, explicit=explicit, level=len(atx[1]), line=number)
            previous, block_start = "", True  # what follows a heading is a block of its own
            continue
        elif _SETEXT.match(line) and previous and block_start and not previous.startswith((" " * 4, "\t")):
            text, explicit = _split_attrs(previous.strip())
            yield Heading(text=text, explicit=explicit, level=1 if line.startswith("=") else 2, line=number - 1)
            previous, block_start = "", True
            continue
        block_start = not previous
        previous = line


def _split_attrs(text: str) -> tuple[str, str | None]:
    attrs = _ATTRS.search(text)
    if attrs is None:
        return text, None
    explicit = re.search(r"(?:^|\s)#([^\s#}]+)", attrs[1])
    return text[:attrs.start()], explicit[1] if explicit else None


def anchored(markdown: str) -> list[tuple[str, Heading]]:
    """Each heading of a page with its anchor, in the page's order (explicit ids are handed out first, as
    ``toc`` does)."""
    found = list(headings(markdown))
    used = {heading.explicit for heading in found if heading.explicit}
    return [(heading.explicit or unique(slugify(heading_text(heading.text)), used), heading) for heading in found]


@dataclass(frozen=True, kw_only=True)
class Page:
    """A page: its name (``data``, ``reference/sdk``: its path under docs/ without ``.md``), its title (its first
    heading) and its file."""

    name: str
    title: str
    path: Path


@dataclass(frozen=True, kw_only=True)
class Section:
    """What ``tfcloud docs PAGE[#SECTION]`` shows: the page, the anchor (None: the whole page) and its Markdown."""

    page: Page
    anchor: str | None
    markdown: str


def _title(markdown: str, name: str) -> str:
    first = next((heading for heading in headings(markdown) if heading.text), None)
    return heading_text(first.text) if first else name


def pages(root: Path | None = None) -> list[Page]:
    """Every page, the home page (``index``) first, then by name."""
    root = root or docs_dir()
    found = [Page(name=path.relative_to(root).with_suffix("").as_posix(),
                  title=_title(path.read_text(encoding="utf-8"), path.stem), path=path)
             for path in root.rglob("*.md")]
    return sorted(found, key=lambda page: (page.name != "index", page.name))


def _unknown(field: str, expected: str, received: str, known: list[str]) -> ValidationError:
    close = difflib.get_close_matches(received, known, n=3, cutoff=0.6)
    hint = (f"Did you mean {' or '.join(close)}? " if close else "") + "`tfcloud docs` lists the pages."
    return ValidationError(field, f"one of: {', '.join(known)}", received, hint=hint)


def find(reference: str, root: Path | None = None) -> Section:
    """The page and section that ``PAGE[#SECTION]`` names (``data``, ``data.md``, ``reference/sdk#tfcloud.sdk.submit``,
    ``ray/#restarts``: the site's address works too): the whole page, or from the heading whose anchor is
    SECTION to the next heading of the same level or above. An unknown page or section is a
    :class:`~tfcloud.errors.ValidationError` that names those that exist and the closest ones."""
    name, hashed, anchor = reference.strip().partition("#")
    name = name.strip().strip("/").removesuffix(".md") or "index"
    known = pages(root)
    by_name = {page.name: page for page in known}
    if name not in by_name and f"{name}/index" in by_name:
        name = f"{name}/index"
    if name not in by_name:
        raise _unknown("page", "a page of the docs", name, list(by_name))
    page = by_name[name]
    markdown = page.path.read_text(encoding="utf-8")
    if not hashed:
        return Section(page=page, anchor=None, markdown=markdown)
    found = anchored(markdown)
    for index, (slug, heading) in enumerate(found):
        if slug == anchor:
            end = next((later.line for _, later in found[index + 1:] if later.level <= heading.level), None)
            lines = markdown.splitlines()[heading.line:end]
            return Section(page=page, anchor=anchor, markdown="\n".join(lines).rstrip() + "\n")
    raise _unknown(f"section of {page.name}", "a heading's anchor", anchor, [slug for slug, _ in found])
