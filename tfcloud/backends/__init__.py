"""Backends: where a job runs. Each one implements :class:`tfcloud.backends.base.Backend`.

A target (:mod:`tfcloud.targets`) names its backend's class as ``"module:Class"``; the module (and its heavy
imports) is loaded only when that target is used. A backend is built as ``Class(target=<target value>,
settings=<Settings or None>, **options)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcloud.backends.base import Backend
    from tfcloud.targets import Target

__all__ = ["get_backend"]


def get_backend(target: Target | str, **options: object) -> Backend:
    """The backend for ``target`` (a target value, or a name for that target with default options) with its
    options (``settings``, and backend-specific ones such as a local backend's ``home``)."""
    import tfcloud.targets as targets

    if isinstance(target, str):
        target = targets.get(target)()
    with targets.plugin_errors(type(target), f"backend ({target.backend})"):
        cls = targets.load(target.backend)
        backend: Backend = cls(target=target, **options)
    return backend
