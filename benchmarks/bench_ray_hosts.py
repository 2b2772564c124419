"""Benchmark: losing a Ray node mid-training, on two separate test hosts (network namespaces, root only; see
tfcloud/testing/netns.py). A MultiWorkerMirrored job (chief + 2 workers, tf-keras) with ``--max-restarts 1``
and ``--output-dir`` on the shared filesystem pauses in epoch 3; every process of host b (its raylet, actors and
replicas) is then SIGKILLed. Two ways to come back:

- ``replacement``: one CPU per replica, so the head alone cannot hold the three; a new node is started on host b
  at once (``ray start``, as an autoscaler or a person would) and the cluster is placed again over both hosts;
- ``survivors``: half a CPU per replica, so the head alone holds them all and no new node is needed.

    sudo python benchmarks/bench_ray_hosts.py [--rounds N] [--mode replacement|survivors|both] [--quick]
                                              [--ray-address URL --hosts JSON]

Standalone it makes the two hosts and starts the cluster itself. With ``--ray-address`` (the dashboard) and
``--hosts`` (``Hosts.describe()`` of tfcloud.testing.netns; both also from ``TFCLOUD_BENCH_RAY_ADDRESS`` and
``TFCLOUD_BENCH_RAY_HOSTS``) it runs on a two-host cluster that is already up (the test suite's ``two_host_ray``,
tests/rayengines.py) and leaves it up, with a node on host b again when a round replaced it.

Prints, per round: **detect** (the kill to the driver's line that a replica's actor died), **restart** (that line
to the chief's ``model.fit resumed`` line of the second attempt: stopping the survivors, placing the bundles
again, starting the replicas, importing TensorFlow, restoring the backup), of which **placed** (the second
attempt's line to its last ``runs on node`` line), and the replacement node's ``ray start`` time; then medians.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tfcloud.flow.pipeline import prepare
from tfcloud.flow.validate import build_job
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.states import JobState
from tfcloud.targets.ray.backend import RayBackend
from tfcloud.testing.netns import (
    DASHBOARD_PORT,
    Hosts,
    netns_unavailable,
    ray_head,
    ray_node,
    ray_nodes_alive,
    two_hosts,
    wait_for_jobs_api,
)

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tests" / "targets" / "ray" / "scripts" / "train_hosts.py"


def first(lines: list[Any], predicate: Any, after: float = 0.0) -> float | None:
    return next((ln.timestamp for ln in lines if ln.timestamp and ln.timestamp >= after and predicate(ln)), None)


def one_round(hosts: Hosts, address: str, mode: str, tmp: Path) -> dict[str, float | None]:
    cpus = 1.0 if mode == "replacement" else 0.5
    spec, target = build_job(entry_point=SCRIPT, target="ray", ray_address=address,
                             entry_point_args=[str(tmp), "5", "3"], worker_count=2, worker_config="CPU",
                             distribution_strategy="multi_worker_mirrored", max_restarts=1,
                             base_output_dir=str(tmp / "shared"), env={"TF_CPP_MIN_LOG_LEVEL": "2"})
    with tempfile.TemporaryDirectory() as staging:
        job, _ = prepare(spec, target, Path(staging))
        assert isinstance(job, PreparedJob)
        handle = RayBackend(target=target, num_cpus=cpus).submit(job)
    for line in handle.logs(follow=True):
        if line.text == "PAUSED 3":
            break
    killed_at = time.time()
    hosts.kill_host(hosts.b)
    node_s: list[float] = []

    def replace() -> None:
        began = time.monotonic()
        ray_node(hosts, hosts.b, hosts.a, f"node-{time.time_ns()}")
        node_s.append(time.monotonic() - began)

    replacement = threading.Thread(target=replace) if mode == "replacement" else None
    if replacement is not None:
        replacement.start()
    info = handle.wait(600)
    if replacement is not None:
        replacement.join()
    lines = list(handle.logs())
    if info.state is not JobState.SUCCEEDED:
        print("\n".join(f"{ln.replica} | {ln.text}" for ln in lines)[-4000:], file=sys.stderr)
        raise SystemExit(f"round failed: {info.state.value} {info.message}")
    detected = first(lines, lambda ln: ln.replica == "tfcloud" and "actor died" in ln.text, killed_at)
    second = first(lines, lambda ln: ln.replica == "tfcloud" and "attempt 2 of 2" in ln.text, killed_at)
    placed = max((ln.timestamp for ln in lines if ln.replica == "tfcloud" and " runs on node " in ln.text
                  and ln.timestamp and second and ln.timestamp >= second), default=None)
    resumed = first(lines, lambda ln: ln.replica == "chief-0" and "model.fit resumed" in ln.text, killed_at)
    where = [ln.text for ln in lines if ln.replica == "tfcloud" and " runs on node " in ln.text][-3:]
    return {
        "detect_s": None if detected is None else detected - killed_at,
        "restart_s": None if detected is None or resumed is None else resumed - detected,
        "placed_s": None if second is None or placed is None else placed - second,
        "node_start_s": node_s[0] if node_s else None,
        "second_attempt_hosts": len({t.split("(")[1].split(",")[1].strip().split(":")[0] for t in where}),
    }


@contextlib.contextmanager
def cluster(address: str | None, described: str | None) -> Iterator[tuple[Hosts, str]]:
    """The two hosts and the dashboard's address: the given cluster's, or a new one (stopped on exit)."""
    if address and described:
        hosts = Hosts.reuse(described)
        try:
            print(f"two-host cluster given: {address}")
            yield hosts, address
        finally:
            hosts.close()
        return
    with two_hosts() as hosts:
        began = time.monotonic()
        ray_head(hosts, hosts.a)
        ray_node(hosts, hosts.b, hosts.a)
        address = f"http://127.0.0.1:{hosts.forward(hosts.a, DASHBOARD_PORT)}"
        wait_for_jobs_api(address)
        print(f"two-host cluster up in {time.monotonic() - began:.1f} s ({address})")
        yield hosts, address


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--mode", choices=["replacement", "survivors", "both"], default="both")
    parser.add_argument("--quick", action="store_true", help="one round, the replacement mode only")
    parser.add_argument("--ray-address", default=os.environ.get("TFCLOUD_BENCH_RAY_ADDRESS"),
                        help="a two-host cluster already up: its dashboard (with --hosts)")
    parser.add_argument("--hosts", default=os.environ.get("TFCLOUD_BENCH_RAY_HOSTS"),
                        help="that cluster's hosts, as tfcloud.testing.netns.Hosts.describe() gives them")
    args = parser.parse_args()
    if bool(args.ray_address) != bool(args.hosts):
        parser.error("--ray-address and --hosts go together (a cluster already up), or neither")
    if args.quick:
        args.rounds, args.mode = 1, "replacement"
    reason = netns_unavailable()
    if reason:
        print(f"SKIP bench_ray_hosts: {reason}")
        return 0
    modes = ["replacement", "survivors"] if args.mode == "both" else [args.mode]
    results: dict[str, list[dict[str, float | None]]] = {m: [] for m in modes}
    with cluster(args.ray_address, args.hosts) as (hosts, address):
        for n in range(args.rounds):
            for mode in modes:
                if hosts.b.ip not in ray_nodes_alive(hosts, hosts.a) or not hosts.pids(hosts.b):
                    ray_node(hosts, hosts.b, hosts.a, f"node-{time.time_ns()}")
                with tempfile.TemporaryDirectory(prefix="tfcloud-bench-") as tmp:
                    result = one_round(hosts, address, mode, Path(tmp))
                results[mode].append(result)
                shown = {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}
                print(f"round {n + 1} {mode}: {json.dumps(shown)}")
    for mode, rows in results.items():
        summary = {key: statistics.median(values) for key in rows[0]
                   if (values := [r[key] for r in rows if isinstance(r[key], int | float)])}
        print(f"median {mode} ({len(rows)} round(s)): " + ", ".join(f"{k} {v:.1f}" for k, v in summary.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
