"""Backends: where a job runs. Each one implements :class:`tfcloud.backends.base.Backend`.

The registry maps a target's name (:mod:`tfcloud.targets`) to the module and class that implement it, one line
per target; a backend's module (and its heavy imports) is loaded only when that target is used. A backend is
built as ``Class(target=<target value>, settings=<Settings or None>, **options)``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from tfcloud.errors import ValidationError
from tfcloud.targets import TARGETS

if TYPE_CHECKING:
    from tfcloud.backends.base import Backend
    from tfcloud.targets import AnyTarget

__all__ = ["BACKENDS", "get_backend"]

#: target name → "module:Class"
BACKENDS: dict[str, str] = {
    "local": "tfcloud.targets.local.backend:LocalBackend",
    "vertex": "tfcloud.targets.vertex.backend:VertexBackend",
    "ray": "tfcloud.targets.ray.backend:RayBackend",
}


def get_backend(target: AnyTarget | str, **options: object) -> Backend:
    """The backend for ``target`` (a target value, or a name for that target with default options) with its
    options (``settings``, and backend-specific ones such as a local backend's ``home``)."""
    if isinstance(target, str):
        if target not in TARGETS or target not in BACKENDS:
            raise ValidationError("target", " or ".join(f'"{n}"' for n in BACKENDS), target)
        target = TARGETS[target]()
    module_name, _, class_name = BACKENDS[target.name].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    backend: Backend = cls(target=target, **options)
    return backend
