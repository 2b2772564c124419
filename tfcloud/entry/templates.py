"""Templates are files (``templates/`` in the source tree, ``tfcloud/_templates`` in the wheel), rendered by
:func:`render`, the only place that turns a template into text."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

__all__ = ["render", "template_dir"]


@functools.cache
def template_dir() -> Path:
    """Where the template files live: inside the installed package, else the source checkout."""
    package = Path(__file__).resolve().parents[1]  # this module is in tfcloud/entry
    for candidate in (package / "_templates", package.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("tfcloud's templates are missing from this installation")


def render(name: str, **context: Any) -> str:
    """Render ``templates/<name>`` (Jinja2, strict about undefined names) with ``context``."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["pyrepr"] = repr
    return env.get_template(name).render(**context)
