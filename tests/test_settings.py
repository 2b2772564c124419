from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tfcloud.cli import main
from tfcloud.errors import ConfigurationError, ValidationError
from tfcloud.flow.settings import Settings, gcloud_config, resolve_job_defaults, resolve_settings, user_config_path
from tfcloud.targets import LocalTarget, VertexTarget


def _pyproject(directory: Path, body: str) -> None:
    (directory / "pyproject.toml").write_text(body)


def _vertex(given: dict[str, object], *, environ: dict[str, str],
            cwd: Path) -> tuple[dict[str, object], dict[str, str]]:
    """The Vertex AI target's options a call leaves out, as the variables, files and gcloud give them."""
    return resolve_job_defaults(given, target=VertexTarget, environ=environ, cwd=cwd, jobs=False)


def test_settings_keep_only_what_is_no_targets() -> None:
    fields = set(Settings.__dataclass_fields__) - {"sources", "job_defaults"}
    assert fields == {"target", "image_repository", "docker_host", "image_build_bucket", "state_dir", "retry_deadline",
                      "cluster_idle_warn", "yes"}


def test_precedence_flag_env_pyproject_default(tmp_path: Path) -> None:
    _pyproject(tmp_path, '[tool.tfcloud]\nproject = "from-pyproject"\nregion = "europe-west4"\n'
                         'staging_bucket = "bkt"\n')
    sub = tmp_path / "src"
    sub.mkdir()
    env = {"TFCLOUD_PROJECT": "from-env", "TFCLOUD_REGION": "asia-east1"}
    values, sources = _vertex({"project": "from-flag", "region": None}, environ=env, cwd=sub)
    assert "project" not in values  # a flag beats env
    assert values["region"] == "asia-east1" and sources["region"] == "TFCLOUD_REGION"  # env beats pyproject
    assert values["staging_bucket"] == "bkt"  # pyproject beats default
    assert sources["staging_bucket"] == f"[tool.tfcloud] in {tmp_path / 'pyproject.toml'}"
    assert resolve_settings(environ={}, cwd=sub).target == "local"  # default
    assert _vertex({}, environ={}, cwd=tmp_path)[0]["region"] == "europe-west4"


def test_repository_defaults_to_artifact_registry(tmp_path: Path) -> None:
    settings = resolve_settings({}, environ={}, cwd=tmp_path)
    assert VertexTarget(project="my-proj").repository(settings) == "us-central1-docker.pkg.dev/my-proj/tfcloud"
    assert VertexTarget().repository(settings) is None
    mine = resolve_settings({"image_repository": "r.example/team/x"}, environ={}, cwd=tmp_path)
    assert VertexTarget(project="my-proj").repository(mine) == "r.example/team/x"


def test_unknown_pyproject_key_is_named(tmp_path: Path) -> None:
    _pyproject(tmp_path, '[tool.tfcloud]\nprojct = "x"\n')
    with pytest.raises(ConfigurationError) as err:
        resolve_settings(environ={}, cwd=tmp_path)
    assert err.value.message == f"Unknown key(s) in [tool.tfcloud] of {tmp_path / 'pyproject.toml'}: projct."


def test_wrong_type_in_pyproject(tmp_path: Path) -> None:
    _pyproject(tmp_path, "[tool.tfcloud]\nregion = 5\n")
    with pytest.raises(ConfigurationError) as err:
        _vertex({}, environ={}, cwd=tmp_path)
    assert str(err.value) == (f"Invalid `tool.tfcloud.region` in {tmp_path / 'pyproject.toml'}: expected a string, "
                              "received 5.")


# --- job defaults and the user's config ---------------------------------------------------------------------------
def _user_config(body: str) -> Path:
    """The user's config, where the autouse fixture's XDG_CONFIG_HOME puts it."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "tfcloud" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def test_job_defaults_precedence_env_pyproject_user_config(tmp_path: Path) -> None:
    user = _user_config('worker_count = 5\nps_count = 1\nchief_config = "t4_1x"\nspot = true\n')
    _pyproject(tmp_path, '[tool.tfcloud]\nworker_count = 2\nps_count = 0\nlabels = { team = "ml" }\n')
    environ = {**os.environ, "TFCLOUD_WORKER_COUNT": "3"}
    values, sources = resolve_job_defaults({}, environ=environ, cwd=tmp_path)
    project = f"[tool.tfcloud] in {tmp_path / 'pyproject.toml'}"
    assert values == {"worker_count": 3, "ps_count": 0, "chief_config": "t4_1x", "spot": True,
                      "job_labels": {"team": "ml"}}
    assert sources == {"worker_count": "TFCLOUD_WORKER_COUNT", "ps_count": project, "chief_config": str(user),
                       "spot": str(user), "labels": project}
    # an option the caller gives is left alone, whatever the files say
    values, sources = resolve_job_defaults({"worker_count": 1, "job_labels": None}, environ=environ, cwd=tmp_path)
    assert "worker_count" not in values and "job_labels" not in values and "labels" not in sources


def test_cli_flag_beats_every_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _user_config('worker_count = 5\nworker_config = "T4_1X"\n')
    _pyproject(tmp_path, '[tool.tfcloud]\nworker_count = 2\nstrategy = "parameter_server"\nps_count = 1\n')
    (tmp_path / "train.py").write_text("print('hi')\n")
    os.chdir(tmp_path)

    def plan(*flags: str) -> dict[str, object]:
        assert main(["submit", "train.py", "--dry-run", "--json", *flags]) == 0
        result: dict[str, object] = json.loads(capsys.readouterr().out)
        return result

    result = plan()
    assert [(p["role"], p["replicas"]) for p in result["pools"]] == [("chief", 1), ("worker", 2), ("ps", 1)]
    assert result["strategy"] == "tf.distribute.ParameterServerStrategy"
    assert result["sources"]["worker_count"] == {"value": 2, "from": f"[tool.tfcloud] in {tmp_path / 'pyproject.toml'}"}
    assert result["sources"]["worker_config"]["from"] == str(user_config_path())
    result = plan("--worker-count", "1", "--strategy", "auto", "--ps-count", "0")
    assert [(p["role"], p["replicas"]) for p in result["pools"]] == [("chief", 1), ("worker", 1)]
    assert "worker_count" not in result["sources"] and "strategy" not in result["sources"]


def test_requirements_path_is_relative_to_its_file(tmp_path: Path) -> None:
    _pyproject(tmp_path, '[tool.tfcloud]\nrequirements = "deps/requirements.txt"\n')
    sub = tmp_path / "src"
    sub.mkdir()
    values, _ = resolve_job_defaults({}, environ={}, cwd=sub)
    assert values == {"requirements_txt": str(tmp_path / "deps" / "requirements.txt")}


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("worker_count", '"two"', "an integer ≥ 0"),
    ("worker_count", "-1", "an integer ≥ 0"),
    ("spot", '"yes"', "true or false"),
    ("timeout", "0", "a number of seconds from 1 to 1209600 (14 days)"),
    ("labels", '{ team = 1 }', 'a table of strings (KEY = "VALUE")'),
    ("strategy", '"fastest"', "one of auto, one_device, mirrored, multi_worker_mirrored, parameter_server, tpu, "
                              "none"),
])
def test_bad_value_in_pyproject_names_file_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str,
                                                   value: str, expected: str) -> None:
    _pyproject(tmp_path, f"[tool.tfcloud]\n{key} = {value}\n")
    (tmp_path / "train.py").write_text("print('hi')\n")
    os.chdir(tmp_path)
    assert main(["submit", "train.py", "--vertex", "--dry-run"]) == 2  # spot, timeout: the vertex target's
    err = capsys.readouterr().err
    import tomllib

    received = repr(tomllib.loads(f"v = {value}")["v"])
    # a target option's hint gives a value that fits (its example) and the flag that overrides the file
    hint = "Give a value such as 3600 there, or remove it (a flag overrides it: --timeout).\n" \
        if key == "timeout" else ""
    assert err == (f"Error: Invalid `tool.tfcloud.{key}` in {tmp_path / 'pyproject.toml'}: expected {expected}, "
                   f"received {received}.\n{hint}")


def test_bad_machine_in_user_config_names_file_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _user_config('chief_config = "T5_1X"\n')
    (tmp_path / "train.py").write_text("print('hi')\n")
    assert main(["submit", str(tmp_path / "train.py"), "--dry-run"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith(f"Error: Invalid `chief_config` in {path}: expected a name from `tfcloud machines`, or "
                          '"auto" (CPU, ')
    assert err.endswith("received 'T5_1X'.")


def test_unknown_key_in_user_config(capsys: pytest.CaptureFixture[str], script: Path) -> None:
    path = _user_config("workers = 2\n")
    assert main(["submit", str(script), "--dry-run"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == f"Error: Unknown key(s) in {path}: workers."


def test_bad_env_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                          script: Path) -> None:
    monkeypatch.setenv("TFCLOUD_WORKER_COUNT", "x")
    assert main(["submit", str(script), "--dry-run"]) == 2
    assert capsys.readouterr().err == "Error: Invalid `TFCLOUD_WORKER_COUNT`: expected an integer ≥ 0, received 'x'.\n"
    monkeypatch.setenv("TFCLOUD_WORKER_COUNT", "1")
    monkeypatch.setenv("TFCLOUD_LABELS", "team=ml,stage")
    assert main(["submit", str(script), "--dry-run"]) == 2
    assert capsys.readouterr().err == ("Error: Invalid `TFCLOUD_LABELS`: expected KEY=VALUE[,KEY=VALUE...], received "
                                       "'team=ml,stage'.\n")


def test_tfcloud_config_names_the_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _user_config("worker_count = 5\n")
    other = tmp_path / "team.toml"
    other.write_text('worker_count = 7\nproject = "team-project"\n')
    monkeypatch.setenv("TFCLOUD_CONFIG", str(other))
    assert user_config_path() == other
    values, sources = resolve_job_defaults({}, cwd=tmp_path)  # every built-in target's options too
    assert values == {"worker_count": 7, "project": "team-project"}
    assert sources == {"worker_count": str(other), "project": str(other)}
    values, sources = _vertex({}, environ=dict(os.environ), cwd=tmp_path)
    assert values["project"] == "team-project" and sources["project"] == str(other)
    monkeypatch.setenv("TFCLOUD_CONFIG", str(tmp_path / "missing.toml"))  # absent: no user config
    assert resolve_job_defaults({}, cwd=tmp_path) == ({}, {})


# --- gcloud's configuration ---------------------------------------------------------------------------------------
def _gcloud(base: Path, name: str, body: str, *, active: bool = True) -> Path:
    (base / "configurations").mkdir(parents=True, exist_ok=True)
    if active:
        (base / "active_config").write_text(name + "\n")
    path = base / "configurations" / f"config_{name}"
    path.write_text(body)
    return path


def test_project_and_region_fall_back_to_gcloud(tmp_path: Path) -> None:
    path = _gcloud(tmp_path / "gcloud", "work", "[core]\nproject = gc-project\naccount = me@example.com\n"
                                                "[compute]\nregion = europe-west1\n[ai]\nregion = europe-west4\n")
    environ = {"CLOUDSDK_CONFIG": str(tmp_path / "gcloud")}
    values, sources = _vertex({}, environ=environ, cwd=tmp_path)
    assert (values["project"], values["region"]) == ("gc-project", "europe-west4")  # [ai] region before [compute]
    assert sources["project"] == sources["region"] == f"gcloud configuration {path}"
    # only for Vertex AI: a local run does not read them
    assert resolve_job_defaults({}, target=LocalTarget, environ=environ, cwd=tmp_path, jobs=False) == ({}, {})
    # a value the call gives is not looked up
    assert "project" not in _vertex({"project": "given-project"}, environ=environ, cwd=tmp_path)[0]
    # anything tfcloud's own settings say wins: env, pyproject, the user's config, other tools' variables
    _pyproject(tmp_path, '[tool.tfcloud]\nregion = "asia-east1"\n')
    values, sources = _vertex({}, environ={**environ, "GOOGLE_CLOUD_PROJECT": "env-project"}, cwd=tmp_path)
    assert (values["project"], values["region"]) == ("env-project", "asia-east1")
    assert sources["project"] == "GOOGLE_CLOUD_PROJECT"


def test_gcloud_compute_region_and_named_configuration(tmp_path: Path) -> None:
    base = tmp_path / "gcloud"
    _gcloud(base, "default", "[core]\nproject = default-project\n")
    _gcloud(base, "other", "[core]\nproject = other-project\n[compute]\nregion = us-east1\n", active=False)
    assert gcloud_config({"CLOUDSDK_CONFIG": str(base)})[0] == {"project": "default-project"}
    chosen = {"CLOUDSDK_CONFIG": str(base), "CLOUDSDK_ACTIVE_CONFIG_NAME": "other"}
    assert gcloud_config(chosen)[0] == {"project": "other-project", "region": "us-east1"}
    assert gcloud_config({"CLOUDSDK_CONFIG": str(tmp_path / "none")}) == ({}, None)
    (base / "configurations" / "config_default").write_text("not an ini file [")
    assert gcloud_config({"CLOUDSDK_CONFIG": str(base)}) == ({}, None)


def test_plan_says_where_project_came_from(tmp_path: Path, capsys: pytest.CaptureFixture[str], script: Path) -> None:
    path = _gcloud(Path(os.environ["CLOUDSDK_CONFIG"]), "default", "[core]\nproject = gc-project-1\n")
    assert main(["submit", str(script), "--vertex", "--dry-run"]) == 0
    out = capsys.readouterr().err
    assert f"Setting: project = gc-project-1 (from gcloud configuration {path})" in out


def test_a_flag_given_with_the_default_value_still_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _pyproject(tmp_path, "[tool.tfcloud]\nworker_count = 2\n")
    (tmp_path / "train.py").write_text("print('hi')\n")
    os.chdir(tmp_path)
    assert main(["submit", "train.py", "--dry-run", "--json", "--worker-count", "0"]) == 0
    assert [p["role"] for p in json.loads(capsys.readouterr().out)["pools"]] == ["chief"]


def test_build_reads_the_job_defaults_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _pyproject(tmp_path, '[tool.tfcloud]\nrequirements = 3\n')
    (tmp_path / "train.py").write_text("print('hi')\n")
    os.chdir(tmp_path)
    assert main(["build", "train.py"]) == 2
    assert capsys.readouterr().err == (f"Error: Invalid `tool.tfcloud.requirements` in {tmp_path / 'pyproject.toml'}: "
                                       "expected a path (a string), received 3.\n")


# -- one rule per setting, whichever source gives it ------------------------------------------------------------
@pytest.mark.parametrize("target", [[], ["--vertex"]], ids=["local", "vertex"])
def test_a_region_in_pyproject_is_checked_as_the_flag_is(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         target: list[str]) -> None:
    """Another target's option in the file (Vertex AI's region on a local run) is checked too: never accepted
    silently to fail the day that target is chosen."""
    _pyproject(tmp_path, "[tool.tfcloud]\nregion = 5\n")
    (tmp_path / "train.py").write_text("print('hi')\n")
    os.chdir(tmp_path)
    assert main(["submit", "train.py", *target, "--dry-run"]) == 2
    assert capsys.readouterr().err == (f"Error: Invalid `tool.tfcloud.region` in {tmp_path / 'pyproject.toml'}: "
                                       "expected a string, received 5.\n")
    _pyproject(tmp_path, '[tool.tfcloud]\nregion = "mars-1"\n')
    assert main(["submit", "train.py", *target, "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith(
        f"Error: Invalid `tool.tfcloud.region` in {tmp_path / 'pyproject.toml'}: expected a region Vertex AI serves "
        "custom training in, such as us-central1, received 'mars-1'.")
    _pyproject(tmp_path, '[tool.tfcloud]\nregion = "europe-west4"\n')
    assert main(["submit", "train.py", "--dry-run"]) == 0  # a good one is kept for the day --vertex is given


@pytest.mark.parametrize("target", [[], ["--vertex"]], ids=["local", "vertex"])
def test_a_region_in_the_environment_names_the_variable(monkeypatch: pytest.MonkeyPatch, script: Path,
                                                        capsys: pytest.CaptureFixture[str], target: list[str]) -> None:
    monkeypatch.setenv("TFCLOUD_REGION", "5")
    assert main(["submit", str(script), *target, "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith("Error: Invalid `TFCLOUD_REGION`: expected a region Vertex AI serves "
                                              "custom training in, such as us-central1, received '5'.")


@pytest.mark.parametrize(("name", "bad", "expected"), [
    ("target", "mars", '"local" or "vertex" or "ray"'),
    ("yes", "maybe", "1, true, yes, on, 0, false, no or off"),
    ("retry_deadline", "soon", "a number of seconds > 0"),
    ("cluster_idle_warn", "soon", "a duration such as 30m, 1h or 1d, or off"),
    ("docker_host", "nothing", "a Docker engine address: unix:///PATH, tcp://HOST:PORT, ssh://HOST, "
                               "npipe:////./pipe/NAME, http(s)://HOST:PORT"),
    ("image_repository", "UP/x", "an image repository such as us-central1-docker.pkg.dev/my-project/tfcloud "
                                 "(no tag, lowercase)"),
])
def test_every_setting_has_one_rule_for_every_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                                                     bad: str, expected: str) -> None:
    """The same rule refuses the same value from a keyword (naming the setting), a variable (naming it), the
    project's file and the user's (naming the file and key)."""
    with pytest.raises(ValidationError) as raised:
        resolve_settings({name: bad}, environ={}, cwd=tmp_path)
    assert (raised.value.field, raised.value.expected) == (name, expected)
    var = "TFCLOUD_HOME" if name == "state_dir" else f"TFCLOUD_{name.upper()}"
    with pytest.raises(ConfigurationError) as err:
        resolve_settings({}, environ={var: bad}, cwd=tmp_path)
    assert err.value.message == f"Invalid `{var}`: expected {expected}, received {bad!r}."
    _pyproject(tmp_path, f'[tool.tfcloud]\n{name} = "{bad}"\n')
    with pytest.raises(ConfigurationError) as err:
        resolve_settings({}, environ={}, cwd=tmp_path)
    assert err.value.message == (f"Invalid `tool.tfcloud.{name}` in {tmp_path / 'pyproject.toml'}: expected "
                                 f"{expected}, received {bad!r}.")
    (tmp_path / "pyproject.toml").unlink()
    user = _user_config(f'{name} = "{bad}"\n')
    with pytest.raises(ConfigurationError) as err:
        resolve_settings({}, environ=dict(os.environ), cwd=tmp_path)
    assert err.value.message == f"Invalid `{name}` in {user}: expected {expected}, received {bad!r}."


def test_a_region_from_gcloud_names_its_file_and_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], script: Path) -> None:
    base = tmp_path / "gcloud"
    _gcloud(base, "default", "[core]\nproject = my-project\n[compute]\nregion = mars-1\n")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(base))
    assert main(["submit", str(script), "--vertex", "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith(
        f"Error: Invalid `[compute] region` in the gcloud configuration {base / 'configurations' / 'config_default'}: "
        "expected a region Vertex AI serves custom training in, such as us-central1, received 'mars-1'.")
    assert main(["submit", str(script), "--vertex", "--region", "us-east1", "--dry-run"]) == 0  # the flag wins


def test_labels_from_a_file_follow_googles_rule_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                script: Path) -> None:
    _pyproject(tmp_path, '[tool.tfcloud]\nlabels = { team = "ML" }\n')
    os.chdir(tmp_path)
    assert main(["submit", str(script), "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith(f"Error: Invalid `tool.tfcloud.labels['team']` in "
                                              f"{tmp_path / 'pyproject.toml'}: expected a value of up to 63 ")
    _pyproject(tmp_path, '[tool.tfcloud]\nlabels = { "équipe" = "données" }\n')
    assert main(["submit", str(script), "--dry-run"]) == 0


def test_the_image_build_bucket_setting_makes_cloud_build_the_builder(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], script: Path) -> None:
    """The setting, as ``--image-build-bucket`` does for one job (the flag wins); a local run takes no image."""
    monkeypatch.setenv("TFCLOUD_IMAGE_BUILD_BUCKET", "my-builds")

    def builder(*flags: str) -> str:
        assert main(["submit", str(script), *flags, "--dry-run"]) == 0
        captured = capsys.readouterr()
        return next((line for line in (captured.out + captured.err).splitlines() if line.startswith("Builder:")), "")

    assert builder("--vertex") == "Builder: Cloud Build (sources staged in gs://my-builds)"
    assert builder("--vertex", "--image-build-bucket", "theirs") == "Builder: Cloud Build (sources staged in gs://theirs)"
    assert builder() == ""  # the local target builds no image
    monkeypatch.setenv("TFCLOUD_IMAGE_BUILD_BUCKET", "goog-builds")
    assert main(["submit", str(script), "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith("Error: Invalid `TFCLOUD_IMAGE_BUILD_BUCKET`: expected a Cloud Storage "
                                              "bucket name")
