"""Bad input on the surfaces added last (issue 29): ``-o`` (a target's options only), clusters, and one
control-character rule for every text value. As in tests/test_bad_inputs.py, every row exits 2 naming its
field, without a traceback, and changes nothing: no job or build on the emulator, no persistent resource, no
local job or study, no temporary file, nothing in the working directory."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import tfcloud
from tfcloud.cli import main
from tfcloud.errors import TfcloudError
from tfcloud.pytest_plugin import tfcloud_emulator  # noqa: F401 (the fixture, also without the plugin entry point)


@dataclass(frozen=True)
class Case:
    id: str
    how: str  # "cli": argv for `tfcloud`; "run": keywords for tfcloud.run(); "call": a function of the files' dir
    args: Any
    field: str  # the field the message names (between backticks)
    env: dict[str, str] = field(default_factory=dict)


def submit(id: str, extra: list[str], name: str, **env: str) -> Case:
    return Case(id, "cli", ["submit", "{d}/train.py", *extra, "--detach"], name, env)


def cli(id: str, argv: list[str], name: str, **env: str) -> Case:
    return Case(id, "cli", argv, name, env)


def run(id: str, kwargs: dict[str, Any], name: str, **env: str) -> Case:
    return Case(id, "run", kwargs, name, env)


V = "--vertex"
SA = "trainer@tfcloud-test.iam.gserviceaccount.com"
CASES: list[Case] = [
    # --- 2. -o is the chosen target's options only --------------------------------------------------------------
    submit("o-target-under-local", ["--local", "-o", "target=vertex"], "-o target"),
    submit("o-target-default", ["-o", "target=vertex"], "-o target"),
    submit("o-display-name", [V, "-o", "display_name=x"], "-o display_name"),
    submit("o-worker-count", [V, "-o", "worker_count=3"], "-o worker_count"),
    submit("o-requirements", [V, "-o", "requirements_txt=/etc/passwd"], "-o requirements_txt"),
    submit("o-env", [V, "-o", "env=A=1"], "-o env"),
    submit("o-other-targets-option", ["--local", "-o", "spot=true"], "-o spot"),
    submit("o-twice", [V, "-o", "timeout=60", "-o", "timeout=70"], "-o timeout"),
    submit("o-beside-its-flag", [V, "--spot", "-o", "spot=true"], "-o spot"),
    submit("o-beside-its-value-flag", [V, "--timeout", "60", "-o", "timeout=60"], "-o timeout"),
    submit("o-no-equals", [V, "-o", "spot"], "-o"),
    submit("o-typed-by-env-target-bad", ["-o", "spot=maybe"], "spot", TFCLOUD_TARGET="vertex"),
    submit("o-key-newline", [V, "-o", "spot\n=true"], "-o"),
    submit("o-value-newline", [V, "-o", "region=us-central1\n"], "-o region"),
    cli("o-tune-worker-count", ["tune", "{d}/train.py", "--metric", "acc", "--param", "lr=double:0.1:1",
                                "-o", "worker_count=2"], "-o worker_count"),
    run("o-run-job-key", {"target": "vertex", "target_options": {"display_name": "x"}}, "-o display_name"),
    run("o-run-and-keyword", {"target": "vertex", "spot": True, "target_options": {"spot": True}}, "-o spot"),
    run("o-run-not-mapping", {"target": "vertex", "target_options": ["spot"]}, "target_options"),
    # --- 6. one control-character rule, before any stripping or matching -----------------------------------
    submit("ctl-scheduling", [V, "--scheduling", "spot\n"], "scheduling"),
    submit("ctl-persistent-resource", [V, "--persistent-resource", "pr1\n"], "persistent_resource"),
    submit("ctl-experiment", [V, "--experiment", "exp1\n"], "experiment"),
    submit("ctl-tensorboard", [V, "--tensorboard", "projects/p/locations/us-central1/tensorboards/1\n",
                               "--service-account", SA, "--output-dir", "gs://bkt/out"], "tensorboard"),
    submit("ctl-reservation", [V, "--reservation", "any\n", "--service-account", SA], "reservation"),
    submit("ctl-max-wait", [V, "--scheduling", "flex-start", "--max-wait", "1h\n", "--chief-config", "A100_1X"],
           "max_wait"),
    submit("ctl-env-target-setting", [], "TFCLOUD_SCHEDULING", TFCLOUD_TARGET="vertex", TFCLOUD_SCHEDULING="spot\n"),
    submit("tensorboard-superscript", [V, "--tensorboard", "\u00b2", "--service-account", SA, "--output-dir",
                                       "gs://bkt/out"], "tensorboard"),
    submit("tensorboard-arabic-digits", [V, "--tensorboard", "\u0661\u0662\u0663", "--service-account", SA,
                                         "--output-dir", "gs://bkt/out"], "tensorboard"),
    submit("experiment-run-other-region", [V, "--experiment", "exp1", "--experiment-run",
                                           "projects/p/locations/europe-west4/metadataStores/default/contexts/exp1-r1"],
           "experiment_run"),
    submit("experiment-run-other-experiment", [V, "--experiment", "exp1", "--experiment-run",
                                               "projects/p/locations/us-central1/metadataStores/default/contexts/"
                                               "exp2-r1"], "experiment_run"),
    submit("persistent-resource-other-project", [V, "--persistent-resource",
                                                 "projects/other-proj/locations/us-central1/persistentResources/c1"],
           "persistent_resource"),
    submit("persistent-resource-other-region", [V, "--persistent-resource",
                                                "projects/tfcloud-test/locations/europe-west4/persistentResources/c1"],
           "persistent_resource"),
    cli("ctl-tune-param-name", ["tune", "{d}/train.py", "--metric", "acc", "--param", "l\nr=double:0.1:1"],
        "param"),
    run("ctl-run-scheduling", {"target": "vertex", "scheduling": "spot\n"}, "scheduling"),
    run("ctl-run-persistent-resource", {"target": "vertex", "persistent_resource": "pr1\n"}, "persistent_resource"),
    # --- 3. clusters: checked before any call -----------------------------------------------------------------
    cli("cluster-delete-path", ["cluster", "delete", "../../x"], "cluster_id"),
    cli("cluster-delete-newline", ["cluster", "delete", "c1\n"], "cluster_id"),
    cli("cluster-delete-other-project", ["cluster", "delete",
                                         "projects/other-proj/locations/us-central1/persistentResources/c1"],
        "cluster_id"),
    cli("cluster-create-path", ["cluster", "create", "../../x"], "cluster_id"),
    cli("cluster-create-network", ["cluster", "create", "c1", "--network", "default"], "network"),
    cli("cluster-create-display-newline", ["cluster", "create", "c1", "--display-name", "a\nb"], "display_name"),
    cli("cluster-create-display-long", ["cluster", "create", "c1", "--display-name", "d" * 200], "display_name"),
    cli("cluster-create-tpu-chief", ["cluster", "create", "c1", "--chief-config", "TPU"], "chief_config"),
    cli("cluster-create-label", ["cluster", "create", "c1", "--label", "tfcloud-submission=x"], "labels"),
    Case("sdk-create-cluster", "call", lambda d: clusters().create_cluster("../../x"), "cluster_id"),
    Case("sdk-delete-cluster", "call", lambda d: clusters().delete_cluster("a/../../b"), "cluster_id"),
    Case("sdk-create-cluster-display", "call", lambda d: clusters().create_cluster("c1", display_name="x\n"),
         "display_name"),
    # --- 6. a bad bucket from a settings file names the file ------------------------------------------------------
    Case("settings-bad-bucket", "call", lambda d: bad_bucket_in_file(d), "tool.tfcloud.staging_bucket"),
]


def clusters() -> Any:
    import tfcloud.flow.clusters as clusters

    return clusters


def bad_bucket_in_file(d: Path) -> None:
    project = d / "with-settings"
    project.mkdir(exist_ok=True)
    (project / "train.py").write_text("print('training')\n")
    (project / "pyproject.toml").write_text('[tool.tfcloud]\nstaging_bucket = "Bad Bucket"\n')
    cwd = Path.cwd()
    os.chdir(project)
    try:
        tfcloud.run(str(project / "train.py"), target="vertex", build=False, distribution_strategy=None)
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("trust-inputs")
    (d / "train.py").write_text("print('training')\n")
    return d


def _fill(value: Any, d: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{d}", str(d))
    if isinstance(value, list):
        return [_fill(v, d) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, d) for k, v in value.items()}
    return value


def count(emulator: Any, homes: list[Path]) -> dict[str, int]:
    """Everything a slipped-through input would leave: emulator jobs, builds, persistent resources, local jobs."""
    jobs, builds, clusters = emulator.job_client(), emulator.build_client(), emulator.persistent_resource_client()
    try:
        counts = {"emulator jobs": len(list(jobs.list_custom_jobs(parent=emulator.parent))),
                  "emulator builds": len(list(builds.list_builds(project_id=emulator.project))),
                  "clusters": len(list(clusters.list_persistent_resources(parent=emulator.parent)))}
    finally:
        for client in (jobs, builds, clusters):
            client.transport.close()
    for kind in ("jobs", "studies"):
        counts[f"local {kind}"] = sum(1 for home in homes if (home / kind).is_dir() for _ in (home / kind).iterdir())
    return counts


@pytest.fixture
def row_env(tfcloud_emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:  # noqa: F811
    for key, value in tfcloud_emulator.settings.env.items():
        monkeypatch.setenv(key, value)
    yield tfcloud_emulator


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_exits_2_naming_the_field_and_changes_nothing(
        case: Case, files: Path, row_env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    homes = [Path(os.environ["TFCLOUD_HOME"])]
    for key, value in case.env.items():
        monkeypatch.setenv(key, _fill(value, files))
    before = count(row_env, homes)
    cwd_before = sorted(p.name for p in Path.cwd().iterdir())

    if case.how == "cli":
        code = main(_fill(case.args, files))
        captured = capsys.readouterr()
        message = captured.err
        assert code == 2, message
        assert "Traceback" not in captured.err + captured.out
    else:
        with pytest.raises(TfcloudError) as err:
            if case.how == "run":
                tfcloud.run(**{"entry_point": str(files / "train.py"), **_fill(case.args, files)})
            else:
                case.args(files)
        assert err.value.exit_code == 2
        message = str(err.value)
    assert f"`{case.field}`" in message, message
    assert "expected" in message and "received" in message, message

    assert count(row_env, homes) == before
    assert sorted(p.name for p in Path.cwd().iterdir()) == cwd_before
    assert list(temp.iterdir()) == []


def test_o_names_the_target_and_the_flag_that_sets_it(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", str(files / "train.py"), "--local", "-o", "target=vertex", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "an option of the local target" in err and "--local, --vertex, --ray ADDRESS or --target NAME" in err
    assert main(["submit", str(files / "train.py"), "--vertex", "-o", "worker_count=3", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "an option of the vertex target" in err and "set it with --worker-count" in err


def test_o_text_is_typed_by_the_target_the_settings_choose(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCLOUD_TARGET", "vertex")
    plan = tfcloud.run(str(files / "train.py"), target_options={"spot": "true", "max_restarts": "2"}, dry_run=True)
    assert plan.to_dict()["target_options"]["spot"] is True
    assert plan.target.max_restarts == 2


def test_a_bad_bucket_names_its_file_and_a_flag_over_it_wins(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = files / "with-settings"
    project.mkdir(exist_ok=True)
    (project / "train.py").write_text("print('training')\n")
    (project / "pyproject.toml").write_text('[tool.tfcloud]\nstaging_bucket = "Bad Bucket"\n')
    monkeypatch.chdir(project)
    with pytest.raises(TfcloudError) as caught:
        tfcloud.run(str(project / "train.py"), target="vertex", build=False, dry_run=True)
    assert f"Invalid `tool.tfcloud.staging_bucket` in {project / 'pyproject.toml'}" in str(caught.value)
    assert "--staging-bucket" in str(caught.value)  # the hint names the flag that overrides it
    plan = tfcloud.run(str(project / "train.py"), target="vertex", build=False, staging_bucket="good-bucket",
                       dry_run=True)
    assert plan.to_dict()["sources"]["staging_bucket"] == {"value": "good-bucket", "from": "staging_bucket= (keyword)"}


def test_o_under_the_target_setting_from_the_cli(files: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import json

    monkeypatch.setenv("TFCLOUD_TARGET", "vertex")
    assert main(["submit", str(files / "train.py"), "-o", "spot=true", "-o", "timeout=60", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["target_options"]["spot"] is True and plan["target_options"]["timeout"] == 60
