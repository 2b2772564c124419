"""Benchmark: a 2-process local run (chief + 1 worker, MultiWorkerMirrored) of examples/digits_keras.py through
tfcloud's local backend, against the same launcher run by hand as two processes with the same ``TF_CONFIG``
(output to a file each, as one would in two terminals). Rounds alternate so that both see the same machine.

    python benchmarks/bench_local.py [--rounds N] [--example PATH] [--worker-count N] [--quick]

Prints the wall time of each run, the medians, and the ratio tfcloud / by hand (goal: ≤ 1.05). On a shared
two-core machine the TensorFlow runs vary by seconds, so it also measures tfcloud's fixed cost alone: the same
comparison for a script that prints a line and exits, without TensorFlow (``--overhead-rounds``, default 10).
``--quick``: one round of that fixed cost only, no TensorFlow (CI runs it: tests/test_benchmarks.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tfcloud.entry.launcher import render_launcher
from tfcloud.flow.validate import build_spec
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.spec import JobSpec
from tfcloud.replicas import loopback_env, plan_cluster
from tfcloud.targets.local.backend import LocalBackend

REPO = Path(__file__).resolve().parent.parent


def by_hand(spec: JobSpec, launcher: Path, logs: Path) -> float:
    """Both replicas started by hand: same launcher, same TF_CONFIG, same environment variables."""
    started = time.perf_counter()
    procs = []
    for replica in plan_cluster(spec):
        env = {**os.environ, **loopback_env(os.environ), "PYTHONUNBUFFERED": "1", **replica.env()}
        with open(logs / f"{replica.name}.log", "wb") as out:
            procs.append(subprocess.Popen([sys.executable, str(launcher)], cwd=spec.workdir, env=env,
                                          stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT))
    codes = [p.wait() for p in procs]
    elapsed = time.perf_counter() - started
    if any(codes):
        raise SystemExit(f"the by-hand run failed: exit codes {codes}; see {logs}")
    return elapsed


def with_tfcloud(spec: JobSpec, launcher: Path, home: Path, *, follow: bool) -> float:
    started = time.perf_counter()
    handle = LocalBackend(home=home).submit(PreparedJob(spec=spec, workdir=spec.workdir, launcher=launcher,
                                                        script=spec.entry_point))
    if follow:
        for _ in handle.logs(follow=True):
            pass
    info = handle.wait()
    elapsed = time.perf_counter() - started
    if info.exit_code != 0:
        raise SystemExit(f"the tfcloud run ended {info.state.value}: {info.message}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--example", type=Path, default=REPO / "examples" / "digits_keras.py")
    parser.add_argument("--worker-count", type=int, default=1)
    parser.add_argument("--overhead-rounds", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="one round of the fixed cost only (no TensorFlow)")
    args = parser.parse_args()
    if args.quick:
        args.overhead_rounds, args.rounds = 1, 0
    if args.overhead_rounds > 0:
        overhead(args.overhead_rounds, args.worker_count)
    if args.rounds <= 0:
        return

    spec = build_spec(entry_point=args.example, target="local", worker_count=args.worker_count,
                      worker_config="CPU")
    tmp = Path(tempfile.mkdtemp(prefix="tfcloud-bench-"))
    try:
        launcher = tmp / "tfcloud_launcher.py"
        launcher.write_text(render_launcher(spec, script=str(spec.entry_point)), encoding="utf-8")
        variants: dict[str, Callable[[int], float]] = {
            "by hand": lambda i: by_hand(spec, launcher, _fresh(tmp / f"hand-{i}")),
            "tfcloud (submit + wait)": lambda i: with_tfcloud(spec, launcher, tmp / "home", follow=False),
            "tfcloud (submit + follow logs)": lambda i: with_tfcloud(spec, launcher, tmp / "home", follow=True),
        }
        times: dict[str, list[float]] = {name: [] for name in variants}
        processes = spec.replica_count
        print(f"{args.example.name}: {processes} processes ({spec.strategy.tf_class}), {args.rounds} rounds, "
              f"{os.cpu_count()} CPUs")
        for i in range(args.rounds):
            order = list(variants) if i % 2 == 0 else list(reversed(variants))
            for name in order:
                seconds = variants[name](i)
                times[name].append(seconds)
                print(f"  round {i + 1}  {name:<32} {seconds:7.2f} s", flush=True)
        hand = statistics.median(times["by hand"])
        print("median wall time:")
        results = {}
        for name, values in times.items():
            median = statistics.median(values)
            ratio = median / hand
            results[name] = {"median_s": round(median, 3), "ratio": round(ratio, 3)}
            print(f"  {name:<32} {median:7.2f} s   {ratio:5.3f}x by hand")
        print(json.dumps({"benchmark": "local", "processes": processes, "rounds": args.rounds,
                          "results": results}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def overhead(rounds: int, worker_count: int) -> None:
    """tfcloud's fixed cost: the same comparison for a script that does nothing (no TensorFlow)."""
    tmp = Path(tempfile.mkdtemp(prefix="tfcloud-bench-"))
    try:
        script = tmp / "noop.py"
        script.write_text("print('hello')\n", encoding="utf-8")
        spec = build_spec(entry_point=script, target="local", worker_count=worker_count, worker_config="CPU",
                          distribution_strategy=None)
        launcher = tmp / "tfcloud_launcher.py"
        launcher.write_text(render_launcher(spec, script=str(script)), encoding="utf-8")
        hand, ours = [], []
        for i in range(rounds):
            hand.append(by_hand(spec, launcher, _fresh(tmp / f"hand-{i}")))
            ours.append(with_tfcloud(spec, launcher, tmp / "home", follow=True))
        h, o = statistics.median(hand), statistics.median(ours)
        print(f"fixed cost, {spec.replica_count} processes of a script without TensorFlow, {rounds} rounds: "
              f"by hand {h * 1000:.0f} ms, tfcloud (submit + follow logs) {o * 1000:.0f} ms, "
              f"overhead {(o - h) * 1000:+.0f} ms")
        print(json.dumps({"benchmark": "local-overhead", "by_hand_ms": round(h * 1000, 1),
                          "tfcloud_ms": round(o * 1000, 1), "overhead_ms": round((o - h) * 1000, 1)}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fresh(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


if __name__ == "__main__":
    main()
