"""The docs shipped in the package, as people see them (``tfcloud docs``): the list of pages, a page or a section
rendered in the terminal by rich's Markdown, and ``--open``'s server on loopback.

``--open`` serves the same rendering as HTML (rich's ``export_html``: the page as the terminal shows it, with an
index of the pages), not the mkdocs site: building that site needs mkdocs and its theme, which are not
dependencies of tfcloud (``nox -s docs`` builds it from a checkout). rich is imported inside the functions, so
``tfcloud --help`` does not pay for it.
"""

from __future__ import annotations

import html
import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from tfcloud.config.docpages import Page, Section, find, pages
from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

    from rich.console import Console

__all__ = ["page_list", "page_path", "render_html", "serving", "show"]


def page_list(known: list[Page] | None = None) -> str:
    """Every page's name and title, one a line."""
    known = pages() if known is None else known
    width = max(len(page.name) for page in known)
    return "\n".join(f"{page.name:<{width}}  {page.title}" for page in known)


def show(section: Section, console: Console | None = None) -> None:
    """The page or section rendered by rich's Markdown on stdout: through the pager when stdout is a terminal,
    plain when it is piped."""
    from rich.console import Console
    from rich.markdown import Markdown

    console = console or Console(highlight=False)
    markdown = Markdown(section.markdown)
    if console.is_terminal:
        with console.pager(styles=True):
            console.print(markdown)
    else:
        console.print(markdown)


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><title>{title}</title>
<style>{{stylesheet}} body {{{{ color: {{foreground}}; background-color: {{background}}; margin: 2em; }}}}
pre {{{{ font-family: Menlo, 'DejaVu Sans Mono', monospace; }}}} a {{{{ color: #6cb6ff; }}}}</style></head>
<body><p><a href="/">tfcloud docs</a>{crumb}</p>
<pre><code>{{code}}</code></pre></body></html>
"""


def render_html(section: Section | None) -> str:
    """A page or section as the terminal shows it, as HTML (None: the index of the pages, each a link)."""
    from rich.console import Console
    from rich.markdown import Markdown
    from rich.terminal_theme import MONOKAI

    if section is None:
        items = "".join(f'<li><a href="{html.escape(page_path(page.name))}">{html.escape(page.name)}</a> '
                        f"{html.escape(page.title)}</li>" for page in pages())
        return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="UTF-8"><title>tfcloud docs</title></head>'
                f"<body><h1>tfcloud docs</h1><ul>{items}</ul></body></html>\n")
    console = Console(record=True, width=100, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    console.print(Markdown(section.markdown))
    crumb = f" / {html.escape(section.page.name)}" + (f" # {html.escape(section.anchor)}" if section.anchor else "")
    title = html.escape(section.page.title)
    return console.export_html(theme=MONOKAI, code_format=_HTML.format(title=title, crumb=crumb))


def page_path(name: str, anchor: str | None = None) -> str:
    """The server's path of a page (``/data/``) or a section (``/data/?section=secrets``)."""
    return f"/{name}/" + (f"?section={anchor}" if anchor else "")


def _answer(path: str) -> tuple[int, str]:
    parts = urlsplit(path)
    name = parts.path.strip("/")
    if not name:
        return 200, render_html(None)
    anchor = parse_qs(parts.query).get("section", [""])[0]
    try:
        return 200, render_html(find(name + (f"#{anchor}" if anchor else "")))
    except ValidationError as exc:
        return 404, f"<!DOCTYPE html>\n<p>{html.escape(str(exc))}</p><p><a href='/'>tfcloud docs</a></p>\n"


@contextmanager
def serving() -> Iterator[ThreadingHTTPServer]:
    """An HTTP server on 127.0.0.1 and a free port that serves the index (``/``) and each page (:func:`page_path`)
    rendered by :func:`render_html`; closed on leaving. The caller runs ``serve_forever()``."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            status, body = _answer(self.path)
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # http.server's names
            pass  # no line per request on the terminal

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    try:
        yield server
    finally:
        server.server_close()
