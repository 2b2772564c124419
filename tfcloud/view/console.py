"""The one rich console for people (stderr), created on first use. Library modules log diagnostics to
``logging.getLogger("tfcloud")`` and print nothing; the CLI and the SDK facade talk to people here.

:func:`configure` (the CLI's ``-v``/``-q``, once per command) sets how much people see: the ``tfcloud``
logger's level and its one rich handler on stderr, whether progress prints (``-q`` hides it), and whether the
replicas' known TensorFlow start-up noise shows (``-v``). Errors always print (:func:`get_error_console`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

    from rich.console import Console

__all__ = ["configure", "get_console", "get_error_console", "reset", "verbosity"]

#: verbosity -> the tfcloud logger's level: -1 (-q) errors, 0 warnings, 1 (-v) info (retries), 2 (-vv) debug.
#: (logging's ERROR, WARNING, INFO, DEBUG: `logging` itself is imported by configure(), not by `tfcloud --help`.)
_LEVELS = {-1: 40, 0: 30, 1: 20}
_DEBUG = 10
_state = {"verbosity": 0}
_HANDLER_NAME = "tfcloud-console"


@functools.cache
def get_console() -> Console:
    from rich.console import Console

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    console.quiet = _state["verbosity"] < 0
    return console


@functools.cache
def get_error_console() -> Console:
    """A console for errors and a job's outcome: never made quiet by ``-q``."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def verbosity() -> int:
    """The level :func:`configure` set: -1 quiet, 0 default, 1 or more verbose."""
    return _state["verbosity"]


def configure(*, verbosity: int = 0) -> None:
    """Set what people see (see the module docstring). Safe to call again: the ``tfcloud`` logger keeps one
    handler, which prints each record once (it does not propagate to the root logger)."""
    import logging

    _state["verbosity"] = verbosity
    if get_console.cache_info().currsize:  # made already; else it is made quiet or not when first used
        get_console().quiet = verbosity < 0
    logger = logging.getLogger("tfcloud")
    for handler in [h for h in logger.handlers if h.get_name() == _HANDLER_NAME]:
        logger.removeHandler(handler)
    handler = _lazy_rich_handler()()
    handler.set_name(_HANDLER_NAME)
    logger.addHandler(handler)
    logger.setLevel(_LEVELS.get(verbosity, _DEBUG))
    logger.propagate = False


@functools.cache
def _lazy_rich_handler() -> type[logging.Handler]:
    import logging

    class LazyRichHandler(logging.Handler):
        """Rich's handler, made on the first record: a command that logs nothing never imports rich.logging
        (most of ``tfcloud status``'s start-up otherwise)."""

        def __init__(self) -> None:
            super().__init__()
            self._rich: logging.Handler | None = None

        def emit(self, record: logging.LogRecord) -> None:
            if self._rich is None:
                from rich.logging import RichHandler

                self._rich = RichHandler(console=get_error_console(), show_time=False, show_path=False,
                                         markup=False, rich_tracebacks=False, highlighter=None)
            self._rich.handle(record)

    return LazyRichHandler


def reset() -> None:
    """Undo :func:`configure` (for callers that run the CLI in their own process, like tests)."""
    import logging

    _state["verbosity"] = 0
    if get_console.cache_info().currsize:
        get_console().quiet = False
    logger = logging.getLogger("tfcloud")
    for handler in [h for h in logger.handlers if h.get_name() == _HANDLER_NAME]:
        logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)
    logger.propagate = True
