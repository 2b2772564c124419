"""Job ids: the ones tfcloud makes for the jobs it runs itself (:func:`make_job_id`: local and Ray), and job ids
as ``tfcloud status/logs/cancel`` take them, checked without loading the spec, the machine catalog or the rest
of :mod:`tfcloud.flow.validate` (those commands start in a few tens of milliseconds)."""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING

from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from tfcloud.job.spec import JobSpec

__all__ = ["make_job_id", "validate_job_id"]

_JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9./:-]{0,300}$")


def validate_job_id(value: object) -> str:
    """A job id as ``tfcloud status/logs/cancel`` take it, by its characters: letters, digits, ``-``, ``.``,
    ``:`` and ``/`` (``customJobs``), no ``..`` (which target's it is, and its form, the target says:
    :func:`tfcloud.targets.for_job_id`)."""
    if not isinstance(value, str) or not _JOB_ID.match(value) or ".." in value:
        raise ValidationError("JOB", "a job id: local-NAME-DATE-TIME-XXXX, ray-NAME-DATE-TIME-XXXX, a Vertex AI "
                              "job number, projects/PROJECT/locations/REGION/customJobs/NUMBER, or a plug-in "
                              "target's", value, hint="`tfcloud list` shows the ids.")
    return value


def make_job_id(spec: JobSpec, *, prefix: str = "local", now: datetime.datetime | None = None) -> str:
    """``<prefix>-<entry point stem>-<yyyymmdd-hhmmss>-<4 hex>``, e.g. ``local-train-20250101-120000-3f2a``
    (``prefix``: the target's ``id_prefix`` without its dash: ``local``, ``ray``)."""
    stem = re.sub(r"[^a-z0-9]+", "-", spec.entry_point.stem.lower()).strip("-")[:30].strip("-") or "job"
    import secrets  # here, not at the top: `tfcloud status` never needs it (OpenSSL's start-up)

    stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
    return f"{prefix}-{stem}-{stamp}-{secrets.token_hex(2)}"
