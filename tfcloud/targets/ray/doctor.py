"""The Ray target's lines of ``tfcloud doctor``: its dashboard's address, asked its version (a few seconds at
most)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tfcloud.targets._doctor import Check

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.targets.ray.value import RayOptions

__all__ = ["checks"]


def checks(target: RayOptions, settings: Settings, *, needed: bool, environ: Mapping[str, str]) -> list[Check]:
    """The cluster's address, as a job gets it (``--ray``, ``TFCLOUD_RAY_ADDRESS``, the config files,
    ``RAY_ADDRESS``), and whether its dashboard answers."""
    address = target.given().get("ray_address")
    return [_address(str(address) if address else None, needed=needed)]


def _address(address: str | None, *, needed: bool) -> Check:
    name = "Ray address"
    if not address:
        return Check(name=name, ok=False if needed else None, found="not set",
                     fix="--ray http://HEAD:8265, or TFCLOUD_RAY_ADDRESS (or RAY_ADDRESS)", needed=needed)
    import json
    import urllib.error
    import urllib.request

    url = address.rstrip("/") + "/api/version"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # the user's own address
            version = json.loads(response.read().decode("utf-8", errors="replace")).get("ray_version", "?")
    except (OSError, ValueError, urllib.error.URLError) as exc:
        return Check(name=name, ok=False if needed else None, found=f"{address} unreachable: {exc}",
                     fix="start the cluster (ray start --head --dashboard-host 0.0.0.0), or fix the address",
                     needed=needed)
    return Check(name=name, ok=True, found=f"{address} (Ray {version})", needed=needed)
