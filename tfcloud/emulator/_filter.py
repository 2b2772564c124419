"""The list-filter language of Google APIs (AIP-160, Cloud Logging queries): the subset the emulator needs.

Grammar (``OR`` binds tighter than ``AND``, as in both AIP-160 and the Logging query language)::

    expression := sequence (AND sequence)*        juxtaposition is AND too
    sequence   := factor (OR factor)*
    factor     := [NOT | -] ( "(" expression ")" | comparison | value )
    comparison := field ( = | != | < | <= | > | >= | : ) value
    value      := "quoted string" | bare-word

``field`` is a dotted path looked up in a plain ``dict`` record; on a list (a repeated field) a comparison
holds when it holds for one of its items. ``:`` is "has": ``labels.k:*`` tests
existence, a value with ``*`` matches as a glob, anything else as a substring. A lone value searches the
record's ``"_text"``. Timestamps compare as times; severities as their ranks. A malformed filter raises
:class:`FilterError`; the services answer it with INVALID_ARGUMENT.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["SEVERITIES", "FilterError", "compile_filter", "parse_time"]

Record = Mapping[str, Any]
Predicate = Callable[[Record], bool]

SEVERITIES = {
    "DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400,
    "ERROR": 500, "CRITICAL": 600, "ALERT": 700, "EMERGENCY": 800,
}

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<op><=|>=|!=|=|<|>|:|\(|\))|(?P<word>[^\s()=<>!:"]+))')


class FilterError(ValueError):
    """The filter string cannot be parsed."""


class Severity(int):
    """An int that compares with severity names."""


def parse_time(text: str) -> dt.datetime:
    """RFC 3339 → aware datetime (``Z`` and fractional seconds of any length accepted)."""
    value = text.strip().replace("Z", "+00:00").replace("z", "+00:00")
    match = re.match(r"^(.*T\d\d:\d\d:\d\d)(\.\d+)?(.*)$", value)
    if match and match.group(2):
        value = match.group(1) + match.group(2)[:7].ljust(7, "0") + match.group(3)
    parsed = dt.datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise FilterError(f"Invalid filter: unexpected character at offset {position}: {text[position:]!r}.")
        position = match.end()
        kind = match.lastgroup or "word"
        raw = match.group(kind)
        if kind == "str":
            tokens.append(("str", bytes(raw[1:-1], "utf-8").decode("unicode_escape")))
        elif kind == "word" and raw in ("AND", "OR", "NOT"):
            tokens.append((raw, raw))
        else:
            tokens.append((kind, raw))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.position = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise FilterError("Invalid filter: unexpected end.")
        self.position += 1
        return token

    def expression(self) -> Predicate:
        parts = [self.sequence()]
        while (token := self.peek()) is not None and token != ("op", ")"):
            if token[0] == "AND":
                self.take()
            parts.append(self.sequence())
        return parts[0] if len(parts) == 1 else (lambda record: all(part(record) for part in parts))

    def sequence(self) -> Predicate:
        parts = [self.factor()]
        while (token := self.peek()) is not None and token[0] == "OR":
            self.take()
            parts.append(self.factor())
        return parts[0] if len(parts) == 1 else (lambda record: any(part(record) for part in parts))

    def factor(self) -> Predicate:
        kind, text = self.take()
        if kind == "NOT" or (kind == "word" and text == "-"):
            inner = self.factor()
            return lambda record: not inner(record)
        if kind == "word" and text.startswith("-") and len(text) > 1:
            self.tokens.insert(self.position, ("word", text[1:]))
            inner = self.factor()
            return lambda record: not inner(record)
        if kind == "op" and text == "(":
            inner = self.expression()
            if self.take() != ("op", ")"):
                raise FilterError("Invalid filter: missing ')'.")
            return inner
        if kind not in ("word", "str"):
            raise FilterError(f"Invalid filter: unexpected {text!r}.")
        following = self.peek()
        if following is not None and following[0] == "op" and following[1] not in "()":
            self.take()
            value_kind, value = self.take()
            if value_kind not in ("word", "str"):
                raise FilterError(f"Invalid filter: expected a value after {text}{following[1]}.")
            return _comparison(text, following[1], value)
        return lambda record: text.lower() in str(record.get("_text", "")).lower()


def _lookup(record: Record, path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        else:
            return None
    return value


def _coerce(left: Any, right: str) -> Any:
    if isinstance(left, dt.datetime):
        return parse_time(right)
    if isinstance(left, Severity):
        return SEVERITIES.get(right.upper(), int(right) if right.isdigit() else -1)
    if isinstance(left, bool):
        return right.lower() == "true"
    if isinstance(left, (int, float)):
        return type(left)(right)
    return right


def _comparison(field: str, op: str, value: str) -> Predicate:
    def test(record: Record) -> bool:
        left = _lookup(record, field)
        if isinstance(left, (list, tuple)):  # a repeated field (Cloud Build's tags="x"): does it hold the value?
            held = any(_comparison("_item", "=" if op == "!=" else op, value)({"_item": item}) for item in left)
            return not held if op == "!=" else held
        if op == ":":
            if value == "*":
                return left is not None
            if left is None:
                return False
            if isinstance(left, Mapping):
                return value in left
            text = str(left)
            return fnmatch.fnmatchcase(text, value) if "*" in value else value.lower() in text.lower()
        if left is None:
            return op == "!=" and value != ""
        try:
            right = _coerce(left, value)
        except ValueError as exc:
            raise FilterError(f"Invalid filter: {field}{op}{value!r}: {exc}.") from exc
        if isinstance(left, str) and "*" in value and op in ("=", "!="):
            matched = fnmatch.fnmatchcase(left, value)
            return matched if op == "=" else not matched
        comparisons: dict[str, Callable[[Any, Any], bool]] = {
            "=": lambda a, b: bool(a == b), "!=": lambda a, b: bool(a != b),
            "<": lambda a, b: bool(a < b), "<=": lambda a, b: bool(a <= b),
            ">": lambda a, b: bool(a > b), ">=": lambda a, b: bool(a >= b),
        }
        return comparisons[op](left, right)

    return test


def compile_filter(text: str) -> Predicate:
    """Parse ``text`` once; the result tests records. An empty filter matches everything."""
    if not text.strip():
        return lambda record: True
    parser = _Parser(text)
    predicate = parser.expression()
    if parser.peek() is not None:
        raise FilterError(f"Invalid filter: unexpected {parser.peek()[1]!r}.")  # type: ignore[index]
    return predicate
