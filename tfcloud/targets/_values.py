"""Targets: *where* a job runs, as frozen values, each with its own options (XManager's executor).

The :class:`~tfcloud.spec.JobSpec` says *what* runs; its ``target`` is one of these values. A target knows
its registry name (:data:`tfcloud.backends.BACKENDS` maps it to the backend class) and whether the job runs
from a container image (``container``: the stages build one before the backend submits) or from a Python source
distribution of its files (``packaged``: the stages build and upload that instead).

- :class:`LocalTarget`: processes on this machine (or containers from the job's image: ``container``), restarts,
  output directory (the state dir is a setting).
- :class:`VertexTarget`: a Vertex AI CustomJob: project, region, network, spot, timeout, restarts, output
  directory, service account.
- :class:`RayTarget`: a Ray cluster by address.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = ["TARGETS", "AnyTarget", "LocalTarget", "RayTarget", "VertexTarget"]


@dataclass(frozen=True, kw_only=True)
class LocalTarget:
    """One process per replica on this machine, on loopback.

    - ``container``: each replica runs the job's image on the local Docker engine instead (built, not pushed).
    - ``max_restarts``: how often the supervisor restarts the whole cluster when a replica fails.
    - ``output_dir``: the base of the ``AIP_*`` directories (a directory or ``gs://``); None: the job's own
      ``output/``. See docs/recovery.md.
    """

    name: ClassVar[str] = "local"
    packaged: ClassVar[bool] = False
    container: bool = False
    max_restarts: int = 0
    output_dir: str | None = None

    @property
    def ships_files(self) -> bool:
        """The job's files travel to where it runs (in an image, or Ray's runtime environment): the launcher
        names the script relative to the build root. Else replicas run in the user's own directory."""
        return self.container


@dataclass(frozen=True, kw_only=True)
class VertexTarget:
    """A Vertex AI CustomJob. ``project``/``region`` None: the settings' (the backend says when there is no
    project). ``build`` False (``--no-build``): no image; the job's files go as a Python package to the staging
    bucket and run on Google's prebuilt TensorFlow training image (``python_package_spec``)."""

    name: ClassVar[str] = "vertex"
    ships_files: ClassVar[bool] = True

    project: str | None = None
    region: str | None = None
    network: str | None = None  # projects/NUMBER/global/networks/NAME
    spot: bool = False
    timeout_s: int | None = None
    restart_on_worker_restart: bool = False
    base_output_dir: str | None = None  # gs://... ; Vertex AI sets AIP_MODEL_DIR etc. under it
    service_account: str | None = None
    max_restarts: int | None = None  # as Vertex AI's restart options (vertex_request.restart_scheduling)
    build: bool = True

    @property
    def container(self) -> bool:
        """The job runs from an image the stages build (not with ``--no-build``)."""
        return self.build

    @property
    def packaged(self) -> bool:
        """The job runs from a Python package of its files on a prebuilt image (``--no-build``)."""
        return not self.build


@dataclass(frozen=True, kw_only=True)
class RayTarget:
    """A Ray cluster, by its dashboard's address (``http://HEAD:8265``). ``address`` None: the settings'
    (``TFCLOUD_RAY_ADDRESS``, then ``RAY_ADDRESS``)."""

    name: ClassVar[str] = "ray"
    container: ClassVar[bool] = False
    packaged: ClassVar[bool] = False
    ships_files: ClassVar[bool] = True

    address: str | None = None


AnyTarget = LocalTarget | VertexTarget | RayTarget

#: The targets ``run(target=...)`` and ``--local/--vertex`` accept, by name (one line per target).
TARGETS: dict[str, type[AnyTarget]] = {
    LocalTarget.name: LocalTarget,
    VertexTarget.name: VertexTarget,
    RayTarget.name: RayTarget,
}
