"""What Cloud Storage's JSON API refuses, as pure functions: bucket and object names, request preconditions, and
the JSON error body every refusal carries. :mod:`tfcloud.emulator.storage` applies them in front of the bundled
``gcp-storage-emulator``, which checks none of them.

Sources (read 2026-11-26):

- Bucket names: "Bucket naming", https://cloud.google.com/storage/docs/buckets#naming
- Object names: "Object naming requirements", https://cloud.google.com/storage/docs/objects#naming
- Preconditions: "Request preconditions", https://cloud.google.com/storage/docs/request-preconditions
- Error bodies: "HTTP status and error codes for JSON", https://cloud.google.com/storage/docs/json_api/v1/status-codes

Where a page leaves a detail open, the rule takes the reading that refuses: a precondition that is not an integer
is a 400, and a bucket name that merely *contains* ``google`` is refused (the page also refuses close
misspellings, which the emulator does not guess at).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Refusal",
    "bucket_name_problem",
    "error_body",
    "object_name_problem",
    "precondition_refusal",
]


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """One JSON API error: the HTTP status, Google's ``reason`` and the message."""

    status: int
    reason: str
    message: str
    location: str = ""
    location_type: str = ""


#: Lowercase letters, digits, ``-``, ``_`` and ``.``; starts and ends with a letter or digit ("Bucket naming").
_BUCKET_CHARS = re.compile(r"^[a-z0-9][a-z0-9._-]*[a-z0-9]$")

_PRECONDITION_FAILED = "At least one of the pre-conditions you specified did not hold."


def bucket_name_problem(name: str) -> str:
    """Why Cloud Storage refuses the bucket name ``name``; "" when it is valid."""
    if not name:
        return "Bucket name is required."
    if not _BUCKET_CHARS.match(name):
        return (f"Invalid bucket name: {name!r}. Bucket names contain only lowercase letters, digits, dashes (-), "
                "underscores (_) and dots (.), and start and end with a letter or digit.")
    if "." in name:
        if len(name) > 222 or any(not part or len(part) > 63 for part in name.split(".")):
            return (f"Invalid bucket name: {name!r}. A name with dots has at most 222 characters and each "
                    "dot-separated part 1 to 63.")
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            pass
        else:
            return f"Invalid bucket name: {name!r}. Bucket names cannot be IP addresses."
    elif not 3 <= len(name) <= 63:
        return f"Invalid bucket name: {name!r}. Bucket names have 3 to 63 characters."
    if name.startswith("goog") or "google" in name:
        return f"Invalid bucket name: {name!r}. Bucket names cannot start with \"goog\" or contain \"google\"."
    return ""


def object_name_problem(name: str) -> str:
    """Why Cloud Storage refuses the object name ``name``; "" when it is valid."""
    if not name:
        return "Object name is required."
    if len(name.encode("utf-8", "surrogatepass")) > 1024:
        return "Invalid object name: object names have 1 to 1024 bytes in UTF-8."
    if "\r" in name or "\n" in name:
        return f"Invalid object name: {name!r}. Object names cannot contain carriage return or line feed characters."
    if name in (".", ".."):
        return f"Invalid object name: {name!r}. Objects cannot be named \".\" or \"..\"."
    if name.startswith(".well-known/acme-challenge/"):
        return f"Invalid object name: {name!r}. Object names cannot start with \".well-known/acme-challenge/\"."
    return ""


def precondition_refusal(query: Mapping[str, list[str]], current: Mapping[str, Any] | None, *, read: bool,
                         prefix: str = "") -> Refusal | None:
    """Check ``ifGenerationMatch``, ``ifGenerationNotMatch``, ``ifMetagenerationMatch`` and
    ``ifMetagenerationNotMatch`` (``prefix="Source"``: ``ifSourceGenerationMatch`` ...) against ``current``, the
    live object's resource (None: no live object). A failed condition is 412, except a ``NotMatch`` condition on a
    read (GET), which is 304 Not Modified; generation 0 in ``ifGenerationMatch`` means "no live object"."""
    generation = int(current["generation"]) if current is not None else None
    metageneration = int(current.get("metageneration") or 1) if current is not None else None
    for key, live, negate in (("GenerationMatch", generation, False), ("GenerationNotMatch", generation, True),
                              ("MetagenerationMatch", metageneration, False),
                              ("MetagenerationNotMatch", metageneration, True)):
        param = f"if{prefix}{key}"
        values = query.get(param)
        if not values:
            continue
        try:
            wanted = int(values[0])
        except ValueError:
            return Refusal(status=400, reason="invalid",
                           message=f"Invalid argument for {param}: expected an integer, received {values[0]!r}.",
                           location=param, location_type="parameter")
        if key == "GenerationMatch":
            holds = (live is None) if wanted == 0 else live == wanted
        elif key == "GenerationNotMatch":
            holds = live is not None and (wanted == 0 or live != wanted)
        elif negate:
            holds = live is not None and live != wanted
        else:
            holds = live is not None and live == wanted
        if not holds:
            if read and negate:
                return Refusal(status=304, reason="notModified", message="Not Modified")
            return Refusal(status=412, reason="conditionNotMet", message=_PRECONDITION_FAILED,
                           location="If-Match", location_type="header")
    return None


_REASONS = {400: "invalid", 401: "required", 403: "forbidden", 404: "notFound", 405: "methodNotAllowed",
            409: "conflict", 412: "conditionNotMet", 413: "uploadTooLarge", 500: "backendError",
            501: "notImplemented", 503: "backendError"}


def error_body(status: int, message: str, reason: str = "", *, location: str = "",
               location_type: str = "") -> dict[str, Any]:
    """The JSON API's error body: ``{"error": {"code", "message", "errors": [{"domain", "reason", "message"}]}}``."""
    item: dict[str, Any] = {"domain": "global", "reason": reason or _REASONS.get(status, "backendError"),
                            "message": message}
    if location:
        item["locationType"] = location_type or "parameter"
        item["location"] = location
    return {"error": {"code": status, "message": message, "errors": [item]}}
