"""Terminal captures for the docs: runs real tfcloud commands and saves what they print as SVG (rich's
``Console(record=True)`` and ``export_svg``) under docs/images/.

    python docs/captures.py            # every capture (the local job trains for real: needs TensorFlow)
    python docs/captures.py machines   # only some, by name
    nox -s captures                    # the same in its own environment (not run by CI)

Each command runs from the repository's root as a subprocess, with colours forced, a fixed width and a
temporary TFCLOUD_HOME (removed afterwards), so a capture is what a user's terminal shows. Read the SVGs' diff
before committing: job ids, times and losses change from run to run.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
WIDTH = 104
EXAMPLE = "examples/digits_keras.py"


@dataclass(frozen=True, kw_only=True)
class Capture:
    name: str
    title: str
    args: tuple[str, ...]
    #: Keep at most this many lines of the output (the head), or all when None.
    head: int | None = None


CAPTURES = (
    Capture(name="help", title="tfcloud --help", args=("--help",)),
    Capture(name="machines", title="tfcloud machines", args=("machines",)),
    Capture(name="plan", title="tfcloud submit examples/digits_keras.py --worker-count 2 --dry-run",
            args=("submit", EXAMPLE, "--worker-count", "2", "--dry-run"), head=40),
    Capture(name="local-job", title="tfcloud submit examples/digits_keras.py --worker-count 1",
            args=("submit", EXAMPLE, "--worker-count", "1")),
)


def run(capture: Capture, *, home: Path) -> tuple[str, int]:
    """The command's stdout and stderr as the terminal shows them (ANSI colours included), and its exit code."""
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": str(WIDTH), "TERM": "xterm-256color",
           "TFCLOUD_HOME": str(home), "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                                    os.environ.get("PYTHONPATH")]))}
    env.pop("NO_COLOR", None)
    done = subprocess.run([sys.executable, "-m", "tfcloud.cli", *capture.args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900, check=False)
    return done.stdout, done.returncode


def tidy(output: str, *, home: Path) -> str:
    """Paths of this machine become relative ones: the repository as `.`, TFCLOUD_HOME as `~/.tfcloud`."""
    output = output.replace(str(home), "~/.tfcloud")
    return output.replace(str(ROOT) + os.sep, "").replace(str(ROOT), ".")


def save(capture: Capture, output: str) -> Path:
    console = Console(record=True, width=WIDTH, force_terminal=True, color_system="truecolor", file=io.StringIO())
    lines = output.rstrip("\n").split("\n")
    if capture.head is not None and len(lines) > capture.head:
        lines = [*lines[: capture.head], "…"]
    console.print(Text.from_ansi("\n".join(lines)))  # long lines wrap, as in a terminal
    path = IMAGES / f"{capture.name}.svg"
    path.write_text(console.export_svg(title=capture.title), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    every = ", ".join(c.name for c in CAPTURES)
    parser.add_argument("names", nargs="*", help=f"captures to make: {every} (default: all)")
    names = parser.parse_args(argv).names
    unknown = sorted(set(names) - {c.name for c in CAPTURES})
    if unknown:
        parser.error(f"unknown capture {unknown[0]!r}: expected one of {every}")
    IMAGES.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="tfcloud-captures-") as tmp:
        home = Path(tmp) / "home"
        for capture in CAPTURES:
            if names and capture.name not in names:
                continue
            output, code = run(capture, home=home)
            path = save(capture, tidy(output, home=home))
            print(f"{path.relative_to(ROOT)}: exit {code}, {output.count(chr(10))} lines")
            failed += code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
