"""Build and push with a Docker engine (the docker SDK; classic builder).

The engine is ``docker_host`` if given, else the environment's (``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``,
``DOCKER_CERT_PATH``); registry credentials come from the user's docker config (``~/.docker/config.json`` or
``$DOCKER_CONFIG``, credential helpers included), as the ``docker`` CLI would use them.

Both streams (build and push) are read to the end and every ``error`` item in them becomes a
:class:`~tfcloud.errors.BuildError` naming the step ("Step 4/9 : RUN ..." or "push") with its last lines:
a failed push does not raise in the SDK, it only says so inside the stream.

A push that fails for a reason that may pass (the registry answers 5xx or 429, the connection drops) is
tried again, ``push_retries`` times, after ``retry_backoff`` seconds, then twice that, and so on (with a
little jitter). A refusal (401, 403, 405...) is not retried.

Builds of one tag on one machine take turns: :meth:`DockerBuilder.build` holds an exclusive file lock
(``fcntl.flock``) keyed by the tag under ``lock_dir`` (default: ``<tfcloud state dir>/locks``), and once it
has it asks again whether the tag exists (a concurrent build may have made and pushed it meanwhile): so
concurrent builds of one tag, from threads or processes, make one image and push it once.
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.errors import BuildError, ConfigurationError, require
from tfcloud.image.builders import DOCKERFILE_PATH, log_tail
from tfcloud.image.context import BuildContext, format_size
from tfcloud.image.tags import split_image
from tfcloud.job.artifacts import ImageRef

if TYPE_CHECKING:
    from rich.console import Console

    from tfcloud.records.timeline import Recorder

__all__ = ["DockerBuilder"]

logger = logging.getLogger("tfcloud")

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

_NO_ENGINE_HINT = (
    "Start Docker (or point DOCKER_HOST at a running engine), or build in the cloud with Cloud Build: "
    'DockerConfig(image_build_bucket="BUCKET") in Python, --image-build-bucket BUCKET on the command line.'
)


class DockerBuilder:
    """Builds images with a Docker engine and pushes them to their registry.

    ``console``: a rich console for progress (None: quiet); ``stream_logs``: print the build log as it comes;
    ``timeout``: seconds the engine may stay silent before the SDK gives up; ``network_mode``: the network
    of ``RUN`` steps (None: the engine's default); ``push_retries`` and ``retry_backoff`` (seconds, doubled
    each time): how often and how soon a push that may pass is tried again; ``lock_dir``: where the per-tag
    build locks live (None: ``<tfcloud state dir>/locks``); ``recorder``: marks the ``push`` stage when the
    push begins (:mod:`tfcloud.records.timeline`).
    """

    def __init__(
        self,
        *,
        docker_host: str | None = None,
        console: Console | None = None,
        stream_logs: bool = False,
        timeout: float = 600,
        network_mode: str | None = None,
        push_retries: int = 4,
        retry_backoff: float = 1.0,
        lock_dir: Path | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        self.docker_host = docker_host
        self.console = console
        self.stream_logs = stream_logs
        self.timeout = timeout
        self.network_mode = network_mode
        self.push_retries = push_retries
        self.retry_backoff = retry_backoff
        self.lock_dir = lock_dir
        self.recorder = recorder
        self._api: Any = None

    # -- engine ---------------------------------------------------------------------------------------------

    @property
    def api(self) -> Any:
        """The docker SDK's low-level client, connected on first use."""
        if self._api is None:
            require("docker", feature="Building images with Docker", extra="docker")
            import docker
            from docker.utils import kwargs_from_env

            kwargs = kwargs_from_env()
            if self.docker_host:
                kwargs["base_url"] = self.docker_host
                kwargs.pop("tls", None)
            where = kwargs.get("base_url") or "unix:///var/run/docker.sock"
            _check_unix_socket(where)
            try:
                self._api = docker.APIClient(version="auto", timeout=self.timeout, **kwargs)
            except docker.errors.DockerException as exc:
                raise ConfigurationError(
                    f"Cannot reach a Docker engine at {where}: {_reason(exc)}", hint=_NO_ENGINE_HINT
                ) from exc
        return self._api

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None

    def __enter__(self) -> DockerBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the Builder interface ------------------------------------------------------------------------------

    def exists(self, tag: str, *, pushed: bool = True) -> bool:
        """``pushed``: the registry has ``tag`` (one look-up, through the engine); else the engine has it."""
        import docker

        try:
            if pushed:
                self.api.inspect_distribution(tag)
            else:
                self.api.inspect_image(tag)
            return True
        except docker.errors.NotFound:
            return False
        except docker.errors.APIError as exc:
            # "manifest unknown", an unreachable or unauthorised registry: not usable as is. A real problem
            # shows again, with its message, when the image is pushed.
            logger.debug("Look-up of %s failed: %s", tag, exc)
            return False
        except docker.errors.DockerException as exc:
            raise ConfigurationError(f"Cannot reach the Docker engine: {_reason(exc)}",
                                     hint=_NO_ENGINE_HINT) from exc

    def build(self, context: BuildContext, tag: str, *, push: bool = True,
              cache_from: str | None = None) -> ImageRef:
        """Build ``context`` as ``tag`` (unless the engine has it already) and push it when ``push``; one build
        of a tag at a time on this machine (see the module docstring)."""
        with self._tag_lock(tag):
            if push:
                pushed = self._pushed_digest(tag)
                if pushed is not None:  # a concurrent build of this tag made and pushed it
                    self._say(f"Image {tag} was pushed by another build meanwhile.")
                    return ImageRef(uri=tag, digest=pushed, built=False)
            built = not self.exists(tag, pushed=False)
            image_id = self._build(context, tag, cache_from) if built else None
            if push and self.recorder is not None:
                self.recorder.begin("push")
            digest = self.push(tag) if push else None
        return ImageRef(uri=tag, digest=digest or image_id, built=built)

    # -- one build per tag ----------------------------------------------------------------------------------

    def lock_path(self, tag: str) -> Path:
        """The file whose exclusive ``flock`` a build of ``tag`` holds (``lock_dir``/build-<sha256 of tag>.lock)."""
        from tfcloud.records.statedir import build_lock, default_state_dir, locks_dir

        return build_lock(self.lock_dir or locks_dir(default_state_dir()), tag)

    @contextlib.contextmanager
    def _tag_lock(self, tag: str) -> Iterator[None]:
        import fcntl

        path = self.lock_path(tag)
        with contextlib.ExitStack() as stack:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                f = stack.enter_context(open(path, "a+b"))  # "a": never truncated
            except OSError as exc:
                logger.warning("Building %s without a lock (%s): concurrent builds of it may race.", tag, exc)
                yield
                return
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._say(f"Waiting for another build of {tag} on this machine (lock {path}).")
                fcntl.flock(f, fcntl.LOCK_EX)
            stack.callback(fcntl.flock, f, fcntl.LOCK_UN)
            yield

    def _pushed_digest(self, tag: str) -> str | None:
        """The digest of ``tag`` in its registry, or None when it is not there (or cannot be asked)."""
        import docker

        try:
            found = self.api.inspect_distribution(tag)
        except docker.errors.APIError as exc:
            logger.debug("Look-up of %s failed: %s", tag, exc)
            return None
        except docker.errors.DockerException as exc:
            raise ConfigurationError(f"Cannot reach the Docker engine: {_reason(exc)}",
                                     hint=_NO_ENGINE_HINT) from exc
        digest = (found.get("Descriptor") or {}).get("digest")
        return str(digest) if digest else None

    # -- steps ----------------------------------------------------------------------------------------------

    def _build(self, context: BuildContext, tag: str, cache_from: str | None) -> str | None:
        import docker

        if context.get(DOCKERFILE_PATH) is None:
            raise BuildError(f"The build context has no {DOCKERFILE_PATH}.", step="context")
        caches = []
        if cache_from:
            try:
                self._drain(self.api.pull(*split_image(cache_from), stream=True, decode=True))
                caches.append(cache_from)
            except docker.errors.APIError as exc:
                logger.info("No build cache from %s: %s", cache_from, exc)
        with tempfile.TemporaryFile() as tar:
            context.write_tar(tar)
            size = tar.tell()
            tar.seek(0)
            # The context's size was said once already ("Build context ...: N files, SIZE", the files' own
            # sizes); the tar sent to the engine is a little bigger (headers, padding): not a second number.
            logger.debug("sending a %s tar of the build context to the engine", format_size(size))
            self._say(f"Building {tag}")
            try:
                stream = self.api.build(
                    fileobj=tar,
                    custom_context=True,
                    dockerfile=DOCKERFILE_PATH,
                    tag=tag,
                    rm=True,
                    forcerm=True,
                    decode=True,
                    cache_from=caches or None,
                    network_mode=self.network_mode,
                )
                return self._follow_build(stream, tag)
            except docker.errors.DockerException as exc:
                raise BuildError(f"Building {tag} failed: {_reason(exc)}", step="build") from exc

    def _follow_build(self, stream: Iterator[dict[str, Any]], tag: str) -> str | None:
        lines: list[str] = []
        step = "Step 0 : (sending the context)"
        image_id: str | None = None
        status = self.console.status(f"Building {tag}") if self.console is not None else None
        if status is not None:
            status.start()
        failure: BuildError | None = None
        try:
            for item in stream:
                if failure is not None:
                    continue  # read the stream to its end, so that its connection is released
                message = _stream_error(item)
                if message is not None:
                    lines.append(message)
                    failure = BuildError(f"Building {tag} failed at {step}: {message}", step=step,
                                         log_tail=log_tail(lines))
                    continue
                text = item.get("stream") or item.get("status") or ""
                if isinstance(item.get("aux"), dict) and "ID" in item["aux"]:
                    image_id = str(item["aux"]["ID"])
                for line in _ANSI.sub("", str(text)).splitlines():
                    if line.startswith("Step "):
                        step = line.strip()
                        if status is not None:
                            status.update(f"Building {tag}: {step}")
                    lines.append(line)
                    if len(lines) > 1000:
                        del lines[:500]
                    if self.stream_logs and self.console is not None and line.strip():
                        self.console.print(line, markup=False, highlight=False)
        finally:
            if status is not None:
                status.stop()
        if failure is not None:
            raise failure
        return image_id

    def push(self, tag: str) -> str | None:
        """Push ``tag`` to its registry, trying again after a failure that may pass; return the pushed
        manifest's digest."""
        attempts = max(self.push_retries, 0) + 1
        for attempt in range(1, attempts + 1):
            try:
                return self._push_once(tag)
            except BuildError as exc:
                reason = exc.message.splitlines()[0]  # "Pushing TAG failed: WHY"
                if attempt == attempts or not _retryable(reason.split(" failed: ", 1)[-1]):
                    raise
                delay = self.retry_backoff * 2 ** (attempt - 1) * random.uniform(1.0, 1.25)
                self._say(f"{reason.rstrip('.')}; trying again in {delay:.1f} s "
                          f"(attempt {attempt + 1} of {attempts}).")
                time.sleep(delay)
        raise AssertionError  # pragma: no cover

    def _push_once(self, tag: str) -> str | None:
        import docker

        repo, name_tag = split_image(tag)
        self._say(f"Pushing {tag}")
        try:
            stream = self.api.push(repo, tag=name_tag, stream=True, decode=True)
            return self._follow_push(stream, tag)
        except docker.errors.DockerException as exc:
            raise BuildError(f"Pushing {tag} failed: {_reason(exc)}", step="push") from exc

    def _follow_push(self, stream: Iterator[dict[str, Any]], tag: str) -> str | None:
        lines: list[str] = []
        digest: str | None = None
        progress, task = self._progress(f"Pushing {tag}")
        totals: dict[str, int] = {}
        done: dict[str, int] = {}
        failure: BuildError | None = None
        try:
            for item in stream:
                if failure is not None:
                    continue  # read the stream to its end, so that its connection is released
                message = _stream_error(item)
                if message is not None:
                    lines.append(message)
                    failure = BuildError(f"Pushing {tag} failed: {message}", step="push", log_tail=log_tail(lines))
                    continue
                layer = str(item.get("id", ""))
                status = str(item.get("status", ""))
                if status and status != "Pushing":
                    lines.append(f"{layer}: {status}" if layer else status)
                    if self.stream_logs and self.console is not None:
                        self.console.print(lines[-1], markup=False, highlight=False)
                pd = item.get("progressDetail") or {}
                if layer and pd.get("total"):
                    totals[layer] = int(pd["total"])
                    done[layer] = int(pd.get("current", 0))
                elif layer and status in ("Pushed", "Layer already exists"):
                    done[layer] = totals.get(layer, 0)
                if progress is not None:
                    progress.update(task, total=sum(totals.values()) or None, completed=sum(done.values()))
                aux = item.get("aux")
                if isinstance(aux, dict) and aux.get("Digest"):
                    digest = str(aux["Digest"])
        finally:
            if progress is not None:
                progress.stop()
        if failure is not None:
            raise failure
        return digest

    def _drain(self, stream: Iterator[dict[str, Any]]) -> None:
        import docker

        errors = [str(item["error"]) for item in stream if "error" in item]
        if errors:
            raise docker.errors.APIError(errors[0])

    # -- display --------------------------------------------------------------------------------------------

    def _say(self, message: str) -> None:  # once: on the console if there is one, else logged
        if self.console is None:
            logger.info(message)
        else:
            self.console.print(message, markup=False, highlight=False)

    def _progress(self, what: str) -> tuple[Any, Any]:
        """A transient progress bar on a terminal; none elsewhere (piped, rich's Live leaves a blank line)."""
        if self.console is None or not self.console.is_terminal:
            return None, None
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

        progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                            TransferSpeedColumn(), console=self.console, transient=True)
        task = progress.add_task(what, total=None)
        progress.start()
        return progress, task


def _check_unix_socket(url: str) -> None:
    """Fail early, and without leaking a socket (docker-py leaves one open then), on a dead unix socket."""
    if not url.startswith("unix://"):
        return
    path = url[len("unix://"):]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(path)
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot reach a Docker engine at {url}: {exc.strerror or exc}.", hint=_NO_ENGINE_HINT
        ) from exc


def _stream_error(item: dict[str, Any]) -> str | None:
    """The error an item of the engine's build or push stream carries (a failed push does not raise: its
    error arrives in the stream), or None."""
    if "error" not in item and "errorDetail" not in item:
        return None
    detail = item.get("errorDetail") or {}
    return str(detail.get("message") or item.get("error") or "unknown error").strip()


#: What a push error says when trying again may help: a server error or a rate limit, a dropped connection.
_RETRYABLE = re.compile(
    r"\b(?:5\d\d|429)\b|internal server error|bad gateway|service unavailable|gateway time-?out|"
    r"too many requests|connection (?:reset|refused|closed)|broken pipe|\bEOF\b|timeout|timed out|deadline exceeded|"
    r"temporarily unavailable|TLS handshake",
    re.IGNORECASE,
)


def _retryable(message: str) -> bool:
    return bool(_RETRYABLE.search(message))


def _reason(exc: BaseException) -> str:
    explanation = getattr(exc, "explanation", None)
    return str(explanation or exc).strip()
