"""One line of ``tfcloud doctor``: :class:`Check`, the value a target's own checks return (its ``doctor_checks``:
``"module:function"``, called as ``function(target_value, settings, needed=..., environ=...)``), as SkyPilot's
clouds each answer ``sky check``. A plug-in needs this class only to declare its checks."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Check"]


@dataclass(frozen=True, kw_only=True)
class Check:
    """One line of ``tfcloud doctor``: ``ok`` True (fine), False (missing or broken) or None (not set, and not
    needed); ``needed``: the chosen target cannot run without it; ``fix``: the command or setting that fixes it
    (it names only what ``tfcloud doctor`` itself takes, or a setting, so that the line can be tried again)."""

    name: str
    ok: bool | None
    found: str
    fix: str = ""
    needed: bool = False

    def to_dict(self) -> dict[str, object]:
        return {"check": self.name, "ok": self.ok, "found": self.found, "fix": self.fix, "needed": self.needed}
