"""Terminal captures for the docs: runs real tfcloud commands and saves what they print as SVG (rich's
``Console(record=True)`` and ``export_svg``) under docs/images/.

    python docs/captures.py            # every terminal capture (the local job trains for real: needs TensorFlow)
    python docs/captures.py machines   # only some, by name
    python docs/captures.py timeline   # the timeline of a Vertex AI job (needs dockerd and the emulator, ~30 s)
    nox -s captures                    # the same in its own environment (not run by CI)

Each command runs from the repository's root as a subprocess, with colours forced, a fixed width and a
temporary HOME (removed afterwards; no user config, the default state dir inside it), so a capture is what a
user's terminal shows. Read the SVGs' diff before committing: job ids, times and losses change from run to run.

``timeline`` (docs/images/timeline.svg) is made only when named: it starts what the tests start (Debian's
dockerd and docker-registry on loopback, tfcloud.testing.dockerd; the offline Google Cloud emulator), submits a
small script with a chief and a worker to "Vertex AI" the way ``tfcloud submit --vertex`` does (the image is
built on the engine and pushed to the registry), waits for it, and saves what ``tfcloud status JOB --timeline``
prints. The emulator keeps the job QUEUED for 4 s and PENDING for 3 s, so that the queue shows on the chart (a
real Vertex AI job often waits a minute or more). Everything it starts is stopped, and its temporary
directories are removed, on failure and Ctrl-C too.
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
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("TFCLOUD_", "XDG_")) and name != "NO_COLOR"}
    env.update({"FORCE_COLOR": "1", "COLUMNS": str(WIDTH), "TERM": "xterm-256color", "HOME": str(home),
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    done = subprocess.run([sys.executable, "-m", "tfcloud.cli", *capture.args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900, check=False)
    return done.stdout, done.returncode


def tidy(output: str, *, home: Path) -> str:
    """Paths of this machine become relative ones: the repository as `.`, the temporary HOME as `~`."""
    output = output.replace(str(home), "~")
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


TIMELINE_WIDTH = 92
TIMELINE_SCRIPT = """
import os, time
for step in range(4):
    print("step", step, "on", os.environ.get("CLOUD_ML_TASK", "?"), flush=True)
    time.sleep(1)
"""


def timeline() -> int:
    """docs/images/timeline.svg: a real Vertex AI job on the emulator, as ``tfcloud status JOB --timeline``."""
    sys.path.insert(0, str(ROOT))
    from tfcloud import DockerConfig, sdk
    from tfcloud.emulator import Emulator, JobTimings
    from tfcloud.records.timeline import render_timeline
    from tfcloud.testing.dockerd import docker_engine, dockerd_available, python_base_image

    reason = dockerd_available()
    if reason:
        print(f"cannot capture the timeline: {reason}", file=sys.stderr)
        return 1
    path = IMAGES / "timeline.svg"
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="tfcloud-capture-") as tmp, docker_engine() as engine, \
            Emulator(project="tfcloud-docs", storage=False, docker_host=engine.docker_host,
                     timings=JobTimings(queued=4.0, pending=3.0)) as emulator:
        client = engine.client()
        try:
            base = python_base_image(client)
        finally:
            client.close()
        os.environ.update({"TFCLOUD_HOME": str(Path(tmp) / "state"), "TFCLOUD_EMULATOR_HOST": emulator.endpoint,
                           "TFCLOUD_PROJECT": "tfcloud-docs", "DOCKER_HOST": engine.docker_host,
                           "TFCLOUD_IMAGE_REPOSITORY": f"{engine.registry.address}/tfcloud"})
        try:
            project = Path(tmp) / "project"
            project.mkdir()
            (project / "train.py").write_text(TIMELINE_SCRIPT, encoding="utf-8")
            with sdk.submit(project / "train.py", target="vertex", chief_config="CPU", worker_count=1,
                            worker_config="CPU", distribution_strategy=None,
                            docker_config=DockerConfig(parent_image=base)) as job:
                info = job.wait(timeout=300)
                stages = job.timeline()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        console = Console(record=True, width=TIMELINE_WIDTH, file=io.StringIO(), force_terminal=True,
                          highlight=False)
        console.print(f"{info.job_id}\t{info.state.value}", markup=False)
        console.print(render_timeline(stages))
        console.save_svg(str(path), title=f"tfcloud status {info.job_id} --timeline")
    print(f"{path.relative_to(ROOT)}: {stages.summary()}")
    return 0 if info.state.value == "succeeded" else 1


def write_options_table() -> int:
    """docs/cli.md's table of the targets' options, made again from their option specs."""
    from gen_options import MARK_END, MARK_START, flags_module, options_table, summaries_module

    page = ROOT / "docs" / "cli.md"
    text = page.read_text(encoding="utf-8")
    before, _, rest = text.partition(MARK_START + "\n")
    _, _, after = rest.partition(MARK_END)
    page.write_text(before + MARK_START + "\n" + options_table() + MARK_END + after, encoding="utf-8")
    print(f"{page.relative_to(ROOT)}: the target options table")
    flags = ROOT / "tfcloud" / "cli" / "_target_flags.py"
    flags.write_text(flags_module(), encoding="utf-8")
    print(f"{flags.relative_to(ROOT)}: the CLI's target flags")
    summaries = ROOT / "tfcloud" / "cli" / "_summaries.py"
    summaries.write_text(summaries_module(), encoding="utf-8")
    print(f"{summaries.relative_to(ROOT)}: the commands' summaries in tfcloud --help")
    return write_rules_tables()


def write_rules_tables() -> int:
    """docs/machines.md's and docs/vertex.md's tables of Google's rules, made again from tfcloud.google.rules."""
    from gen_rules import (
        MACHINES_END,
        MACHINES_START,
        PRICES_END,
        PRICES_START,
        REGIONS_END,
        REGIONS_START,
        RULES_END,
        RULES_START,
        machines_tables,
        prices_tables,
        regions_table,
        rules_table,
        with_block,
    )

    for name, start, end, block in (("machines.md", MACHINES_START, MACHINES_END, machines_tables()),
                                    ("machines.md", PRICES_START, PRICES_END, prices_tables()),
                                    ("vertex.md", RULES_START, RULES_END, rules_table()),
                                    ("vertex.md", REGIONS_START, REGIONS_END, regions_table())):
        page = ROOT / "docs" / name
        page.write_text(with_block(page.read_text(encoding="utf-8"), start, end, block), encoding="utf-8")
        print(f"{page.relative_to(ROOT)}: Google's rules tables")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    every = ", ".join(c.name for c in CAPTURES)
    parser.add_argument("names", nargs="*", help=f"captures to make: {every} (default: all of them), or timeline "
                                                 "(only when named: needs dockerd and the emulator), or options "
                                                 "(docs/cli.md's table of the targets' options, and the tables of "
                                                 "Google's Vertex AI rules in docs/machines.md and docs/vertex.md)")
    names = parser.parse_args(argv).names
    unknown = sorted(set(names) - {c.name for c in CAPTURES} - {"timeline", "options"})
    if unknown:
        parser.error(f"unknown capture {unknown[0]!r}: expected one of {every}, timeline, options")
    if names == ["options"]:
        return write_options_table()
    IMAGES.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory(prefix="tfcloud-captures-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        for capture in CAPTURES:
            if names and capture.name not in names:
                continue
            output, code = run(capture, home=home)
            path = save(capture, tidy(output, home=home))
            print(f"{path.relative_to(ROOT)}: exit {code}, {output.count(chr(10))} lines")
            failed += code != 0
    if "timeline" in names:
        failed += timeline() != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
