"""The checks the gate (:mod:`tfcloud.flow.validate`) and the targets share: label rules, bucket names, image
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

from tfcloud.config.usertext import refuse_control as check_text
from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from tfcloud.config.value import Settings

__all__ = ["MAX_LABELS", "check_settings",
           "validate_bucket", "validate_host_port", "validate_image_reference", "validate_image_repository",
           "validate_labels"]

MAX_LABELS = 63  # Vertex AI allows 64; tfcloud adds one (tfcloud-submission) to make retries idempotent
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


def validate_labels(value: object, *, field: str = "job_labels") -> Mapping[str, str]:
    """A job's labels by Google's Labels rules, the one copy in :data:`tfcloud.google.rules.LABELS` (international
    lowercase letters allowed), with at most 63 labels here: tfcloud adds one (``tfcloud-submission``), which a
    caller may not set. The first rule broken is raised naming ``field[key]``."""
    from tfcloud.google.rules import LABELS, check_labels

    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise ValidationError(field, "a dict of str to str", value)
    if len(value) > MAX_LABELS:
        raise ValidationError(field, f"at most {MAX_LABELS} labels (Vertex AI allows {LABELS.max_labels}; tfcloud "
                                     "adds one)", f"<{len(value)} labels>")
    labels: dict[str, str] = {}
    for key, val in value.items():
        check_text(field, key)
        check_text(f"{field}[{key!r}]", val)
        if key == "tfcloud-submission":
            raise ValidationError(field, "keys other than 'tfcloud-submission' (tfcloud sets it)", key)
        if not isinstance(key, str):
            raise ValidationError(field, "str keys", key)
        if not isinstance(val, str):
            raise ValidationError(f"{field}[{key!r}]", "a str value", val)
        labels[key] = val
    for found in check_labels(labels, field=field):  # a key's rule names the labels, a value's its key
        raise ValidationError(field if found.rule == "label-key" else found.field, found.expected,
                              found.received, hint=found.hint)
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


def validate_image_repository(value: object, *, field: str = "image_repository") -> str:
    """An image repository (no tag): Docker's reference grammar, lowercase, at most 255 characters."""
    if not isinstance(value, str) or not _IMAGE_REPO.match(value) or len(value) > 255:
        raise ValidationError(field, "an image repository such as us-central1-docker.pkg.dev/my-project/tfcloud "
                              "(no tag, lowercase)", value,
                              hint="Name a repository without a tag, such as "
                                   "us-central1-docker.pkg.dev/my-project/tfcloud (TFCLOUD_IMAGE_REPOSITORY, "
                                   "image_repository= in run() or [tool.tfcloud]).")
    return value


def check_settings(settings: Settings) -> None:
    """The settings a submission reaches Docker and a registry with: each checked before anything is built. (A
    target's own, such as Vertex AI's staging bucket and emulator host, are its options: its checks.) Settings
    resolved by :func:`tfcloud.flow.settings.resolve_settings` were checked there, naming their source; this checks
    one built by hand the same way."""
    for name, value in vars(settings).items():
        check_text(name, value, origin=settings.sources.get(name))
    if settings.image_repository is not None:
        validate_image_repository(settings.image_repository)


def validate_host_port(field: str, value: object, *, flag: str) -> str | None:
    """``HOST:PORT`` (an IPv6 host in brackets) of a service tfcloud reaches, such as the emulator's."""
    if value is None:
        return None
    if not isinstance(value, str) or not _HOST_PORT.match(value):
        raise ValidationError(field, "HOST:PORT of a running `tfcloud emulator start`, such as 127.0.0.1:8470",
                              value, hint=f"Give the address `tfcloud emulator start` printed: {flag} "
                                          "127.0.0.1:8470.")
    return value
