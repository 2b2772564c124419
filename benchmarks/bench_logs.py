"""Benchmark: how fast a job's lines reach the terminal through ``tfcloud submit --local``, against the same
script writing to a pipe (issue 33). Two loads: 200k short lines, and 20k lines of 2 kB.

    python benchmarks/bench_logs.py [--short N] [--long N] [--rounds N] [--quick]

The script runs three ways, round after round: writing to a pipe as Python does by default (block-buffered:
``PYTHONUNBUFFERED`` is taken out of its environment), writing to a pipe unbuffered (``python -u``: lines show
as they are printed, as a job's replica's do; ``print`` is two writes there, the text and the newline, where a
replica's launcher line-buffers and writes a line with one), and through ``tfcloud submit --local``.
For each run, the script's lines are read from the command's stdout (a pipe, as a terminal pager or
``| tee`` would): the wall time, the time from the first line to the last (the streaming rate, without
tfcloud's fixed start-up), the lines received (0 lost, in order), and the client's peak memory (its RSS,
sampled every 50 ms). Prints the ratios of the rates, tfcloud / each pipe: goal ≥ 0.5 (against the
unbuffered pipe: lines that show as they are printed). Asserts nothing about time; on a shared machine, run
it with --rounds 5.

Measured (2026-11-26, the project's 2-core machine, load average 0.5 to 1.6; ``--rounds 5``; rate tfcloud /
unbuffered pipe, of the medians of a run's rounds; docs/local.md#heavy-output), every run of the final code:

    short lines  before 0.02x (22 s); session 7 0.82x to 0.94x; now 1.01x to 1.45x (15 runs), 0 lost, RSS 33 MiB
    2 kB lines   before 0.03x; session 7 0.28x to 0.32x; now median 0.59x over 17 runs:
                 0.56 0.61 0.60 0.44 0.46 0.45 0.43 0.54 0.49 (19:57-20:01)  0.66 0.61 0.61 0.61 0.62 0.58 0.59 0.73
                 (21:19-21:21); 0 lost, client RSS 32.7-32.8 MiB

1M short lines and 100k lines of 2 kB: client RSS 32.9 and 32.7 MiB (flat), 0.95x and 0.54x to 0.70x. A 20k-line
run of 2 kB lines lasts 0.05 to 0.08 s on a pipe, so single runs move with the machine's other work.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SCRIPT = """\
import sys
n, width = int(sys.argv[1]), int(sys.argv[2])
pad = "x" * max(0, width - 9)
for i in range(n):
    print(f"{i:08d} {pad}")
"""


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(command: list[str], n: int, *, prefixed: bool, env: dict[str, str]) -> dict[str, float]:
    """Run ``command``, read its stdout to the end, and check that lines 0..n-1 came, in order."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _rss_kib(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    expected, first, last = 0, 0.0, 0.0
    for raw in proc.stdout:  # as bytes, and only the line number taken: the reader costs the same both ways
        start = 0
        if prefixed:
            start = raw.find(b" | ") + 3
            if not start:
                continue
        number = raw[start:start + 8]
        if not number.isdigit():
            continue
        if expected == 0:
            first = time.perf_counter()
        if int(number) == expected:
            expected += 1
        last = time.perf_counter()
    code = proc.wait()
    done.set()
    sampler.join()
    return {"wall": time.perf_counter() - started, "stream": max(last - first, 1e-6), "lines": expected,
            "lost": n - expected, "code": code, "rss_mib": peak[0] / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", type=int, default=200_000, help="lines in the short-line load")
    parser.add_argument("--long", type=int, default=20_000, help="lines in the 2 kB-line load")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="one round of 2,000 short and 200 long lines")
    args = parser.parse_args()
    if args.quick:
        args.short, args.long, args.rounds = 2_000, 200, 1
    with tempfile.TemporaryDirectory(prefix="tfcloud-bench-logs-") as tmp:
        script = Path(tmp) / "talk.py"
        script.write_text(SCRIPT)
        env = {**os.environ, "PYTHONPATH": str(REPO), "TFCLOUD_HOME": str(Path(tmp) / "home"), "COLUMNS": "250"}
        for label, n, width in (("short lines", args.short, 40), ("2 kB lines", args.long, 2048)):
            pipe, unbuffered, ours = [], [], []
            for _ in range(args.rounds):
                buffered = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}  # Python's own default
                pipe.append(run([sys.executable, str(script), str(n), str(width)], n, prefixed=False, env=buffered))
                unbuffered.append(run([sys.executable, "-u", str(script), str(n), str(width)], n, prefixed=False,
                                      env=env))
                ours.append(run([sys.executable, "-m", "tfcloud.cli", "submit", "--local", "--strategy", "none",
                                 str(script), "--", str(n), str(width)], n, prefixed=True, env=env))
            for name, runs in (("pipe", pipe), ("pipe, unbuffered", unbuffered), ("tfcloud submit --local", ours)):
                stream = statistics.median(r["stream"] for r in runs)
                print(f"{label:12} {name:24} wall {statistics.median(r['wall'] for r in runs):6.2f}s  "
                      f"stream {stream:6.2f}s  {n / stream:10,.0f} lines/s  lost {max(r['lost'] for r in runs)}  "
                      f"client RSS {max(r['rss_mib'] for r in runs):6.1f} MiB  exit {[r['code'] for r in runs]}")
            ours_stream = statistics.median(r["stream"] for r in ours)
            ratio = statistics.median(r["stream"] for r in unbuffered) / ours_stream
            buffered = statistics.median(r["stream"] for r in pipe) / ours_stream
            wall = statistics.median(r["wall"] for r in unbuffered) / statistics.median(r["wall"] for r in ours)
            verdict = "PASS" if ratio >= 0.5 and all(r["lost"] == 0 for r in ours) else "FAIL"
            print(f"{label:12} rate tfcloud / unbuffered pipe: {ratio:.2f} (goal >= 0.5, 0 lost): {verdict}; "
                  f"/ buffered pipe {buffered:.2f}; wall time ratio {wall:.2f} (with tfcloud's start-up)")


if __name__ == "__main__":
    main()
