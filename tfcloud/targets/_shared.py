"""Options that several targets take, written once (each target lists the ones it acts on)."""

from __future__ import annotations

from pathlib import Path

from tfcloud.config.docsite import page
from tfcloud.errors import ValidationError
from tfcloud.targets._base import Option, check_count, check_text

__all__ = ["DEFAULT_LIVENESS_TIMEOUT", "LIVENESS_TIMEOUT", "MAX_RESTARTS", "check_gcs_uri", "output_dir_option"]

_MAX_RESTARTS = 100
#: Seconds a replica may go without a heartbeat before it fails the job (targets that run replicas themselves).
DEFAULT_LIVENESS_TIMEOUT = 60
_MAX_LIVENESS_TIMEOUT = 86_400


def _max_restarts(name: str, value: object) -> int | None:
    return check_count(name, value, maximum=_MAX_RESTARTS)


MAX_RESTARTS = Option(
    name="max_restarts", type=int, setting="max_restarts", metavar="N", check=_max_restarts, example=2,
    help="Restart the cluster up to N times when a replica dies; training resumes from its checkpoint "
         "(" + page("recovery") + ").")


def _liveness_timeout(name: str, value: object) -> int | None:
    """Whole seconds from 2 to a day (a replica beats every second), or 0: no liveness rule."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value == 1 or not 0 <= value <= _MAX_LIVENESS_TIMEOUT:
        raise ValidationError(name, f"a number of seconds from 2 to {_MAX_LIVENESS_TIMEOUT}, or 0 to turn the "
                                    "rule off", value, hint="Replicas beat once a second (" + page("recovery") + ").")
    return value


LIVENESS_TIMEOUT = Option(
    name="liveness_timeout", type=int, setting="liveness_timeout", metavar="SECONDS", check=_liveness_timeout,
    example=30,
    help=f"Fail the job when a replica sends no heartbeat for this long: stopped or hung (default "
         f"{DEFAULT_LIVENESS_TIMEOUT}; 0: off; {page('recovery')}).")


def check_gcs_uri(name: str, value: object) -> str:
    """A ``gs://BUCKET[/PATH]`` URI with a valid bucket name."""
    import re

    from tfcloud.job.checks import validate_bucket

    text = check_text(name, value, expected="a Cloud Storage URI such as gs://my-bucket/outputs")
    if text is None or not re.match(r"^gs://[^/]+(/.*)?$", text):
        raise ValidationError(name, "a Cloud Storage URI such as gs://my-bucket/outputs", value)
    validate_bucket(name, text[len("gs://"):].split("/", 1)[0])
    return text


def _directory_or_gcs(name: str, value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, Path):
        value = str(value)
    text = check_text(name, value, expected="a directory or a Cloud Storage URI such as gs://my-bucket/outputs")
    assert text is not None
    if text.startswith("gs://"):
        return check_gcs_uri(name, text)
    try:
        return str(Path(text).expanduser().resolve())
    except RuntimeError:  # "~nosuchuser/...": no such user, or no home directory
        raise ValidationError(name, "a directory or a Cloud Storage URI such as gs://my-bucket/outputs", value,
                              hint=f"{text.split('/', 1)[0]} is not a user's home directory here.") from None


def _gcs_only(name: str, value: object) -> str | None:
    return None if value is None else check_gcs_uri(name, value)


def output_dir_option(*, directories: bool, field: str, where: str) -> Option:
    """``--output-dir`` (``base_output_dir=``): the base of the ``AIP_*`` directories. ``directories``: a path
    is accepted besides ``gs://``; ``where`` says what it must be reachable from."""
    return Option(
        name="base_output_dir", flag="--output-dir", setting="output_dir", field=field, metavar="DIR",
        example="gs://my-bucket/outputs",
        check=_directory_or_gcs if directories else _gcs_only,
        help="Base output directory, gs://... (local jobs: also a directory; default: the job's own; Ray: a path "
             "every node reaches): sets "
             f"AIP_MODEL_DIR, AIP_CHECKPOINT_DIR, AIP_TENSORBOARD_LOG_DIR. {where}".rstrip())
