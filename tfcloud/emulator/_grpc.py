"""gRPC plumbing: method tables read from the Google client libraries' own transports, and a generic handler.

The client packages ship no server classes, but each gRPC transport creates its stubs with
``(path, request_serializer, response_deserializer)``. :func:`method_table` hands a transport a recording
channel, asks it for every stub, and keeps what it was given: for each method its path, its kind (unary or
streaming) and its request and response message classes. :func:`generic_handler` serves a chosen subset of
those methods with plain Python callables, after the fault injector has had its say.
"""

from __future__ import annotations

import base64
import inspect
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc

from tfcloud.emulator._filter import FilterError, Predicate, compile_filter
from tfcloud.emulator.faults import Faults

__all__ = ["MethodInfo", "generic_handler", "list_predicate", "method_table", "page"]

logger = logging.getLogger("tfcloud.emulator")

Handler = Callable[[Any, grpc.ServicerContext], Any]


@dataclass(frozen=True, kw_only=True)
class MethodInfo:
    """One RPC as the client library calls it."""

    path: str  # "/google.cloud.aiplatform.v1.JobService/CreateCustomJob"
    kind: str  # "unary_unary", "unary_stream", "stream_unary" or "stream_stream"
    request_type: type | None  # None when the library gave no class (plain protobuf serializers)
    response_type: type

    @property
    def service(self) -> str:
        return self.path.strip("/").split("/")[0]

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[1]


class _RecordingChannel(grpc.Channel):  # type: ignore[misc]
    """A channel that never connects: it records the stubs a transport asks it for."""

    def __init__(self) -> None:
        self.methods: dict[str, MethodInfo] = {}

    def _record(self, kind: str, method: str, request_serializer: Any, response_deserializer: Any) -> Any:
        request_type = getattr(request_serializer, "__self__", None)
        response_type = getattr(response_deserializer, "__self__", None)
        if isinstance(response_type, type):
            self.methods[method] = MethodInfo(
                path=method,
                kind=kind,
                request_type=request_type if isinstance(request_type, type) else None,
                response_type=response_type,
            )
        return _unusable

    def unary_unary(self, method: str, request_serializer: Any = None, response_deserializer: Any = None,
                    _registered_method: bool = False) -> Any:
        return self._record("unary_unary", method, request_serializer, response_deserializer)

    def unary_stream(self, method: str, request_serializer: Any = None, response_deserializer: Any = None,
                     _registered_method: bool = False) -> Any:
        return self._record("unary_stream", method, request_serializer, response_deserializer)

    def stream_unary(self, method: str, request_serializer: Any = None, response_deserializer: Any = None,
                     _registered_method: bool = False) -> Any:
        return self._record("stream_unary", method, request_serializer, response_deserializer)

    def stream_stream(self, method: str, request_serializer: Any = None, response_deserializer: Any = None,
                      _registered_method: bool = False) -> Any:
        return self._record("stream_stream", method, request_serializer, response_deserializer)

    def subscribe(self, callback: Any, try_to_connect: bool = False) -> None:
        pass

    def unsubscribe(self, callback: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _RecordingChannel:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _unusable(*args: object, **kwargs: object) -> None:
    raise RuntimeError("the recording channel cannot make calls")


def method_table(transport_class: type) -> dict[str, MethodInfo]:
    """Every method a gRPC transport class can call, keyed by its short name ("CreateCustomJob").

    The transport's constructor wraps its stubs through an intercepting channel and caches them; the cache is
    emptied and the recording channel put in the interceptor's place so that each stub property, read again,
    reports its path and message classes.
    """
    channel = _RecordingChannel()
    transport = transport_class(channel=channel)
    transport._stubs = {}
    if hasattr(transport, "_logged_channel"):
        transport._logged_channel = channel
    for name, member in inspect.getmembers(transport_class):
        if isinstance(member, property) and not name.startswith("_") and name != "operations_client":
            try:
                getattr(transport, name)
            except Exception:
                continue
    return {info.name: info for info in channel.methods.values() if info.request_type is not None}


def _serializer(message_type: type) -> Callable[[Any], bytes]:
    serialize = getattr(message_type, "serialize", None)  # proto-plus
    if serialize is not None:
        return serialize  # type: ignore[no-any-return]
    return lambda message: bytes(message.SerializeToString())


def _deserializer(message_type: type) -> Callable[[bytes], Any]:
    deserialize = getattr(message_type, "deserialize", None)  # proto-plus
    if deserialize is not None:
        return deserialize  # type: ignore[no-any-return]
    from_string: Callable[[bytes], Any] = getattr(message_type, "FromString")  # noqa: B009
    return from_string


def generic_handler(table: Mapping[str, MethodInfo], implementations: Mapping[str, Handler],
                    faults: Faults) -> grpc.GenericRpcHandler:
    """Serve ``implementations`` (short method name → callable) with the message classes from ``table``.

    Unary methods receive ``(request, context)`` and return a response; streaming-response methods return an
    iterator; ``stream_stream`` methods receive the request iterator. Before each call the fault injector may
    delay it or abort it with a status code.
    """
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    service = ""
    for name, implementation in implementations.items():
        info = table[name]
        service = info.service
        assert info.request_type is not None
        wrapped = _with_faults(info, implementation, faults)
        make = {
            "unary_unary": grpc.unary_unary_rpc_method_handler,
            "unary_stream": grpc.unary_stream_rpc_method_handler,
            "stream_unary": grpc.stream_unary_rpc_method_handler,
            "stream_stream": grpc.stream_stream_rpc_method_handler,
        }[info.kind]
        handlers[name] = make(
            wrapped,
            request_deserializer=_deserializer(info.request_type),
            response_serializer=_serializer(info.response_type),
        )
    return grpc.method_handlers_generic_handler(service, handlers)


def _with_faults(info: MethodInfo, implementation: Handler, faults: Faults) -> Handler:
    def call(request: Any, context: grpc.ServicerContext) -> Any:
        fault = faults.take_call_fault(info.name, info.path)
        if fault.delay:
            time.sleep(fault.delay)
        if fault.code is not None and fault.after:
            result = implementation(request, context)
            if inspect.isgenerator(result):  # a stream: lose it before its first message
                result.close()
            logger.debug("injected %s into %s after it ran", fault.code, info.name)
            context.abort(getattr(grpc.StatusCode, fault.code), fault.message)
        if fault.code is not None:
            logger.debug("injected %s into %s", fault.code, info.name)
            context.abort(getattr(grpc.StatusCode, fault.code), fault.message)
        if fault.late:
            result = implementation(request, context)  # the work is done now; the answer comes late
            logger.debug("answering %s %.2f s late", info.name, fault.late)
            time.sleep(fault.late)
            return result
        return implementation(request, context)

    return call



def list_predicate(request: Any, context: grpc.ServicerContext) -> Predicate:
    """What every List method checks first: a page size that is not negative, and a filter that parses
    (INVALID_ARGUMENT otherwise, as the services answer); returns the compiled filter."""
    if request.page_size < 0:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "page_size: must not be negative.")
    try:
        return compile_filter(request.filter)
    except FilterError as exc:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        raise  # unreachable: abort raises


def page(items: list[Any], request: Any, context: grpc.ServicerContext, *, default_size: int = 100,
         ) -> tuple[list[Any], str]:
    """One page of ``items`` for a List request (offset page tokens) and the next page's token ("" at the end);
    an unreadable token is INVALID_ARGUMENT, as the services answer."""
    start = 0
    if request.page_token:
        try:
            start = int(base64.urlsafe_b64decode(request.page_token.encode()).decode())
        except ValueError:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid page_token: {request.page_token!r}.")
    size = request.page_size or default_size
    more = start + size < len(items)
    return items[start:start + size], base64.urlsafe_b64encode(str(start + size).encode()).decode() if more else ""
