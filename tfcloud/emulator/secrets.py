"""Secret Manager, offline: the emulator's ``google.cloud.secretmanager.v1.SecretManagerService``.

It keeps secrets and their versions in memory and serves what a job and its test need: ``CreateSecret``,
``GetSecret``, ``AddSecretVersion``, ``AccessSecretVersion`` (``versions/latest``: the most recent enabled
version) and ``DeleteSecret``, on the emulator's gRPC endpoint, called by the real
``secretmanager_v1.SecretManagerServiceClient`` (what tfcloud's launcher calls in a replica).

Names and errors as the API reference gives them (``google/cloud/secretmanager/v1/service.proto``;
AccessSecretVersionRequest.name: ``projects/*/secrets/*/versions/*``, ``latest`` an alias to the most recently
created version; a missing secret or version is NOT_FOUND; CreateSecretRequest.secret_id: at most 255 letters,
numerals, ``-`` and ``_``; a duplicate is ALREADY_EXISTS; read 2026-11-26). IAM is not emulated: every caller
may read every secret. Payloads are never logged.
"""

from __future__ import annotations

import datetime
import re
import threading
from typing import Any, ClassVar

import grpc

from tfcloud.emulator._grpc import Handler, bound

__all__ = ["SecretManagerService", "secret_manager_handlers"]

_PROJECT = re.compile(r"^projects/([^/]+)(?:/locations/([^/]+))?$")
_SECRET = re.compile(r"^projects/[^/]+(?:/locations/[^/]+)?/secrets/([A-Za-z0-9_-]{1,255})$")
_VERSION = re.compile(r"^(projects/[^/]+(?:/locations/[^/]+)?/secrets/[A-Za-z0-9_-]{1,255})/versions/([^/]+)$")
_SECRET_ID = re.compile(r"^[A-Za-z0-9_-]{1,255}$")
MAX_PAYLOAD = 64 * 1024  # SecretPayload.data: "must be no larger than 64KiB"


class SecretManagerService:
    """Secrets by name: ``{secret name: [payload of version 1, version 2, ...]}``."""

    def __init__(self, *, project_ids: dict[str, str] | None = None) -> None:
        self._lock = threading.Lock()
        self._secrets: dict[str, tuple[Any, list[bytes]]] = {}
        self._project_ids = project_ids or {}  # project number -> id: names are kept with the id

    #: The RPCs it serves, each with the method that answers it.
    RPCS: ClassVar[dict[str, str]] = {"CreateSecret": "create", "GetSecret": "get",
                                      "AddSecretVersion": "add_version", "AccessSecretVersion": "access",
                                      "DeleteSecret": "delete"}

    def implementations(self) -> dict[str, Handler]:
        return bound(self, self.RPCS)

    def _canonical(self, name: str) -> str:
        parts = name.split("/")
        if len(parts) > 1 and parts[1] in self._project_ids:
            parts[1] = self._project_ids[parts[1]]
        return "/".join(parts)

    def create(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.secretmanager_v1 import types

        if _PROJECT.match(request.parent) is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid parent: {request.parent!r}.")
        if not _SECRET_ID.match(request.secret_id):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "secret_id must be 1 to 255 letters, numerals, - or _.")
        name = self._canonical(f"{request.parent}/secrets/{request.secret_id}")
        secret = types.Secret(request.secret)
        secret.name = name
        secret.create_time = datetime.datetime.now(datetime.timezone.utc)
        with self._lock:
            if name in self._secrets:
                context.abort(grpc.StatusCode.ALREADY_EXISTS, f"Secret [{name}] already exists.")
            self._secrets[name] = (secret, [])
        return secret

    def _find(self, name: str, context: grpc.ServicerContext) -> tuple[Any, list[bytes]]:
        found = self._secrets.get(self._canonical(name))
        if found is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"Secret [{name}] not found or has no versions.")
        assert found is not None
        return found

    def get(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self._lock:
            return self._find(request.name, context)[0]

    def delete(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.protobuf import empty_pb2

        with self._lock:
            self._find(request.name, context)
            del self._secrets[self._canonical(request.name)]
        return empty_pb2.Empty()

    def add_version(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.secretmanager_v1 import types

        if _SECRET.match(request.parent) is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid parent: {request.parent!r}.")
        data = bytes(request.payload.data)
        if len(data) > MAX_PAYLOAD:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Payload larger than {MAX_PAYLOAD} bytes.")
        with self._lock:
            _, versions = self._find(request.parent, context)
            versions.append(data)
            number = len(versions)
        return types.SecretVersion(name=f"{self._canonical(request.parent)}/versions/{number}",
                                   state=types.SecretVersion.State.ENABLED)

    def access(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.secretmanager_v1 import types

        match = _VERSION.match(request.name)
        if match is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid resource name: {request.name!r}.")
        assert match is not None
        secret_name, version = match.groups()
        with self._lock:
            _, versions = self._find(secret_name, context)
            if version == "latest":
                number = len(versions)
            elif version.isdigit():
                number = int(version)
            else:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid version: {version!r}.")
            if not 1 <= number <= len(versions):
                context.abort(grpc.StatusCode.NOT_FOUND, f"Secret Version [{request.name}] not found.")
            data = versions[number - 1]
        return types.AccessSecretVersionResponse(
            name=f"{self._canonical(secret_name)}/versions/{number}", payload=types.SecretPayload(data=data))


def secret_manager_handlers(faults: Any, project_ids: dict[str, str]) -> tuple[Any, ...]:
    """The gRPC handlers that serve :class:`SecretManagerService`; none without google-cloud-secret-manager (the
    emulator then serves no Secret Manager, and a replica that reads a secret fails with its message)."""
    try:
        from google.cloud.secretmanager_v1.services.secret_manager_service.transports.grpc import (
            SecretManagerServiceGrpcTransport,
        )
    except ImportError:
        return ()
    from tfcloud.emulator._grpc import generic_handler, method_table

    service = SecretManagerService(project_ids=project_ids)
    return (generic_handler(method_table(SecretManagerServiceGrpcTransport), service.implementations(), faults),)
