"""``tfcloud docs``: the docs shipped in the package (:mod:`tfcloud.view.docs`), which every help text and hint
links to as ``tfcloud docs PAGE#SECTION`` (:func:`tfcloud.config.docsite.page`)."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import Annotated, Optional

import typer

from tfcloud.cli._app import app

__all__ = ["docs"]


@app.command()
def docs(
    page: Annotated[Optional[str], typer.Argument(  # noqa: UP045
        metavar="[PAGE[#SECTION]]", help="A page (data, data.md, reference/sdk) and, after #, a heading's anchor "
                                         "as the docs site makes it (data#secrets).", show_default=False)] = None,
    open_: Annotated[bool, typer.Option(
        "--open", help="Serve the pages as HTML on 127.0.0.1 (a free port; the address is printed) until Ctrl-C.")]
    = False,
) -> None:
    """Read the docs: the list of pages, a page, or a section of one (from its heading to the next of its level).

    Help texts and hints name a section as PAGE#SECTION; the pages ship with tfcloud. --open serves them
    rendered as the terminal shows them (the full site with its API reference is built by `nox -s docs` from a
    checkout)."""
    from tfcloud.config.docpages import find
    from tfcloud.view import docs as view

    section = find(page) if page is not None else None
    if not open_:
        if section is None:
            typer.echo(view.page_list())
        else:
            view.show(section)
        return
    with view.serving() as server:
        host, port = server.server_address[:2]
        where = view.page_path(section.page.name, section.anchor) if section else "/"
        typer.echo(f"http://{host!s}:{port}{where}")
        typer.echo("Serving the docs on loopback; Ctrl-C stops.", err=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
