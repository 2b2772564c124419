"""Targets: *where* a job runs (transitional: values re-exported while the plug-in registry lands)."""

from __future__ import annotations

from tfcloud.targets._values import TARGETS, AnyTarget, LocalTarget, RayTarget, SchedulingStrategy, VertexTarget

__all__ = ["TARGETS", "AnyTarget", "LocalTarget", "RayTarget", "SchedulingStrategy", "VertexTarget"]
