"""A Ray cluster over two separate test hosts: the head in one network namespace (192.168.77.1), a worker node
in another (192.168.77.2), joined by a veth pair and nothing else (tfcloud.testing.netns, TESTBED §5). The
tests reach the dashboard through a forwarder on this machine's loopback, as a user would through
``kubectl port-forward``; the cluster itself talks only over the pair."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tfcloud.testing.netns import Hosts


@dataclass(frozen=True)
class TwoHostRay:
    hosts: Hosts
    address: str  # the dashboard, forwarded to 127.0.0.1


@pytest.fixture(scope="module")
def two_host_ray() -> Iterator[TwoHostRay]:
    """A Ray head on host a and a worker node on host b, 2 logical CPUs each; stopped with the module."""
    pytest.importorskip("ray", reason='the Ray tests need ray[default] (pip install "tfcloud[ray]")')
    pytest.importorskip("ray.dashboard", reason="the Ray Jobs API needs ray[default] (the dashboard)")
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
