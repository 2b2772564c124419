"""Vertex AI ``PersistentResourceService``: create, get, list and delete persistent resources (long-running
clusters that CustomJobs run on), as long-running operations where the service uses them.

A resource is ``PROVISIONING`` for :attr:`JobTimings.resource_provisioning` seconds, then ``RUNNING``; the create
operation finishes then, with the resource as its response. Delete moves it to ``STOPPING`` and removes it (the
operation's response is ``Empty``). Names carry the project *number*, as the service's do:
``projects/{number}/locations/{location}/persistentResources/{id}``.

A CustomJob that names a resource (``job_spec.persistent_resource_id``) is accepted only when the resource is
``RUNNING``, each of the job's pools fits one of its resource pools (same machine type and accelerators, at most
its replicas), and the job gives a service account exactly when the resource enables custom service accounts
(``resource_runtime_spec.service_account_spec.enable_custom_service_account``: "enforced to run any workloads";
otherwise the Custom Code Service Agent runs them, aiplatform_v1 persistent_resource.proto, read 2026-11-26):
:meth:`PersistentResourceService.refuse_job` says why not. Such a job starts on the resource's VMs
at once: the job runner skips the provisioning delay (:mod:`tfcloud.emulator.capacity`).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import threading
from typing import Any, ClassVar

import grpc

from tfcloud.emulator._common import JobTimings, project_number
from tfcloud.emulator._grpc import Handler, abort_invalid, bound, clear_output_only, page
from tfcloud.emulator._rules import persistent_resource_violations
from tfcloud.emulator.operations import OperationStore
from tfcloud.emulator.store import Store

__all__ = ["PersistentResourceService"]

_PARENT = re.compile(r"^projects/([^/]+)/locations/([^/]+)$")
_NAME = re.compile(r"^projects/([^/]+)/locations/([^/]+)/persistentResources/([^/]+)$")
_ID = re.compile(r"^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _copy(message: Any) -> Any:
    return type(message).deserialize(type(message).serialize(message))


class PersistentResourceService:
    """The methods of ``google.cloud.aiplatform.v1.PersistentResourceService`` (reboot and update: not served)."""

    def __init__(self, *, operations: OperationStore, timings: JobTimings, store: Store | None = None) -> None:
        self._operations = operations
        self._timings = timings
        self._lock = threading.Lock()
        self._store = store or Store.memory("persistent resources")  # --data-dir: kept across restarts
        # canonical name -> aiplatform_v1.PersistentResource
        self._resources: dict[str, Any] = {r.name: r for r, _ in self._store.restore()}
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    #: The RPCs it serves, each with the method that answers it.
    RPCS: ClassVar[dict[str, str]] = {"CreatePersistentResource": "create", "GetPersistentResource": "get",
                                      "ListPersistentResources": "list", "DeletePersistentResource": "delete"}

    def implementations(self) -> dict[str, Handler]:
        return bound(self, self.RPCS)

    # -- names ---------------------------------------------------------------------------------------------
    @staticmethod
    def _parent(parent: str, context: grpc.ServicerContext) -> str:
        match = _PARENT.match(parent)
        if match is None:
            abort_invalid(context, [("parent", "Invalid parent: expected projects/PROJECT/locations/LOCATION, "
                                               f"received {parent!r}.")])
        assert match is not None
        return f"projects/{project_number(match.group(1))}/locations/{match.group(2)}"

    @staticmethod
    def canonical(name: str) -> str | None:
        """``name`` with the project's number, or None when it is not a persistent resource's name."""
        match = _NAME.match(name)
        if match is None:
            return None
        project, location, resource_id = match.groups()
        return f"projects/{project_number(project)}/locations/{location}/persistentResources/{resource_id}"

    def _find(self, name: str, context: grpc.ServicerContext) -> Any:
        canonical = self.canonical(name)
        if canonical is None:
            abort_invalid(context, [("name", "Invalid PersistentResource name: expected projects/PROJECT/"
                                             f"locations/LOCATION/persistentResources/ID, received {name!r}.")])
        with self._lock:
            resource = self._resources.get(str(canonical))
        if resource is None:
            context.abort(grpc.StatusCode.NOT_FOUND, self._store.not_found("PersistentResource", str(canonical)))
        return resource

    # -- RPCs ----------------------------------------------------------------------------------------------
    def create(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.aiplatform_v1.types import (
            CreatePersistentResourceOperationMetadata,
            GenericOperationMetadata,
            PersistentResource,
        )

        parent = self._parent(request.parent, context)
        resource_id = request.persistent_resource_id
        problem = _invalid(resource_id, request.persistent_resource)
        if problem:
            abort_invalid(context, problem)
        violations = persistent_resource_violations(request.persistent_resource, location=parent.split("/")[3])
        if violations:
            abort_invalid(context, violations)
        resource = clear_output_only(_copy(request.persistent_resource))
        resource.name = f"{parent}/persistentResources/{resource_id}"
        for index, pool in enumerate(resource.resource_pools):
            pool.id = pool.id or f"resource-pool-{index}"  # the service makes one up when none is given
        now = _now()
        resource.state = PersistentResource.State.PROVISIONING
        resource.create_time = now
        resource.update_time = now
        with self._lock:
            if resource.name in self._resources:
                context.abort(grpc.StatusCode.ALREADY_EXISTS,
                              f'The PersistentResource "{resource.name}" already exists.')
            self._resources[resource.name] = resource
            self._store.save_message(resource)
        metadata = CreatePersistentResourceOperationMetadata(
            generic_metadata=GenericOperationMetadata(create_time=now, update_time=now),
            progress_message="Provisioning the resource pools.")
        operation_name = f"{resource.name}/operations/{random.randint(10**18, 9 * 10**18)}"
        operation = self._operations.create(operation_name, metadata)
        thread = threading.Thread(target=self._provision, args=(resource.name, operation_name, metadata),
                                  name=f"persistent-{resource_id}", daemon=True)
        self._threads.append(thread)
        thread.start()
        return operation

    def _provision(self, name: str, operation_name: str, metadata: Any) -> None:
        from google.cloud.aiplatform_v1.types import PersistentResource

        if self._stopping.wait(self._timings.resource_provisioning):
            return
        now = _now()
        with self._lock:
            resource = self._resources.get(name)
            if resource is None or resource.state != PersistentResource.State.PROVISIONING:
                return  # deleted while it was provisioning
            resource.state = PersistentResource.State.RUNNING
            resource.start_time = now
            resource.update_time = now
            self._store.save_message(resource)
            created = _copy(resource)
        metadata.generic_metadata.update_time = now
        metadata.progress_message = "The resource is running."
        self._operations.finish(operation_name, metadata=metadata, response=created)

    def get(self, request: Any, context: grpc.ServicerContext) -> Any:
        resource = self._find(request.name, context)
        with self._lock:
            return _copy(resource)

    def list(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.aiplatform_v1.types import ListPersistentResourcesResponse

        prefix = self._parent(request.parent, context) + "/persistentResources/"
        with self._lock:
            found = [_copy(r) for name, r in sorted(self._resources.items()) if name.startswith(prefix)]
        found.sort(key=lambda r: (r.create_time, r.name), reverse=True)
        resources, token = page(found, request, context)
        return ListPersistentResourcesResponse(persistent_resources=resources, next_page_token=token)

    def delete(self, request: Any, context: grpc.ServicerContext) -> Any:
        from google.cloud.aiplatform_v1.types import (
            DeleteOperationMetadata,
            GenericOperationMetadata,
            PersistentResource,
        )
        from google.protobuf import empty_pb2

        resource = self._find(request.name, context)
        now = _now()
        with self._lock:
            resource.state = PersistentResource.State.STOPPING
            resource.update_time = now
            self._resources.pop(resource.name, None)
            self._store.delete(resource.name)
        metadata = DeleteOperationMetadata(generic_metadata=GenericOperationMetadata(create_time=now, update_time=now))
        operation = f"{resource.name}/operations/{random.randint(10**18, 9 * 10**18)}"
        self._operations.create(operation, metadata)
        return self._operations.finish(operation, response=empty_pb2.Empty())

    # -- jobs on a resource ----------------------------------------------------------------------------------
    def refuse_job(self, parent: str, job: Any) -> tuple[grpc.StatusCode, str] | None:
        """Why a CustomJob under ``parent`` (``projects/NUMBER/locations/L``) cannot run on the persistent resource
        its spec names (a status code and message), or None when it can."""
        from google.cloud.aiplatform_v1.types import PersistentResource

        name = f"{parent}/persistentResources/{job.job_spec.persistent_resource_id}"
        with self._lock:
            resource = self._resources.get(name)
            resource = _copy(resource) if resource is not None else None
        if resource is None:
            return grpc.StatusCode.NOT_FOUND, f'The PersistentResource "{name}" does not exist.'
        if resource.state != PersistentResource.State.RUNNING:
            return (grpc.StatusCode.FAILED_PRECONDITION,
                    f'The PersistentResource "{name}" is {resource.state.name}, not RUNNING.')
        custom = resource.resource_runtime_spec.service_account_spec.enable_custom_service_account
        if custom and not job.job_spec.service_account:  # "enforced to run any workloads" (the proto)
            return (grpc.StatusCode.INVALID_ARGUMENT,
                    f'The PersistentResource "{name}" enables custom service accounts: '
                    "CustomJob.job_spec.service_account is required to run on it.")
        if not custom and job.job_spec.service_account:  # its workloads run as the Custom Code Service Agent
            return (grpc.StatusCode.INVALID_ARGUMENT,
                    f'The PersistentResource "{name}" does not enable custom service accounts '
                    "(resource_runtime_spec.service_account_spec.enable_custom_service_account): "
                    "CustomJob.job_spec.service_account must be unset to run on it.")
        for index, pool in enumerate(job.job_spec.worker_pool_specs):
            if not pool.replica_count:
                continue
            fits = [r for r in resource.resource_pools if _same_machine(r.machine_spec, pool.machine_spec)]
            if not fits:
                return (grpc.StatusCode.INVALID_ARGUMENT,
                        f"CustomJob.job_spec.worker_pool_specs[{index}].machine_spec "
                        f"({pool.machine_spec.machine_type}) matches no resource pool of the PersistentResource "
                        f'"{name}".')
            if all(pool.replica_count > r.replica_count for r in fits):
                return (grpc.StatusCode.INVALID_ARGUMENT,
                        f"CustomJob.job_spec.worker_pool_specs[{index}].replica_count {pool.replica_count} is more "
                        f'than the resource pool "{fits[0].id}" holds ({fits[0].replica_count}).')
        return None

    def stop(self) -> None:
        self._stopping.set()
        for thread in self._threads:
            thread.join(5)


def _same_machine(a: Any, b: Any) -> bool:
    return (a.machine_type, a.accelerator_type, a.accelerator_count) == (b.machine_type, b.accelerator_type,
                                                                         b.accelerator_count)


def _invalid(resource_id: str, resource: Any) -> list[tuple[str, str]]:
    """What the service rejects with INVALID_ARGUMENT beyond the table, as ``(field, description)``; empty when
    the request is acceptable."""
    if not _ID.match(resource_id or ""):
        return [("persistent_resource_id", "must be 1 to 63 lowercase letters, digits or '-', starting with a "
                 f"letter, received {resource_id!r}.")]
    pools = list(resource.resource_pools)
    if not pools:
        return [("resource_pools", "must not be empty.")]
    ids = [pool.id for pool in pools if pool.id]
    if len(set(ids)) != len(ids):
        return [("resource_pools", "resource pool ids must be unique.")]
    for index, pool in enumerate(pools):
        where = f"resource_pools[{index}]"
        if not pool.machine_spec.machine_type:
            return [(f"{where}.machine_spec.machine_type", "machine_type is required.")]
        if pool.replica_count < 1:
            return [(f"{where}.replica_count", f"replica_count must be at least 1, received {pool.replica_count}.")]
    return []
