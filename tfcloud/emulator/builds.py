"""Cloud Build: ``CreateBuild`` (a long-running operation), ``GetBuild``, ``ListBuilds``, ``CancelBuild``.

A build moves QUEUED → WORKING → SUCCESS / FAILURE (or CANCELLED). It fetches its source from the storage
emulator (``source.storage_source``: a ``.tar.gz``), then runs its steps on the configured Docker engine.
The emulator runs Docker builder steps (a step whose ``name`` ends in ``docker``: ``docker build``, ``push``,
``tag``) and pushes ``build.images`` at the end; any other builder fails the build and says so. Each line a
step prints goes to Cloud Logging as ``Step #N: ...`` in ``projects/{p}/logs/cloudbuild`` with
``resource.type="build"`` and ``resource.labels.build_id``.

The operation is named ``operations/build/{project}/{base64 id}`` and carries ``BuildOperationMetadata``;
a failed build ends it with the error the service gives ("Build failed; check build logs for details").

As the ``Build`` message documents it (cloudbuild_v1, read 2026-11-26): ``timeout`` (default 60 minutes) starts
ticking at ``start_time``; when it elapses the running step is stopped and the build ends TIMEOUT. ``logs_bucket``:
the build's log is written to ``{logs_bucket}/log-{build id}.txt`` when it ends, whatever the outcome.
``CancelBuild`` stops a working build at once (its step's process is killed, which stops the engine's build) and
answers the build, CANCELLED.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import io
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import grpc

from tfcloud.emulator._grpc import Handler, bound, list_predicate, page
from tfcloud.emulator._reaper import Reaper, guarded_argv
from tfcloud.emulator.faults import Faults
from tfcloud.emulator.logs import LogStore
from tfcloud.emulator.operations import OperationStore
from tfcloud.emulator.store import Store

__all__ = ["BuildService"]

logger = logging.getLogger("tfcloud.emulator")

_TERMINAL = ("SUCCESS", "FAILURE", "INTERNAL_ERROR", "TIMEOUT", "CANCELLED", "EXPIRED")


class _StepFailed(Exception):
    pass


#: Build.timeout when the request gives none: "Default time is 60 minutes" (cloudbuild_v1 Build.timeout, read
#: 2026-11-26).
DEFAULT_TIMEOUT_S = 3600

# A `docker build` runs in a child process that streams the engine's answer as JSON lines: cancelling the build
# kills it, the engine sees its client go and stops the build (the classic builder kills its RUN container).
_BUILD_STEP = r"""
import json, sys
import docker
client = docker.APIClient(base_url=sys.argv[1])
try:
    for chunk in client.build(decode=True, rm=True, forcerm=True, **json.loads(sys.argv[2])):
        print(json.dumps(chunk), flush=True)
except Exception as exc:
    print(json.dumps({"error": str(exc)}), flush=True)
    sys.exit(1)
"""


@dataclass(kw_only=True)
class _Build:
    build: Any  # cloudbuild_v1.Build, guarded by BuildService._lock
    operation: str
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    timed_out: bool = False
    lines: list[str] = field(default_factory=list)  # what its log says, for logs_bucket
    process: subprocess.Popen[str] | None = None  # the step's process while one runs
    cancel_timer: threading.Timer | None = None  # Build.timeout, started when the build is WORKING


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _copy(message: Any) -> Any:
    return type(message).deserialize(type(message).serialize(message))


class BuildService:
    """The build methods of ``google.devtools.cloudbuild.v1.CloudBuild``."""

    def __init__(self, *, logs: LogStore, operations: OperationStore, faults: Faults,
                 docker_host: str | None, storage_endpoint: str | None, queued_seconds: float = 0.2,
                 reaper: Reaper | None = None, store: Store | None = None) -> None:
        self._reaper = reaper
        self._store = store or Store.memory("builds")  # --data-dir: builds kept across restarts
        self._logs = logs
        self._operations = operations
        self._faults = faults
        self._docker_host = docker_host
        self._storage_endpoint = storage_endpoint
        self._queued = queued_seconds
        self._lock = threading.Lock()
        # A kept build's operation is not kept: GetOperation of it is NOT_FOUND.
        self._builds = {build.id: _Build(build=build, operation="") for build, _ in self._store.restore()}
        self._stopping = threading.Event()

    #: The RPCs it serves, each with the method that answers it.
    RPCS: ClassVar[dict[str, str]] = {"CreateBuild": "create_build", "GetBuild": "get_build",
                                      "ListBuilds": "list_builds", "CancelBuild": "cancel_build"}

    def implementations(self) -> dict[str, Handler]:
        return bound(self, self.RPCS)

    # -- RPCs ----------------------------------------------------------------------------------------------
    def create_build(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.devtools.cloudbuild_v1.types import Build, BuildOperationMetadata

        project = request.project_id or _project_from_parent(request.parent)
        if not project:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "project_id is required.")
        build = _copy(request.build)
        if not build.steps:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "invalid build: build must have at least one step.")
        for index, step in enumerate(build.steps):
            if not step.name:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"invalid build: step {index} must specify name.")
        source = build.source.storage_source
        if "source" in build and "storage_source" in build.source and not (source.bucket and source.object_):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "invalid build: source.storage_source needs bucket and object.")
        if "timeout" in build and build.timeout.total_seconds() <= 0:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"invalid build: timeout must be positive, received {build.timeout.total_seconds():g}s.")
        if "timeout" not in build:
            build.timeout = dt.timedelta(seconds=DEFAULT_TIMEOUT_S)
        if build.logs_bucket and not _split_logs_bucket(build.logs_bucket)[0]:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"invalid build: logs_bucket must be gs://BUCKET[/PATH], received {build.logs_bucket!r}.")
        build_id = str(uuid.uuid4())
        build.id = build_id
        build.project_id = project
        build.name = f"projects/{project}/locations/global/builds/{build_id}"
        build.status = Build.Status.QUEUED
        build.create_time = _now()
        build.log_url = f"https://console.cloud.google.com/cloud-build/builds/{build_id}?project={project}"
        operation = f"operations/build/{project}/{base64.b64encode(build_id.encode()).decode()}"
        record = _Build(build=build, operation=operation)
        with self._lock:
            self._builds[build_id] = record
            self._store.save_message(build)
        created = self._operations.create(operation, BuildOperationMetadata(build=build),
                                          on_cancel=lambda: self._request_cancel(record))
        record.thread = threading.Thread(target=self._live, args=(record,), name=f"build-{build_id}", daemon=True)
        record.thread.start()
        return created

    def _find(self, build_id: str, name: str, context: grpc.ServicerContext) -> _Build:
        if not build_id and name:
            build_id = name.rstrip("/").rsplit("/", 1)[-1]
        if not build_id:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "id is required.")
        with self._lock:
            found = self._builds.get(build_id)
        if found is None:
            context.abort(grpc.StatusCode.NOT_FOUND, self._store.not_found("Build", build_id))
        assert found is not None
        return found

    def get_build(self, request: Any, context: grpc.ServicerContext) -> Any:
        found = self._find(request.id, request.name, context)
        with self._lock:
            return _copy(found.build)

    def list_builds(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.devtools.cloudbuild_v1.types import ListBuildsResponse

        project = request.project_id or _project_from_parent(request.parent)
        if not project:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "project_id is required.")
        predicate = list_predicate(request, context)
        with self._lock:
            builds = [_copy(b.build) for b in self._builds.values() if b.build.project_id == project]
        builds.sort(key=lambda b: (b.create_time, b.id), reverse=True)
        builds = [b for b in builds if predicate(_build_record(b))]
        found, token = page(builds, request, context)
        return ListBuildsResponse(builds=found, next_page_token=token)

    def cancel_build(self, request: Any, context: grpc.ServicerContext) -> Any:
        found = self._find(request.id, request.name, context)
        with self._lock:
            status = found.build.status.name
        if status in _TERMINAL:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f'Build "{found.build.id}" cannot be cancelled: it is in status {status}.')
        self._request_cancel(found)
        if found.thread is not None:
            found.thread.join(30)
        with self._lock:
            return _copy(found.build)

    def _request_cancel(self, found: _Build) -> None:
        """Stop the build's work now: the running step's process group is killed."""
        found.cancel.set()
        with self._lock:
            process = found.process
        if process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    def _time_out(self, found: _Build) -> None:
        with self._lock:
            if found.build.status.name in _TERMINAL:
                return
            found.timed_out = True
        self._request_cancel(found)

    # -- a build's life -----------------------------------------------------------------------------------
    def _log(self, found: _Build, text: str) -> None:
        build = found.build
        found.lines.append(text)
        self._logs.append(
            log_name=f"projects/{build.project_id}/logs/cloudbuild", resource_type="build",
            resource_labels={"build_id": build.id, "project_id": build.project_id, "build_trigger_id": ""},
            text=text)

    def _status(self, found: _Build, status: str, detail: str = "") -> None:
        from google.cloud.devtools.cloudbuild_v1.types import Build

        with self._lock:
            found.build.status = getattr(Build.Status, status)
            if detail:
                found.build.status_detail = detail
            if status == "WORKING":
                found.build.start_time = _now()
            if status in _TERMINAL:
                found.build.finish_time = _now()
            self._store.save_message(found.build)

    def _metadata(self, found: _Build) -> Any:
        from google.cloud.devtools.cloudbuild_v1.types import BuildOperationMetadata

        with self._lock:
            return BuildOperationMetadata(build=_copy(found.build))

    def _live(self, found: _Build) -> None:
        timer = threading.Timer(found.build.timeout.total_seconds(), self._time_out, args=(found,))
        timer.daemon = True
        found.cancel_timer = timer
        try:
            outcome, detail = self._run(found)
        except Exception as exc:
            logger.exception("build %s", found.build.id)
            outcome, detail = "INTERNAL_ERROR", f"Internal error in the emulator: {exc}"
        finally:
            timer.cancel()
        if found.timed_out and outcome != "SUCCESS":
            outcome = "TIMEOUT"
            detail = f"Build exceeded its timeout of {found.build.timeout.total_seconds():g}s; its work was stopped."
        self._status(found, outcome, detail)
        self._log(found, "DONE" if outcome == "SUCCESS" else f"ERROR: {detail}")
        self._write_logs_bucket(found)
        if outcome == "SUCCESS":
            with self._lock:
                response = _copy(found.build)
            self._operations.finish(found.operation, metadata=self._metadata(found), response=response)
        else:
            code, message = {
                "CANCELLED": (1, "Build was cancelled"),
                "TIMEOUT": (4, "Build timed out"),
            }.get(outcome, (2, "Build failed; check build logs for details"))
            self._operations.finish(found.operation, metadata=self._metadata(found), error_code=code,
                                    error_message=message)

    def _run(self, found: _Build) -> tuple[str, str]:
        found.cancel.wait(self._queued)
        while self._faults.holding and not found.cancel.is_set():
            found.cancel.wait(0.05)
        if found.cancel.is_set() or self._stopping.is_set():
            return "CANCELLED", "Build was cancelled."
        self._status(found, "WORKING")
        assert found.cancel_timer is not None
        found.cancel_timer.start()  # Build.timeout "starts ticking from startTime"
        self._operations.update(found.operation, self._metadata(found))
        self._log(found, f'starting build "{found.build.id}"')
        with tempfile.TemporaryDirectory(prefix="tfcloud-emulator-build-") as workspace:
            self._log(found, "FETCHSOURCE")
            try:
                self._fetch_source(found, Path(workspace))
            except Exception as exc:
                return "FAILURE", f"Fetching the source failed: {exc}"
            engine = None
            if self._docker_host is not None:
                import docker

                engine = docker.DockerClient(base_url=self._docker_host)
            try:
                for index, step in enumerate(list(found.build.steps)):
                    if found.cancel.is_set() or self._stopping.is_set():
                        return "CANCELLED", "Build was cancelled."
                    outcome = self._step(found, index, step, engine, Path(workspace))
                    if found.cancel.is_set():
                        return "CANCELLED", "Build was cancelled."
                    if outcome:
                        return "FAILURE", outcome
                images = list(found.build.images)
                if images:
                    self._log(found, "PUSH")
                for image in images:
                    if engine is None:
                        return "FAILURE", "No Docker engine is configured on the emulator: cannot push images."
                    try:
                        digest = _push(engine, image, lambda line: self._log(found, line))
                    except _StepFailed as exc:
                        return "FAILURE", str(exc)
                    self._add_result(found, image, digest)
            finally:
                if engine is not None:
                    engine.close()
        return "SUCCESS", ""

    def _fetch_source(self, found: _Build, workspace: Path) -> None:
        build = found.build
        if "source" not in build or "storage_source" not in build.source:
            return
        source = build.source.storage_source
        client = self._storage_client(build.project_id)
        try:
            blob = client.bucket(source.bucket).blob(source.object_)
            data = blob.download_as_bytes()
        finally:
            client.close()
        self._log(found, f"Fetching storage object: gs://{source.bucket}/{source.object_}")
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            archive.extractall(workspace, filter="data")

    def _step(self, found: _Build, index: int, step: Any, engine: Any, workspace: Path) -> str:
        from google.cloud.devtools.cloudbuild_v1.types import Build

        prefix = f"Step #{index}"
        if step.id:
            prefix += f' - "{step.id}"'

        def log(line: str) -> None:
            self._log(found, f"{prefix}: {line}")

        self._log(found, f"Starting Step #{index}")
        with self._lock:
            found.build.steps[index].status = Build.Status.WORKING
            found.build.steps[index].timing.start_time = _now()
        error = ""
        try:
            if not step.name.rstrip("/").endswith("docker"):
                raise _StepFailed(f"The emulator runs only Docker builder steps; step #{index} uses {step.name!r}.")
            if engine is None:
                raise _StepFailed("No Docker engine is configured on the emulator: cannot run "
                                  f"`docker {shlex.join(step.args)}`.")
            _docker_step(engine, list(step.args), workspace / step.dir, log, self._add_result_for(found),
                         lambda options: self._docker_build(found, options))
        except _StepFailed as exc:
            log(f"ERROR: {exc}")
            error = f"Build step {index} \"{step.name}\" failed: {exc}"
        with self._lock:
            found.build.steps[index].status = (
                (Build.Status.TIMEOUT if found.timed_out else Build.Status.CANCELLED) if found.cancel.is_set()
                else Build.Status.FAILURE if error else Build.Status.SUCCESS)
            found.build.steps[index].timing.end_time = _now()
        self._log(found, f"Finished Step #{index}")
        return error

    def _docker_build(self, found: _Build, options: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """``docker build`` with ``options`` (docker-py's ``APIClient.build`` keywords) in a child process of the
        build's own: the engine's answer, chunk by chunk; the process is killed when the build is cancelled."""
        assert self._docker_host is not None
        process = subprocess.Popen(
            guarded_argv([sys.executable, "-c", _BUILD_STEP, self._docker_host, json.dumps(options)]),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        if self._reaper is not None:
            self._reaper.own_group(process.pid)
        with self._lock:
            found.process = process
        try:
            if found.cancel.is_set():
                self._request_cancel(found)
            assert process.stdout is not None
            for line in process.stdout:
                try:
                    chunk = json.loads(line)
                except ValueError:
                    chunk = {"stream": line}
                yield chunk if isinstance(chunk, dict) else {"stream": line}
            if process.wait() != 0 and found.cancel.is_set():
                raise _StepFailed("the build was stopped")
        finally:
            with self._lock:
                found.process = None
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
            if self._reaper is not None:
                self._reaper.release_group(process.pid)

    def _write_logs_bucket(self, found: _Build) -> None:
        """``logs_bucket``: the build's log as ``{logs_bucket}/log-{build id}.txt``, as Cloud Build writes it."""
        build = found.build
        if not build.logs_bucket:
            return
        bucket, prefix = _split_logs_bucket(build.logs_bucket)
        name = f"{prefix}/log-{build.id}.txt" if prefix else f"log-{build.id}.txt"
        try:
            client = self._storage_client(build.project_id)
            try:
                client.bucket(bucket).blob(name).upload_from_string(
                    "".join(f"{line}\n" for line in found.lines), content_type="text/plain; charset=utf-8")
            finally:
                client.close()
        except Exception as exc:
            logger.warning("build %s: cannot write its log to gs://%s/%s: %s", build.id, bucket, name, exc)

    def _storage_client(self, project: str) -> Any:
        if self._storage_endpoint is None:
            raise RuntimeError("the emulator runs without Cloud Storage")
        import google.cloud.storage as storage
        from google.auth.credentials import AnonymousCredentials

        return storage.Client(project=project, credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                              client_options={"api_endpoint": self._storage_endpoint})

    def _add_result_for(self, found: _Build) -> Callable[[str, str], None]:
        return lambda image, digest: self._add_result(found, image, digest)

    def _add_result(self, found: _Build, image: str, digest: str) -> None:
        from google.cloud.devtools.cloudbuild_v1.types import BuiltImage

        with self._lock:
            found.build.results.images.append(BuiltImage(name=image, digest=digest))

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            builds = list(self._builds.values())
        for found in builds:
            found.cancel.set()
        for found in builds:
            if found.thread is not None:
                found.thread.join(30)


def _project_from_parent(parent: str) -> str:
    parts = parent.split("/")
    return parts[1] if len(parts) >= 2 and parts[0] == "projects" else ""


def _split_logs_bucket(value: str) -> tuple[str, str]:
    """``gs://BUCKET/PATH`` (or ``BUCKET/PATH``) → (BUCKET, PATH)."""
    bucket, _, prefix = value.removeprefix("gs://").partition("/")
    return bucket, prefix.strip("/")


DockerBuild = Callable[[dict[str, Any]], Iterator[dict[str, Any]]]


def _docker_step(engine: Any, args: list[str], directory: Path, log: Callable[[str], None],
                 add_result: Callable[[str, str], None], docker_build: DockerBuild) -> None:
    if not args:
        raise _StepFailed("a docker step needs arguments")
    verb, rest = args[0], args[1:]
    if verb == "build":
        _build(engine, rest, directory, log, docker_build)
    elif verb == "push":
        images = [a for a in rest if not a.startswith("-")]
        if len(images) != 1:
            raise _StepFailed(f"`docker push` needs one image, received {rest!r}")
        add_result(images[0], _push(engine, images[0], log))
    elif verb == "tag":
        if len(rest) != 2:
            raise _StepFailed(f"`docker tag` needs SOURCE TARGET, received {rest!r}")
        repository, tag = _split_tag(rest[1])
        engine.api.tag(rest[0], repository, tag)
    else:
        raise _StepFailed(f"the emulator runs `docker build`, `push` and `tag`; received `docker {verb}`")


def _build(engine: Any, args: list[str], directory: Path, log: Callable[[str], None],
           docker_build: DockerBuild) -> None:
    tags: list[str] = []
    dockerfile: str | None = None
    buildargs: dict[str, str] = {}
    positional: list[str] = []
    iterator = iter(args)
    for arg in iterator:
        name, _, inline = arg.partition("=")
        if name in ("-t", "--tag", "-f", "--file", "--build-arg", "--cache-from", "--network", "--platform"):
            value = inline if inline and arg.startswith("--") else next(iterator, "")
            if name in ("-t", "--tag"):
                tags.append(value)
            elif name in ("-f", "--file"):
                dockerfile = value
            elif name == "--build-arg":
                key, _, val = value.partition("=")
                buildargs[key] = val
        elif arg.startswith("-"):
            continue
        else:
            positional.append(arg)
    context = (directory / (positional[-1] if positional else ".")).resolve()
    if not context.is_dir():
        raise _StepFailed(f"build context {positional[-1] if positional else '.'!r} is not a directory")
    stream = docker_build({"path": str(context), "tag": tags[0] if tags else None, "dockerfile": dockerfile,
                           "buildargs": buildargs or None})
    image_id = ""
    for chunk in stream:
        if "error" in chunk:
            raise _StepFailed(str(chunk["error"]).strip())
        text = str(chunk.get("stream", "")).rstrip("\n")
        for line in text.splitlines():
            log(line)
        if "aux" in chunk and isinstance(chunk["aux"], dict):
            image_id = str(chunk["aux"].get("ID", image_id))
    for extra in tags[1:]:
        repository, tag = _split_tag(extra)
        engine.api.tag(image_id or tags[0], repository, tag)


def _split_tag(image: str) -> tuple[str, str]:
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        repository, tag = image.rsplit(":", 1)
        return repository, tag
    return image, "latest"


def _push(engine: Any, image: str, log: Callable[[str], None]) -> str:
    """Push and return the digest. A failed push does not raise in docker-py: the error is in the stream."""
    repository, tag = _split_tag(image)
    digest = ""
    for chunk in engine.api.push(repository, tag=tag, stream=True, decode=True):
        if "error" in chunk:
            raise _StepFailed(f"pushing {image} failed: {chunk['error']}")
        if chunk.get("status") and not chunk.get("progressDetail"):
            log(f"{chunk.get('id', '')}: {chunk['status']}".lstrip(": "))
        aux = chunk.get("aux")
        if isinstance(aux, dict) and aux.get("Digest"):
            digest = str(aux["Digest"])
    return digest


def _build_record(build: Any) -> dict[str, Any]:
    return {
        "status": build.status.name, "id": build.id, "build_id": build.id,
        "create_time": build.create_time, "createTime": build.create_time,
        "tags": list(build.tags), "images": list(build.images),
        "_text": build.id,
    }
