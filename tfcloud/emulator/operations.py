"""``google.longrunning.Operations`` on the emulator's port: what ``CreateBuild`` and ``DeleteCustomJob`` return.

Services register an operation, update its metadata while it runs, and finish it with a response or an error.
The clients' ``operation.result()`` polls ``GetOperation`` here, as it does on Google Cloud.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc

__all__ = ["OperationStore", "pack"]


def pack(message: Any) -> Any:
    """Wrap a proto-plus or protobuf message in ``google.protobuf.Any``."""
    from google.protobuf import any_pb2

    packed = any_pb2.Any()
    packed.Pack(getattr(message, "_pb", message))
    return packed


class OperationStore:
    """Thread-safe operations, keyed by name; optionally cancellable through a callback."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._operations: dict[str, Any] = {}
        self._cancel: dict[str, Callable[[], None]] = {}
        self._changed = threading.Condition(self._lock)

    def create(self, name: str, metadata: Any, *, on_cancel: Callable[[], None] | None = None) -> Any:
        from google.longrunning import operations_pb2

        operation = operations_pb2.Operation(name=name, metadata=pack(metadata), done=False)
        with self._lock:
            self._operations[name] = operation
            if on_cancel is not None:
                self._cancel[name] = on_cancel
            return _copy(operation)

    def update(self, name: str, metadata: Any) -> None:
        with self._lock:
            operation = self._operations.get(name)
            if operation is not None:
                operation.metadata.CopyFrom(pack(metadata))

    def finish(self, name: str, *, metadata: Any = None, response: Any = None,
               error_code: int = 0, error_message: str = "") -> Any:
        with self._changed:
            operation = self._operations[name]
            if metadata is not None:
                operation.metadata.CopyFrom(pack(metadata))
            if error_code:
                operation.error.code = error_code
                operation.error.message = error_message
            else:
                operation.response.CopyFrom(pack(response))
            operation.done = True
            self._cancel.pop(name, None)
            self._changed.notify_all()
            return _copy(operation)

    # -- the Operations servicer -------------------------------------------------------------------------
    def GetOperation(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self._lock:
            operation = self._operations.get(request.name)
            if operation is None:
                context.abort(grpc.StatusCode.NOT_FOUND, f"Operation {request.name!r} not found.")
            return _copy(operation)

    def ListOperations(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.longrunning import operations_pb2

        with self._lock:
            found = [_copy(op) for name, op in sorted(self._operations.items())
                     if name.startswith(request.name.rstrip("/") + "/") or not request.name]
        return operations_pb2.ListOperationsResponse(operations=found)

    def DeleteOperation(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.protobuf import empty_pb2

        with self._lock:
            if self._operations.pop(request.name, None) is None:
                context.abort(grpc.StatusCode.NOT_FOUND, f"Operation {request.name!r} not found.")
            self._cancel.pop(request.name, None)
        return empty_pb2.Empty()

    def CancelOperation(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.protobuf import empty_pb2

        with self._lock:
            if request.name not in self._operations:
                context.abort(grpc.StatusCode.NOT_FOUND, f"Operation {request.name!r} not found.")
            cancel = self._cancel.get(request.name)
        if cancel is not None:
            cancel()
        return empty_pb2.Empty()

    def WaitOperation(self, request: Any, context: grpc.ServicerContext) -> Any:
        timeout = request.timeout.ToTimedelta().total_seconds() if request.HasField("timeout") else 60.0
        with self._changed:
            if request.name not in self._operations:
                context.abort(grpc.StatusCode.NOT_FOUND, f"Operation {request.name!r} not found.")
            self._changed.wait_for(lambda: self._operations[request.name].done, timeout=timeout)
            return _copy(self._operations[request.name])


def _copy(operation: Any) -> Any:
    clone = type(operation)()
    clone.CopyFrom(operation)
    return clone
