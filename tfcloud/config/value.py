"""The :class:`Settings` value: what is no one target's (the default target, the image repository, the Docker
engine, the state directory, deadlines). A value below every stage and every target (they receive one);
:mod:`tfcloud.flow.settings` resolves it from flags, ``TFCLOUD_*`` variables and config files, and re-exports it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Settings"]


@dataclass(frozen=True, kw_only=True)
class Settings:
    """What is no one target's: the target chosen by default, the image repository, the builder (the Docker engine,
    or Cloud Build with a bucket), the state
    directory, the deadlines and the launch confirmation. Each field's env var is ``TFCLOUD_<FIELD>``. A target's
    own settings (Vertex AI's ``project``, ``region``, ``staging_bucket``, ``emulator_host``; Ray's
    ``ray_address``) are its options: they resolve into the target value (:func:`tfcloud.flow.where.resolve`)."""

    target: str = "local"
    image_repository: str | None = None  # default: the target's (Vertex AI: {region}-docker.pkg.dev/{project}/tfcloud)
    docker_host: str | None = None
    #: A Cloud Storage bucket: build images with Cloud Build (its sources go there) instead of the Docker engine;
    #: ``--image-build-bucket`` (``DockerConfig.image_build_bucket``) overrides it for one job.
    image_build_bucket: str | None = None
    state_dir: str | None = None  # where local jobs keep their directories (TFCLOUD_HOME)
    retry_deadline: str | None = None  # seconds to keep retrying a Google Cloud call that fails transiently
    #: How long a persistent cluster may sit idle before a tfcloud command warns (once a day per cluster): a
    #: duration (default 1h), or "off".
    cluster_idle_warn: str | None = None
    yes: str | None = None  # "1"/"true": submit a paid job without asking first (tfcloud.view.printers.confirm_launch)
    #: setting or option name -> where its value came from ("--project", "-o spot", "project= (keyword)",
    #: "TFCLOUD_REGION", "[tool.tfcloud] in PATH", "gcloud configuration PATH", ...); a value left at its default
    #: has no entry.
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: the job defaults the environment and config files supplied (JOB_DEFAULTS keys), set by tfcloud.sdk
    job_defaults: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)
