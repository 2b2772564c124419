"""The Ray target's recovery options, checked at the gate (no cluster needed): ``max_restarts`` and
``base_output_dir`` (``--output-dir``), a path the nodes share or ``gs://``."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tfcloud.errors import ValidationError
from tfcloud.flow.validate import build_job, build_spec
from tfcloud.targets.ray import RayTarget
from tfcloud.targets.ray.driver import Placement, default_output_dir


def test_max_restarts_and_a_shared_output_dir_reach_the_target(script: Path) -> None:
    _, target = build_job(entry_point=script, target="ray", max_restarts=2, base_output_dir="/mnt/shared/out/")
    assert target == RayTarget(max_restarts=2, output_dir="/mnt/shared/out")
    assert build_job(entry_point=script, target="ray", base_output_dir="gs://my-bucket/o")[1] == \
        RayTarget(output_dir="gs://my-bucket/o")
    assert build_job(entry_point=script, target="ray")[1] == RayTarget()


@pytest.mark.parametrize("value", ["out", "./out", "~/out", "//host/out", "gs://", "gs://B/x"])
def test_an_output_dir_the_nodes_cannot_share_is_refused(script: Path, value: str) -> None:
    with pytest.raises(ValidationError, match="base_output_dir"):
        build_spec(entry_point=script, target="ray", base_output_dir=value)


def test_a_relative_output_dir_says_why(script: Path) -> None:
    with pytest.raises(ValidationError) as exc:
        build_spec(entry_point=script, target="ray", base_output_dir="runs/a")
    assert str(exc.value) == (
        "Invalid `base_output_dir`: expected a path every node of the Ray cluster reaches (an absolute path on a "
        "shared filesystem, such as /mnt/shared/out) or a Cloud Storage URI such as gs://my-bucket/outputs, "
        "received 'runs/a'.\nA relative path means nothing to the cluster's nodes: give the shared directory's "
        "absolute path.")


def test_every_replica_gets_the_aip_dirs_unless_the_job_sets_them(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = {"job_id": "ray-x-1", "output_dir": None,
            "replicas": [{"name": "chief-0", "role": "chief", "index": 0, "resources": {"CPU": 1.0}},
                         {"name": "worker-0", "role": "worker", "index": 0, "resources": {"CPU": 1.0}}]}
    nodes = [{"ip": "192.168.77.1", "port": 4001}, {"ip": "192.168.77.2", "port": 4002}]
    envs = Placement(plan, threading.Event()).envs(nodes)
    base = default_output_dir("ray-x-1")  # (no Ray session in this process: the temporary directory)
    assert base.endswith("/tfcloud-ray/ray-x-1/output")
    assert default_output_dir("ray-x-1", "/tmp/ray/session_1") == "/tmp/ray/session_1/tfcloud/ray-x-1/output"
    assert envs["worker-0"]["AIP_CHECKPOINT_DIR"] == f"{base}/checkpoints/"
    assert json.loads(envs["worker-0"]["TF_CONFIG"]) == {
        "cluster": {"chief": ["192.168.77.1:4001"], "worker": ["192.168.77.2:4002"]},
        "task": {"type": "worker", "index": 0}}
    monkeypatch.setenv("AIP_MODEL_DIR", "/the/jobs/own/")  # the job's --env reaches the driver's environment
    envs = Placement({**plan, "output_dir": "/mnt/shared/o"}, threading.Event()).envs(nodes)
    assert "AIP_MODEL_DIR" not in envs["chief-0"]
    assert envs["chief-0"]["AIP_TENSORBOARD_LOG_DIR"] == "/mnt/shared/o/logs/"
