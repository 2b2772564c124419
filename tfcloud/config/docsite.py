"""Where the docs site's pages are (mkdocs.yml's ``site_url``), for help texts and hints: a user who installed a
wheel has no ``docs/`` folder, so they link to the site. Imports nothing (``tfcloud --help`` reads it)."""

from __future__ import annotations

__all__ = ["SITE_URL", "page"]

#: The docs site's root, as mkdocs.yml's ``site_url`` says (tests/test_docs.py checks that they agree).
SITE_URL = "https://tfcloud.readthedocs.io/en/latest/"


def page(name: str, anchor: str = "") -> str:
    """The address of the site's page made from ``docs/NAME.md`` (``page("ray")``), at ``anchor`` if given."""
    return f"{SITE_URL}{name}/" + (f"#{anchor}" if anchor else "")
