"""The checks the gate (:mod:`tfcloud.validate`) and the targets share: label rules, bucket names, image
references, the settings a job reaches Google or Docker with, and Google's credentials. They sit below both: the
gate calls them, a target calls them (a Vertex AI target's options, ``tfcloud cluster``), and neither calls the
other back. Each failure is a :class:`~tfcloud.errors.ValidationError` (or :class:`ConfigurationError`) naming
the field, what was expected and what was received.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from tfcloud.errors import ConfigurationError, ValidationError
from tfcloud.targets._base import refuse_control as check_text

if TYPE_CHECKING:
    from tfcloud.settings import Settings

__all__ = ["MAX_LABELS", "MAX_LABEL_LENGTH", "check_credentials", "check_settings",
           "validate_bucket", "validate_host_port", "validate_image_reference", "validate_labels"]

MAX_LABELS = 63  # Vertex AI allows 64; tfcloud adds one (tfcloud-submission) to make retries idempotent
MAX_LABEL_LENGTH = 63
_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]*$")
_LABEL_VALUE = re.compile(r"^[a-z0-9_-]*$")
# Docker's reference grammar (distribution/reference): [domain[:port]/]path[:tag][@sha256:digest].
# Lowercase registry hosts only: Docker's grammar allows `LOCALHOST:5000/x`, but the engine then takes
# `UPPER/x`'s first part for a host, and registries and Artifact Registry are named in lowercase; refused here
# rather than by Docker after the build started.
_DOMAIN_PART = r"(?:[a-z0-9]|[a-z0-9][a-z0-9-]*[a-z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]{{1,5}})?)"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE_NAME = rf"(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*"
_IMAGE_REF = re.compile(rf"^{_IMAGE_NAME}(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(?:@sha256:[a-f0-9]{{64}})?$")
_IMAGE_REPO = re.compile(rf"^{_IMAGE_NAME}$")
_IMAGE_EXPECTED = "an image reference such as us-docker.pkg.dev/my-project/repo/name:tag (lowercase)"
_HOST_PORT = re.compile(r"^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")


def validate_labels(value: object) -> Mapping[str, str]:
    """GCP label rules: ≤ 64 labels (63 here: tfcloud adds one); keys 1–63 chars starting with a lowercase
    letter; keys and values only lowercase letters, digits, ``_`` and ``-``; values ≤ 63 chars (may be empty)."""
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise ValidationError("job_labels", "a dict of str to str", value)
    if len(value) > MAX_LABELS:
        raise ValidationError("job_labels", f"at most {MAX_LABELS} labels (Vertex AI allows 64; tfcloud adds one)",
                              f"<{len(value)} labels>")
    labels: dict[str, str] = {}
    for key, val in value.items():
        check_text("job_labels", key)
        check_text(f"job_labels[{key!r}]", val)
        if key == "tfcloud-submission":
            raise ValidationError("job_labels", "keys other than 'tfcloud-submission' (tfcloud sets it)", key)
        if not isinstance(key, str) or not key or len(key) > MAX_LABEL_LENGTH or not _LABEL_KEY.match(key):
            raise ValidationError(
                "job_labels",
                f"keys of 1 to {MAX_LABEL_LENGTH} characters that start with a lowercase letter and contain "
                "only lowercase letters, digits, '_' and '-'",
                key,
            )
        if not isinstance(val, str) or len(val) > MAX_LABEL_LENGTH or not _LABEL_VALUE.match(val):
            raise ValidationError(
                f"job_labels[{key!r}]",
                f"a value of at most {MAX_LABEL_LENGTH} characters containing only lowercase letters, digits, "
                "'_' and '-'",
                val,
            )
        labels[key] = val
    return MappingProxyType(labels)


def validate_bucket(field: str, value: object, *, hint: str | None = None) -> str:
    """A Cloud Storage bucket name, with or without ``gs://`` (Cloud Storage's naming rules: 3 to 63
    characters, or up to 222 in dot-separated parts of at most 63; lowercase letters, digits, ``-``, ``_``
    and ``.``; starts and ends with a letter or digit; not an IP address; no ``goog`` prefix, no ``google``).
    Returns the bare name."""
    expected = "a Cloud Storage bucket name (3-63 lowercase letters, digits, '-', '_' or '.')"
    if not isinstance(value, str):
        raise ValidationError(field, expected, value)
    name = value.removeprefix("gs://").rstrip("/")
    ok = (3 <= len(name) <= 222 and _BUCKET.match(name) is not None
          and all(1 <= len(part) <= 63 for part in name.split("."))
          and re.fullmatch(r"[0-9]+(?:\.[0-9]+){3}", name) is None
          and not name.startswith("goog") and "google" not in name)
    if not ok:
        raise ValidationError(field, expected, value, hint=hint)
    return name


def validate_image_reference(field: str, value: object) -> str:
    """An image reference in Docker's grammar: ``[registry[:port]/]path[:tag][@sha256:digest]``."""
    if not isinstance(value, str) or len(value) > 512 or not _IMAGE_REF.match(value):
        raise ValidationError(field, _IMAGE_EXPECTED, value)
    return value


def check_settings(settings: Settings) -> None:
    """The settings a submission reaches Docker and a registry with: each checked before anything is built. (A
    target's own, such as Vertex AI's staging bucket and emulator host, are its options: its checks.)"""
    for name, value in vars(settings).items():
        check_text(name, value, origin=settings.sources.get(name))
    origin = settings.sources.get("image_repository")
    if settings.image_repository is not None and (
            not _IMAGE_REPO.match(settings.image_repository) or len(settings.image_repository) > 255):
        raise ValidationError("image_repository", "an image repository such as "
                              "us-central1-docker.pkg.dev/my-project/tfcloud (no tag, lowercase)",
                              settings.image_repository, hint="Name a repository without a tag, such as "
                              "us-central1-docker.pkg.dev/my-project/tfcloud" + (f", in {origin}" if origin else "")
                              + " (TFCLOUD_IMAGE_REPOSITORY, image_repository= in run() or [tool.tfcloud]).")


def validate_host_port(field: str, value: object, *, flag: str) -> str | None:
    """``HOST:PORT`` (an IPv6 host in brackets) of a service tfcloud reaches, such as the emulator's."""
    if value is None:
        return None
    if not isinstance(value, str) or not _HOST_PORT.match(value):
        raise ValidationError(field, "HOST:PORT of a running `tfcloud emulator start`, such as 127.0.0.1:8470",
                              value, hint=f"Give the address `tfcloud emulator start` printed: {flag} "
                                          "127.0.0.1:8470.")
    return value


def check_credentials(*, emulator_host: str | None) -> None:
    """Google's Application Default Credentials must exist (not needed against the emulator at
    ``emulator_host``). Raises :class:`ConfigurationError` with the command that fixes it."""
    if emulator_host:
        return
    from tfcloud.errors import require

    require("google.auth", feature="Running on Vertex AI", extra="vertex")
    import google.auth
    from google.auth.exceptions import GoogleAuthError

    try:
        google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    except GoogleAuthError as exc:
        raise ConfigurationError(
            "No Google Cloud credentials found (Application Default Credentials); nothing was built or submitted.",
            hint="Run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
                 "service account key file. To try tfcloud without Google Cloud, start "
                 "`tfcloud emulator start` and export what it prints.",
        ) from exc
