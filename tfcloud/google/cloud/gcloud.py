"""The Google Cloud boundary: clients, retries, and one table from Google's errors to tfcloud's.

- **Clients** (:class:`Clients`): Vertex AI's ``JobServiceClient`` and ``PersistentResourceServiceClient`` (on the
  region's endpoint), Cloud Logging's ``LoggingServiceV2Client`` and ``CloudBuildClient``, each made on first use
  with Application Default Credentials, or over an insecure channel to the tfcloud emulator when ``endpoint``
  (``host:port``) is given.
  :meth:`Clients.close` closes every transport (and so every channel) they opened.
- **Retries** (:func:`call`): one ``google.api_core.retry.Retry`` for every call, on the transient codes
  (:data:`TRANSIENT`), with the backoff and the deadline of a :class:`RetryPolicy`. Calls pass ``retry=None``
  to the client libraries, so that their own defaults never stack on top of ours.
- **Errors** (:data:`ERRORS`, :func:`translate`): one table from a gRPC status code to an error of
  :mod:`tfcloud.errors`. A transient error that outlasts the policy's deadline becomes
  :class:`~tfcloud.errors.OutcomeUnknownError` (exit 3): tfcloud cannot tell what happened, and says what to
  run to find out.
- **Cloud Storage** (:class:`StorageDeadline`): the storage client's own retry (its transient codes and
  connection errors), bounded by the same policy's deadline across every call of one upload, and its errors
  translated the same way: a staging upload that keeps failing (the ``--no-build`` package, the build context
  for Cloud Build) ends at the deadline with exit 1 (:class:`~tfcloud.errors.SubmitError`,
  :class:`~tfcloud.errors.BuildError`) naming the command that looks at the object.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tfcloud.errors import (
    ConfigurationError,
    JobNotFoundError,
    OutcomeUnknownError,
    SubmitError,
    TfcloudError,
    ValidationError,
    require,
)

if TYPE_CHECKING:
    from google.cloud.aiplatform_v1 import JobServiceClient, PersistentResourceServiceClient
    from google.cloud.devtools.cloudbuild_v1 import CloudBuildClient
    from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client

__all__ = ["ERRORS", "TRANSIENT", "Clients", "RetryPolicy", "StorageDeadline", "call", "is_transient", "status_code",
           "translate"]

log = logging.getLogger("tfcloud")
T = TypeVar("T")

#: The status codes worth another try: the call may succeed if made again.
TRANSIENT = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "RESOURCE_EXHAUSTED", "ABORTED"})

_AUTH_HINT = ("Log in with `gcloud auth application-default login`, and check that the account may use "
              "{service} in this project.")

#: gRPC status code → (error class, message template, hint). ``{what}``: the action ("Getting job 123"),
#: ``{service}``: "Vertex AI", "Cloud Build", "Cloud Logging"; ``{code}`` and ``{message}``: Google's.
#: ``SubmitError`` rows are the caller's failure class (Cloud Build raises ``BuildError`` instead). Codes not in
#: the table: ``SubmitError`` (``{what}: {code}: {message}``).
ERRORS: Mapping[str, tuple[type[TfcloudError], str, str | None]] = {
    "NOT_FOUND": (JobNotFoundError, "{what}: not found ({message}).", None),
    "UNAUTHENTICATED": (ConfigurationError, "{what}: unauthenticated ({message}).", _AUTH_HINT),
    "PERMISSION_DENIED": (ConfigurationError, "{what}: permission denied ({message}).", _AUTH_HINT),
    "INVALID_ARGUMENT": (SubmitError, "{what}: rejected by {service}: {message}", None),
    "FAILED_PRECONDITION": (SubmitError, "{what}: rejected by {service}: {message}", None),
    "OUT_OF_RANGE": (SubmitError, "{what}: rejected by {service}: {message}", None),
    "ALREADY_EXISTS": (SubmitError, "{what}: already exists ({message}).", None),
    **{code: (OutcomeUnknownError, "{what}: {service} did not answer ({code}: {message}); gave up after "
                                   "{deadline:g} s.", None)
       for code in TRANSIENT},
}


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How long to wait for Google Cloud.

    ``initial``, ``maximum``, ``multiplier``: the backoff between tries (``google.api_core.retry``'s truncated
    exponential backoff, with jitter); ``deadline``: the seconds after which a call that keeps failing
    transiently is given up; ``call_timeout``: each call's own deadline (``create_timeout`` for creates).
    """

    initial: float = 0.5
    maximum: float = 8.0
    multiplier: float = 2.0
    deadline: float = 60.0
    call_timeout: float = 30.0
    create_timeout: float = 60.0

    def __post_init__(self) -> None:
        for name in ("initial", "maximum", "deadline", "call_timeout", "create_timeout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ValidationError(f"RetryPolicy.{name}", "a number of seconds > 0", value)
        if self.multiplier < 1:
            raise ValidationError("RetryPolicy.multiplier", "a number ≥ 1", self.multiplier)

    @classmethod
    def from_setting(cls, deadline: str | None) -> RetryPolicy:
        """The default policy, with the ``retry_deadline`` setting (seconds) when given."""
        if deadline is None:
            return cls()
        from tfcloud.config.digits import ascii_float

        seconds = ascii_float(deadline)  # ASCII only: float() also takes "١٢٣", "1_0", "inf"
        if seconds is None or not seconds > 0:
            raise ValidationError("retry_deadline", "a number of seconds > 0", deadline,
                                  hint="Set it with TFCLOUD_RETRY_DEADLINE or retry_deadline in [tool.tfcloud].")
        return cls(deadline=seconds, initial=min(0.5, seconds / 10), call_timeout=min(30.0, seconds),
                   create_timeout=min(60.0, seconds))

    def backoff(self, attempt: int) -> float:
        """The wait before retry ``attempt`` (0-based), without jitter: for loops that are not calls."""
        return float(min(self.initial * self.multiplier ** attempt, self.maximum))


def status_code(exc: BaseException) -> str:
    """The gRPC status code name of a Google API error (``UNAVAILABLE``), else the exception's type name."""
    grpc_code = getattr(exc, "grpc_status_code", None)
    if grpc_code is not None:
        return str(grpc_code.name)
    code = getattr(exc, "code", None)
    if callable(code):  # a raw grpc.RpcError
        try:
            code = code()
        except Exception:
            code = None
    name = getattr(code, "name", None)
    return str(name) if name else type(exc).__name__


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a Google API error worth another try."""
    from google.api_core import exceptions as gexc

    return isinstance(exc, (gexc.GoogleAPIError, _grpc_error())) and status_code(exc) in TRANSIENT


def _grpc_error() -> type[BaseException]:
    try:
        import grpc
    except ImportError:  # pragma: no cover - grpc comes with the cloud extra
        return _NoError
    return grpc.RpcError  # type: ignore[no-any-return]


class _NoError(Exception):
    pass


def translate(exc: BaseException, what: str, *, service: str = "Vertex AI", policy: RetryPolicy | None = None,
              failed: Callable[[str], TfcloudError] = SubmitError, unknown: str = "",
              unknown_hint: str | None = None) -> TfcloudError:
    """A Google API error as tfcloud's own, through :data:`ERRORS`. ``failed`` makes the error for a refused
    call (``SubmitError`` by default); ``unknown`` and ``unknown_hint`` complete an
    :class:`OutcomeUnknownError` (what may have happened, the command that finds out)."""
    code = status_code(exc)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    kind, template, hint = ERRORS.get(code, (SubmitError, "{what}: {code}: {message}", None))
    text = template.format(what=what, service=service, code=code, message=message,
                           deadline=(policy or RetryPolicy()).deadline)
    if kind is OutcomeUnknownError:
        return OutcomeUnknownError(f"{text} {unknown}".strip(), hint=unknown_hint)
    if kind is SubmitError:
        return failed(text)
    return kind(text, hint=hint.format(service=service) if hint else None)


def call(fn: Callable[[], T], *, what: str, policy: RetryPolicy, service: str = "Vertex AI",
         failed: Callable[[str], TfcloudError] = SubmitError, unknown: str = "",
         unknown_hint: str | None = None) -> T:
    """Run ``fn`` (one Google API call, made with ``retry=None``), retrying transient errors with ``policy``'s
    backoff until its deadline; a Google error that ends it is raised as tfcloud's own (:func:`translate`)."""
    from google.api_core import exceptions as gexc
    from google.api_core.retry import Retry

    def on_error(exc: Exception) -> None:
        log.info("%s: %s; retrying", what, status_code(exc))

    retry = Retry(predicate=is_transient, initial=policy.initial, maximum=policy.maximum,
                  multiplier=policy.multiplier, timeout=policy.deadline, on_error=on_error)
    try:
        return retry(fn)()
    except gexc.RetryError as exc:
        last = exc.cause or exc
        raise translate(last, what, service=service, policy=policy, failed=failed, unknown=unknown,
                        unknown_hint=unknown_hint) from last
    except (gexc.GoogleAPIError, _grpc_error()) as exc:
        raise translate(exc, what, service=service, policy=policy, failed=failed, unknown=unknown,
                        unknown_hint=unknown_hint) from exc


def _submit_failed(message: str, hint: str | None) -> TfcloudError:
    return SubmitError(message, hint=hint)


class StorageDeadline:
    """One deadline for a series of Cloud Storage calls (a look, an upload, a check): each :meth:`call` retries
    with the storage client's own predicate (429, 5xx, connection errors) and ``policy``'s backoff, for what is
    left of ``policy.deadline`` since this object was made. ``uri`` names the object in messages and hints;
    ``failed(message, hint)`` makes the error of a call that failed (:class:`SubmitError` by default);
    ``nothing``: what did not happen ("Nothing was submitted."), ``again``: what a retry of the command does;
    ``hint``: instead of the hint these make; ``staging``: the bucket is the staging bucket (a missing one is
    named so, with the setting that changes it)."""

    def __init__(self, policy: RetryPolicy, *, uri: str,
                 failed: Callable[[str, str | None], TfcloudError] = _submit_failed,
                 nothing: str = "Nothing was submitted.",
                 again: str = "submit again: a package already there is checked and reused",
                 hint: str | None = None, staging: bool = True) -> None:
        self.staging = staging
        self.policy = policy
        self.uri = uri
        self.failed = failed
        self.nothing = nothing
        self.again = again
        self.hint = hint
        self._end = time.monotonic() + policy.deadline

    def left(self) -> float:
        return self._end - time.monotonic()

    def call(self, fn: Callable[[Any, float], T], *, what: str) -> T:
        """``fn(retry, timeout)`` (one storage call made with that ``retry=`` and ``timeout=``), its errors as
        tfcloud's: ``PreconditionFailed`` is raised as it is (the caller's condition); a missing bucket or no access
        :class:`ConfigurationError`; anything else, or transient failures past the deadline, :class:`SubmitError`."""
        from google.api_core import exceptions as gexc
        from google.auth import exceptions as auth_exc
        from google.cloud.storage.retry import DEFAULT_RETRY

        bucket = self.uri.removeprefix("gs://").split("/", 1)[0]
        hint = self.hint or (f"{self.nothing} Look at the bucket with `gcloud storage ls gs://{bucket}/` (and the "
                             f"object with `gcloud storage objects describe {self.uri}`), then {self.again}.")
        failed = self.failed
        left = self.left()
        if left <= 0:
            raise failed(f"{what}: gave up, the retry deadline of {self.policy.deadline:g} s has passed "
                         "(TFCLOUD_RETRY_DEADLINE).", hint)
        retry = DEFAULT_RETRY.with_timeout(left).with_delay(
            initial=min(self.policy.initial, left / 4), maximum=self.policy.maximum,
            multiplier=self.policy.multiplier)
        try:
            return fn(retry, max(0.5, min(self.policy.call_timeout, left)))
        except gexc.PreconditionFailed:
            raise
        except gexc.NotFound as exc:
            if not self.staging:
                raise ConfigurationError(f"{what}: not found ({exc.message}).",
                                         hint=f"Look with `gcloud storage ls gs://{bucket}/`.") from exc
            raise ConfigurationError(f"{what}: the staging bucket gs://{bucket} does not exist.",
                                     hint=f"Create it (gcloud storage buckets create gs://{bucket}), or set "
                                          "TFCLOUD_STAGING_BUCKET to one that does.") from exc
        except (gexc.Forbidden, gexc.Unauthorized) as exc:
            raise ConfigurationError(f"{what}: {exc.message}",
                                     hint=_AUTH_HINT.format(service="Cloud Storage")) from exc
        except gexc.RetryError as exc:
            last = exc.cause or exc
            raise failed(f"{what}: Cloud Storage did not answer ({_storage_reason(last)}); gave up after "
                         f"{self.policy.deadline:g} s (TFCLOUD_RETRY_DEADLINE).", hint) from last
        except gexc.GoogleAPICallError as exc:
            raise failed(f"{what}: {exc.code} {exc.message}", hint) from exc
        except (OSError, auth_exc.TransportError, gexc.GoogleAPIError) as exc:  # requests' errors are OSErrors
            raise failed(f"{what}: Cloud Storage cannot be reached ({_storage_reason(exc)}).", hint) from exc
        except Exception as exc:  # google-resumable-media's InvalidResponse, DataCorruption
            if type(exc).__module__.startswith(("google.resumable_media", "google.cloud.storage")):
                raise failed(f"{what}: {_storage_reason(exc)}", hint) from exc
            raise


def _storage_reason(exc: BaseException) -> str:
    """One line about a storage failure (requests' messages hold whole reprs: the first 200 characters)."""
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    text = " ".join(str(text).split())
    return f"{type(exc).__name__}: {text[:200]}"


class Clients:
    """The Google clients one backend or builder uses, made on first use and closed together.

    ``endpoint``: the tfcloud emulator (``host:port``, insecure channel, no credentials); ``region``: Vertex
    AI's region (its endpoint); ``credentials``: used instead of Application Default Credentials.
    """

    def __init__(self, *, endpoint: str | None = None, region: str = "us-central1", credentials: Any = None) -> None:
        self.endpoint = endpoint
        self.region = region
        self._credentials = credentials
        self._clients: dict[str, Any] = {}

    def credentials(self) -> Any:
        """The credentials given, else Application Default Credentials (ConfigurationError without any)."""
        if self._credentials is None:
            import google.auth
            from google.auth.exceptions import DefaultCredentialsError

            try:
                self._credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
            except DefaultCredentialsError as exc:
                raise ConfigurationError(
                    "No Google Cloud credentials found (Application Default Credentials).",
                    hint="Run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
                         "service account key file. To try tfcloud without Google Cloud, start "
                         "`tfcloud emulator start` and export what it prints.",
                ) from exc
        return self._credentials

    def _channel(self) -> Any:
        import grpc

        assert self.endpoint
        return grpc.insecure_channel(self.endpoint)

    def jobs(self) -> JobServiceClient:
        """Vertex AI's ``JobServiceClient``."""
        if "jobs" not in self._clients:
            require("google.cloud.aiplatform_v1", feature="The Vertex AI backend", extra="cloud")
            from google.cloud import aiplatform_v1
            from google.cloud.aiplatform_v1.services.job_service.transports.grpc import JobServiceGrpcTransport

            if self.endpoint:
                client = aiplatform_v1.JobServiceClient(transport=JobServiceGrpcTransport(channel=self._channel()))
            else:
                client = aiplatform_v1.JobServiceClient(
                    credentials=self.credentials(),
                    client_options={"api_endpoint": f"{self.region}-aiplatform.googleapis.com"})
            self._clients["jobs"] = client
        return self._clients["jobs"]  # type: ignore[no-any-return]

    def persistent_resources(self) -> PersistentResourceServiceClient:
        """Vertex AI's ``PersistentResourceServiceClient`` (``tfcloud cluster``)."""
        if "persistent_resources" not in self._clients:
            require("google.cloud.aiplatform_v1", feature="Vertex AI persistent resources", extra="cloud")
            from google.cloud import aiplatform_v1
            from google.cloud.aiplatform_v1.services.persistent_resource_service.transports.grpc import (
                PersistentResourceServiceGrpcTransport,
            )

            if self.endpoint:
                client = aiplatform_v1.PersistentResourceServiceClient(
                    transport=PersistentResourceServiceGrpcTransport(channel=self._channel()))
            else:
                client = aiplatform_v1.PersistentResourceServiceClient(
                    credentials=self.credentials(),
                    client_options={"api_endpoint": f"{self.region}-aiplatform.googleapis.com"})
            self._clients["persistent_resources"] = client
        return self._clients["persistent_resources"]  # type: ignore[no-any-return]

    def logging(self) -> LoggingServiceV2Client:
        """Cloud Logging's ``LoggingServiceV2Client``."""
        if "logging" not in self._clients:
            require("google.cloud.logging_v2", feature="Following logs", extra="cloud")
            from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
            from google.cloud.logging_v2.services.logging_service_v2.transports.grpc import (
                LoggingServiceV2GrpcTransport,
            )

            if self.endpoint:
                client = LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=self._channel()))
            else:
                client = LoggingServiceV2Client(credentials=self.credentials())
            self._clients["logging"] = client
        return self._clients["logging"]  # type: ignore[no-any-return]

    def builds(self) -> CloudBuildClient:
        """Cloud Build's ``CloudBuildClient``."""
        if "builds" not in self._clients:
            require("google.cloud.devtools.cloudbuild_v1", feature="Building with Cloud Build", extra="cloud")
            from google.cloud.devtools.cloudbuild_v1 import CloudBuildClient
            from google.cloud.devtools.cloudbuild_v1.services.cloud_build.transports.grpc import (
                CloudBuildGrpcTransport,
            )

            if self.endpoint:
                client = CloudBuildClient(transport=CloudBuildGrpcTransport(channel=self._channel()))
            else:
                client = CloudBuildClient(credentials=self.credentials())
            self._clients["builds"] = client
        return self._clients["builds"]  # type: ignore[no-any-return]

    def storage(self, project: str) -> Any:
        """Cloud Storage's ``storage.Client`` for ``project``: the storage emulator at ``STORAGE_EMULATOR_HOST``
        (what ``tfcloud emulator start`` exports) with no credentials, else Google's with the credentials."""
        if "storage" not in self._clients:
            require("google.cloud.storage", feature="Uploading the job's package", extra="cloud")
            import google.cloud.storage as storage

            emulator = os.environ.get("STORAGE_EMULATOR_HOST")
            if emulator:
                from google.auth.credentials import AnonymousCredentials

                client = storage.Client(project=project, credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                                        client_options={"api_endpoint": emulator})
            else:
                client = storage.Client(project=project, credentials=self.credentials())
            self._clients["storage"] = client
        return self._clients["storage"]

    @property
    def opened(self) -> tuple[str, ...]:
        """The clients made and not closed yet (``"jobs"``, ``"persistent_resources"``, ``"logging"``,
        ``"builds"``)."""
        return tuple(self._clients)

    def close(self) -> None:
        """Close every client's transport (its channel with it). The clients are made again if used later."""
        clients, self._clients = self._clients, {}
        for name, client in clients.items():
            if name == "storage":
                client.close()
            else:
                client.transport.close()

