"""`tfcloud --help` start-up time, as a ratio against `python -c "import typer, rich"` measured in the same run.

Prints the medians of N runs of each (interleaved, so that machine noise hits both alike).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 15


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    baseline_cmd = [sys.executable, "-c", "import typer, rich"]
    help_cmd = [sys.executable, "-m", "tfcloud.cli", "--help"]
    import_cmd = [sys.executable, "-c", "import tfcloud"]
    for cmd in (baseline_cmd, help_cmd, import_cmd):  # warm the file cache
        _time(cmd)
    base, helps, imports = [], [], []
    for _ in range(RUNS):
        base.append(_time(baseline_cmd))
        helps.append(_time(help_cmd))
        imports.append(_time(import_cmd))
    b, h, i = statistics.median(base), statistics.median(helps), statistics.median(imports)
    print(f"bench_cli: python -c 'import typer, rich'  median {b * 1000:7.1f} ms over {RUNS} runs")
    print(f"bench_cli: tfcloud --help                 median {h * 1000:7.1f} ms  ratio {h / b:.2f}x")
    print(f"bench_cli: python -c 'import tfcloud'      median {i * 1000:7.1f} ms  ratio {i / b:.2f}x")


if __name__ == "__main__":
    main()
