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

A service that documents which fields its filter supports passes a ``schema`` (field → :class:`FilterField`):
then a field it does not name, an operator it does not allow for that field, a bare value, an enum value it does
not know and a time that is not RFC 3339 are all :class:`FilterError` when the filter is compiled, before any
record is read (AIP-160: "unsupported fields and operators" are INVALID_ARGUMENT). Nesting deeper than
:data:`MAX_DEPTH` is refused too.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_DEPTH", "SEVERITIES", "FilterError", "FilterField", "Schema", "compile_filter", "parse_time"]

Record = Mapping[str, Any]
Predicate = Callable[[Record], bool]

SEVERITIES = {
    "DEFAULT": 0, "DEBUG": 100, "INFO": 200, "NOTICE": 300, "WARNING": 400,
    "ERROR": 500, "CRITICAL": 600, "ALERT": 700, "EMERGENCY": 800,
}

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<op><=|>=|!=|=|<|>|:|\(|\))|(?P<word>[^\s()=<>!:"]+))')


#: How deeply parentheses and NOT may nest (a filter nested deeper is INVALID_ARGUMENT, never a crash).
MAX_DEPTH = 64

_COMPARISONS = frozenset({"=", "!=", "<", "<=", ">", ">=", ":"})


class FilterError(ValueError):
    """The filter string cannot be parsed, or asks for what the service does not support."""


@dataclass(frozen=True, kw_only=True)
class FilterField:
    """One field a service's filter supports: its operators and what its values are.

    ``kind``: ``"string"``, ``"enum"`` (one of ``values``), ``"time"`` (RFC 3339), ``"severity"``, ``"map"``
    (``field.KEY`` with any key, values compared as strings) or ``"any"`` (any sub-path, any value).
    """

    ops: frozenset[str] = _COMPARISONS
    kind: str = "string"
    values: frozenset[str] = frozenset()


Schema = Mapping[str, FilterField]


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
            tokens.append(("str", re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)),
                                         raw[1:-1], flags=re.DOTALL)))
        elif kind == "word" and raw in ("AND", "OR", "NOT"):
            tokens.append((raw, raw))
        else:
            tokens.append((kind, raw))
    return tokens


class _Parser:
    def __init__(self, text: str, schema: Schema | None, bare_values: bool) -> None:
        self.tokens = _tokens(text)
        self.position = 0
        self.schema = schema
        self.bare_values = bare_values
        self.depth = 0

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
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise FilterError(f"Invalid filter: nested more than {MAX_DEPTH} levels deep.")
            return self._factor()
        finally:
            self.depth -= 1

    def _factor(self) -> Predicate:
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
            if self.schema is not None:
                _check(self.schema, text, following[1], value)
            return _comparison(text, following[1], value)
        if not self.bare_values:
            raise FilterError(f"Invalid filter: a bare value ({text!r}) is not supported; compare a field.")
        return lambda record: text.lower() in str(record.get("_text", "")).lower()


def _check(schema: Schema, path: str, op: str, value: str) -> None:
    """Refuse a comparison the service does not support (field, operator or value)."""
    found: FilterField | None = schema.get(path)
    if found is None:
        for name, candidate in schema.items():
            if candidate.kind in ("map", "any") and path.startswith(name + ".") and len(path) > len(name) + 1:
                found = candidate
                break
    if found is None or (found.kind == "map" and path in schema):
        supported = ", ".join(sorted(schema))
        raise FilterError(f"Invalid filter: unsupported field {path!r}; supported fields: {supported}.")
    if op not in found.ops:
        raise FilterError(f"Invalid filter: the operator {op!r} is not supported for {path!r}; supported: "
                          f"{' '.join(sorted(found.ops))}.")
    if found.kind == "enum" and value not in found.values and not (op == ":" and value == "*"):
        raise FilterError(f"Invalid filter: {path} has no value {value!r}.")
    if found.kind == "time":
        try:
            parse_time(value)
        except ValueError:
            raise FilterError(f"Invalid filter: {path} expects an RFC 3339 time, received {value!r}.") from None
    if found.kind == "severity" and value.upper() not in SEVERITIES and not value.isdigit():
        raise FilterError(f"Invalid filter: {path} expects a severity name, received {value!r}.")


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


def compile_filter(text: str, schema: Schema | None = None, *, bare_values: bool | None = None) -> Predicate:
    """Parse ``text`` once; the result tests records. An empty filter matches everything. With a ``schema``
    only its fields, operators and values are accepted, and a bare value only with ``bare_values`` (default:
    without a schema). The predicate raises :class:`FilterError` when a value
    cannot be compared with a record's (never another exception)."""
    if not text.strip():
        return lambda record: True
    parser = _Parser(text, schema, schema is None if bare_values is None else bare_values)
    try:
        predicate = parser.expression()
    except RecursionError:
        raise FilterError(f"Invalid filter: nested more than {MAX_DEPTH} levels deep.") from None
    if parser.peek() is not None:
        raise FilterError(f"Invalid filter: unexpected {parser.peek()[1]!r}.")  # type: ignore[index]

    def guarded(record: Record) -> bool:
        try:
            return predicate(record)
        except FilterError:
            raise
        except (ValueError, TypeError, ArithmeticError, RecursionError) as exc:
            raise FilterError(f"Invalid filter: {exc}.") from None

    return guarded
