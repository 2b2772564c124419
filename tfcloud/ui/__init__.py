"""``tfcloud ui`` and ``tfcloud.ui()``: one local dashboard for every job and study, on every target.

- :func:`ui`: from Python or a notebook, the dashboard in a background thread of this process; returns the
  running :class:`~tfcloud.ui.server.Dashboard` (a notebook shows its link; elsewhere the browser opens it).
- :mod:`tfcloud.ui.command`: the ``tfcloud ui`` command's body; :mod:`tfcloud.ui.server`: uvicorn on a socket of
  its own; :mod:`tfcloud.ui.app`: the Starlette app, its token gate and the log stream; :mod:`tfcloud.ui.views`:
  what the pages show, read through :mod:`tfcloud.sdk`; ``templates/`` and ``static/``: the pages (no build step).

Needs the ``ui`` extra (``pip install "tfcloud[ui]"``: starlette and uvicorn). Importing this package imports
neither (``tfcloud.ui`` is a public name: a job's image carries this file).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfcloud.ui.server import Dashboard

__all__ = ["ui"]


def ui(*, host: str = "127.0.0.1", port: int | None = None, token: str | None = None,
       open_browser: bool | None = None, targets: Sequence[str] | None = None,
       ray_address: str | None = None, **options: Any) -> Dashboard:
    """Start the dashboard in a background thread and return it (``.url``, ``.stop()``). ``open_browser``: open
    it in the web browser (default: yes, except in a notebook, which shows the returned dashboard's link).
    ``host``, ``port``, ``token``, ``targets``, ``ray_address``: as ``tfcloud ui``'s options (a host other than
    loopback needs a token of your own); ``options``: the targets' options as every verb takes them
    (``project=``, ``emulator_host=``, ``target_options={...}`` with one target), each passed to the listed
    targets that take it."""
    from tfcloud.config.extras import require_ui_extra
    from tfcloud.ui.server import Dashboard

    require_ui_extra()
    dashboard = Dashboard(host=host, port=port, token=token, targets=targets, ray_address=ray_address,
                          options=options).start()
    if open_browser if open_browser is not None else "ipykernel" not in sys.modules:
        import webbrowser

        webbrowser.open(dashboard.url)
    return dashboard


class _CallableModule(types.ModuleType):
    """``tfcloud.ui(...)`` whichever import came first: once a submodule (``tfcloud.ui.app``) is imported, the
    name ``tfcloud.ui`` is this package, not the function; calling the package calls :func:`ui`."""

    def __call__(self, **options: Any) -> Dashboard:
        return ui(**options)


sys.modules[__name__].__class__ = _CallableModule
