"""Settings, resolved in one place: CLI flag > ``TFCLOUD_*`` environment variable > ``[tool.tfcloud]`` in the
nearest pyproject.toml > default. Library code receives a :class:`Settings`; it never reads globals.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from tfcloud.errors import ConfigurationError

__all__ = ["Settings", "find_pyproject", "resolve_settings"]


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
    ray_address: str | None = None  # a Ray cluster's dashboard, http://HEAD:8265 (also RAY_ADDRESS)
    ray_cpus: str | None = None  # CPUs each replica reserves on Ray (default: its machine config's cores)

    @property
    def repository(self) -> str | None:
        if self.image_repository:
            return self.image_repository
        if self.project:
            return f"{self.region}-docker.pkg.dev/{self.project}/tfcloud"
        return None


_ENV_NAMES = {f.name: f"TFCLOUD_{f.name.upper()}" for f in fields(Settings)}
_ENV_NAMES["state_dir"] = "TFCLOUD_HOME"
#: Other tools' variables, read after tfcloud's own.
_FALLBACK_ENV = {"project": ("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"), "docker_host": ("DOCKER_HOST",),
                 "ray_address": ("RAY_ADDRESS",)}


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _pyproject_table(start: Path) -> tuple[Mapping[str, object], Path | None]:
    path = find_pyproject(start)
    if path is None:
        return {}, None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"Could not read {path}: {exc}") from exc
    table = data.get("tool", {}).get("tfcloud", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f"[tool.tfcloud] in {path} must be a table.")
    return table, path


def resolve_settings(
    flags: Mapping[str, object] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Resolve every setting. ``flags`` holds explicit values (CLI options, ``run()`` keywords); ``None``
    values count as not given."""
    flags = flags or {}
    environ = os.environ if environ is None else environ
    table, path = _pyproject_table(cwd or Path.cwd())
    known = {f.name for f in fields(Settings)}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigurationError(
            f"Unknown key(s) in [tool.tfcloud] of {path}: {', '.join(unknown)}.",
            hint="Known keys: " + ", ".join(sorted(known)) + ".",
        )
    values: dict[str, str] = {}
    for name in known:
        fallbacks = [environ.get(var) or None for var in _FALLBACK_ENV.get(name, ())]
        for source in (flags.get(name), environ.get(_ENV_NAMES[name]) or None, table.get(name), *fallbacks):
            if source is not None:
                if not isinstance(source, str):
                    raise ConfigurationError(
                        f"Invalid setting `{name}`: expected a string, received {source!r}"
                        + (f" (in [tool.tfcloud] of {path})." if source is table.get(name) else "."))
                values[name] = source
                break
    return Settings(**values)
