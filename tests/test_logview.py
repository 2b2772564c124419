"""Log lines for people: prefixes, stable colours, tails."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from tfcloud.backends.base import LogLine
from tfcloud.logview import LogPrinter, format_tail, last_lines, print_lines, replica_color, tail


def test_prefixes_are_aligned_and_text_is_not_markup() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    print_lines([LogLine(replica="chief-0", text="loss [bold]0.5[/bold]"),
                 LogLine(replica="worker-1", text="step 1")], console, replicas=["chief-0", "worker-1"])
    assert out.getvalue() == "chief-0  | loss [bold]0.5[/bold]\nworker-1 | step 1\n"


def test_colours_are_stable_and_differ_between_workers() -> None:
    assert replica_color("chief-0") == replica_color("chief-0") == "bold cyan"
    workers = {replica_color(f"worker-{i}") for i in range(4)}
    assert len(workers) == 4
    assert replica_color("ps-0") != replica_color("worker-0")
    assert replica_color("odd name")  # anything gets a colour


def test_colour_reaches_a_terminal() -> None:
    out = io.StringIO()
    LogPrinter(Console(file=out, force_terminal=True, color_system="standard")).print(
        LogLine(replica="worker-0", text="hi"))
    assert "\x1b[" in out.getvalue() and "worker-0 | " in out.getvalue()


def test_tail_and_last_lines(tmp_path: Path) -> None:
    lines = [LogLine(replica=f"worker-{i % 2}", text=str(i)) for i in range(10)]
    assert [ln.text for ln in tail(lines, 2, replica="worker-1")] == ["7", "9"]
    log = tmp_path / "chief-0.log"
    log.write_text("".join(f"line {i}\n" for i in range(5000)))
    assert last_lines(log, 3, block=64) == ["line 4997", "line 4998", "line 4999"]
    assert last_lines(tmp_path / "missing.log") == []
    assert format_tail("chief-0", ["a", "b"]) == "Last 2 lines of chief-0:\n  chief-0 | a\n  chief-0 | b"
    assert format_tail("chief-0", []) == "chief-0 printed nothing."
