"""Backends: where a job runs. Each one implements :class:`tfcloud.backends.base.Backend`.

The registry maps a target to the module and class that implement it; a backend's module (and its heavy
imports) is loaded only when that target is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from tfcloud.spec import Target

if TYPE_CHECKING:
    from tfcloud.backends.base import Backend

__all__ = ["BACKENDS", "get_backend"]

#: target → "module:Class"
BACKENDS: dict[Target, str] = {
    Target.LOCAL: "tfcloud.backends.local:LocalBackend",
    Target.VERTEX: "tfcloud.backends.vertex:VertexBackend",
    Target.RAY: "tfcloud.backends.ray:RayBackend",
}


def get_backend(target: Target, **options: object) -> Backend:
    """Instantiate the backend for ``target`` with its options (settings, endpoints...)."""
    module_name, _, class_name = BACKENDS[target].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    backend: Backend = cls(**options)
    return backend
