"""No handler crashes: random requests, built field by field from each method's own message class, are thrown at
every service the emulator serves, through Google's GAPIC clients (and the Operations stub); only the status
codes Google documents for bad input come back, never UNKNOWN or INTERNAL (a handler that raised).

Bounded: a few examples per method, no shrinking deadline; about half a minute on a loaded machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.api_core import exceptions
from google.protobuf import descriptor as pb_descriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.emulator

#: What a malformed or impossible request may get (google.rpc.Code, as the services document them).
DOCUMENTED = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION,
              grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.UNIMPLEMENTED}

PARENTS = ["projects/fuzz/locations/us-central1", "projects/123/locations/europe-west4", "projects/fuzz",
           "projects//locations/", "", "projects/fuzz/locations/us-central1/customJobs/1"]
NAMES = ["projects/fuzz/locations/us-central1/customJobs/1", "projects/fuzz/locations/us-central1/customJobs/x",
         "projects/fuzz/locations/us-central1/hyperparameterTuningJobs/2",
         "projects/fuzz/locations/us-central1/persistentResources/r", "projects/fuzz/builds/b", "operations/x", "",
         "projects/fuzz/locations/us-central1/customJobs/" + "9" * 40]
FILTERS = ['display_name="x"', 'display_name:"x*"', "state=JOB_STATE_RUNNING", 'create_time>"yesterday"',
           'create_time>="2026-01-01T00:00:00Z"', 'labels.k="v"', "labels.k:*", 'bogus="x"', "(((", ")", "NOT",
           'timestamp>="not-a-time"', 'severity>=ERROR', 'resource.labels.job_id="1"', '"bare"', "a OR b AND -c",
           'tags="x"', "\\", '"\\x"', "=", "labels.=", 'display_name="é\\"', "(" * 300, "NOT " * 300]
WORDS = ["n1-standard-4", "e2-standard-8", "ct6e-standard-4t", "2x2", "NVIDIA_TESLA_T4", "pd-ssd", "pd-fake",
         "gs://bucket/dir", "gs://", "/tmp/x", "us-docker.pkg.dev/p/r/i:1", "python3", "-c", "print(1)", "docker",
         "gcr.io/cloud-builders/docker", "sa@p.iam.gserviceaccount.com", "projects/1/global/networks/n", "x" * 300,
         "timestamp asc", "timestamp desc", "name", "display_name", "job_spec", "\u0000", "é", "チーム"]


def _strings(field: pb_descriptor.FieldDescriptor) -> st.SearchStrategy[str]:
    name = field.name
    if name == "parent" or name == "project_id" or name == "resource_names":
        return st.sampled_from(PARENTS) | st.text(max_size=12)
    if name in ("name", "id", "log_name", "persistent_resource_id"):
        return st.sampled_from(NAMES) | st.text(max_size=12)
    if name == "filter":
        return st.sampled_from(FILTERS) | st.text(max_size=30)
    if name == "page_token":
        return st.sampled_from(["", "bm90IGEgdG9rZW4=", "WyIxIiwgIngiXQ=="]) | st.text(max_size=12)
    return st.sampled_from(WORDS) | st.text(max_size=16)


def _scalar(field: pb_descriptor.FieldDescriptor) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == field.TYPE_STRING:
        return _strings(field)
    if kind == field.TYPE_BYTES:
        return st.binary(max_size=16)
    if kind == field.TYPE_BOOL:
        return st.booleans()
    if kind in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
        return st.floats(allow_nan=False, width=32)
    if kind == field.TYPE_ENUM:
        return st.sampled_from([value.number for value in field.enum_type.values])
    if kind in (field.TYPE_INT32, field.TYPE_SINT32, field.TYPE_SFIXED32):
        return st.integers(-(2**31), 2**31 - 1) | st.sampled_from([0, 1, -1, 4, 1001, 5000])
    if kind in (field.TYPE_UINT32, field.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if kind in (field.TYPE_UINT64, field.TYPE_FIXED64):
        return st.integers(0, 2**64 - 1)
    return st.integers(-(2**63), 2**63 - 1) | st.sampled_from([0, 1, -1])


@st.composite
def _message(draw: st.DrawFn, descriptor: pb_descriptor.Descriptor, message_class: Any, depth: int = 0) -> Any:
    message = message_class()
    for field in descriptor.fields:
        if depth > 3 or not draw(st.booleans()):
            continue
        if field.type == field.TYPE_MESSAGE:
            if field.message_type.GetOptions().map_entry:
                key_field, value_field = field.message_type.fields_by_name["key"], field.message_type.fields_by_name[
                    "value"]
                if value_field.type == value_field.TYPE_MESSAGE:
                    continue
                entries = draw(st.dictionaries(_scalar(key_field), _scalar(value_field), max_size=3))
                getattr(message, field.name).update(entries)
                continue
            if field.message_type.full_name in ("google.protobuf.Struct", "google.protobuf.Value",
                                                "google.protobuf.Any", "google.protobuf.ListValue"):
                continue
            sub_class = type(getattr(message, field.name)) if not field.is_repeated else None
            if field.is_repeated:
                container = getattr(message, field.name)
                for _ in range(draw(st.integers(0, 2))):
                    item = container.add()
                    item.CopyFrom(draw(_message(field.message_type, type(item), depth + 1)))
            else:
                assert sub_class is not None
                getattr(message, field.name).CopyFrom(draw(_message(field.message_type, sub_class, depth + 1)))
        elif field.is_repeated:
            getattr(message, field.name).extend(draw(st.lists(_scalar(field), max_size=3)))
        else:
            try:
                setattr(message, field.name, draw(_scalar(field)))
            except (ValueError, TypeError):
                continue
    return message


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@pytest.fixture(scope="module")
def clients(tfcloud_emulator: Any) -> Iterator[dict[str, Any]]:
    from google.longrunning import operations_pb2_grpc

    made = {"jobs": tfcloud_emulator.job_client(), "resources": tfcloud_emulator.persistent_resource_client(),
            "builds": tfcloud_emulator.build_client(), "logs": tfcloud_emulator.logging_client()}
    channel = tfcloud_emulator.channel()
    made["operations"] = operations_pb2_grpc.OperationsStub(channel)
    yield made
    for name in ("jobs", "resources", "builds", "logs"):
        made[name].transport.close()
    channel.close()


def _methods() -> list[tuple[str, str, Any]]:
    from google.cloud import aiplatform_v1
    from google.cloud.devtools import cloudbuild_v1
    from google.cloud.logging_v2 import types as logging_types
    from google.longrunning import operations_pb2

    jobs = [f"{verb}{kind}" for kind in ("CustomJob", "HyperparameterTuningJob")
            for verb in ("Create", "Get", "Cancel", "Delete")]
    jobs += ["ListCustomJobs", "ListHyperparameterTuningJobs"]
    found = [("jobs", name, getattr(aiplatform_v1, f"{name}Request")) for name in jobs]
    found += [("resources", name, getattr(aiplatform_v1, f"{name}Request")) for name in (
        "CreatePersistentResource", "GetPersistentResource", "ListPersistentResources", "DeletePersistentResource")]
    found += [("builds", name, getattr(cloudbuild_v1, f"{name}Request")) for name in (
        "CreateBuild", "GetBuild", "ListBuilds", "CancelBuild")]
    found += [("logs", name, getattr(logging_types, f"{name}Request")) for name in (
        "WriteLogEntries", "ListLogEntries", "ListLogs")]
    found += [("operations", name, getattr(operations_pb2, f"{name}Request")) for name in (
        "GetOperation", "ListOperations", "CancelOperation", "DeleteOperation")]
    return found


@pytest.mark.parametrize(("client_name", "method", "request_type"), _methods(),
                         ids=[method for _, method, _ in _methods()])
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_random_requests_get_documented_status_codes(clients: dict[str, Any], client_name: str, method: str,
                                                     request_type: Any, data: st.DataObject) -> None:
    plus = hasattr(request_type, "pb")
    pb_class = request_type.pb() if plus else request_type
    pb = data.draw(_message(pb_class.DESCRIPTOR, pb_class))
    client = clients[client_name]
    try:
        if client_name == "operations":
            getattr(client, method)(pb, timeout=10)
        else:
            result = getattr(client, _snake(method))(request=request_type.wrap(pb), retry=None, timeout=10)
            if method.startswith("List"):
                next(iter(result), None)
    except exceptions.GoogleAPICallError as exc:
        assert exc.grpc_status_code in DOCUMENTED, f"{method}: {exc.grpc_status_code} {exc.message}"
    except grpc.RpcError as exc:
        assert exc.code() in DOCUMENTED, f"{method}: {exc.code()} {exc.details()}"
    except (ValueError, TypeError):
        pass  # the client library refused the request itself (a field it checks before sending)
