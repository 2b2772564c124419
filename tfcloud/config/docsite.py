"""The links that help texts and hints print: ``tfcloud docs PAGE#SECTION``, which shows that section of the docs
shipped in the package (:mod:`tfcloud.config.docpages`), so a link reaches the user wherever tfcloud is installed
(the docs site that mkdocs.yml and .readthedocs.yaml describe is not published yet, so no link points there).
Imports nothing (``tfcloud --help`` reads it)."""

from __future__ import annotations

__all__ = ["page"]


def page(name: str, anchor: str = "") -> str:
    """The command that shows ``docs/NAME.md`` (``page("ray")`` is ``tfcloud docs ray``), at the heading whose
    anchor (as mkdocs makes it) is ``anchor`` if given (``tfcloud docs ray#output-directory-and-restarts``)."""
    return f"tfcloud docs {name}" + (f"#{anchor}" if anchor else "")
