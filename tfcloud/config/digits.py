"""Numbers and durations typed by people, read as ASCII only: the one parser every option, setting and keyword
uses.

``str.isdigit()`` and ``int()`` accept far more than ``0-9``: ``"²".isdigit()`` is True (and ``int("²")``
then raises), ``int("١٢٣")`` is 123, ``float("1_0")`` is 10.0, ``float("nan")`` and ``float("inf")`` are numbers.
None of that is what a user means by ``--tail 100``. These functions accept ASCII digits only and answer None
for anything else, so that the caller raises its own :class:`~tfcloud.errors.ValidationError` naming its field.
"""

from __future__ import annotations

import math
import re

__all__ = ["DURATION", "ascii_float", "ascii_int", "is_ascii_digits", "parse_duration"]

#: Longer text is no number a person means (and ``int()`` refuses over 4300 digits).
_MAX_DIGITS = 1000
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+", re.ASCII)
#: A duration: ``90s``, ``10m``, ``2h``, ``1d``, ``1h30m``, ``1.5s`` (ASCII digits only; at least one part).
DURATION = re.compile(r"(?:(?P<d>[0-9]+)d)?(?:(?P<h>[0-9]+)h)?(?:(?P<m>[0-9]+)m)?(?:(?P<s>[0-9]+(?:\.[0-9]+)?)s)?",
                      re.ASCII)


def is_ascii_digits(text: object) -> bool:
    """Whether ``text`` is a non-empty string of ``0-9`` only (no sign, space, underscore or other script)."""
    return isinstance(text, str) and _DIGITS.fullmatch(text) is not None


def ascii_int(text: object, *, strip: bool = True) -> int | None:
    """``text`` as a whole number ≥ 0 when it is ASCII digits (surrounding spaces stripped when ``strip``), else
    None."""
    if not isinstance(text, str):
        return None
    text = text.strip(" ") if strip else text
    if len(text) > _MAX_DIGITS or not _DIGITS.fullmatch(text):
        return None
    return int(text)


def ascii_float(text: object, *, strip: bool = True) -> float | None:
    """``text`` as a finite number ≥ 0 when it is ASCII digits with at most one decimal point (``2``, ``0.5``),
    else None (no exponent, sign, underscore, ``nan`` or ``inf``)."""
    if not isinstance(text, str):
        return None
    text = text.strip(" ") if strip else text
    if len(text) > _MAX_DIGITS or not _DECIMAL.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def parse_duration(text: object) -> float | None:
    """A duration (``90s``, ``10m``, ``2h``, ``1d``, ``1h30m``) as seconds (``inf`` when too long for a float),
    or None when ``text`` is not one."""
    if not isinstance(text, str):
        return None
    match = DURATION.fullmatch(text) if len(text) <= _MAX_DIGITS else None
    if match is None or not any(match.groups()):
        return None
    # floats throughout: a duration too long for one is inf, which every caller's range check refuses
    return (float(match["d"] or 0) * 86400 + float(match["h"] or 0) * 3600 + float(match["m"] or 0) * 60
            + float(match["s"] or 0))
