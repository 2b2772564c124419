"""The docs site as mkdocs makes it, read without mkdocs (the test environment has no mkdocs): which pages it
has (mkdocs.yml's ``nav``), the anchors of each page's headings, and where an address on the site lands. The
headings and their anchors are :mod:`tfcloud.config.docpages`' (``tfcloud docs PAGE#SECTION`` finds a section
with them); this module reads mkdocs.yml's settings and refuses those the anchors would not match.

A heading's anchor is what Python-Markdown's ``toc`` extension makes (mkdocs.yml's ``markdown_extensions``): the
heading's text as rendered (code spans keep their text, links keep their label, emphasis and HTML tags go),
slugified by ``markdown.extensions.toc.slugify`` (NFKD to ASCII, everything but word characters, spaces and
``-`` dropped, lower case, runs of spaces and the separator made one separator) and made unique the way ``toc``
does (a second ``Usage`` is ``usage_1``). An explicit ``{#id}`` (``attr_list``) is the anchor as written. An
object that mkdocstrings renders (``::: tfcloud.sdk.submit``) is an anchor of its full path.
``toc``'s ``permalink`` adds a link beside each heading and changes no anchor. A ``slugify`` other than
Python-Markdown's two, or a page addressed other than by mkdocs' ``use_directory_urls`` (``ray/`` is
``docs/ray.md``, ``reference/`` is ``docs/reference/index.md``), is refused by :func:`load`, so that a change
of mkdocs.yml cannot make these checks pass for the wrong reasons.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from tfcloud.config.docpages import heading_text, headings, slugify, unique

ROOT = Path(__file__).resolve().parent.parent

#: Python-Markdown's slugify functions, by the name mkdocs.yml gives them (``!!python/name:...``); the value is
#: whether it keeps Unicode (``slugify_unicode``) or folds the text to ASCII first (``slugify``, the default).
_SLUGIFIERS = {"markdown.extensions.toc.slugify": False, "markdown.extensions.toc.slugify_unicode": True}


class _MkdocsLoader(yaml.SafeLoader):
    """A safe loader that reads mkdocs.yml's Python tags as text: ``!!python/name:X`` as ``X``, any other
    (``!!python/object/apply:X``) as ``python/object/apply:X``; nothing is imported or called."""


def _python_name(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> str:
    return suffix


def _python_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> str:
    return f"python/{suffix}"


def _env(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> str:
    return f"!ENV{suffix}"


_MkdocsLoader.add_multi_constructor("tag:yaml.org,2002:python/name:", _python_name)
_MkdocsLoader.add_multi_constructor("tag:yaml.org,2002:python/", _python_tag)
_MkdocsLoader.add_multi_constructor("!ENV", _env)


def read_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_MkdocsLoader)


@dataclass(frozen=True)
class Site:
    """The site made from ``docs`` at ``url`` (mkdocs.yml's ``site_url``), its nav and its ``toc`` settings."""

    url: str
    docs: Path
    nav: frozenset[str]
    separator: str = "-"
    keep_unicode: bool = False
    _anchors: dict[Path, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    def anchors(self, page: Path) -> frozenset[str]:
        """Every anchor the page has, in the order ``toc`` hands them out (explicit ids first)."""
        if page not in self._anchors:
            found = list(headings(page.read_text(encoding="utf-8")))
            used = {heading.explicit for heading in found if heading.explicit}
            for heading in found:
                if not heading.explicit:
                    unique(slugify(heading_text(heading.text), self.separator, keep_unicode=self.keep_unicode),
                           used)
            self._anchors[page] = frozenset(used)
        return self._anchors[page]

    def source(self, path: str) -> Path | None:
        """The page a path on the site is made from (``use_directory_urls``): ``ray/`` -> ``ray.md``,
        ``reference/`` -> ``reference/index.md``, ``""`` -> ``index.md``."""
        stem = path.rstrip("/")
        for candidate in ([f"{stem}.md", f"{stem}/index.md"] if stem else ["index.md"]):
            if (self.docs / candidate).is_file():
                return self.docs / candidate
        return None

    def problem(self, url: str) -> str | None:
        """Why ``url`` does not land on a page of the site and a heading of it; None when it does."""
        if not url.startswith(self.url):
            return f"not on the site: expected an address starting {self.url}"
        parts = urlsplit(url)
        path = url[len(self.url):].partition("#")[0].partition("?")[0]
        if parts.query:
            return "has a query: the site's pages take none"
        if path and not path.endswith("/"):
            return (f"{path!r} is not a page's address: mkdocs (use_directory_urls) serves docs/NAME.md as "
                    "NAME/ (tfcloud.config.docsite.page() writes it)")
        page = self.source(path)
        if page is None:
            return f"no page: neither docs/{path.rstrip('/') or 'index'}.md nor docs/{path}index.md exists"
        name = page.relative_to(self.docs).as_posix()
        if name not in self.nav:
            return f"docs/{name} is not in mkdocs.yml's nav"
        if "#" in url and parts.fragment not in self.anchors(page):
            return f"no heading #{parts.fragment} in docs/{name}"
        return None


def load(root: Path = ROOT) -> Site:
    """The site that ``root``'s mkdocs.yml describes."""
    config = read_yaml(root / "mkdocs.yml")
    assert config.get("use_directory_urls", True), "use_directory_urls: false changes every address"
    toc: Mapping[str, Any] = {}
    for extension in config.get("markdown_extensions", []):
        if isinstance(extension, Mapping) and "toc" in extension:
            toc = extension["toc"] or {}
    slugifier = toc.get("slugify", "markdown.extensions.toc.slugify")
    assert slugifier in _SLUGIFIERS, f"mkdocs.yml's toc slugify {slugifier!r} is not one tests/docsite.py knows"
    return Site(url=config["site_url"], docs=root / config.get("docs_dir", "docs"), nav=frozenset(_nav(config["nav"])),
                separator=toc.get("separator", "-"), keep_unicode=_SLUGIFIERS[slugifier])


def _nav(items: Any) -> Iterator[str]:
    if isinstance(items, str):
        if not re.match(r"^[a-z][a-z0-9+.-]*:", items):  # an external link in the nav is not a page
            yield items
    elif isinstance(items, list):
        for item in items:
            yield from _nav(item)
    elif isinstance(items, Mapping):
        for item in items.values():
            yield from _nav(item)
