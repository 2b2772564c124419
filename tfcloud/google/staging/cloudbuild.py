"""Build with Cloud Build: no local Docker engine needed.

1. **Stage** the context in the staging bucket as ``tfcloud/contexts/<context digest>.tar.gz`` (a
   deterministic gzip tarball; resumable upload with a progress bar). An object with that name is already
   the same bytes, so it is not uploaded again.
2. **Build** with one Docker step (BuildKit, ``--cache-from`` the repository's ``:latest``, which each build
   also pushes, so an edit to the code reuses the requirements layer on Cloud Build's fresh machines). Cloud
   Build pushes the images. The request body is :func:`build_request`, a pure function.
3. **Follow** the build: its status by ``GetBuild``, its log lines from Cloud Logging
   (``resource.type="build"``), shown as they come. A failed build raises
   :class:`~tfcloud.errors.BuildError` naming the failing step with that step's last log lines. A build that
   outlives ``timeout`` is stopped by Cloud Build (and cancelled by us if it lingers).
4. **Clean up**: the staged tarball is deleted once the build succeeds; leftovers (failed builds) expire
   through a lifecycle rule on the ``tfcloud/contexts/`` prefix (set once, best effort).

``exists(tag)`` asks the registry (Docker Registry HTTP API ``HEAD /v2/<name>/manifests/<tag>``; Artifact
Registry with the caller's Google credentials, loopback registries without any): one look-up.

Clients, retries and the translation of Google's errors are :mod:`tfcloud.google.cloud.gcloud`'s: ``endpoint``
(``host:port``) points Cloud Build and Cloud Logging at an emulator over an insecure channel; else the real
APIs with Application Default Credentials. Storage honours ``STORAGE_EMULATOR_HOST`` (or ``storage_endpoint``).

A create is idempotent: each build carries a ``tfcloud-submission-<id>`` tag, and before creating again
after a failed or unanswered ``CreateBuild`` the builder looks for a build with that tag. When Cloud Build
keeps failing while a build is followed, the error is :class:`~tfcloud.errors.OutcomeUnknownError` (exit 3):
the build may still be running, and the message names the command that follows it.
"""

from __future__ import annotations

import base64
import logging
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from tfcloud.errors import BuildError, ConfigurationError, OutcomeUnknownError, require
from tfcloud.google.cloud.gcloud import Clients, RetryPolicy, call, status_code
from tfcloud.image.builders import DOCKERFILE_PATH, log_tail
from tfcloud.image.context import BuildContext, format_size
from tfcloud.image.tags import split_image
from tfcloud.job.artifacts import ImageRef

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["DOCKER_BUILDER", "CloudBuildBuilder", "build_request", "manifest_exists"]

logger = logging.getLogger("tfcloud")

#: The Cloud Build step image that runs ``docker``.
DOCKER_BUILDER = "gcr.io/cloud-builders/docker"
#: Where staged contexts go in the bucket.
STAGING_PREFIX = "tfcloud/contexts/"

_TERMINAL = {"SUCCESS", "FAILURE", "INTERNAL_ERROR", "TIMEOUT", "CANCELLED", "EXPIRED"}
_CHUNK = 8 * 1024 * 1024  # resumable upload chunk (a multiple of 256 KiB)


def build_request(
    *,
    image: str,
    bucket: str,
    object_name: str,
    cache_from: str | None = None,
    extra_tags: Sequence[str] = (),
    timeout_s: int = 1800,
    machine_type: str | None = None,
    dockerfile: str = DOCKERFILE_PATH,
) -> dict[str, Any]:
    """The ``cloudbuild_v1.Build`` for one image, as a plain dict (``Build(mapping)`` takes it)."""
    args = ["build", "-f", dockerfile, "-t", image]
    for extra in extra_tags:
        args += ["-t", extra]
    step: dict[str, Any] = {"id": "build", "name": DOCKER_BUILDER}
    if cache_from:
        # BuildKit reads the cache from the registry (no pull) and writes it inline into the new image.
        args += ["--cache-from", cache_from, "--build-arg", "BUILDKIT_INLINE_CACHE=1"]
        step["env"] = ["DOCKER_BUILDKIT=1"]
    args.append(".")
    step["args"] = args
    options: dict[str, Any] = {"logging": "CLOUD_LOGGING_ONLY"}
    if machine_type:
        options["machine_type"] = machine_type
    return {
        "source": {"storage_source": {"bucket": bucket, "object_": object_name}},
        "steps": [step],
        "images": [image, *extra_tags],
        "timeout": {"seconds": int(timeout_s)},
        "options": options,
        "tags": ["tfcloud"],
    }


def _is_loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in ("localhost", "127.0.0.1", "[::1]") or name.startswith("127.")


def manifest_exists(tag: str, *, token: str | None = None, timeout: float = 30) -> bool:
    """Whether the registry has ``tag`` (one ``HEAD`` on its manifest). ``token``: a Google access token."""
    repo, ref = split_image(tag)
    if ref is None:
        repo, _, ref = repo.partition("@")
        ref = ref or "latest"
    host, _, path = repo.partition("/")
    if "." not in host and ":" not in host and host != "localhost":
        host, path = "registry-1.docker.io", repo if "/" in repo else f"library/{repo}"
    scheme = "http" if _is_loopback(host) else "https"
    request = urllib.request.Request(f"{scheme}://{host}/v2/{path}/manifests/{ref}", method="HEAD")
    request.add_header("Accept", ", ".join([
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    ]))
    if token:
        basic = base64.b64encode(f"oauth2accesstoken:{token}".encode()).decode()
        request.add_header("Authorization", f"Basic {basic}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return bool(response.status == 200)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return False
        if exc.code in (401, 403):
            raise ConfigurationError(
                f"The registry {host} refused to say whether {tag} exists (HTTP {exc.code}).",
                hint="Check that your account can read the repository: gcloud auth application-default login",
            ) from exc
        raise ConfigurationError(f"Looking up {tag} in {host} failed: HTTP {exc.code} {exc.reason}.") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ConfigurationError(f"Cannot reach the registry {host} to look up {tag}: {reason}.") from exc


class _Progress:
    """A file wrapper that reports how much was read (for the upload bar)."""

    def __init__(self, raw: IO[bytes], update: Any) -> None:
        self._raw = raw
        self._update = update

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self._update(len(data))
        return data

    def tell(self) -> int:
        return self._raw.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._raw.seek(offset, whence)


class CloudBuildBuilder:
    """Builds images on Cloud Build from a context staged in ``bucket`` (see the module docstring).

    ``project``: the Google Cloud project; ``bucket``: the staging bucket (name, or ``gs://name``);
    ``endpoint``: a Cloud Build + Cloud Logging emulator (``host:port``); ``timeout``: the build's limit in
    seconds (Cloud Build stops it; after ``cancel_grace`` more seconds we cancel it ourselves: a build stuck in
    the queue); ``lifecycle_days``: the age at which leftover staged contexts are deleted (None: no rule);
    ``retry``: how long to wait for Cloud Build (:class:`~tfcloud.google.cloud.gcloud.RetryPolicy`).
    """

    def __init__(
        self,
        *,
        project: str,
        bucket: str,
        endpoint: str | None = None,
        storage_endpoint: str | None = None,
        credentials: Any = None,
        console: Console | None = None,
        stream_logs: bool = False,
        timeout: int = 1800,
        machine_type: str | None = None,
        poll_interval: float = 2.0,
        lifecycle_days: int | None = 7,
        cancel_grace: float = 300,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.project = project
        self.bucket = bucket.removeprefix("gs://").strip("/")
        self.endpoint = endpoint
        self.storage_endpoint = storage_endpoint
        self.credentials = credentials
        self.console = console
        self.stream_logs = stream_logs
        self.timeout = timeout
        self.machine_type = machine_type
        self.poll_interval = poll_interval
        self.lifecycle_days = lifecycle_days
        self.cancel_grace = cancel_grace
        self.retry = retry if retry is not None else RetryPolicy()
        self.clients = Clients(endpoint=endpoint, credentials=credentials)
        self._storage: Any = None
        self._lifecycle_checked = False

    # -- clients --------------------------------------------------------------------------------------------

    def storage(self) -> Any:
        if self._storage is None:
            require("google.cloud.storage", feature="Building with Cloud Build", extra="cloud")
            import os

            import google.cloud.storage as storage

            endpoint = self.storage_endpoint or os.environ.get("STORAGE_EMULATOR_HOST")
            kwargs: dict[str, Any] = {"project": self.project}
            if endpoint:
                from google.auth.credentials import AnonymousCredentials

                kwargs["credentials"] = AnonymousCredentials()  # type: ignore[no-untyped-call]
                kwargs["client_options"] = {"api_endpoint": endpoint}
            elif self.credentials is not None:
                kwargs["credentials"] = self.credentials
            self._storage = _google_call("Connecting to Cloud Storage", lambda: storage.Client(**kwargs))
        return self._storage

    def build_client(self) -> Any:
        return self.clients.builds()

    def logging_client(self) -> Any:
        return self.clients.logging()

    def close(self) -> None:
        if self._storage is not None:
            self._storage.close()
            self._storage = None
        self.clients.close()

    def __enter__(self) -> CloudBuildBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the Builder interface ------------------------------------------------------------------------------

    def exists(self, tag: str, *, pushed: bool = True) -> bool:
        """Whether the registry has ``tag`` (Cloud Build keeps nothing else)."""
        host = tag.split("/", 1)[0]
        token = None if _is_loopback(host) else self._access_token()
        return manifest_exists(tag, token=token)

    def build(self, context: BuildContext, tag: str, *, push: bool = True,
              cache_from: str | None = None) -> ImageRef:
        """Stage ``context``, build it as ``tag`` on Cloud Build (which pushes it), clean up."""
        if not push:
            logger.info("Cloud Build always pushes its images; building %s anyway", tag)
        obj = self.stage(context)
        repo, _ = split_image(tag)
        latest = f"{repo}:latest"
        body = build_request(image=tag, bucket=self.bucket, object_name=obj, cache_from=cache_from or latest,
                             extra_tags=[latest] if latest != tag else [], timeout_s=self.timeout,
                             machine_type=self.machine_type)
        build = self.run_build(body, tag)
        digest = None
        for result in build.results.images:
            if result.name == tag:
                digest = result.digest or None
        self._delete_staged(obj)
        return ImageRef(uri=tag, digest=digest, built=True)

    # -- staging --------------------------------------------------------------------------------------------

    def staged_object(self, context: BuildContext) -> str:
        return f"{STAGING_PREFIX}{context.digest()[:32]}.tar.gz"

    def stage(self, context: BuildContext) -> str:
        """Upload the context as a gzip tarball unless the same bytes are there already (an object at its
        content-addressed name is trusted only when its size and hash match: a damaged one is replaced); return
        its name. Every storage call is bounded by the retry policy's deadline together."""
        import contextlib

        from google.api_core import exceptions as gexc

        from tfcloud.google.cloud.checksums import HashingWriter
        from tfcloud.google.cloud.gcloud import StorageDeadline

        name = self.staged_object(context)
        uri = f"gs://{self.bucket}/{name}"
        bucket = self.storage().bucket(self.bucket)
        blob = bucket.blob(name)
        deadline = StorageDeadline(
            self.retry, uri=uri, nothing="Nothing was built.", again="build again",
            failed=lambda message, hint: BuildError(f"{message}\n{hint}" if hint else message, step="upload"))
        self._ensure_lifecycle(bucket, deadline)
        with tempfile.TemporaryFile() as tar:
            sink = HashingWriter(tar)
            context.write_tar(sink, compress=True)  # type: ignore[arg-type]
            sums = sink.sums()
            tar.seek(0)
            stored = deadline.call(lambda retry, timeout: bucket.get_blob(name, retry=retry, timeout=timeout),
                                   what=f"Looking for the staged build context {uri}")
            if stored is not None and sums.matches(stored):
                self._say(f"Build context already staged: {uri}")
                return name
            generation = int(stored.generation) if stored is not None else 0
            self._say(f"Uploading the build context to {uri} ({format_size(sums.size)} compressed)"
                      + (" again: the staged one is damaged (its size or hash differs)" if stored else ""))
            blob.chunk_size = _CHUNK
            blob.md5_hash = sums.md5  # Cloud Storage checks the bytes it receives against it
            progress, task = self._progress("Uploading", sums.size)
            reader = _Progress(tar, (lambda n: progress.advance(task, n)) if progress is not None else (lambda n: None))

            def upload(retry: Any, timeout: float) -> None:
                tar.seek(0)
                blob.upload_from_file(reader, size=sums.size, content_type="application/gzip", rewind=False,
                                      if_generation_match=generation, retry=retry, timeout=timeout)

            try:
                with contextlib.suppress(gexc.PreconditionFailed):  # written a moment ago: checked below
                    deadline.call(upload, what=f"Uploading the build context to {uri}")
            finally:
                if progress is not None:
                    progress.stop()
            stored = deadline.call(lambda retry, timeout: bucket.get_blob(name, retry=retry, timeout=timeout),
                                   what=f"Checking the staged build context {uri}")
            if stored is None or not sums.matches(stored):
                raise BuildError(f"The staged build context {uri} does not hold what was uploaded (its size or "
                                 f"hash differs); nothing was built. Look at it with `gcloud storage objects "
                                 f"describe {uri}`, then build again.", step="upload")
        return name

    def _ensure_lifecycle(self, bucket: Any, deadline: Any) -> None:
        """Add the rule that deletes leftover staged contexts, once, if missing; its calls share the staging's
        ``deadline`` (:class:`~tfcloud.google.cloud.gcloud.StorageDeadline`), and a failure is only a warning."""
        if self.lifecycle_days is None or self._lifecycle_checked:
            return
        self._lifecycle_checked = True
        from tfcloud.errors import TfcloudError

        try:
            deadline.call(lambda retry, timeout: bucket.reload(retry=retry, timeout=timeout),
                          what=f"Reading gs://{self.bucket}")
            for rule in bucket.lifecycle_rules:
                cond = rule.get("condition", {})
                if rule.get("action", {}).get("type") == "Delete" and STAGING_PREFIX in cond.get("matchesPrefix", []):
                    return
            bucket.add_lifecycle_delete_rule(age=self.lifecycle_days, matches_prefix=[STAGING_PREFIX])
            deadline.call(lambda retry, timeout: bucket.patch(retry=retry, timeout=timeout),
                          what=f"Adding a lifecycle rule to gs://{self.bucket}")
        except TfcloudError as exc:
            logger.warning("Could not set a lifecycle rule on gs://%s for %s (%s); staged contexts of failed "
                           "builds stay until deleted.", self.bucket, STAGING_PREFIX, str(exc).splitlines()[0])

    def _delete_staged(self, name: str) -> None:
        """Delete the staged context after a build (best effort, under the retry deadline: a warning if not)."""
        from tfcloud.errors import TfcloudError
        from tfcloud.google.cloud.gcloud import StorageDeadline

        blob = self.storage().bucket(self.bucket).blob(name)
        deadline = StorageDeadline(self.retry, uri=f"gs://{self.bucket}/{name}", nothing="The image was built.",
                                   again="delete it")
        try:
            deadline.call(lambda retry, timeout: blob.delete(retry=retry, timeout=timeout),
                          what=f"Deleting the staged context gs://{self.bucket}/{name}")
        except TfcloudError as exc:
            logger.warning("Could not delete the staged context gs://%s/%s: %s", self.bucket, name,
                           str(exc).splitlines()[0])

    # -- the build ------------------------------------------------------------------------------------------

    def run_build(self, body: dict[str, Any], tag: str) -> Any:
        """Create the build, follow it to the end, and return the finished ``Build``; raise on failure."""
        client = self.build_client()
        build_id = self._create(body, tag)
        self._say(f"Cloud Build {build_id} is building {tag}")
        lines: list[str] = []
        deadline = time.monotonic() + self.timeout + self.cancel_grace
        status = self.console.status(f"Cloud Build: {tag}") if self.console is not None else None
        if status is not None:
            status.start()
        policy = self.retry
        try:
            while True:
                build = call(lambda: client.get_build(project_id=self.project, id=build_id, retry=None,
                                                      timeout=policy.call_timeout),
                             what=f"Reading Cloud Build {build_id}", service="Cloud Build", policy=policy,
                             failed=BuildError, unknown=f"The build of {tag} may still be running.",
                             unknown_hint=f"Follow it: gcloud builds log --stream {build_id} "
                                          f"--project {self.project}")
                self._read_logs(build_id, lines, status)
                state = build.status.name
                if state in _TERMINAL:
                    break
                if time.monotonic() > deadline:
                    with _suppress_google():
                        client.cancel_build(project_id=self.project, id=build_id)
                    raise BuildError(f"Cloud Build {build_id} did not finish within {self.timeout} s; cancelled.",
                                     step="timeout", log_tail=log_tail(lines))
                time.sleep(self.poll_interval)
            self._read_logs(build_id, lines, status)
        finally:
            if status is not None:
                status.stop()
        if state != "SUCCESS":
            raise _build_failure(build, lines)
        return build

    def _create(self, body: dict[str, Any], tag: str) -> str:
        """Start the build exactly once; return its id. A create that failed or went unanswered may still have
        started it, so each later try first looks for the submission's tag; when the retries run out, one last
        look decides."""
        from google.cloud.devtools.cloudbuild_v1 import Build

        client = self.build_client()
        submission = f"tfcloud-submission-{uuid.uuid4().hex[:16]}"
        build = Build({**body, "tags": [*body.get("tags", []), submission]})
        tries = 0

        def create() -> str:
            nonlocal tries
            tries += 1
            if tries > 1:
                found = self._find_build(submission)
                if found is not None:
                    logger.info("the create that failed did start build %s", found)
                    return found
            operation = client.create_build(project_id=self.project, build=build, retry=None,
                                            timeout=self.retry.create_timeout)
            return str(operation.metadata.build.id)

        what = f"Starting the Cloud Build of {tag}"

        def refused(text: str) -> BuildError:
            return BuildError(text, step="submit")

        try:
            return call(create, what=what, service="Cloud Build", policy=self.retry, failed=refused)
        except OutcomeUnknownError as exc:
            last = exc.__cause__
        code = status_code(last) if last is not None else "no answer"
        try:
            found = call(lambda: self._find_build(submission), what=what, service="Cloud Build", policy=self.retry,
                         failed=refused)
        except OutcomeUnknownError:
            raise OutcomeUnknownError(
                f"{what}: Cloud Build did not answer ({code}) for {self.retry.deadline:g} s; a build may have "
                "been started.",
                hint=f"Look for it: gcloud builds list --project {self.project} --filter tags={submission}",
            ) from last
        if found is not None:
            return found
        raise BuildError(f"{what} failed: Cloud Build did not answer ({code}) for {self.retry.deadline:g} s, "
                         "and no build was started. Try again later.", step="submit") from last

    def _find_build(self, submission: str) -> str | None:
        """The id of the build tagged ``submission`` (one call; its errors are the caller's to retry)."""
        builds = list(self.build_client().list_builds(project_id=self.project, filter=f'tags="{submission}"',
                                                      retry=None, timeout=self.retry.call_timeout))
        return str(min(builds, key=lambda b: b.create_time).id) if builds else None

    def _read_logs(self, build_id: str, lines: list[str], status: Any) -> None:
        """Append the build's log lines not seen yet (Cloud Logging, oldest first)."""
        from google.api_core import exceptions as gexc

        try:
            pager = self.logging_client().list_log_entries(request={
                "resource_names": [f"projects/{self.project}"],
                "filter": f'resource.type="build" AND resource.labels.build_id="{build_id}"',
                "order_by": "timestamp asc",
                "page_size": 1000,
            }, retry=None, timeout=self.retry.call_timeout)
            entries = [e.text_payload for e in pager]
        except gexc.GoogleAPICallError as exc:
            logger.debug("Reading the logs of build %s: %s", build_id, exc)
            return
        for text in entries[len(lines):]:
            lines.append(text)
            if status is not None and text.startswith("Step #"):
                status.update(f"Cloud Build: {text[:100]}")
            if self.stream_logs and self.console is not None:
                self.console.print(text, markup=False, highlight=False)

    # -- display --------------------------------------------------------------------------------------------

    def _access_token(self) -> str | None:
        if self.credentials is None:
            require("google.auth", feature="Building with Cloud Build", extra="cloud")
            try:
                import google.auth

                self.credentials, _ = google.auth.default(
                    scopes=["https://www.googleapis.com/auth/cloud-platform"])
            except Exception as exc:
                raise ConfigurationError(
                    f"No Google credentials to look up images: {exc}",
                    hint="Run: gcloud auth application-default login",
                ) from exc
        import google.auth.transport.requests

        self.credentials.refresh(google.auth.transport.requests.Request())
        token = self.credentials.token
        return str(token) if token else None

    def _say(self, message: str) -> None:  # once: on the console if there is one, else logged
        if self.console is None:
            logger.info(message)
        else:
            self.console.print(message, markup=False, highlight=False)

    def _progress(self, what: str, total: int) -> tuple[Any, Any]:
        if self.console is None:
            return None, None
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

        progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                            TransferSpeedColumn(), console=self.console, transient=True)
        task = progress.add_task(what, total=total)
        progress.start()
        return progress, task


def _build_failure(build: Any, lines: list[str]) -> BuildError:
    """The error for a finished, unsuccessful build: the failing step and its own last lines."""
    failing = None
    for index, step in enumerate(build.steps):
        if step.status.name in ("FAILURE", "TIMEOUT", "INTERNAL_ERROR", "CANCELLED"):
            failing = (index, step)
            break
    state = build.status.name
    detail = build.status_detail or state
    if failing is None:
        step_name = "push" if state == "FAILURE" and list(build.images) else state.lower()
        return BuildError(f"Cloud Build {build.id} ended in {state}: {detail}", step=step_name,
                          log_tail=log_tail(lines))
    index, step = failing
    label = f"Step #{index}" + (f' - "{step.id}"' if step.id else "")
    own = [line for line in lines if line.startswith(label + ":")]
    return BuildError(f"Cloud Build {build.id} failed at {label} ({step.name} {' '.join(step.args[:1])}): {detail}",
                      step=label, log_tail=log_tail(own or lines))


def _google_call(what: str, call: Any) -> Any:
    from google.api_core import exceptions as gexc
    from google.auth import exceptions as auth_exc

    try:
        return call()
    except auth_exc.DefaultCredentialsError as exc:
        raise ConfigurationError(f"{what} needs Google credentials: {exc}",
                                 hint="Run: gcloud auth application-default login") from exc
    except gexc.GoogleAPICallError as exc:
        raise BuildError(f"{what} failed: {exc.message}") from exc


class _suppress_google:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> bool:
        from google.api_core import exceptions as gexc

        return isinstance(exc, gexc.GoogleAPICallError)
