"""The :class:`Settings` value: where jobs go and how tfcloud reaches it. A value below every stage and every
target (they receive one); :mod:`tfcloud.settings` resolves it from flags, ``TFCLOUD_*`` variables and config
files, and re-exports it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Settings"]


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Where jobs go and how tfcloud reaches it. Each field's env var is ``TFCLOUD_<FIELD>``."""

    target: str = "local"
    project: str | None = None
    region: str = "us-central1"
    staging_bucket: str | None = None
    image_repository: str | None = None  # default: {region}-docker.pkg.dev/{project}/tfcloud
    emulator_host: str | None = None  # host:port of the tfcloud emulator (Vertex AI, Cloud Build, Logging)
    docker_host: str | None = None
    state_dir: str | None = None  # where local jobs keep their directories (TFCLOUD_HOME)
    retry_deadline: str | None = None  # seconds to keep retrying a Google Cloud call that fails transiently
    yes: str | None = None  # "1"/"true": submit a paid job without asking first (tfcloud.printers.confirm_launch)
    #: setting name -> where its value came from ("--flag", "TFCLOUD_REGION", "[tool.tfcloud] in PATH", ...);
    #: a setting left at its default has no entry.
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    #: the job defaults the environment and config files supplied (JOB_DEFAULTS keys), set by tfcloud.sdk
    job_defaults: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def repository(self) -> str | None:
        if self.image_repository:
            return self.image_repository
        if self.project:
            return f"{self.region}-docker.pkg.dev/{self.project}/tfcloud"
        return None
