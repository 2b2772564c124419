"""The suite's two Ray clusters, each started once per run by the first test that asks for it, shared by every
test that names it, and stopped once those tests are done (issue 38; tests/conftest.py imports these fixtures):

- ``ray_cluster``: a head and a second node on 127.0.0.1, started with Ray's own test utilities
  (``ray.cluster_utils.Cluster``) in a process of their own, 2 logical CPUs and an 80 MB object store each; the
  dashboard's address.
- ``two_host_ray``: a head on test host a (192.168.77.1) and a worker node on host b (192.168.77.2), two network
  namespaces joined by a veth pair and nothing else (tfcloud.testing.netns, TESTBED §5), 2 logical CPUs each;
  the tests reach the dashboard through a forwarder on this machine's loopback, as a user would through
  ``kubectl port-forward``. ``benchmarks/bench_ray_hosts.py --quick`` runs on it too (``--hosts``).

Each test gets the cluster clean and leaves it clean: afterwards every job still running is stopped, and the
fixture waits until no job runs and no actor is alive (a test that leaks one fails in its teardown, naming it).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tfcloud.testing.netns import Hosts

REPO = Path(__file__).resolve().parent.parent
#: How long a test's leftovers may take to go (a job's driver stops its replicas, their actors go).
SETTLE_S = 90.0


def _need_ray() -> None:
    pytest.importorskip("ray", reason='the Ray tests need ray[default] (pip install "tfcloud[ray]")')
    pytest.importorskip("ray.dashboard", reason="the Ray Jobs API needs ray[default] (the dashboard)")


def settle(address: str) -> None:
    """Stop every job of the cluster at ``address`` that still runs, and wait until none runs and no actor is
    alive (the Jobs API's own supervisors aside); fail naming what is left after :data:`SETTLE_S`."""
    from ray.job_submission import JobSubmissionClient
    from ray.util.state import list_actors

    client = JobSubmissionClient(address)
    for job in client.list_jobs():
        if job.submission_id and not job.status.is_terminal():
            with contextlib.suppress(RuntimeError):
                client.stop_job(job.submission_id)
    deadline = time.monotonic() + SETTLE_S
    while True:
        running = [j.submission_id for j in client.list_jobs() if not j.status.is_terminal()]
        actors = [f"{a.class_name} {a.actor_id[:8]}" for a in list_actors(
            address=address, filters=[("state", "=", "ALIVE")], raise_on_missing_output=False)
                  if a.class_name != "JobSupervisor"]
        if not running and not actors:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"the Ray cluster at {address} did not settle after the test: jobs running {running}, "
                        f"actors alive {actors}")
        time.sleep(0.5)


# -- on loopback --------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RayStartError(Exception):
    """Ray's cluster did not come up (its own start-up time-out)."""


@contextlib.contextmanager
def _loopback() -> Iterator[str]:
    _need_ray()
    for attempt in (1, 2):
        tmp = Path(tempfile.mkdtemp(prefix="tfr-"))  # short: Ray's socket paths must fit in 107 bytes
        (tmp / "ray").mkdir()
        try:
            with _cluster(tmp) as address:
                yield address
                return
        except RayStartError:
            # On a busy 2-core machine a raylet sometimes misses Ray's own 30 s registration window (seen once
            # in CI): start a fresh cluster once more; a second failure fails the tests.
            if attempt == 2:
                raise
        finally:
            _kill_under(tmp)
            subprocess.run(["rm", "-rf", str(tmp)], check=False)


@pytest.fixture
def ray_cluster(_ray_engines: RayEngines) -> Iterator[str]:
    """The loopback cluster's dashboard address (the cluster: started by the first test that asks for it, kept
    for the next ones); settled after the test."""
    address: str = _ray_engines.get("loopback", _loopback)
    yield address
    settle(address)


#: The loopback cluster's owner: a fresh interpreter that starts it with Ray's test utilities, says its GCS
#: address, and shuts it down when its stdin closes. Ray starts its daemons with a ``preexec_fn`` (Python run
#: between fork and exec); started from the tests' own process, which may hold gRPC threads of the Google clients'
#: tests, a daemon once aborted there (SIGABRT: "Other threads are currently calling into gRPC, skipping fork()
#: handlers", CI run 8 of session 13). A fresh process holds none.
_OWNER = """
import json, sys
from ray.cluster_utils import Cluster

config = json.loads(sys.argv[1])
try:
    cluster = Cluster(initialize_head=True, head_node_args=config["head"])
    cluster.add_node(**config["node"])
    cluster.wait_for_nodes()
except Exception as exc:
    print(("TIMEOUT " if "timed out during startup" in str(exc) else "FAILED ") + repr(exc), flush=True)
    raise
print("ADDRESS " + cluster.address, flush=True)
sys.stdin.read()
cluster.shutdown()
"""


@contextlib.contextmanager
def _cluster(tmp: Path) -> Iterator[str]:
    dashboard = _free_port()
    env = {**os.environ,
           # Ray resolves 127.0.0.1 to the machine's outside address unless told this is a one-machine cluster.
           "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0", "RAY_TMPDIR": str(tmp),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    for var in ("no_proxy", "NO_PROXY"):
        env[var] = ",".join(filter(None, [os.environ.get(var), "127.0.0.1", "localhost"]))

    def node() -> dict[str, Any]:  # free ports for the agents: Ray's defaults clash with any other cluster
        return {"num_cpus": 2, "object_store_memory": 80 * 1024 * 1024, "node_ip_address": "127.0.0.1",
                "dashboard_agent_listen_port": _free_port(), "metrics_export_port": _free_port()}

    config = {"head": {**node(), "include_dashboard": True, "dashboard_host": "127.0.0.1",
                       "dashboard_port": dashboard, "temp_dir": str(tmp)},
              "node": node()}
    # Its words go to a file, not a pipe: Ray's daemons inherit its stdout, and a pipe nobody reads would block them.
    said_file = tmp / "owner.out"
    with said_file.open("w") as out:
        owner = subprocess.Popen([sys.executable, "-c", _OWNER, json.dumps(config)], stdin=subprocess.PIPE,
                                 stdout=out, env=env, cwd=tmp, text=True)
    assert owner.stdin is not None
    try:
        def word() -> str:  # the owner's line on the start, Ray's own lines aside
            return next((line for line in said_file.read_text().splitlines()
                         if line.split(" ", 1)[0] in ("ADDRESS", "TIMEOUT", "FAILED")), "")

        while not word() and owner.poll() is None:  # Ray's own start-up time-outs bound this wait
            time.sleep(0.1)
        said = word()
        if not said.startswith("ADDRESS "):
            owner.wait(timeout=60)
            if said.startswith("TIMEOUT "):
                raise RayStartError(said)
            raise RuntimeError(f"the loopback Ray cluster did not start: {said or owner.returncode}")
        gcs = said.split(" ", 1)[1]
        # Where a job's driver finds its cluster: the Jobs API resolves the driver's RAY_ADDRESS ("auto") from the
        # address file `ray start` writes, else from any GCS process on the machine, which may be the two-host
        # cluster's (both run in one worker: tests/parallel.py). Cluster() writes none: write it.
        for where in (tmp, tmp / "ray"):
            where.mkdir(exist_ok=True)
            (where / "ray_current_cluster").write_text(gcs)
        address = f"http://127.0.0.1:{dashboard}"
        from tfcloud.testing.netns import wait_for_jobs_api

        wait_for_jobs_api(address)
        yield address
    finally:
        owner.stdin.close()
        try:
            owner.wait(timeout=60)
        except subprocess.TimeoutExpired:
            owner.kill()
            owner.wait()


def _kill_under(tmp: Path) -> None:
    """Kill what a failed start left running: every process whose command line names ``tmp``."""
    import psutil

    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(str(tmp) in part for part in proc.info["cmdline"] or ()):
                proc.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass


# -- over two hosts -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TwoHostRay:
    hosts: Hosts
    address: str  # the dashboard, forwarded to 127.0.0.1


@contextlib.contextmanager
def _two_hosts() -> Iterator[TwoHostRay]:
    _need_ray()
    from tfcloud.testing.netns import (
        DASHBOARD_PORT,
        netns_unavailable,
        ray_head,
        ray_node,
        two_hosts,
        wait_for_jobs_api,
    )

    reason = netns_unavailable()
    if reason:
        pytest.skip(f"no separate test hosts: {reason}")
    with two_hosts() as hosts:
        ray_head(hosts, hosts.a)
        ray_node(hosts, hosts.b, hosts.a)
        address = f"http://127.0.0.1:{hosts.forward(hosts.a, DASHBOARD_PORT)}"
        wait_for_jobs_api(address)
        yield TwoHostRay(hosts, address)


@pytest.fixture
def two_host_ray(_ray_engines: RayEngines) -> Iterator[TwoHostRay]:
    """A Ray head on host a and a worker node on host b (the cluster: started by the first test that asks for it,
    kept for the next ones; a test may replace host b's node, as the host-loss test does); settled after the
    test."""
    cluster: TwoHostRay = _ray_engines.get("two hosts", _two_hosts)
    yield cluster
    settle(cluster.address)


# -- each cluster lives as long as the tests that use it ----------------------------------------------------------
class RayEngines:
    """The clusters started so far, by name. Both are started by the first test that asks, and both stop once the
    worker's next test uses neither (:func:`pytest_runtest_teardown`): tests/parallel.py runs every test that uses
    them in one xdist work unit, one after the other, so each cluster starts once a run, and does not go on using
    the cores (four raylets, their dashboards and agents: about a third of a core, measured) for the rest of it."""

    def __init__(self) -> None:
        self._running: dict[str, tuple[contextlib.ExitStack, Any]] = {}

    def get(self, name: str, start: Any) -> Any:
        if name not in self._running:
            stack = contextlib.ExitStack()
            value = stack.enter_context(start())
            self._running[name] = (stack, value)
        return self._running[name][1]

    def stop(self) -> None:
        while self._running:
            _, (stack, _) = self._running.popitem()
            stack.close()


_ENGINES = RayEngines()


@pytest.fixture(scope="session")
def _ray_engines() -> Iterator[RayEngines]:
    yield _ENGINES
    _ENGINES.stop()


def _uses_ray(item: pytest.Item | None) -> bool:
    return item is not None and "_ray_engines" in getattr(item, "fixturenames", ())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After a test that used a cluster, when the next one uses none: stop them (after the test's own teardown)."""
    try:
        return (yield)
    finally:
        if _uses_ray(item) and not _uses_ray(nextitem):
            _ENGINES.stop()
