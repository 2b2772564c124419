"""The one rich console for people (stderr), created on first use. Library modules log diagnostics to
``logging.getLogger("tfcloud")`` and print nothing; the CLI and the SDK facade talk to people here."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["get_console"]


@functools.cache
def get_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)
