"""Job ids: the ones tfcloud makes for the jobs it runs itself (:func:`make_job_id`: local and Ray), and job ids
as ``tfcloud status/logs/cancel`` take them, checked without loading the spec, the machine catalog or the rest
of :mod:`tfcloud.validate` (those commands start in a few tens of milliseconds)."""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING

from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from tfcloud.spec import JobSpec

__all__ = ["make_job_id", "validate_job_id"]

_JOB_ID = re.compile(r"^(?:(?:local|ray)-[a-z0-9-]{1,120}|[0-9]{1,20}|"
                     r"projects/[a-z0-9.:-]{1,64}/locations/[a-z0-9-]{1,64}/customJobs/[0-9]{1,20})$")


def validate_job_id(value: object) -> str:
    """A job id as ``tfcloud status/logs/cancel`` take it: ``local-...``, a Vertex AI job number, or its
    full resource name."""
    if not isinstance(value, str) or not _JOB_ID.match(value):
        raise ValidationError("JOB", "a job id: local-NAME-DATE-TIME-XXXX, ray-NAME-DATE-TIME-XXXX, a Vertex AI "
                              "job number, or projects/PROJECT/locations/REGION/customJobs/NUMBER", value,
                              hint="`tfcloud list` shows the ids.")
    return value


def make_job_id(spec: JobSpec, *, prefix: str = "local", now: datetime.datetime | None = None) -> str:
    """``<prefix>-<entry point stem>-<yyyymmdd-hhmmss>-<4 hex>``, e.g. ``local-train-20250101-120000-3f2a``
    (``prefix``: the target, ``local`` or ``ray``; :func:`validate_job_id` takes both)."""
    stem = re.sub(r"[^a-z0-9]+", "-", spec.entry_point.stem.lower()).strip("-")[:30].strip("-") or "job"
    import secrets  # here, not at the top: `tfcloud status` never needs it (OpenSSL's start-up)

    stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
    return f"{prefix}-{stem}-{stamp}-{secrets.token_hex(2)}"
