"""Cloud Storage: PyPI's ``gcp-storage-emulator`` behind a front of our own, run in this process on 127.0.0.1 and
stopped with the rest.

Clients reach it with ``STORAGE_EMULATOR_HOST=http://127.0.0.1:PORT`` (what ``google.cloud.storage.Client``
reads) or ``client_options={"api_endpoint": ...}`` with ``AnonymousCredentials()``.

The bundled emulator keeps objects well but checks nothing, drops the connection when a handler raises (a
malformed JSON body; an object name such as ``x/../y.txt``, which its file store cannot hold) and answers most
errors with an empty body. Rather than replace it (no maintained pure-Python alternative on PyPI runs in-process),
this module keeps its storage and handlers and wraps them:

- its HTTP server is replaced by a threading one whose request handler checks, before the bundled handler runs,
  what Cloud Storage refuses (:mod:`tfcloud.emulator._gcs_rules`: bucket and object names, ``ifGenerationMatch``
  and the other preconditions, a body that does not parse);
- object contents are stored under a digest of their name, so every valid name is storable;
- every error answer carries Google's JSON error body, and a handler that raises answers with one instead of
  closing the connection: 400 for a method with a body (its shape is what the handler choked on), else 501
  (a status the clients do not retry; 500 would have them retry for minutes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tfcloud.emulator._gcs_rules import (
    Refusal,
    bucket_name_problem,
    error_body,
    object_name_problem,
    precondition_refusal,
)
from tfcloud.emulator.replicas import free_port

__all__ = ["StorageEmulator"]

logger = logging.getLogger("tfcloud.emulator")

_API = "/storage/v1"
_UPLOAD = "/upload/storage/v1"
_DOWNLOAD = "/download/storage/v1"
_BUCKET = r"(?P<bucket>[^/]+)"
_OBJECT = r"(?P<object>[^/]+)"
_BUCKETS = re.compile(rf"^(?:{_API})?/b$")
_OBJECTS = re.compile(rf"^(?:{_UPLOAD}|{_API}|)/b/{_BUCKET}/o$")
_OBJECT_PATH = re.compile(rf"^(?:{_API}|{_DOWNLOAD}|)/b/{_BUCKET}/o/{_OBJECT}$")
_TWO_OBJECTS = re.compile(rf"^(?:{_API})?/b/{_BUCKET}/o/{_OBJECT}/(?:copyTo|rewriteTo)/b/"
                          rf"(?P<dest_bucket>[^/]+)/o/(?P<dest_object>[^/]+)$")
_COMPOSE = re.compile(rf"^(?:{_API})?/b/{_BUCKET}/o/{_OBJECT}/compose$")


class StorageEmulator:
    """One storage server: in memory, or kept in ``data_dir``."""

    def __init__(self, *, port: int = 0, data_dir: Path | None = None) -> None:
        self._port = port
        self._data_dir = data_dir
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> None:
        # Its request log goes to the root logger at INFO; keep it out of the way.
        logging.getLogger("gcp_storage_emulator").setLevel(logging.CRITICAL)
        logging.getLogger("api.object").setLevel(logging.CRITICAL)
        logging.getLogger("api.bucket").setLevel(logging.CRITICAL)
        if not self._port:
            self._port = free_port()
        storage = _storage_class()(use_memory_fs=self._data_dir is None,
                                   data_dir=str(self._data_dir.resolve()) if self._data_dir else None)
        handler = _handler_class(storage, threading.Lock())
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="tfcloud-emulator-storage",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None


def _storage_class() -> Any:
    from gcp_storage_emulator.exceptions import NotFound
    from gcp_storage_emulator.storage import Storage

    class _Storage(Storage):  # type: ignore[misc]
        """The bundled store, with each object's content under a digest of its name: any valid object name
        (``x/../y.txt``, ``a/b`` beside ``a/b/c``, 1024 bytes) has a file. Contents a data directory holds in the
        bundled layout (``BUCKET/NAME``, from an earlier emulator) are still read."""

        def _object_path(self, bucket_name: str, file_name: str) -> str:
            return f"{bucket_name}/{hashlib.sha256(file_name.encode('utf-8', 'surrogatepass')).hexdigest()}"

        def get_file(self, bucket_name: str, file_name: str, show_error: bool = True) -> bytes:
            try:
                return bytes(super().get_file(bucket_name, file_name, show_error=False))
            except NotFound:
                try:
                    return bytes(self._store.read_bytes(f"{bucket_name}/{file_name.lstrip('/')}"))
                except (OSError, ValueError):
                    raise NotFound from None

    return _Storage


def _handler_class(storage: Any, lock: threading.Lock) -> Any:
    from gcp_storage_emulator import server

    class _Response(server.Response):  # type: ignore[misc]
        def write(self, content: str) -> None:
            self._content += content

        def close(self) -> None:
            if self.status >= 400:
                self._google_error()
            super().close()

        def _google_error(self) -> None:
            """Give an error answer Google's JSON error body, keeping a message the handler wrote."""
            content = self._content.decode("utf-8", "replace") if isinstance(self._content, bytes) \
                else self._content
            message = ""
            try:
                parsed = json.loads(content) if content else None
            except ValueError:
                message = content.strip()
            else:
                if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
                    error = parsed["error"]
                    if "code" in error and error.get("errors"):
                        return
                    message = str(error.get("message") or "")
            self.json(error_body(int(self.status), message or _default_message(self._handler.path, self.status)))

    class _Handler(server.RequestHandler):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(storage, *args, **kwargs)

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def do_PUT(self) -> None:
            self._handle("PUT")

        def do_PATCH(self) -> None:
            self._handle("PATCH")

        def do_DELETE(self) -> None:
            self._handle("DELETE")

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("storage: " + format, *args)

        def _handle(self, method: str) -> None:
            method = self.headers.get("x-http-method-override") or method
            request = server.Request(self, method)
            response = _Response(self)
            try:
                with lock:
                    _dispatch(server, request, response, storage)
            except Exception as exc:  # never drop the connection: the client would retry for minutes
                response = _Response(self)
                if method in ("POST", "PUT", "PATCH"):  # the handler choked on a missing or malformed body
                    logger.debug("storage emulator: %s %s: %r", method, self.path, exc)
                    response.status = HTTPStatus.BAD_REQUEST
                    response.json(error_body(400, f"Invalid request: the body is missing or does not have the "
                                                  f"shape this method takes ({type(exc).__name__}: {exc})."))
                else:  # not retried by the clients (they retry 500, 502, 503, 504)
                    logger.exception("storage emulator: %s %s", method, self.path)
                    response.status = HTTPStatus.NOT_IMPLEMENTED
                    response.json(error_body(501, f"The storage emulator cannot serve {method} {self.path}: "
                                                  f"{type(exc).__name__}: {exc}"))
            response.close()

    return _Handler


def _default_message(raw_path: str, status: HTTPStatus) -> str:
    """Google's message for an error the bundled handler answered without one (read from its answers)."""
    from urllib.parse import unquote, urlparse

    path = urlparse(raw_path).path
    if status == HTTPStatus.NOT_FOUND:
        if match := _OBJECT_PATH.match(path):
            return f"No such object: {unquote(match['bucket'])}/{unquote(match['object'])}"
        return "The specified bucket does not exist."
    return status.phrase


def _refuse(response: Any, refusal: Refusal) -> None:
    response.status = HTTPStatus(refusal.status)
    if refusal.status == 304:
        response._content = ""
        return
    response.json(error_body(refusal.status, refusal.message, refusal.reason, location=refusal.location,
                             location_type=refusal.location_type))


def _dispatch(server: Any, request: Any, response: Any, storage: Any) -> None:
    refusal = _check(request, storage)
    if refusal is not None:
        return _refuse(response, refusal)
    for regex, handlers in server.HANDLERS:
        match = re.compile(regex).fullmatch(request.path)
        if match is None:
            continue
        request.set_match(match)
        handler = handlers.get(request.method)
        if handler is None and request.method == "POST" and request.query.get("uploadType") \
                and request.path.endswith("/o"):
            handler = server.objects.insert  # clients that POST uploads without the /upload prefix
        if handler is None:
            break
        handler(request, response, storage)
        return
    response.status = HTTPStatus.NOT_IMPLEMENTED
    response.json(error_body(501, f"The storage emulator does not serve {request.method} {request.path}."))


def _body(request: Any) -> tuple[Any, Refusal | None]:
    """The parsed body (the bundled parser, run once and cached), or why it does not parse."""
    try:
        return request.data, None
    except json.JSONDecodeError as exc:
        return None, Refusal(status=400, reason="parseError", message=f"Parse Error: the JSON body is invalid ({exc}).")
    except Exception as exc:  # a multipart body that is not one, a gzip body that is not gzip, ...
        return None, Refusal(status=400, reason="invalid", message=f"Invalid request body: {exc}.")


def _live(storage: Any, bucket: str, name: str) -> Any:
    return storage.objects.get(bucket, {}).get(name)


def _name_refusal(name: str) -> Refusal | None:
    problem = object_name_problem(name)
    return Refusal(status=400, reason="invalid", message=problem) if problem else None


def _check(request: Any, storage: Any) -> Refusal | None:
    """What Cloud Storage refuses before it acts; None: hand the request to the bundled handler."""
    from urllib.parse import unquote

    method, path, query = request.method, request.path, request.query
    body, refusal = _body(request)
    if refusal is not None:
        return refusal
    if _BUCKETS.match(path) and method == "POST":
        name = body.get("name", "") if isinstance(body, dict) else ""
        problem = bucket_name_problem(str(name))
        return Refusal(status=400, reason="invalid" if name else "required", message=problem) if problem else None
    if match := _OBJECTS.match(path):
        if method != "POST" or "upload_id" in query:
            return None
        bucket = unquote(match["bucket"])
        meta = body.get("meta", body) if isinstance(body, dict) else {}
        name = query.get("name", [""])[0] or (str(meta.get("name") or "") if isinstance(meta, dict) else "")
        return _name_refusal(name) or precondition_refusal(query, _live(storage, bucket, name), read=False)
    if match := _TWO_OBJECTS.match(path):
        source = _live(storage, unquote(match["bucket"]), unquote(match["object"]))
        destination = unquote(match["dest_object"])
        return (_name_refusal(destination)
                or precondition_refusal(query, source, read=False, prefix="Source")
                or precondition_refusal(query, _live(storage, unquote(match["dest_bucket"]), destination),
                                        read=False))
    if match := _COMPOSE.match(path):
        destination = unquote(match["object"])
        return _name_refusal(destination) or precondition_refusal(
            query, _live(storage, unquote(match["bucket"]), destination), read=False)
    if match := _OBJECT_PATH.match(path):
        current = _live(storage, unquote(match["bucket"]), unquote(match["object"]))
        if current is None:
            return None  # the handler answers 404
        return precondition_refusal(query, current, read=method == "GET")
    return None
