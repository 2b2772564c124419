"""``tfcloud ui``: the local dashboard (:mod:`tfcloud.ui`)."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import Annotated, Any, Optional

import typer

from tfcloud.cli._app import app
from tfcloud.cli._common import ascii_integer
from tfcloud.cli._options import TargetOptionOpt, given_target_options, with_place_options

__all__ = ["ui"]


@app.command()
@with_place_options
def ui(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="The address to listen on; another than loopback needs --token.")]
    = "127.0.0.1",
    port: Annotated[Optional[int], typer.Option(  # noqa: UP045
        help="The port (default: 8790, else any free one; 0: any free one).", show_default=False,
        parser=ascii_integer, metavar="INTEGER")] = None,
    token: Annotated[Optional[str], typer.Option(  # noqa: UP045
        help="The secret in the address (default: a new random one, printed).", show_default=False)] = None,
    browser: Annotated[bool, typer.Option("--browser/--no-browser", help="Open it in the web browser.")] = True,
    target: Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
        "--target", metavar="TARGET", help="Only these targets' jobs: local, vertex, ray, a plug-in's "
                                           "(repeatable; default: every one configured).", show_default=False)] = None,
    target_option: TargetOptionOpt = None,
    **target_options: Any,
) -> None:
    """Open the dashboard: every job and study, their logs live, timelines, plots; cancel from the page.

    The targets' options are given as on every verb (--ray ADDRESS, --project, --emulator-host...: each to the
    listed targets that take it; -o KEY=VALUE with one --target)."""
    from tfcloud.ui.command import ui_command

    options = given_target_options(ctx, target_options, target=None, plugin_options=target_option)
    raise typer.Exit(ui_command(host, port, token, browser, targets=target, options=options))
