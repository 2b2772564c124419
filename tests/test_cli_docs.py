"""``tfcloud docs [PAGE[#SECTION]] [--open]``: the docs shipped in the package, which every help text and hint
names as ``tfcloud docs PAGE#SECTION`` (tests/test_docs_links.py resolves each of those through the same lookup)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from rich.console import Console

from tfcloud.cli import main
from tfcloud.config import docpages
from tfcloud.view.docs import show

REPO = Path(__file__).resolve().parent.parent


def test_without_a_page_it_lists_every_page_with_its_title(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["index", "tfcloud"]
    assert [line.split()[0] for line in lines] == [page.name for page in docpages.pages()]
    assert {"data", "cli", "reference/sdk"} <= {line.split()[0] for line in lines}
    assert any(line.split(None, 1) == ["data", "Data, outputs and secrets"] for line in lines), lines


@pytest.mark.parametrize("name", ["data", "data.md", "data/", " data "])
def test_a_page_is_rendered_plain_when_piped(capsys: pytest.CaptureFixture[str], name: str) -> None:
    assert main(["docs", name]) == 0
    out = capsys.readouterr().out
    assert "Data, outputs and secrets" in out and "Outputs" in out and "Secrets" in out
    assert "\x1b[" not in out and "## Outputs" not in out  # rendered, and no terminal codes in a pipe


def test_a_section_runs_from_its_heading_to_the_next_of_its_level(capsys: pytest.CaptureFixture[str]) -> None:
    page = (REPO / "docs" / "data.md").read_text(encoding="utf-8")
    sets = docpages.find("data#data-sets")
    assert sets.anchor == "data-sets" and sets.markdown.startswith("## Data sets\n")
    assert "### What a data set ships" in sets.markdown  # a subsection stays
    assert sets.markdown.rstrip() == page[page.index("## Data sets"):page.index("## Outputs")].rstrip()
    assert docpages.find("data#what-a-data-set-ships").markdown.startswith("### What a data set ships\n")

    assert main(["docs", "data#outputs"]) == 0
    out = capsys.readouterr().out
    assert out.lstrip().startswith("Outputs") and "AIP_MODEL_DIR" in out
    assert "Data, outputs and secrets" not in out and "What a data set ships" not in out
    assert docpages.find("reference/sdk#tfcloud.sdk.submit").markdown.startswith("::: tfcloud.sdk.submit")


def test_a_terminal_gets_the_pager_with_styles(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    """rich's pager is pydoc's, which writes to stdout when that is not a terminal either (here, the capture)."""
    monkeypatch.setenv("PAGER", "cat")
    monkeypatch.delenv("MANPAGER", raising=False)
    console = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=80)
    show(docpages.find("data#outputs"), console)
    paged = capsys.readouterr().out
    assert "Outputs" in paged and "\x1b[" in paged  # through the pager, with its styles
    assert console.file.getvalue() == ""  # type: ignore[attr-defined]


@pytest.mark.parametrize(("argument", "message"), [
    ("dat", "Error: Invalid `page`: expected one of: index, architecture, cli, compat, containers, data, "),
    ("dat", "received 'dat'.\nDid you mean data? `tfcloud docs` lists the pages.\n"),
    ("nope", "received 'nope'.\n`tfcloud docs` lists the pages.\n"),
    ("data#secret", "Error: Invalid `section of data`: expected one of: data-outputs-and-secrets, data-sets, "
                    "what-a-data-set-ships, outputs, secrets"),
    ("data#secret", "received 'secret'.\nDid you mean secrets? `tfcloud docs` lists the pages.\n"),
])
def test_an_unknown_page_or_section_is_exit_2_naming_what_exists(
        capsys: pytest.CaptureFixture[str], argument: str, message: str) -> None:
    assert main(["docs", argument]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and not captured.out and "Traceback" not in captured.err


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def test_open_serves_the_pages_on_loopback_until_ctrl_c() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = subprocess.Popen([sys.executable, "-m", "tfcloud.cli", "docs", "data#outputs", "--open"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()  # the address: the only line on stdout
        assert url.startswith("http://127.0.0.1:") and url.endswith("/data/?section=outputs"), url
        status, body = _get(url)
        assert status == 200 and "<title>Data, outputs and secrets</title>" in body
        assert "AIP_MODEL_DIR" in body and "What a data set ships" not in body
        root = url.split("/data/", 1)[0]
        status, body = _get(root + "/")
        assert status == 200 and '<a href="/data/">data</a> Data, outputs and secrets' in body
        status, body = _get(root + "/ray/")
        assert status == 200 and "Output directory and restarts" in body
        status, body = _get(root + "/nope/")
        assert status == 404 and "Invalid `page`" in body
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 130
        assert server.stderr is not None
        err = server.stderr.read()
        assert "Ctrl-C stops" in err and "Traceback" not in err
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=30)
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()


def test_the_command_does_not_weigh_on_help() -> None:
    """``tfcloud --help`` and the page list import neither rich's Markdown nor http.server."""
    code = ("import sys\nfrom tfcloud.cli import main\n"
            "assert main(['--help']) == 0 and main(['docs']) == 0\n"
            "print(sorted(m for m in ('rich.markdown', 'http.server', 'tfcloud.view.docs') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "['tfcloud.view.docs']"
