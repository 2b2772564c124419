"""The CustomJob request as a value: golden files per strategy, and the real client's message parses it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tfcloud.flow.validate import build_job
from tfcloud.google.vertex.request import custom_job_request, replica_name

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "vertex"
UPDATE = os.environ.get("TFCLOUD_UPDATE_GOLDEN") == "1"
IMAGE = "us-central1-docker.pkg.dev/my-project/tfcloud/train:0123456789abcdef"

_PLACED = {"project": "my-project", "region": "us-central1",
           "service_account": "trainer@my-project.iam.gserviceaccount.com"}
CASES: dict[str, dict[str, Any]] = {
    "one_device_gpu": {},
    "one_device_cpu": {"chief_config": "CPU", "entry_point_args": ["--epochs", "3", "--name=a b"]},
    "mirrored": {"chief_config": "T4_4X", "job_labels": {"team": "ml"}},
    "multi_worker_mirrored": {"worker_count": 2, "worker_config": "A100_1X", "chief_config": "A100_1X",
                              "service_account": "trainer@my-project.iam.gserviceaccount.com",
                              "env": {"TF_CPP_MIN_LOG_LEVEL": "2"}},
    "parameter_server": {"worker_count": 2, "worker_config": "CPU", "chief_config": "CPU", "ps_count": 1,
                         "evaluator_count": 1, "timeout": 7200, "spot": True, "restart_on_worker_restart": True,
                         "network": "projects/12345/global/networks/vpc", "base_output_dir": "gs://bkt/out"},
    # TPUs: the TPU is the job's one pool with one replica (tensorflow-cloud's TPU: cloud-tpu + 8 x TPU_V3).
    "tpu": {"worker_count": 1, "worker_config": "TPU"},
    "evaluator_only": {"chief_config": "CPU", "evaluator_count": 1},
    # TPU VMs: the machine type fixes the chips; tpu_topology always (a multi-host slice: one replica).
    "tpu_v5e": {"worker_count": 1, "worker_config": "TPU_V5E_4X"},
    "tpu_v5e_multihost": {"worker_count": 1, "worker_config": "TPU_V5E_16X"},
    # TPU v6e runs JAX and PyTorch, not TensorFlow: a script that brings its own framework (strategy none).
    "tpu_v6e": {"worker_count": 1, "worker_config": "TPU_V6E_8X", "entry_point_args": ["--epochs", "2"],
                "distribution_strategy": "none", "region": "us-east5"},
    "tpu_v6e_multihost": {"worker_count": 1, "worker_config": "TPU_V6E_16X", "distribution_strategy": "none"},
    # Boot disks: hyperdisk-balanced where Google's machine takes no Persistent Disk (A3 Ultra, A4).
    "h200_hyperdisk": {"chief_config": "H200_8X"},
    "b200_hyperdisk": {"chief_config": "B200_8X", "region": "us-east4"},
    # Capacity (docs/vertex.md, "Capacity"), TensorBoard and experiments.
    "flex_start": {"chief_config": "A100_1X", "worker_count": 1, "worker_config": "A100_1X",
                   "scheduling": "flex-start", "max_wait": "30m", "timeout": 3600},
    "scheduling_spot": {"chief_config": "CPU", "scheduling": "spot"},
    "standard_disable_retries": {"chief_config": "CPU", "scheduling": "standard", "disable_retries": True},
    "reservation_specific": {"chief_config": "A100_1X", "worker_count": 1, "worker_config": "A100_1X",
                             "reservation": "us-central1-a/my-reservation", **_PLACED},
    "reservation_any": {"chief_config": "A100_1X", "reservation": "any", **_PLACED},
    "reservation_none_spot": {"chief_config": "CPU", "reservation": "none", "spot": True},
    "persistent_resource": {"chief_config": "CPU", "worker_count": 1, "worker_config": "CPU",
                            "persistent_resource": "my-cluster"},
    "tensorboard": {"chief_config": "CPU", "tensorboard": "1234567890", "base_output_dir": "gs://bkt/out", **_PLACED},
    "experiment": {"chief_config": "CPU", "experiment": "my-exp", "experiment_run": "run-1", **_PLACED},
    "tensorboard_full_names": {
        "chief_config": "CPU", "base_output_dir": "gs://bkt/out", **_PLACED,
        "tensorboard": "projects/my-project/locations/us-central1/tensorboards/42"},
    "experiment_full_names": {
        "chief_config": "CPU", **_PLACED,
        "experiment": "projects/my-project/locations/us-central1/metadataStores/default/contexts/exp-2"},
    # A reservation needs no service account (Google states no such rule).
    "reservation_without_service_account": {"chief_config": "A100_1X", "reservation": "any"},
}


def _request(name: str, script: Path) -> dict[str, Any]:
    spec, target = build_job(entry_point=str(script), target="vertex", **CASES[name])
    return custom_job_request(spec, target, image_uri=IMAGE, submission_id="sub-0001")


@pytest.mark.parametrize("name", sorted(CASES))
def test_request_matches_golden(name: str, script: Path) -> None:
    request = _request(name, script)
    golden = GOLDEN / f"{name}.json"
    text = json.dumps(request, indent=2, sort_keys=True) + "\n"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"request changed; rerun with TFCLOUD_UPDATE_GOLDEN=1 to accept ({golden})"


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_client_message_reads_the_request(name: str, script: Path) -> None:
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    job = aiplatform_v1.CustomJob.from_json(json.dumps(_request(name, script)))
    pools = job.job_spec.worker_pool_specs
    assert pools[0].replica_count == 1  # the chief pool has one replica
    assert pools[0].container_spec.image_uri == IMAGE
    # A TPU Pod's image runs its CMD: the request passes the launcher's whole command as args.
    launcher = ["python3", "tfcloud_launcher.py"] if name == "tpu_v5e_multihost" else []
    assert list(pools[0].container_spec.args) == launcher + CASES[name].get("entry_point_args", [])
    assert job.labels["tfcloud-submission"] == "sub-0001"
    if name == "parameter_server":
        assert [p.replica_count for p in pools] == [1, 2, 1, 1]
        assert job.job_spec.scheduling.timeout.total_seconds() == 7200
        assert job.job_spec.scheduling.strategy == aiplatform_v1.Scheduling.Strategy.SPOT
    if name == "evaluator_only":
        assert [p.replica_count for p in pools] == [1, 0, 0, 1]
    if name == "tpu":
        assert pools[0].machine_spec.accelerator_type == aiplatform_v1.AcceleratorType.TPU_V3
    _check_capacity(name, job, aiplatform_v1)


def _check_capacity(name: str, job: Any, aiplatform_v1: Any) -> None:
    """The capacity options, as the real message reads them (the API's own field and enum names)."""
    spec, strategy = job.job_spec, aiplatform_v1.Scheduling.Strategy
    affinity = aiplatform_v1.ReservationAffinity.Type
    pools = spec.worker_pool_specs
    if name == "flex_start":
        assert spec.scheduling.strategy == strategy.FLEX_START
        assert spec.scheduling.max_wait_duration.total_seconds() == 1800
    if name == "scheduling_spot":
        assert spec.scheduling.strategy == strategy.SPOT
    if name == "standard_disable_retries":
        assert spec.scheduling.strategy == strategy.STANDARD and spec.scheduling.disable_retries
    if name == "reservation_specific":
        for pool in pools:
            assert pool.machine_spec.reservation_affinity.reservation_affinity_type == affinity.SPECIFIC_RESERVATION
            assert pool.machine_spec.reservation_affinity.key == "compute.googleapis.com/reservation-name"
            assert list(pool.machine_spec.reservation_affinity.values) == [
                "projects/my-project/zones/us-central1-a/reservations/my-reservation"]
    if name == "reservation_any":
        assert pools[0].machine_spec.reservation_affinity.reservation_affinity_type == affinity.ANY_RESERVATION
    if name == "reservation_none_spot":
        assert pools[0].machine_spec.reservation_affinity.reservation_affinity_type == affinity.NO_RESERVATION
        assert spec.scheduling.strategy == strategy.SPOT
    if name == "persistent_resource":
        assert spec.persistent_resource_id == "my-cluster"
    if name == "tensorboard":
        assert spec.tensorboard == "projects/my-project/locations/us-central1/tensorboards/1234567890"
    if name == "experiment":
        assert spec.experiment == "projects/my-project/locations/us-central1/metadataStores/default/contexts/my-exp"
        assert spec.experiment_run == spec.experiment + "-run-1"


CLUSTERS: dict[str, dict[str, Any]] = {
    "cluster_one_pool": {"chief_config": "A100_1X"},
    "cluster_every_role": {"chief_config": "A100_1X", "worker_config": "A100_1X", "worker_count": 3,
                           "ps_config": "CPU", "ps_count": 1, "evaluator_count": 1},
}


@pytest.mark.parametrize("name", sorted(CLUSTERS))
def test_cluster_request_matches_golden_and_the_real_message(name: str) -> None:
    from tfcloud.google.vertex.clusters import cluster_pools, persistent_resource_request

    request = persistent_resource_request(cluster_pools(**CLUSTERS[name]), display_name=name.replace("_", "-"),
                                          labels={"team": "ml"})
    golden = GOLDEN / f"{name}.json"
    text = json.dumps(request, indent=2, sort_keys=True) + "\n"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"request changed; rerun with TFCLOUD_UPDATE_GOLDEN=1 to accept ({golden})"
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    resource = aiplatform_v1.PersistentResource.from_json(json.dumps(request))
    # A job of the same shape fits it: each of the job's pools has a resource pool with its machine and disk.
    spec, target = build_job(entry_point=__file__, target="vertex", **{k: v for k, v in CLUSTERS[name].items()
                                                                       if k != "ps_config"})
    job = aiplatform_v1.CustomJob.from_json(json.dumps(custom_job_request(spec, target, image_uri=IMAGE,
                                                                          submission_id="s")))
    for pool in (p for p in job.job_spec.worker_pool_specs if p.replica_count):
        assert any(r.machine_spec == pool.machine_spec and r.disk_spec == pool.disk_spec
                   and r.replica_count >= pool.replica_count for r in resource.resource_pools)


@pytest.mark.parametrize(("task", "replica"), [
    ("workerpool0-0", "chief-0"), ("workerpool1-1", "worker-1"), ("workerpool2-0", "ps-0"),
    ("workerpool3-0", "evaluator-0"), ("service", "service"),
])
def test_replica_names_match_local_runs(task: str, replica: str) -> None:
    assert replica_name(task) == replica


@pytest.mark.parametrize(("name", "machine_type", "topology"), [
    ("tpu_v5e", "ct5lp-hightpu-4t", "2x2"),
    ("tpu_v5e_multihost", "ct5lp-hightpu-4t", "4x4"),
    ("tpu_v6e", "ct6e-standard-8t", "2x4"),
    ("tpu_v6e_multihost", "ct6e-standard-4t", "4x4"),
])
def test_a_tpu_vm_job_is_one_pool_with_its_topology(name: str, machine_type: str, topology: str,
                                                    script: Path) -> None:
    """As Google's "Training with TPU VMs" example writes it: one worker pool, one replica, the machine type and
    its tpu_topology (the SDK: "required for the TPU v5 versions"; "TPU jobs only allow 1 replica")."""
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    job = aiplatform_v1.CustomJob.from_json(json.dumps(_request(name, script)))
    (pool,) = job.job_spec.worker_pool_specs  # the TPU VM is the only pool: no paid CPU/T4 chief
    assert pool.machine_spec.machine_type == machine_type
    assert pool.machine_spec.tpu_topology == topology  # always, single-host too
    assert pool.replica_count == 1  # a multi-host slice is one replica of its topology
    assert pool.machine_spec.accelerator_count == 0  # the machine type names the chips (no TPU_V6E enum)


def test_the_tensorflow_cloud_tpu_is_one_pool_as_google_writes_it(script: Path) -> None:
    (pool,) = _request("tpu", script)["job_spec"]["worker_pool_specs"]
    assert pool["machine_spec"] == {"machine_type": "cloud-tpu", "accelerator_type": "TPU_V3",
                                    "accelerator_count": 8}
    assert pool["replica_count"] == 1


@pytest.mark.parametrize(("name", "disk"), [("h200_hyperdisk", "hyperdisk-balanced"),
                                            ("b200_hyperdisk", "hyperdisk-balanced"), ("mirrored", "pd-ssd")])
def test_each_machine_gets_the_boot_disk_google_gives_it(name: str, disk: str, script: Path) -> None:
    pools = _request(name, script)["job_spec"]["worker_pool_specs"]
    assert {p["disk_spec"]["boot_disk_type"] for p in pools if p} == {disk}


def test_every_golden_request_passes_google_rules(script: Path) -> None:
    """The one table the gate and the emulator check: each golden request is one Google accepts."""
    from tfcloud.google.rules import check_custom_job, check_sdk_rules

    for name, case in CASES.items():
        request = json.loads((GOLDEN / f"{name}.json").read_text())
        found = check_custom_job(request, location=case.get("region", "us-central1"))
        assert found + check_sdk_rules(request) == [], (name, [v.description for v in found])


def test_the_dry_run_plan_shows_the_tpu_layout(script: Path) -> None:
    from tfcloud.flow.plan import make_plan

    plan = make_plan(*build_job(entry_point=str(script), target="vertex", **CASES["tpu_v5e_multihost"]))
    assert plan.strategy == "tf.distribute.TPUStrategy"
    assert [vars(row) for row in plan.pools] == [{
        "role": "chief", "replicas": 1, "machine_type": "ct5lp-hightpu-4t",
        "accelerator": "4 x TPU_V5_LITEPOD per host, 4x4 slice on 4 hosts"}]
    assert any(note.startswith("TPU: the TPU host runs your program as the job's one pool") for note in plan.notes)


# --- HyperparameterTuningJob -----------------------------------------------------------------------------------
TUNING_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # (job spec arguments, study arguments)
    "tuning_every_kind": (
        {"chief_config": "CPU", "entry_point_args": ["--epochs", "3"], "job_labels": {"team": "ml"},
         "base_output_dir": "gs://bkt/out"},
        {"params": ["learning_rate=double:1e-4:1e-1:log", "units=int:32:512", "optimizer=categorical:adam,sgd",
                    "batch_size=discrete:128,32,64", "dropout=double:0:0.5"],
         "metric": "val_accuracy", "goal": "maximize", "max_trials": 12, "parallel_trials": 3}),
    "tuning_grid_multi_worker": (
        {"chief_config": "CPU", "worker_count": 2, "worker_config": "CPU"},
        {"params": ["units=int:8:64:log", "optimizer=categorical:adam,sgd"], "metric": "loss", "goal": "minimize",
         "max_trials": 4, "parallel_trials": 2, "algorithm": "grid"}),
    "tuning_random": (
        {"chief_config": "CPU"},
        {"params": ["x=double:-1:1"], "metric": "score", "max_trials": 1, "algorithm": "random"}),
    "tuning_early_stopping": (
        {"chief_config": "CPU", "entry_point_args": ["--epochs", "20"]},
        {"params": ["learning_rate=double:1e-4:1e-1:log"], "metric": "val_loss", "goal": "minimize",
         "max_trials": 16, "parallel_trials": 4, "early_stopping": True}),
}


def _tuning_request(name: str, script: Path) -> dict[str, Any]:
    from tfcloud.google.vertex.request import tuning_job_request
    from tfcloud.job.study import make_study

    job_args, study_args = TUNING_CASES[name]
    spec, target = build_job(entry_point=str(script), target="vertex", **job_args)
    return tuning_job_request(spec, target, make_study(**study_args), image_uri=IMAGE, submission_id="sub-0001")


@pytest.mark.parametrize("name", sorted(TUNING_CASES))
def test_tuning_request_matches_golden(name: str, script: Path) -> None:
    request = _tuning_request(name, script)
    golden = GOLDEN / f"{name}.json"
    text = json.dumps(request, indent=2, sort_keys=True) + "\n"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"request changed; rerun with TFCLOUD_UPDATE_GOLDEN=1 to accept ({golden})"


@pytest.mark.parametrize("name", sorted(TUNING_CASES))
def test_tuning_trial_spec_is_the_custom_job_spec(name: str, script: Path) -> None:
    job_args, _ = TUNING_CASES[name]
    spec, target = build_job(entry_point=str(script), target="vertex", **job_args)
    custom = custom_job_request(spec, target, image_uri=IMAGE, submission_id="sub-0001")
    request = _tuning_request(name, script)
    assert request["trial_job_spec"] == custom["job_spec"]
    assert request["labels"] == custom["labels"] and request["display_name"] == custom["display_name"]


@pytest.mark.parametrize("name", sorted(TUNING_CASES))
def test_real_client_message_reads_the_tuning_request(name: str, script: Path) -> None:
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    job = aiplatform_v1.HyperparameterTuningJob.from_json(json.dumps(_tuning_request(name, script)))
    _, study_args = TUNING_CASES[name]
    assert job.max_trial_count == study_args["max_trials"]
    assert job.parallel_trial_count == study_args.get("parallel_trials", 1)
    assert [m.metric_id for m in job.study_spec.metrics] == [study_args["metric"]]
    assert job.study_spec.metrics[0].goal.name == study_args.get("goal", "maximize").upper()
    assert [p.parameter_id for p in job.study_spec.parameters] == [p.split("=")[0] for p in study_args["params"]]
    assert job.trial_job_spec.worker_pool_specs[0].container_spec.image_uri == IMAGE
    assert job.labels["tfcloud-submission"] == "sub-0001"
    if name == "tuning_every_kind":
        lr, units, optimizer, batch, _ = job.study_spec.parameters
        assert lr.scale_type == aiplatform_v1.StudySpec.ParameterSpec.ScaleType.UNIT_LOG_SCALE
        assert (lr.double_value_spec.min_value, lr.double_value_spec.max_value) == (1e-4, 1e-1)
        assert (units.integer_value_spec.min_value, units.integer_value_spec.max_value) == (32, 512)
        assert list(optimizer.categorical_value_spec.values) == ["adam", "sgd"]
        assert list(batch.discrete_value_spec.values) == [32.0, 64.0, 128.0]
        assert job.study_spec.algorithm == aiplatform_v1.StudySpec.Algorithm.ALGORITHM_UNSPECIFIED
    if name == "tuning_grid_multi_worker":
        assert job.study_spec.algorithm == aiplatform_v1.StudySpec.Algorithm.GRID_SEARCH
    # Early stopping is the median rule on steps, the only stopping spec set; none without it.
    stopping = aiplatform_v1.StudySpec.pb(job.study_spec).WhichOneof("automated_stopping_spec")
    if study_args.get("early_stopping"):
        assert stopping == "median_automated_stopping_spec"
        assert not job.study_spec.median_automated_stopping_spec.use_elapsed_duration
    else:
        assert stopping is None


# --- --no-build: the package on the job's base image (container_spec; tfcloud.google.staging.baseimage)
# --------------------------
PACKAGE_CASES: dict[str, dict[str, Any]] = {
    "no_build_cpu": {"chief_config": "CPU", "entry_point_args": ["--epochs", "3"], "env": {"MODE": "fast"}},
    "no_build_gpu_workers": {"chief_config": "T4_1X", "worker_count": 2, "worker_config": "T4_1X",
                             "region": "europe-west4"},
    "no_build_tpu": {"worker_count": 1, "worker_config": "TPU_V5E_4X"},
}


BASE_IMAGE = "us-central1-docker.pkg.dev/p/tfcloud/tfcloud-base:0123456789abcdef01234567"


def _package_request(name: str, script: Path) -> dict[str, Any]:
    from tfcloud.job.artifacts import PackageRef

    spec, target = build_job(entry_point=str(script), target="vertex", build=False, **PACKAGE_CASES[name])
    package = PackageRef(uri="gs://bkt/tfcloud/packages/tfcloud_job-0.0.0+0123abcd.tar.gz",
                         module="tfcloud_job.start", digest="0123abcd", size=1000)
    return custom_job_request(spec, target, image_uri=BASE_IMAGE, package=package, submission_id="sub-0001",
                              tensorflow_version="2.21.0")


@pytest.mark.parametrize("name", sorted(PACKAGE_CASES))
def test_package_request_matches_golden(name: str, script: Path) -> None:
    text = json.dumps(_package_request(name, script), indent=2, sort_keys=True) + "\n"
    golden = GOLDEN / f"{name}.json"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text(), f"request changed; rerun with TFCLOUD_UPDATE_GOLDEN=1 to accept ({golden})"


@pytest.mark.parametrize("name", sorted(PACKAGE_CASES))
def test_real_client_message_reads_the_package_request(name: str, script: Path) -> None:
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    job = aiplatform_v1.CustomJob.from_json(json.dumps(_package_request(name, script)))
    pools = [pool for pool in job.job_spec.worker_pool_specs if pool.replica_count]
    for pool in pools:  # Google's executor images must be its prebuilt ones: a base image is a custom container
        code = pool.container_spec
        assert "python_package_spec" not in pool and code.image_uri == BASE_IMAGE
        assert list(code.command) == ["python3", "/opt/tfcloud-base/bootstrap.py",
                                      "/gcs/bkt/tfcloud/packages/tfcloud_job-0.0.0+0123abcd.tar.gz"]
        assert list(code.args) == PACKAGE_CASES[name].get("entry_point_args", [])
    if name == "no_build_cpu":
        assert [(e.name, e.value) for e in pools[0].container_spec.env] == [("MODE", "fast")]


# --- TPU Pods (TensorFlow on a multi-host slice): Vertex AI's TPU Pod base image, the launcher as CMD -----------
POD_BASE = "us-docker.pkg.dev/vertex-ai/training/tf-tpu-pod-base-cp310:latest"


def test_a_tensorflow_tpu_pod_builds_from_the_pod_base_image_with_cmd(script: Path, tmp_path: Path) -> None:
    from tfcloud.flow.pipeline import prepare
    from tfcloud.image.containerize import plan_image
    from tfcloud.image.dockerfile import render_dockerfile, tensorflow_tpu_requirement

    spec, target = build_job(entry_point=str(script), target="vertex", **CASES["tpu_v5e_multihost"])
    plan = plan_image(prepare(spec, target, tmp_path)[0], repository="us-central1-docker.pkg.dev/my-project/tfcloud")
    assert plan.base_image == POD_BASE
    assert plan.dockerfile == render_dockerfile(base_image=POD_BASE, requirements=False, tf_keras=None,
                                                tensorflow_tpu=tensorflow_tpu_requirement(), cmd=True)
    lines = plan.dockerfile.splitlines()
    assert lines[3] == f"FROM {POD_BASE}" and lines[-1] == 'CMD ["python3", "tfcloud_launcher.py"]'
    assert not any(line.startswith("ENTRYPOINT") for line in lines)  # it would override the pod base's own
    # The request passes the whole command as args (args replace CMD; a command would replace the ENTRYPOINT).
    args, target = build_job(entry_point=str(script), target="vertex", entry_point_args=["--epochs", "2"],
                             **CASES["tpu_v5e_multihost"])
    (pool,) = custom_job_request(args, target, image_uri=IMAGE, submission_id="s")["job_spec"]["worker_pool_specs"]
    assert pool["container_spec"]["args"] == ["python3", "tfcloud_launcher.py", "--epochs", "2"]
    assert "command" not in pool["container_spec"]


@pytest.mark.parametrize("case", ["tpu_v5e", "tpu_v6e_multihost"])
def test_a_single_host_slice_or_a_job_without_tensorflow_keeps_the_tpu_image(script: Path, tmp_path: Path,
                                                                             case: str) -> None:
    from tfcloud.flow.pipeline import prepare
    from tfcloud.image.containerize import plan_image

    spec, target = build_job(entry_point=str(script), target="vertex", **CASES[case])
    plan = plan_image(prepare(spec, target, tmp_path)[0], repository="us-central1-docker.pkg.dev/my-project/tfcloud")
    assert plan.base_image == "python:3.12-slim"
    assert plan.dockerfile.splitlines()[-1] == 'ENTRYPOINT ["python3", "tfcloud_launcher.py"]'


def test_the_plan_shows_the_tpu_pod_base_image(script: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.cli import main

    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", "127.0.0.1:9")  # never reached: a plan
    monkeypatch.setenv("TFCLOUD_PROJECT", "my-project")
    argv = ["submit", str(script), "--vertex", "--worker-count", "1", "--worker-config", "TPU_V5E_16X", "--dry-run"]
    assert main([*argv, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["image"]["base_image"] == POD_BASE
    assert any(note.startswith("TPU Pod: TensorFlow on a multi-host TPU slice") and "CMD, not ENTRYPOINT" in note
               and "tpu-pod-tensorflow-image" in note for note in plan["notes"])
    assert main(argv) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert POD_BASE in text and "TPU Pod:" in text


def test_the_tpu_pod_rule_is_data_with_its_source() -> None:
    from tfcloud.google.catalog.prebuilt import tpu_pod_base_image
    from tfcloud.google.rules import SOURCES, TPU_POD_BASE
    from tfcloud.google.rules.rules import RULES

    rule = RULES["tpu-pod-tensorflow-image"]
    assert rule.source == TPU_POD_BASE.source == "tpu-training" and rule.client
    assert SOURCES[rule.source].url == "https://cloud.google.com/vertex-ai/docs/training/training-with-tpu-vm"
    assert [TPU_POD_BASE.uri(area) for area in TPU_POD_BASE.multi_regions] == [
        f"{area}-docker.pkg.dev/vertex-ai/training/tf-tpu-pod-base-cp310:latest" for area in ("us", "europe", "asia")]
    assert tpu_pod_base_image("2.20.0", region="europe-west4").value.startswith("europe-docker.pkg.dev/")
    from tfcloud.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"tf-tpu-pod-base-cp310 \(Python 3.10\).*starts at 2.13"):
        tpu_pod_base_image("2.12.0")  # the page: TensorFlow 2.12 and lower have no Python 3.10 TPU wheels
