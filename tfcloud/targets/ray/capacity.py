"""Whether a Ray cluster can ever hold a job's replicas: checked before the job is submitted, and again by the
driver while it waits for its placement group.

What the cluster has comes from what ``ray status`` reads, the autoscaler's report (the dashboard's
``/api/cluster_status``; :func:`read_cluster`): every alive node's resources, in use and in total, and the node
types the autoscaler manages. A cluster started by hand (``ray start``, KubeRay without autoscaling) runs Ray's
read-only autoscaler, which names each node's type after the node (``node_<node id>``) and never adds one: that
cluster is *fixed*. Any other node type means an autoscaler that may add nodes; no report at all (Ray's newer
autoscaler does not write one) means nobody knows, and tfcloud waits as for an autoscaler.

:func:`shortfall` says why replicas can never fit a set of nodes (a replica bigger than every node, more asked than
the cluster has, or bundles that no arrangement fits), or None; it refuses only what is certain. Pure and
standard-library only: the driver uses it too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["NEVER_FITS_HINT", "Cluster", "describe_asks", "format_resources", "never_fits", "read_cluster", "shortfall"]

_SEARCH_STEPS = 20_000  # past this many placements tried, "cannot fit" is not certain: leave it to Ray
_EPS = 1e-9


@dataclass(frozen=True, kw_only=True)
class Cluster:
    """What a Ray cluster holds: each alive node's resources in total and free; ``autoscaler``: True (it may
    add nodes), False (a fixed cluster), None (unknown)."""

    totals: tuple[Mapping[str, float], ...]
    free: tuple[Mapping[str, float], ...]
    autoscaler: bool | None

    def total(self, resource: str) -> float:
        return sum(n.get(resource, 0.0) for n in self.totals)

    def total_free(self, resource: str) -> float:
        return sum(n.get(resource, 0.0) for n in self.free)


def read_cluster(status: Mapping[str, Any]) -> Cluster | None:
    """The cluster from the ``data`` of the dashboard's ``/api/cluster_status`` (None when it carries no
    report: then nothing is known)."""
    report = status.get("clusterStatus") or status.get("cluster_status")
    if not isinstance(report, Mapping):
        return None
    metrics = report.get("loadMetricsReport") or report.get("load_metrics_report") or {}
    by_node = metrics.get("usageByNode") or metrics.get("usage_by_node")
    if not isinstance(by_node, Mapping) or not by_node:
        return None
    totals, free = [], []
    for usage in by_node.values():
        node_total = {r: float(v[1]) for r, v in usage.items() if r in ("CPU", "GPU")}
        totals.append(node_total)
        free.append({r: max(0.0, float(v[1]) - float(v[0])) for r, v in usage.items() if r in ("CPU", "GPU")})
    autoscaler = report.get("autoscalerReport") or report.get("autoscaler_report") or {}
    mapping = autoscaler.get("nodeTypeMapping") or autoscaler.get("node_type_mapping")
    fixed: bool | None = None
    if isinstance(mapping, Mapping) and mapping:
        # Ray's read-only autoscaler (a cluster started by hand): one node type per node, named after it.
        fixed = all(str(kind) == f"node_{node_id}" for node_id, kind in mapping.items())
        if len(mapping) > len(by_node):
            # The report keys a node's usage by its IP address: nodes that share one (several on one machine)
            # show as one, and no node's own shape is known. Nothing is certain then: refuse nothing.
            fixed = None
    return Cluster(totals=tuple(totals), free=tuple(free), autoscaler=None if fixed is None else not fixed)


def format_resources(resources: Mapping[str, float]) -> str:
    """``{"CPU": 8.0, "GPU": 1.0}`` as ``8 CPU + 1 GPU`` (``0 CPU`` when empty)."""
    parts = [f"{resources[r]:g} {r}" for r in ("CPU", "GPU") if resources.get(r)]
    parts += [f"{v:g} {r}" for r, v in sorted(resources.items()) if r not in ("CPU", "GPU") and v]
    return " + ".join(parts) or "0 CPU"


def describe_asks(names: Sequence[str], bundles: Sequence[Mapping[str, float]]) -> str:
    """What each replica asks, alike ones together: ``chief-0: 8 CPU + 1 GPU; worker-0, worker-1: 4 CPU each``."""
    groups: dict[str, list[str]] = {}
    for name, bundle in zip(names, bundles, strict=True):
        groups.setdefault(format_resources(bundle), []).append(name)
    return "; ".join(f"{', '.join(members)}: {ask}{' each' if len(members) > 1 else ''}"
                     for ask, members in groups.items())


def _fits(bundle: Mapping[str, float], node: Mapping[str, float]) -> bool:
    return all(node.get(r, 0.0) + _EPS >= v for r, v in bundle.items() if v)


def _sum(bundles: Sequence[Mapping[str, float]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for bundle in bundles:
        for r, v in bundle.items():
            total[r] = total.get(r, 0.0) + v
    return total


def _packs(bundles: Sequence[Mapping[str, float]], nodes: Sequence[Mapping[str, float]], *,
           spread: bool) -> bool | None:
    """Whether the bundles fit the nodes together (``spread``: at most one per node); None: not found out within
    :data:`_SEARCH_STEPS`."""
    order = sorted(bundles, key=lambda b: (b.get("GPU", 0.0), b.get("CPU", 0.0)), reverse=True)
    left = [dict(n) for n in nodes]
    used = [False] * len(nodes)
    steps = 0

    def place(i: int) -> bool | None:
        nonlocal steps
        if i == len(order):
            return True
        tried: list[dict[str, float]] = []
        unknown = False
        for j, node in enumerate(left):
            if (spread and used[j]) or not _fits(order[i], node) or node in tried:
                continue
            tried.append(dict(node))
            steps += 1
            if steps > _SEARCH_STEPS:
                return None
            for r, v in order[i].items():
                node[r] = node.get(r, 0.0) - v
            used[j] = True
            found = place(i + 1)
            used[j] = False
            for r, v in order[i].items():
                node[r] += v
            if found:
                return True
            unknown = unknown or found is None
        return None if unknown else False

    return place(0)


def shortfall(names: Sequence[str], bundles: Sequence[Mapping[str, float]], nodes: Sequence[Mapping[str, float]],
              *, strategy: str = "SPREAD") -> str | None:
    """Why replicas ``names`` asking ``bundles`` can never fit the ``nodes`` (each node's total resources) under
    placement ``strategy``, or None when they may (or when that is not certain)."""
    if not nodes:
        return "the cluster has no alive node"
    for name, bundle in zip(names, bundles, strict=True):
        if not any(_fits(bundle, node) for node in nodes):
            largest = max(nodes, key=lambda n: tuple(n.get(r, 0.0) for r in bundle))
            return f"{name} asks for {format_resources(bundle)} on one node, and the largest node has " \
                   f"{format_resources(largest)}"
    asked = _sum(bundles)
    have = _sum(nodes)
    for resource, amount in asked.items():
        if amount > have.get(resource, 0.0) + _EPS:
            return f"the replicas ask for {amount:g} {resource} in all, and the cluster has {have.get(resource, 0.0):g}"
    if strategy == "STRICT_PACK":
        if not any(_fits(asked, node) for node in nodes):
            return f"STRICT_PACK puts every replica on one node ({format_resources(asked)}), and no node has that"
        return None
    spread = strategy == "STRICT_SPREAD"
    if spread and len(bundles) > len(nodes):
        return f"STRICT_SPREAD puts each replica on a node of its own, and the cluster has {len(nodes)} node(s)"
    if _packs(bundles, nodes, spread=spread) is False:
        return "no arrangement of the replicas fits the nodes (" + ", ".join(format_resources(n) for n in nodes) + ")"
    return None


def never_fits(where: str, names: Sequence[str], bundles: Sequence[Mapping[str, float]], cluster: Cluster,
               why: str) -> str:
    """The message of a job ``cluster`` can never hold (``why``: :func:`shortfall`'s answer), naming what each
    replica asks and what the cluster has in total and free."""
    nodes = ", ".join(format_resources(n) for n in cluster.totals)
    total = format_resources({r: cluster.total(r) for r in ("CPU", "GPU")})
    free = format_resources({r: cluster.total_free(r) for r in ("CPU", "GPU")})
    return (f"{where} can never hold this job, and no autoscaler can add nodes: {why}. The replicas ask for "
            f"{describe_asks(names, bundles)}; the cluster has {total} in total over {len(cluster.totals)} "
            f"node(s) ({nodes}), {free} free.")


#: How to fix a job that never fits (the CLI's words).
NEVER_FITS_HINT = ("Ask for less (--ray-cpus N sets the CPUs of every replica; fewer --worker-count), or add nodes "
                   "to the cluster (`ray start --address HEAD:PORT` on another machine).")
