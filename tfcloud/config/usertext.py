"""Rules for text a user gives (an option, a setting, a label, a path): no control characters, patterns compiled
on first use. The lowest layer: the targets' :class:`~tfcloud.targets._base.Option`, the settings, the shared
checks and the gate all use these (:mod:`tfcloud.targets._base` re-exports them for plug-ins)."""

from __future__ import annotations

import re

from tfcloud.errors import ValidationError

__all__ = ["CONTROL", "LazyPattern", "check_bool", "check_count", "check_text", "refuse_control"]


class LazyPattern:
    """A regular expression compiled on first use: the targets' modules load at every command's start-up (the
    CLI's flags come from them), and compiling their patterns there cost `tfcloud --help` ~2 ms."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled().match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled().fullmatch(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled().search(text)


CONTROL = LazyPattern(r"[\x00-\x1f\x7f]")


def refuse_control(field: str, value: object, *, origin: str | None = None) -> None:
    """A user-given text value holds no control character: a trailing newline from a pasted value or ``$(...)``,
    a tab, an escape. Refused here, naming ``field``, before any pattern (``$`` also matches before a final
    newline) or any Google, Docker or file call sees it. Values that are not text are left to their own check."""
    found = CONTROL.search(value) if isinstance(value, str) else None
    if found is not None:
        raise ValidationError(field, "text without control characters (newline, tab, escape...)", value,
                              hint=f"It holds {found.group()!r} at position {found.start()}"
                                   + (f" (set by {origin})" if origin else "") + ": remove it.")


def check_text(name: str, value: object, *, expected: str = "a string") -> str | None:
    """A text option: a non-empty string without control characters (:func:`refuse_control`)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValidationError(name, expected, value)
    refuse_control(name, value)
    return value


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(name, "a bool", value)
    return value


def check_count(name: str, value: object, *, maximum: int | None = 100) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or (maximum is not None
                                                                             and value > maximum):
        raise ValidationError(name, "an integer ≥ 0" if maximum is None else f"an integer from 0 to {maximum}",
                              value)
    return value
