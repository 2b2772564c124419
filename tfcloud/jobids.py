"""Job ids as ``tfcloud status/logs/cancel`` take them, checked without loading the spec, the machine catalog or
the rest of :mod:`tfcloud.validate` (those commands start in a few tens of milliseconds)."""

from __future__ import annotations

import re

from tfcloud.errors import ValidationError

__all__ = ["validate_job_id"]

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
