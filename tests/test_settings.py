from __future__ import annotations

from pathlib import Path

import pytest

from tfcloud.errors import ConfigurationError
from tfcloud.settings import resolve_settings


def _pyproject(directory: Path, body: str) -> None:
    (directory / "pyproject.toml").write_text(body)


def test_precedence_flag_env_pyproject_default(tmp_path: Path) -> None:
    _pyproject(tmp_path, '[tool.tfcloud]\nproject = "from-pyproject"\nregion = "europe-west4"\n'
                         'staging_bucket = "bkt"\n')
    sub = tmp_path / "src"
    sub.mkdir()
    env = {"TFCLOUD_PROJECT": "from-env", "TFCLOUD_REGION": "asia-east1"}
    settings = resolve_settings({"project": "from-flag", "region": None}, environ=env, cwd=sub)
    assert settings.project == "from-flag"  # flag beats env
    assert settings.region == "asia-east1"  # env beats pyproject
    assert settings.staging_bucket == "bkt"  # pyproject beats default
    assert settings.target == "local"  # default
    assert resolve_settings(environ={}, cwd=tmp_path).region == "europe-west4"


def test_repository_defaults_to_artifact_registry(tmp_path: Path) -> None:
    settings = resolve_settings({"project": "my-proj"}, environ={}, cwd=tmp_path)
    assert settings.repository == "us-central1-docker.pkg.dev/my-proj/tfcloud"


def test_unknown_pyproject_key_is_named(tmp_path: Path) -> None:
    _pyproject(tmp_path, '[tool.tfcloud]\nprojct = "x"\n')
    with pytest.raises(ConfigurationError) as err:
        resolve_settings(environ={}, cwd=tmp_path)
    assert err.value.message == f"Unknown key(s) in [tool.tfcloud] of {tmp_path / 'pyproject.toml'}: projct."


def test_wrong_type_in_pyproject(tmp_path: Path) -> None:
    _pyproject(tmp_path, "[tool.tfcloud]\nregion = 5\n")
    with pytest.raises(ConfigurationError) as err:
        resolve_settings(environ={}, cwd=tmp_path)
    assert str(err.value) == (f"Invalid setting `region`: expected a string, received 5 (in [tool.tfcloud] of "
                              f"{tmp_path / 'pyproject.toml'}).")
