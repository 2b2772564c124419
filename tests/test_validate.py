"""Every validation rule: the exact message, exit code 2 from the CLI, and nothing left behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

import tfcloud
from tfcloud import COMMON_MACHINE_CONFIGS, MachineConfig, ValidationError
from tfcloud.cli import main
from tfcloud.flow.validate import build_spec
from tfcloud.job.spec import Role, Strategy

T4 = COMMON_MACHINE_CONFIGS["T4_1X"]
TPU = COMMON_MACHINE_CONFIGS["TPU"]
CPU = COMMON_MACHINE_CONFIGS["CPU"]
LABEL_RULE = ("a key of 1 to 63 lowercase letters, digits, '_' or '-', starting with a letter (international "
              "characters allowed)")
LABEL_HINT = "\nLowercase it and replace other characters with '-'."
VALUE_RULE = "a value of up to 63 lowercase letters, digits, '_' or '-' (international characters allowed)"

# (keyword arguments for run(), the exact message)
SDK_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("entry-suffix", {"entry_point": "train.txt"},
     "Invalid `entry_point`: expected a path to an existing Python file (.py) or notebook (.ipynb), "
     "received 'train.txt'."),
    ("entry-type", {"entry_point": 3},
     "Invalid `entry_point`: expected a path to an existing Python file (.py) or notebook (.ipynb), received 3."),
    ("requirements-type", {"requirements_txt": 5},
     "Invalid `requirements_txt`: expected a path to an existing requirements file, received 5."),
    ("strategy", {"distribution_strategy": "fastest"},
     'Invalid `distribution_strategy`: expected "auto", None, or one of "one_device", "mirrored", '
     '"multi_worker_mirrored", "parameter_server", "tpu", received \'fastest\'.'),
    ("chief-type", {"chief_config": 5},
     'Invalid `chief_config`: expected a tfcloud.MachineConfig, a name from COMMON_MACHINE_CONFIGS, or "auto", '
     "received 5."),
    ("worker-type", {"worker_config": "big", "worker_count": 1},
     'Invalid `worker_config`: expected a tfcloud.MachineConfig, a name from COMMON_MACHINE_CONFIGS, or "auto", '
     "received 'big'."),
    ("worker-count-negative", {"worker_count": -1}, "Invalid `worker_count`: expected an integer ≥ 0, received -1."),
    ("worker-count-str", {"worker_count": "2"}, "Invalid `worker_count`: expected an integer ≥ 0, received '2'."),
    ("worker-count-bool", {"worker_count": True}, "Invalid `worker_count`: expected an integer ≥ 0, received True."),
    ("worker-config-missing", {"worker_config": None, "worker_count": 2},
     "Invalid `worker_config`: expected a MachineConfig when worker_count > 0, received None."),
    ("chief-tpu", {"chief_config": TPU},
     "Invalid `chief_config`: expected a CPU or GPU machine (a TPU cannot be the chief), "
     "received 'cloud-tpu + 8 x TPU_V3'.\nPut the TPU in worker_config with worker_count=1."),
    ("tpu-workers", {"worker_config": TPU, "worker_count": 2, "target": "vertex"},
     "Invalid `worker_count`: expected 1 when worker_config is a TPU, received 2."),
    ("labels-type", {"job_labels": ["a"]}, "Invalid `job_labels`: expected a dict of str to str, received ['a']."),
    ("labels-many", {"job_labels": {f"k{i}": "v" for i in range(64)}},
     "Invalid `job_labels`: expected at most 63 labels (Vertex AI allows 64; tfcloud adds one), "
     "received <64 labels>."),
    ("label-reserved", {"job_labels": {"tfcloud-submission": "x"}},
     "Invalid `job_labels`: expected keys other than 'tfcloud-submission' (tfcloud sets it), "
     "received 'tfcloud-submission'."),
    ("label-key-long", {"job_labels": {"k" * 64: "v"}},
     f"Invalid `job_labels`: expected {LABEL_RULE}, received '{'k' * 64}'." + LABEL_HINT),
    ("label-key-start", {"job_labels": {"1team": "ml"}},
     f"Invalid `job_labels`: expected {LABEL_RULE}, received '1team'." + LABEL_HINT),
    ("label-key-upper", {"job_labels": {"Team": "ml"}},
     f"Invalid `job_labels`: expected {LABEL_RULE}, received 'Team'." + LABEL_HINT),
    ("label-key-char", {"job_labels": {"team.name": "ml"}},
     f"Invalid `job_labels`: expected {LABEL_RULE}, received 'team.name'." + LABEL_HINT),
    ("label-key-empty", {"job_labels": {"": "ml"}},
     f"Invalid `job_labels`: expected {LABEL_RULE}, received ''." + LABEL_HINT),
    ("label-value-long", {"job_labels": {"team": "v" * 64}},
     f"Invalid `job_labels['team']`: expected {VALUE_RULE}, received '{'v' * 64}'." + LABEL_HINT),
    ("label-value-char", {"job_labels": {"team": "ML Ops"}},
     f"Invalid `job_labels['team']`: expected {VALUE_RULE}, received 'ML Ops'." + LABEL_HINT),
    ("args-type", {"entry_point_args": "--epochs 3"},
     "Invalid `entry_point_args`: expected a list of strings, received '--epochs 3'."),
    ("args-items", {"entry_point_args": ["--epochs", 3]},
     "Invalid `entry_point_args`: expected a list of strings, received ['--epochs', 3]."),
    ("stream-logs", {"stream_logs": "yes"}, "Invalid `stream_logs`: expected a bool, received 'yes'."),
    ("service-account", {"target": "vertex", "service_account": "trainer"},
     "Invalid `service_account`: expected a service account e-mail such as "
     "trainer@my-project.iam.gserviceaccount.com, received 'trainer'."),
    ("service-account-domain", {"target": "vertex", "service_account": "trainer@example.com"},
     "Invalid `service_account`: expected a service account e-mail such as "
     "trainer@my-project.iam.gserviceaccount.com, received 'trainer@example.com'."),
    ("ps-without-workers", {"ps_count": 1},
     "Invalid `worker_count`: expected an integer ≥ 1 when ps_count > 0 (parameter servers need workers), "
     "received 0."),
    ("ps-count", {"ps_count": -2}, "Invalid `ps_count`: expected an integer ≥ 0, received -2."),
    ("ps-config-missing", {"ps_config": None, "ps_count": 1, "worker_count": 1},
     "Invalid `ps_config`: expected a MachineConfig when ps_count > 0, received None."),
    ("ps-tpu", {"ps_config": TPU, "ps_count": 1, "worker_count": 1},
     "Invalid `ps_config`: expected a CPU or GPU machine (parameter servers cannot be TPUs), "
     "received 'cloud-tpu + 8 x TPU_V3'."),
    ("evaluator-config-missing", {"evaluator_config": None, "evaluator_count": 1},
     "Invalid `evaluator_config`: expected a MachineConfig when evaluator_count > 0, received None."),
    ("evaluators", {"evaluator_count": 2}, "Invalid `evaluator_count`: expected an integer from 0 to 1, received 2."),
    ("target", {"target": "aws"}, "Invalid `target`: expected \"local\" or \"vertex\" or \"ray\", received 'aws'."),
    ("region", {"target": "vertex", "region": "europe-west99"},
     "Invalid `region`: expected a region Vertex AI serves custom training in, such as us-central1, "
     "received 'europe-west99'.\nRegions: europe-central2, europe-north1, europe-southwest1, europe-west1, "
     "europe-west12, europe-west2, europe-west3, europe-west4, europe-west6, europe-west8, europe-west9."),
    ("project", {"target": "vertex", "project": "My Project"},
     "Invalid `project`: expected a Google Cloud project id (6 to 30 lowercase letters, digits or '-'), "
     "received 'My Project'."),
    ("docker-config", {"docker_config": {"image": "x"}},
     "Invalid `docker_config`: expected a tfcloud.DockerConfig or \"auto\", received {'image': 'x'}."),
    ("bucket", {"docker_config": tfcloud.DockerConfig(image_build_bucket="gs://Bad Bucket")},
     "Invalid `docker_config.image_build_bucket`: expected a Cloud Storage bucket name (3-63 lowercase letters, "
     "digits, '-', '_' or '.'), received 'gs://Bad Bucket'."),
    ("explicit-ps", {"distribution_strategy": "parameter_server"},
     "Invalid `distribution_strategy`: expected parameter_server only with ps_count ≥ 1 and worker_count ≥ 1, "
     "received <parameter_server with worker_count=0, ps_count=0>."),
    ("explicit-mirrored", {"distribution_strategy": "mirrored", "worker_count": 1},
     "Invalid `distribution_strategy`: expected mirrored only on a single chief (worker_count=0, ps_count=0), "
     "received <mirrored with worker_count=1, ps_count=0>."),
    ("explicit-tpu", {"distribution_strategy": "tpu"},
     "Invalid `distribution_strategy`: expected tpu only with a TPU worker_config and worker_count=1, "
     "received <tpu with worker_count=0, ps_count=0>."),
    ("tpu-local", {"worker_config": TPU, "worker_count": 1},
     "Invalid `target`: expected \"vertex\" for a TPU job (TPUs cannot run locally), received 'local'."),
    ("unknown-kwarg", {"workers": 2},
     "Invalid `run() keyword argument`: expected one of tensorflow-cloud's arguments or ps_config, ps_count, "
     "evaluator_config, evaluator_count, target, dry_run, display_name, env, secrets, data, image_repository, "
     "context_dir, target_options, container, max_restarts, liveness_timeout, base_output_dir, project, region, "
     "service_account, network, spot, timeout, restart_on_worker_restart, scheduling, max_wait, fallback, "
     "fallback_after, reservation, disable_retries, web_access, persistent_resource, tensorboard, experiment, "
     "experiment_run, emulator_host, "
     "staging_bucket, build, ray_address, ray_cpus, "
     "received 'workers'."),
    ("context-dir", {"context_dir": "/nonexistent"},
     "Invalid `context_dir`: expected an existing directory that contains the entry point, "
     "received '/nonexistent'."),
    ("timeout", {"target": "vertex", "timeout": 0},
     "Invalid `timeout`: expected a number of seconds from 1 to 1209600 (14 days), received 0."),
    ("spot", {"target": "vertex", "spot": "yes"}, "Invalid `spot`: expected a bool, received 'yes'."),
    ("restart", {"target": "vertex", "restart_on_worker_restart": 1},
     "Invalid `restart_on_worker_restart`: expected a bool, received 1."),
    ("network", {"target": "vertex", "network": "my-vpc"},
     "Invalid `network`: expected a VPC network name such as projects/12345/global/networks/my-vpc, "
     "received 'my-vpc'."),
    ("output-dir", {"base_output_dir": "gs://"},
     "Invalid `base_output_dir`: expected a Cloud Storage URI such as gs://my-bucket/outputs, received 'gs://'."),
    ("max-restarts", {"max_restarts": -1}, "Invalid `max_restarts`: expected an integer from 0 to 100, received -1."),
    ("option-of-another-target", {"spot": True},
     "Invalid `spot`: expected to be left unset for the local target (it is an option of: vertex), received "
     "<set>.\nRemove it, or run where it applies (--vertex / target=\"vertex\")."),
    ("env", {"env": {"1X": "y"}},
     "Invalid `env`: expected a dict of environment variable names to string values, received {'1X': 'y'}."),
]


def _snapshot(*dirs: Path) -> set[str]:
    return {str(p) for d in dirs for p in d.rglob("*")}


@pytest.mark.parametrize(("kwargs", "message"), [c[1:] for c in SDK_CASES], ids=[c[0] for c in SDK_CASES])
def test_run_rejects_bad_input_with_exact_message(script: Path, kwargs: dict[str, Any], message: str,
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kwargs = {"entry_point": str(script), "dry_run": True, **kwargs}
    # A temporary directory of this test's own: tests on the other worker make tfcloud-* directories too.
    (tmp_path / "temp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temp"))
    cwd, tmp = Path.cwd(), Path(tempfile.gettempdir())
    before = _snapshot(cwd) | {p.name for p in tmp.iterdir() if p.name.startswith("tfcloud")}
    with pytest.raises(ValidationError) as err:
        tfcloud.run(**kwargs)
    assert str(err.value) == message
    assert err.value.exit_code == 2  # what the CLI exits with
    after = _snapshot(cwd) | {p.name for p in tmp.iterdir() if p.name.startswith("tfcloud")}
    assert after == before


def test_missing_entry_point_and_requirements_say_where(tmp_path: Path, script: Path) -> None:
    with pytest.raises(ValidationError) as err:
        tfcloud.run(entry_point=str(tmp_path / "nope.py"), dry_run=True)
    assert str(err.value) == (
        "Invalid `entry_point`: expected a path to an existing Python file (.py) or notebook (.ipynb), "
        f"received '{tmp_path / 'nope.py'}'.\nNo file at {tmp_path / 'nope.py'}.")
    with pytest.raises(ValidationError) as err:
        tfcloud.run(entry_point=str(script), requirements_txt="reqs.txt", dry_run=True)
    assert str(err.value) == ("Invalid `requirements_txt`: expected a path to an existing requirements file, "
                              f"received 'reqs.txt'.\nNo file at {Path.cwd() / 'reqs.txt'}.")


# (command line after `tfcloud submit ENTRY`, the exact error line)
CLI_CASES = [
    (["--worker-count", "-1"], "Error: Invalid `worker_count`: expected an integer ≥ 0, received -1."),
    (["--worker-count", "1", "--worker-config", "T5_1X"],
     "Error: Invalid `worker_config`: expected a name from `tfcloud machines`: "
     + ", ".join(COMMON_MACHINE_CONFIGS) + ", received 'T5_1X'."),
    (["--chief-config", "TPU", "--vertex"],
     "Error: Invalid `chief_config`: expected a CPU or GPU machine (a TPU cannot be the chief), "
     "received 'cloud-tpu + 8 x TPU_V3'."),
    (["--label", "Team=ml"], f"Error: Invalid `job_labels`: expected {LABEL_RULE}, received 'Team'."),
    (["--label", "team"], "Error: Invalid `--label`: expected KEY=VALUE, received 'team'."),
    (["--strategy", "fastest"],
     'Error: Invalid `distribution_strategy`: expected "auto", None, or one of "one_device", "mirrored", '
     '"multi_worker_mirrored", "parameter_server", "tpu", received \'fastest\'.'),
    (["--ps-count", "1"],
     "Error: Invalid `worker_count`: expected an integer ≥ 1 when ps_count > 0 (parameter servers need workers), "
     "received 0."),
    (["--vertex", "--service-account", "me@gmail.com"],
     "Error: Invalid `service_account`: expected a service account e-mail such as "
     "trainer@my-project.iam.gserviceaccount.com, received 'me@gmail.com'."),
    (["--local", "--vertex"], "Error: Invalid `target`: expected one of --local, --vertex, --ray ADDRESS or "
                               "--target NAME, received '--local and --vertex'."),
    (["--vertex", "--region", "moon"],
     "Error: Invalid `region`: expected a region Vertex AI serves custom training in, such as us-central1, "
     "received 'moon'."),
]


@pytest.mark.parametrize(("argv", "message"), CLI_CASES, ids=[" ".join(c[0]) for c in CLI_CASES])
def test_cli_exits_2_with_exact_message(script: Path, argv: list[str], message: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(Path.cwd(), script.parent)
    code = main(["submit", str(script), *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines()[0] == message
    assert "Traceback" not in err
    assert _snapshot(Path.cwd(), script.parent) == before


def test_cli_missing_entry_point(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", "missing.py", "--dry-run"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err == [
        "Error: Invalid `entry_point`: expected a path to an existing Python file (.py) or notebook (.ipynb), "
        "received 'missing.py'.",
        f"No file at {Path.cwd() / 'missing.py'}.",
    ]


def test_debug_shows_the_traceback(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCLOUD_DEBUG", "1")
    with pytest.raises(ValidationError):
        main(["submit", str(script), "--worker-count", "-1"])


def test_spec_is_frozen_and_complete(script: Path) -> None:
    spec = build_spec(entry_point=str(script), worker_count=2, worker_config="CPU", ps_count=1,
                      evaluator_count=1, entry_point_args=["--epochs", "3"], job_labels={"team": "ml"})
    assert [(p.role, p.replica_count) for p in spec.pools] == [
        (Role.CHIEF, 1), (Role.WORKER, 2), (Role.PS, 1), (Role.EVALUATOR, 1)]
    assert spec.strategy is Strategy.PARAMETER_SERVER
    assert spec.entry_point == script.resolve() and spec.workdir == script.parent.resolve()
    assert spec.entry_point_args == ("--epochs", "3")
    with pytest.raises(AttributeError):
        spec.worker_count = 3  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        spec.job_labels["x"] = "y"  # type: ignore[index]


def test_auto_machines_follow_tensorflow_cloud_on_vertex_and_cpu_locally(script: Path) -> None:
    vertex = build_spec(entry_point=str(script), target="vertex", worker_count=1)
    assert vertex.chief.machine == COMMON_MACHINE_CONFIGS["T4_1X"]
    assert vertex.pools[1].machine == COMMON_MACHINE_CONFIGS["T4_1X"]
    local = build_spec(entry_point=str(script), worker_count=1)
    assert local.chief.machine == CPU


def test_relative_entry_point_resolves_against_cwd(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(script.parent)
    spec = build_spec(entry_point="train.py")
    assert spec.entry_point == Path(os.getcwd(), "train.py").resolve()


def test_machine_configs_accept_objects_and_names(script: Path) -> None:
    config = MachineConfig(cpu_cores=16, memory=60)
    spec = build_spec(entry_point=str(script), chief_config=config, worker_config="t4_1x", worker_count=1,
                      target="vertex")
    assert spec.chief.machine is config
    assert spec.pools[1].machine == T4


@pytest.mark.parametrize("name", ["TF_CONFIG", "TFCLOUD_REPLICA", "TFCLOUD_SECRET_REFS"])
def test_env_and_secrets_refuse_the_names_tfcloud_sets_from_one_list(tmp_path: Path, name: str) -> None:
    """One list of the variables tfcloud sets (secretrefs.RESERVED_ENV): --env refuses each, --secret too, and
    --secret also PATH, PYTHONPATH and HOME."""
    from tfcloud.job.secretrefs import RESERVED_ENV

    script = tmp_path / "train.py"
    script.write_text("pass\n")
    assert name in RESERVED_ENV
    with pytest.raises(ValidationError) as env_error:
        build_spec(entry_point=str(script), env={name: "x"})
    assert env_error.value.field == "env" and ", ".join(RESERVED_ENV) in env_error.value.expected
    for secret in (name, "PATH"):
        with pytest.raises(ValidationError) as secret_error:
            build_spec(entry_point=str(script), secrets={secret: "env:HOME"})
        assert secret_error.value.field == "secrets" and secret in secret_error.value.expected
