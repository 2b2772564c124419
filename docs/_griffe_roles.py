"""A griffe extension for the API reference: tfcloud's docstrings cite with Sphinx roles (``:func:`attach```,
``:class:`~tfcloud.flow.plan.Plan```), which Markdown shows as they are. This turns each into a cross-reference
to the object when the reference renders it, and into plain code when it does not (autorefs' ``optional``:
no warning under ``mkdocs build --strict``), and an RST ``::`` before a literal block into ``:``.

Loaded by mkdocs.yml (``extensions: [docs/_griffe_roles.py]``); not part of the package.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:mod|func|class|meth|attr|data|exc|obj):`(?P<target>[^`]+)`")
_LITERAL_BLOCK = re.compile(r"(?<=\S)::$", re.MULTILINE)


def _full_path(obj: griffe.Object, name: str) -> str:
    """``name`` as the docstring's object sees it (its own members, its module's names), else as written."""
    scope: griffe.Object | None = obj if obj.is_class or obj.is_module else obj.parent
    head, _, rest = name.partition(".")
    while scope is not None:
        try:
            found = scope.resolve(head)
        except griffe.NameResolutionError:
            scope = scope.parent
            continue
        return f"{found}.{rest}" if rest else found
    return name


def _link(obj: griffe.Object, match: re.Match[str]) -> str:
    target = match["target"].strip()
    short = target.startswith("~")
    target = target.lstrip("~.")
    shown = target.rsplit(".", 1)[-1] if short else target
    identifier = _full_path(obj, target)
    return f'<autoref identifier="{html.escape(identifier)}" optional><code>{html.escape(shown)}</code></autoref>'


class SphinxRoles(griffe.Extension):
    """Rewrites the Sphinx roles of every docstring once the whole tree is loaded (names resolve then)."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        docstring = obj.docstring
        if docstring is None or obj.is_alias:
            return
        value = _ROLE.sub(lambda match: _link(obj, match), docstring.value)
        docstring.value = _LITERAL_BLOCK.sub(":", value)
