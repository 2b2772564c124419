"""gRPC plumbing: method tables read from the Google client libraries' own transports, and a generic handler.

The client packages ship no server classes, but each gRPC transport creates its stubs with
``(path, request_serializer, response_deserializer)``. :func:`method_table` hands a transport a recording
channel, asks it for every stub, and keeps what it was given: for each method its path, its kind (unary or
streaming) and its request and response message classes. :func:`generic_handler` serves a chosen subset of
those methods with plain Python callables, after the fault injector has had its say.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import inspect
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NoReturn

import grpc

from tfcloud.emulator._filter import FilterError, FilterField, Predicate, Schema, compile_filter
from tfcloud.emulator.faults import Faults

__all__ = ["JOB_FILTER", "OUTPUT_ONLY", "MethodInfo", "abort_invalid", "apply_read_mask", "clear_output_only",
           "found_errors", "generic_handler", "list_predicate", "method_table", "page", "page_token",
           "read_page_token"]

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


#: The output-only fields of the resources a Create method takes (each message's "Output only." fields in
#: google/cloud/aiplatform/v1/custom_job.proto, hyperparameter_tuning_job.proto, persistent_resource.proto, read
#: 2026-11-26): the service ignores what a request puts there.
OUTPUT_ONLY: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "CustomJob": ("name", "state", "create_time", "start_time", "end_time", "update_time", "error",
                  "web_access_uris", "satisfies_pzs", "satisfies_pzi"),
    "HyperparameterTuningJob": ("name", "trials", "state", "create_time", "start_time", "end_time", "update_time",
                                "error", "satisfies_pzs", "satisfies_pzi"),
    "PersistentResource": ("name", "state", "error", "create_time", "start_time", "update_time", "satisfies_pzs",
                           "satisfies_pzi"),
})


def clear_output_only(message: Any) -> Any:
    """``message`` (proto-plus) without the output-only fields of its type (:data:`OUTPUT_ONLY`)."""
    pb = type(message).pb(message)
    for name in OUTPUT_ONLY.get(type(message).__name__, ()):
        if name in pb.DESCRIPTOR.fields_by_name:
            pb.ClearField(name)
    return message


def _unserializable(info: MethodInfo, request: Any) -> str:
    """Why a unary request that parsed is still invalid ("" when it is not): a Timestamp or Duration out of
    range (nanos below 0, a year past 9999) parses, but protobuf cannot write it as JSON and Google refuses it;
    the emulator answers INVALID_ARGUMENT (the stricter reading) rather than failing later in a handler."""
    if info.kind not in ("unary_unary", "unary_stream") or info.request_type is None:
        return ""
    from google.protobuf import json_format

    to_pb = getattr(info.request_type, "pb", None)
    try:
        json_format.MessageToJson(to_pb(request) if to_pb is not None else request)
    except Exception as exc:  # json_format raises several types for invalid well-known values
        return str(exc)
    return ""


def _with_faults(info: MethodInfo, implementation: Handler, faults: Faults) -> Handler:
    def call(request: Any, context: grpc.ServicerContext) -> Any:
        problem = _unserializable(info, request)
        if problem:
            abort_invalid(context, [("", problem)], message=f"Invalid request: {problem}")
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


# -- errors as Google answers them ----------------------------------------------------------------------------------
def found_errors(violations: Sequence[tuple[str, str]]) -> str:
    """Vertex AI's INVALID_ARGUMENT message: ``List of found errors:\t1.Field: F; Message: M\t`` (the shape of
    the service's answer, e.g. "List of found errors:\t1.Field: job_spec.worker_pool_specs[0].machine_spec.
    accelerator_type; Message: Both `accelerator_type` and `accelerator_count` should be specified or none.\t")."""
    return "List of found errors:\t" + "".join(
        f"{number}.Field: {field}; Message: {description}\t"
        for number, (field, description) in enumerate(violations, 1))


def abort_invalid(context: grpc.ServicerContext, violations: Sequence[tuple[str, str]],
                  message: str | None = None) -> NoReturn:
    """End the call with INVALID_ARGUMENT: ``message`` (default: :func:`found_errors`) and a
    ``google.rpc.BadRequest`` holding one field violation per ``(field, description)`` in the status details,
    where google-api-core puts them in ``exc.details`` and grpcio-status's ``rpc_status`` reads them."""
    from google.protobuf import any_pb2
    from google.rpc import code_pb2, error_details_pb2, status_pb2
    from grpc_status import rpc_status

    request = error_details_pb2.BadRequest(field_violations=[
        error_details_pb2.BadRequest.FieldViolation(field=field, description=description)
        for field, description in violations])
    detail = any_pb2.Any()
    detail.Pack(request)
    status = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=message or found_errors(violations),
                               details=[detail])
    context.abort_with_status(rpc_status.to_status(status))
    raise AssertionError("unreachable: abort_with_status raises")


# -- List methods: filters (AIP-160), pages (AIP-158), read masks ------------------------------------------------
#: What Vertex AI's List methods of jobs document for ``filter`` (ListCustomJobsRequest.filter and
#: ListHyperparameterTuningJobsRequest.filter in google/cloud/aiplatform/v1/job_service.proto, read 2026-11-26):
#: ``display_name`` ``=`` ``!=`` and ``:`` wildcard; ``state`` ``=`` ``!=``; ``create_time`` ``=`` ``!=`` ``<``
#: ``<=`` ``>`` ``>=`` (RFC 3339); ``labels.key=value`` and ``labels.key:*``.
JOB_FILTER: Schema = MappingProxyType({
    "display_name": FilterField(ops=frozenset({"=", "!=", ":"})),
    "state": FilterField(ops=frozenset({"=", "!="}), kind="enum", values=frozenset({
        "JOB_STATE_UNSPECIFIED", "JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING",
        "JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED",
        "JOB_STATE_PAUSED", "JOB_STATE_EXPIRED", "JOB_STATE_UPDATING", "JOB_STATE_PARTIALLY_SUCCEEDED"})),
    "create_time": FilterField(ops=frozenset({"=", "!=", "<", "<=", ">", ">="}), kind="time"),
    "labels": FilterField(ops=frozenset({"=", ":"}), kind="map"),
})


def list_predicate(request: Any, context: grpc.ServicerContext, schema: Schema | None = None, *,
                   bare_values: bool | None = None) -> Predicate:
    """What every List method checks first: a page size that is not negative, and a filter that parses and,
    with a ``schema``, names only supported fields, operators and values (INVALID_ARGUMENT otherwise, with the
    ``filter`` field violation); returns the compiled filter, which ends the call with INVALID_ARGUMENT too
    when a value cannot be compared with a record's."""
    if request.page_size < 0:
        abort_invalid(context, [("page_size", "must not be negative.")])
    try:
        predicate = compile_filter(request.filter, schema, bare_values=bare_values)
    except FilterError as exc:
        abort_invalid(context, [("filter", str(exc))], message=str(exc))

    def guarded(record: Mapping[str, Any]) -> bool:
        try:
            return predicate(record)
        except FilterError as exc:
            abort_invalid(context, [("filter", str(exc))], message=str(exc))

    return guarded


def request_digest(request: Any, *, ignore: tuple[str, ...] = ("page_size", "page_token")) -> str:
    """A digest of every field of a List request but ``ignore``: a page token carries it, so that a token used
    with another filter (or parent, order, mask) is refused, as AIP-158 asks."""
    to_pb = getattr(type(request), "pb", None)  # proto-plus wraps a protobuf message
    message = to_pb(request) if to_pb is not None else request
    copy = type(message).FromString(message.SerializeToString())
    for name in ignore:
        copy.ClearField(name)
    serialized = copy.SerializeToString(deterministic=True)
    return hashlib.sha256(serialized).hexdigest()[:16]


def page_token(position: str, request: Any) -> str:
    """An opaque token for ``position`` (an offset, a log entry's key), bound to ``request``'s other fields."""
    return base64.urlsafe_b64encode(json.dumps([position, request_digest(request)]).encode()).decode()


def read_page_token(request: Any, context: grpc.ServicerContext) -> str | None:
    """The position in ``request.page_token`` (None without one); INVALID_ARGUMENT when it is unreadable or was
    issued for a request with other fields (AIP-158)."""
    if not request.page_token:
        return None
    try:
        position, digest = json.loads(base64.urlsafe_b64decode(request.page_token.encode()).decode())
        if not isinstance(position, str) or not isinstance(digest, str):
            raise ValueError("not a page token")
    except (ValueError, TypeError, UnicodeDecodeError, binascii.Error):
        abort_invalid(context, [("page_token", "Invalid page token.")])
    if digest != request_digest(request):
        abort_invalid(context, [("page_token", "The page token was issued for a request with other parameters "
                                 "(filter, order or mask): list again from the first page.")])
    return position


def page(items: list[Any], request: Any, context: grpc.ServicerContext, *, default_size: int = 100,
         ) -> tuple[list[Any], str]:
    """One page of ``items`` for a List request and the next page's token ("" at the end). Tokens hold an
    offset and are bound to the request (:func:`read_page_token`)."""
    position = read_page_token(request, context)
    start = 0
    if position is not None:
        if not position.isdigit():
            abort_invalid(context, [("page_token", "Invalid page token.")])
        start = int(position)
    size = request.page_size or default_size
    more = start + size < len(items)
    return items[start:start + size], page_token(str(start + size), request) if more else ""


def apply_read_mask(messages: list[Any], request: Any, context: grpc.ServicerContext, message_type: Any,
                    ) -> list[Any]:
    """``messages`` (proto-plus ``message_type``) cut to ``request.read_mask``'s paths (all of each when it has
    none); a path ``message_type`` does not have is INVALID_ARGUMENT, whether or not anything was found."""
    if "read_mask" not in request or not request.read_mask.paths:
        return messages
    from google.protobuf import field_mask_pb2

    mask = field_mask_pb2.FieldMask(paths=list(request.read_mask.paths))
    pb_type = message_type.pb()  # proto-plus: the protobuf class
    if not mask.IsValidForDescriptor(pb_type.DESCRIPTOR):
        abort_invalid(context, [("read_mask", f"Invalid field mask {', '.join(mask.paths)} for "
                                 f"{pb_type.DESCRIPTOR.name}.")])
    cut = []
    for message in messages:
        target = pb_type()
        mask.MergeMessage(message_type.pb(message), target)
        cut.append(message_type.wrap(target))
    return cut


def bound(service: object, rpcs: Mapping[str, str]) -> dict[str, Handler]:
    """``rpcs`` (an RPC's short name → the name of the method of ``service`` that answers it) as the callables
    :func:`generic_handler` serves."""
    return {rpc: getattr(service, method) for rpc, method in rpcs.items()}
