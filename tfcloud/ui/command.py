"""``tfcloud ui``: the command's body (the CLI's wrapper only passes its options here).

Checks the extra (``tfcloud[ui]``) and the address first (a host other than loopback needs ``--token``), binds
the socket, prints the address with its token on stdout (the only line there, for scripts), opens the browser
unless told not to, and serves until Ctrl-C (exit 130).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ui_command"]


def ui_command(host: str = "127.0.0.1", port: int | None = None, token: str | None = None,
               open_browser: bool = True, *, targets: Sequence[str] | None = None,
               ray_address: str | None = None, options: Mapping[str, Any] | None = None) -> int:
    """Serve the dashboard until Ctrl-C; the exit code (130 when interrupted). ``targets``: which targets to
    list (default every one: local, vertex, ray); ``options``: the targets' options as every verb takes them
    (``ray_address``, ``project``, ``target_options``...; ``ray_address``: the Ray cluster's address)."""
    import typer

    from tfcloud.config.extras import require_ui_extra
    from tfcloud.errors import ValidationError
    from tfcloud.ui.server import check_bind
    from tfcloud.ui.views import listed_targets
    from tfcloud.view.console import get_console

    require_ui_extra()
    check_bind(host, port, token)
    known = listed_targets()
    for name in targets or ():
        if name not in known:
            raise ValidationError("--target", "one of " + ", ".join(known), name)
    from tfcloud.ui.server import Dashboard

    dashboard = Dashboard(host=host, port=port, token=token, targets=targets, ray_address=ray_address,
                          options=options)
    console = get_console()
    from tfcloud.ui.server import weak_token

    weak = weak_token(token) if token else None
    if weak:  # only loopback gets here with one (check_bind refuses it elsewhere)
        console.print(f"Note: that --token is easy to guess ({weak}); it would be refused on an address other "
                      "than loopback.", markup=False, highlight=False, style="yellow")
    console.print(f"tfcloud ui: the dashboard of {', '.join(dashboard.targets or known)} jobs and studies. "
                  "Open:", markup=False, highlight=False)
    typer.echo(dashboard.url)
    console.print("Ctrl-C stops it.", markup=False, highlight=False, style="dim")
    if open_browser:
        threading.Thread(target=dashboard.open_browser, daemon=True).start()
    try:
        dashboard.serve()
    except KeyboardInterrupt:
        return 130
    return 0

