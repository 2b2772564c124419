"""The frozen job spec: *what* runs. Built once from the user's arguments (:mod:`tfcloud.flow.validate`), then
passed unchanged through every stage. *Where* it runs is not part of it: the stages take the spec and its
target (a value from :mod:`tfcloud.targets` with that target's own options: a Vertex AI project, region,
network...) side by side, as Ray's ``submit_job`` takes a job beside the client that knows the cluster. The spec
is never subclassed per backend. How a call behaves (``dry_run``, ``stream_logs``) is not part of the spec.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from tfcloud.google.catalog.machines import MachineConfig
from tfcloud.job.datasets import DataSet

if TYPE_CHECKING:
    pass

__all__ = ["DockerConfig", "EntryPointKind", "JobSpec", "PoolSpec", "Role", "Strategy"]


class Strategy(enum.Enum):
    """The distribution strategy the launcher sets up. ``NONE``: the user's script sets up its own."""

    ONE_DEVICE = "one_device"
    MIRRORED = "mirrored"
    MULTI_WORKER_MIRRORED = "multi_worker_mirrored"
    PARAMETER_SERVER = "parameter_server"
    TPU = "tpu"
    NONE = "none"

    @property
    def tf_class(self) -> str:
        return {
            Strategy.ONE_DEVICE: "tf.distribute.OneDeviceStrategy",
            Strategy.MIRRORED: "tf.distribute.MirroredStrategy",
            Strategy.MULTI_WORKER_MIRRORED: "tf.distribute.MultiWorkerMirroredStrategy",
            Strategy.PARAMETER_SERVER: "tf.distribute.ParameterServerStrategy",
            Strategy.TPU: "tf.distribute.TPUStrategy",
            Strategy.NONE: "(the script's own)",
        }[self]

    @property
    def needs_tf_keras(self) -> bool:
        """Keras 3 cannot ``fit`` under these strategies (keras-team/keras#20585): route Keras to tf-keras."""
        return self in (Strategy.MULTI_WORKER_MIRRORED, Strategy.PARAMETER_SERVER)


class Role(enum.Enum):
    """A worker pool's role, in Vertex AI's pool order."""

    CHIEF = "chief"
    WORKER = "worker"
    PS = "ps"
    EVALUATOR = "evaluator"


class EntryPointKind(enum.Enum):
    SCRIPT = "script"
    NOTEBOOK = "notebook"


@dataclass(frozen=True, kw_only=True)
class DockerConfig:
    """How the image is built (tensorflow-cloud's ``DockerConfig``, same argument names).

    - ``image``: the full image URI to build and push (or to use as is, when it already exists).
    - ``parent_image``: the base image; default: the official TensorFlow image for the installed version.
    - ``cache_from``: an image to take build cache from.
    - ``image_build_bucket``: a GCS bucket; when set, the image is built with Cloud Build instead of Docker.
    """

    image: str | None = None
    parent_image: str | None = None
    cache_from: str | None = None
    image_build_bucket: str | None = None

    # tensorflow-cloud took these positionally; keep that working.
    def __init__(self, image: str | None = None, parent_image: str | None = None,
                 cache_from: str | None = None, image_build_bucket: str | None = None) -> None:
        object.__setattr__(self, "image", image)
        object.__setattr__(self, "parent_image", parent_image)
        object.__setattr__(self, "cache_from", cache_from)
        object.__setattr__(self, "image_build_bucket", image_build_bucket)


@dataclass(frozen=True, kw_only=True)
class PoolSpec:
    """One worker pool: a role, how many replicas, on which machine."""

    role: Role
    replica_count: int
    machine: MachineConfig


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """Everything that determines what the job does. Frozen; build it with :func:`tfcloud.flow.validate.build_spec`."""

    entry_point: Path
    entry_point_kind: EntryPointKind
    entry_point_args: tuple[str, ...] = ()
    requirements_txt: Path | None = None
    pools: tuple[PoolSpec, ...]
    strategy: Strategy
    strategy_reason: str
    docker_config: DockerConfig = field(default_factory=DockerConfig)
    job_labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    display_name: str
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    context_dir: Path | None = None  # the image's build context (default: the entry point's directory)
    #: ``--secret``: NAME -> a reference to its value (tfcloud.job.secretrefs); the value itself is never here.
    secrets: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: ``--data``: the data sets every replica reads (tfcloud.job.datasets); their paths are set at submit.
    data: tuple[DataSet, ...] = ()

    def pool(self, role: Role) -> PoolSpec | None:
        for p in self.pools:
            if p.role is role:
                return p
        return None

    @property
    def chief(self) -> PoolSpec:
        chief = self.pool(Role.CHIEF)
        assert chief is not None  # build_spec always adds one
        return chief

    @property
    def replica_count(self) -> int:
        return sum(p.replica_count for p in self.pools)

    @property
    def has_gpu(self) -> bool:
        return any(p.machine.is_gpu for p in self.pools)

    @property
    def has_tpu(self) -> bool:
        return any(p.machine.is_tpu for p in self.pools)

    @property
    def build_root(self) -> Path:
        """The directory whose files go into the image: ``context_dir``, else the entry point's directory."""
        return self.context_dir or self.workdir

    @property
    def workdir(self) -> Path:
        """The directory the entry point lives in: the job's working directory and default build context."""
        return self.entry_point.parent
