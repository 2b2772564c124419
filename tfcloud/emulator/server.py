"""The emulator: one gRPC server on 127.0.0.1 for Vertex AI jobs (custom and hyperparameter tuning) and persistent
resources, Cloud Build, Cloud Logging and long-running operations, plus the Cloud Storage emulator, started and
stopped together.

::

    from tfcloud.emulator import Emulator

    with Emulator(project="my-project") as emulator:
        jobs = emulator.job_client()           # aiplatform_v1.JobServiceClient on the emulator's channel
        ...
        emulator.faults.fail("GetCustomJob", code="UNAVAILABLE")

``Emulator.settings`` holds what a process needs to reach it (:class:`EmulatorSettings`, with ``env`` to
export). Replicas run as local processes unless ``docker_host`` names a Docker engine.

The gRPC services listen twice: in plaintext on ``endpoint`` (tfcloud's own clients, hand-built channels) and
over TLS on ``tls_endpoint``, with a certificate made at start for 127.0.0.1/localhost, for Google's libraries
as users build them (``aiplatform.init(api_endpoint=...)``, ``client_options={"api_endpoint": ...}``), which
always dial TLS. They trust it through ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=settings.roots_file``
(:mod:`tfcloud.emulator._tls`).
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tfcloud.emulator._common import JobTimings, project_number
from tfcloud.emulator._reaper import Reaper
from tfcloud.emulator.faults import Faults

__all__ = ["Emulator", "EmulatorSettings"]

logger = logging.getLogger("tfcloud.emulator")


@dataclass(frozen=True, kw_only=True)
class EmulatorSettings:
    """Where a running emulator listens, and the environment that points clients at it.

    ``env``: ``TFCLOUD_EMULATOR_HOST`` (``127.0.0.1:PORT``, the plaintext gRPC endpoint of Vertex AI, Cloud
    Build, Cloud Logging and Operations), ``TFCLOUD_EMULATOR_API_ENDPOINT`` (the TLS one, for Google's
    libraries' ``api_endpoint``), ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` (``roots_file``: the emulator's
    certificate and gRPC's own roots), ``STORAGE_EMULATOR_HOST`` (read by google-cloud-storage),
    ``GOOGLE_CLOUD_PROJECT``, ``CLOUDSDK_CORE_PROJECT`` and ``TFCLOUD_EMULATOR_LOCATION``.
    """

    endpoint: str
    storage_endpoint: str | None
    tls_endpoint: str
    roots_file: str
    project: str
    project_number: str
    location: str
    docker_host: str | None = None
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def exports(self) -> str:
        """Shell lines that export :attr:`env` (values quoted for the shell where they need it)."""
        import shlex

        return "\n".join(f"export {key}={shlex.quote(value)}" for key, value in self.env.items())


class Emulator:
    """Google Cloud on loopback for tfcloud and its users' tests.

    - ``project`` / ``location``: the defaults reported in :attr:`settings` (requests may name any).
    - ``port``: the plaintext gRPC port, ``tls_port`` the TLS one (0: a free one); ``storage`` /
      ``storage_port``: run the Cloud Storage emulator.
    - ``docker_host``: a Docker engine (``unix:///...``) for replicas and builds; ``None``: replicas run as
      local processes and builds fail with a clear status.
    - ``entrypoints``: image URI → command, for local-process replicas whose container spec gives no command.
    - ``timings``: how long jobs sit in QUEUED and PENDING, and how long workers may outlive the chief.
    - ``local_output_root``: replicas see a job's ``gs://BUCKET/PATH`` base output directory as
      ``LOCAL_OUTPUT_ROOT/BUCKET/PATH`` in their ``AIP_*`` variables (TensorFlow cannot reach the storage
      emulator; checkpoints need a real directory); containers get it mounted at the same path. Default: the
      ``gs://`` URIs, as Vertex AI gives them.
    - ``data_dir``: keep Cloud Storage objects, Vertex AI jobs, persistent resources and builds there across
      restarts (:mod:`tfcloud.emulator.store`, :attr:`kept`); None: in memory, and a restarted emulator starts
      empty. Replicas never outlive the emulator (:mod:`tfcloud.emulator._reaper`).
    """

    def __init__(self, *, project: str = "tfcloud-emulator", location: str = "us-central1", port: int = 0,
                 tls_port: int = 0, storage: bool = True, storage_port: int = 0, data_dir: Path | None = None,
                 docker_host: str | None = None, entrypoints: Mapping[str, Sequence[str]] | None = None,
                 timings: JobTimings | None = None, workdir: Path | None = None,
                 local_output_root: Path | None = None) -> None:
        self.project = project
        self.location = location
        self.faults = Faults()
        self._port = port
        self._tls_port = tls_port
        self._storage_enabled = storage
        self._storage_port = storage_port
        self._data_dir = data_dir
        self._docker_host = docker_host
        self._entrypoints = dict(entrypoints or {})
        self._timings = timings or JobTimings()
        self._workdir = workdir
        self._local_output_root = local_output_root
        self._server: Any = None
        self._storage: Any = None
        self._stopping = threading.Event()
        self._services: list[Any] = []
        self._runner: Any = None
        self._reaper: Any = None
        self._kept: Any = None  # tfcloud.emulator.store.Stores
        self._logs: Any = None
        self._settings: EmulatorSettings | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------
    def start(self) -> EmulatorSettings:
        """Start every service; return the settings. Raises ConfigurationError when an extra is missing."""
        from tfcloud.config.extras import require_extras

        require_extras(emulator=True, emulator_docker=self._docker_host is not None)
        if self._server is not None:
            raise RuntimeError("the emulator is already running")
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> EmulatorSettings:
        from concurrent import futures

        import grpc
        from google.cloud.aiplatform_v1.services.job_service.transports.grpc import JobServiceGrpcTransport
        from google.cloud.aiplatform_v1.services.persistent_resource_service.transports.grpc import (
            PersistentResourceServiceGrpcTransport,
        )
        from google.cloud.devtools.cloudbuild_v1.services.cloud_build.transports.grpc import (
            CloudBuildGrpcTransport,
        )
        from google.cloud.logging_v2.services.logging_service_v2.transports.grpc import (
            LoggingServiceV2GrpcTransport,
        )
        from google.longrunning import operations_pb2_grpc

        from tfcloud.emulator._grpc import generic_handler, method_table
        from tfcloud.emulator._tls import ROOTS_VARIABLE, make_identity, write_roots
        from tfcloud.emulator.builds import BuildService
        from tfcloud.emulator.jobs import JobService
        from tfcloud.emulator.logs import LoggingService, LogStore
        from tfcloud.emulator.operations import OperationStore
        from tfcloud.emulator.packages import PackageInstaller
        from tfcloud.emulator.persistent import PersistentResourceService
        from tfcloud.emulator.replicas import DockerRunner, ProcessRunner
        from tfcloud.emulator.secrets import secret_manager_handlers
        from tfcloud.emulator.storage import StorageEmulator
        from tfcloud.emulator.store import open_stores
        from tfcloud.emulator.tuning import TuningService

        self._stopping.clear()
        self._reaper = Reaper(self._docker_host)
        storage_endpoint = None
        if self._storage_enabled:
            self._storage = StorageEmulator(port=self._storage_port, data_dir=self._data_dir)
            self._storage.start()
            storage_endpoint = self._storage.endpoint
        if self._workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="tfcloud-emulator-")
        workdir = str(self._workdir or (self._tmp.name if self._tmp else "."))
        self._runner = (DockerRunner(self._docker_host, reaper=self._reaper) if self._docker_host is not None
                        else ProcessRunner(entrypoints=self._entrypoints, workdir=workdir, reaper=self._reaper))
        self._logs = LogStore()
        operations = OperationStore()
        project_ids = {project_number(self.project): self.project}
        packages = PackageInstaller(storage_endpoint=storage_endpoint, root=Path(workdir) / "packages")
        self._kept = kept = open_stores(self._data_dir / "tfcloud-emulator" if self._data_dir else None)
        resources = PersistentResourceService(operations=operations, timings=self._timings,
                                              store=kept.persistent_resources)
        jobs = JobService(runner=self._runner, logs=self._logs, operations=operations, faults=self.faults,
                          timings=self._timings, project_ids=project_ids,
                          local_output_root=str(self._local_output_root or ""), packages=packages,
                          resources=resources, store=kept.custom_jobs)
        builds = BuildService(logs=self._logs, operations=operations, faults=self.faults,
                              docker_host=self._docker_host, storage_endpoint=storage_endpoint,
                              queued_seconds=self._timings.queued, reaper=self._reaper, store=kept.builds)
        logging_service = LoggingService(self._logs, self._stopping)
        tuning = TuningService(jobs=jobs, operations=operations, faults=self.faults, timings=self._timings,
                               store=kept.tuning_jobs)
        self._services = [tuning, jobs, builds, resources]  # tuning first: its trials are jobs

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="tfcloud-emulator"))
        server.add_generic_rpc_handlers((
            generic_handler(method_table(JobServiceGrpcTransport),
                            {**jobs.implementations(), **tuning.implementations()}, self.faults),
            generic_handler(method_table(PersistentResourceServiceGrpcTransport), resources.implementations(),
                            self.faults),
            generic_handler(method_table(CloudBuildGrpcTransport), builds.implementations(), self.faults),
            generic_handler(method_table(LoggingServiceV2GrpcTransport), logging_service.implementations(),
                            self.faults),
        ))
        operations_pb2_grpc.add_OperationsServicer_to_server(operations, server)
        server.add_generic_rpc_handlers(secret_manager_handlers(self.faults, project_ids))
        port = server.add_insecure_port(f"127.0.0.1:{self._port}")
        identity = make_identity()
        tls_port = server.add_secure_port(f"127.0.0.1:{self._tls_port}", grpc.ssl_server_credentials(
            [(identity.private_key, identity.certificate)]))
        roots_file = write_roots(identity, Path(workdir) / "tls" / "roots.pem")
        server.start()
        self._server = server
        endpoint = f"127.0.0.1:{port}"
        tls_endpoint = f"127.0.0.1:{tls_port}"
        env = {
            "TFCLOUD_EMULATOR_HOST": endpoint,
            "TFCLOUD_EMULATOR_API_ENDPOINT": tls_endpoint,
            ROOTS_VARIABLE: str(roots_file),
            "TFCLOUD_EMULATOR_LOCATION": self.location,
            "GOOGLE_CLOUD_PROJECT": self.project,
            "CLOUDSDK_CORE_PROJECT": self.project,
        }
        if storage_endpoint:
            env["STORAGE_EMULATOR_HOST"] = storage_endpoint
        jobs.replica_endpoints.update(
            (k, env[k]) for k in ("TFCLOUD_EMULATOR_HOST", "STORAGE_EMULATOR_HOST") if k in env)
        self._settings = EmulatorSettings(
            endpoint=endpoint, storage_endpoint=storage_endpoint, tls_endpoint=tls_endpoint,
            roots_file=str(roots_file), project=self.project,
            project_number=project_number(self.project), location=self.location,
            docker_host=self._docker_host, env=MappingProxyType(env))
        logger.info("emulator listening on %s (TLS: %s)", endpoint, tls_endpoint)
        return self._settings

    def stop(self) -> None:
        """Cancel running jobs and builds, stop their replicas, and stop every server. Idempotent."""
        self._stopping.set()
        for service in self._services:
            service.stop()
        self._services = []
        if self._logs is not None:
            self._logs.close()
        if self._server is not None:
            self._server.stop(grace=1).wait()
            self._server = None
        if self._runner is not None:
            self._runner.close()
            self._runner = None
        if self._storage is not None:
            self._storage.stop()
            self._storage = None
        if self._reaper is not None:
            self._reaper.close()
            self._reaper = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        self._settings = None

    def __enter__(self) -> Emulator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- where it is ---------------------------------------------------------------------------------------
    @property
    def settings(self) -> EmulatorSettings:
        if self._settings is None:
            raise RuntimeError("the emulator is not running: call start() first")
        return self._settings

    @property
    def kept(self) -> Any:
        """What the emulator keeps across restarts (:class:`tfcloud.emulator.store.Stores`: its ``directory``, None
        without ``data_dir``, and what each store served again from an earlier run). None until it started."""
        return self._kept

    @property
    def log_store(self) -> Any:
        """The Cloud Logging store (:class:`tfcloud.emulator.logs.LogStore`): every entry, and ``reads``, what
        each ``ListLogEntries`` answer served. None until the emulator started."""
        return self._logs

    @property
    def endpoint(self) -> str:
        return self.settings.endpoint

    @property
    def parent(self) -> str:
        """``projects/{project}/locations/{location}`` for the default project."""
        return f"projects/{self.project}/locations/{self.location}"

    # -- clients (the real libraries, on an insecure channel to the emulator) -------------------------------
    def channel(self) -> Any:
        """A new insecure gRPC channel to the emulator; close it (or the client that owns it) when done."""
        import grpc

        return grpc.insecure_channel(self.endpoint)

    def job_client(self) -> Any:
        """``aiplatform_v1.JobServiceClient`` bound to the emulator. Close with ``client.transport.close()``."""
        from google.cloud.aiplatform_v1 import JobServiceClient
        from google.cloud.aiplatform_v1.services.job_service.transports.grpc import JobServiceGrpcTransport

        return JobServiceClient(transport=JobServiceGrpcTransport(channel=self.channel()))

    def persistent_resource_client(self) -> Any:
        """``aiplatform_v1.PersistentResourceServiceClient`` bound to the emulator."""
        from google.cloud.aiplatform_v1 import PersistentResourceServiceClient
        from google.cloud.aiplatform_v1.services.persistent_resource_service.transports.grpc import (
            PersistentResourceServiceGrpcTransport,
        )

        return PersistentResourceServiceClient(transport=PersistentResourceServiceGrpcTransport(
            channel=self.channel()))

    def build_client(self) -> Any:
        """``cloudbuild_v1.CloudBuildClient`` bound to the emulator."""
        from google.cloud.devtools.cloudbuild_v1 import CloudBuildClient
        from google.cloud.devtools.cloudbuild_v1.services.cloud_build.transports.grpc import (
            CloudBuildGrpcTransport,
        )

        return CloudBuildClient(transport=CloudBuildGrpcTransport(channel=self.channel()))

    def logging_client(self) -> Any:
        """``logging_v2`` ``LoggingServiceV2Client`` bound to the emulator."""
        from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
        from google.cloud.logging_v2.services.logging_service_v2.transports.grpc import (
            LoggingServiceV2GrpcTransport,
        )

        return LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=self.channel()))

    def secret_client(self) -> Any:
        """``secretmanager_v1.SecretManagerServiceClient`` on the emulator's channel (tfcloud[cloud])."""
        from google.cloud.secretmanager_v1 import SecretManagerServiceClient
        from google.cloud.secretmanager_v1.services.secret_manager_service.transports.grpc import (
            SecretManagerServiceGrpcTransport,
        )

        return SecretManagerServiceClient(transport=SecretManagerServiceGrpcTransport(channel=self.channel()))

    def storage_client(self) -> Any:
        """``google.cloud.storage.Client`` bound to the storage emulator. Close with ``client.close()``."""
        import google.cloud.storage as storage
        from google.auth.credentials import AnonymousCredentials

        if self.settings.storage_endpoint is None:
            raise RuntimeError("the emulator runs without Cloud Storage (storage=False)")
        return storage.Client(project=self.project, credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                              client_options={"api_endpoint": self.settings.storage_endpoint})
