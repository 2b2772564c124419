"""What Vertex AI refuses with INVALID_ARGUMENT, checked against the same table the client checks against
(:mod:`tfcloud.google.rules`), so the two cannot drift: a request that slips past the client (the SDK's
``MachineConfig``, a user's own call) is refused here too.

The services' messages (proto-plus) become the dicts the table reads (``to_dict`` with snake_case names,
enums as numbers, unset fields left out); each :class:`~tfcloud.google.rules.Violation` becomes a
``(field, description)`` pair for :func:`tfcloud.emulator._grpc.abort_invalid`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

__all__ = ["custom_job_violations", "persistent_resource_violations"]

Violation = tuple[str, str]


def _as_dict(message: Any) -> dict[str, Any]:
    return dict(type(message).to_dict(message, preserving_proto_field_name=True, use_integers_for_enums=False,
                                      always_print_fields_with_no_presence=False))


def _pairs(violations: Any, *, spec_field: str = "job_spec") -> list[Violation]:
    found: list[Violation] = []
    for violation in violations:
        field = violation.field
        if spec_field != "job_spec" and field.startswith("job_spec"):
            field = spec_field + field.removeprefix("job_spec")
        found.append((field, violation.description))
    return found


def custom_job_violations(job: Any, *, location: str, spec_field: str = "job_spec",
                          today: dt.date | None = None) -> list[Violation]:
    """Every documented rule a CustomJob (proto-plus) in ``location`` breaks; ``spec_field`` names its spec in
    the fields (``trial_job_spec`` for a tuning job's trials)."""
    from tfcloud.google.rules import check_custom_job
    from tfcloud.google.rules.requests import check_job_fields

    as_dict = _as_dict(job)
    found = check_custom_job(as_dict, location=location, today=today)
    found += check_job_fields(as_dict.get("job_spec") or {})
    return _pairs(found, spec_field=spec_field)


def persistent_resource_violations(resource: Any, *, location: str, today: dt.date | None = None) -> list[Violation]:
    """Every documented rule a PersistentResource (proto-plus) in ``location`` breaks."""
    from tfcloud.google.rules import check_persistent_resource

    return _pairs(check_persistent_resource(_as_dict(resource), location=location, today=today))
