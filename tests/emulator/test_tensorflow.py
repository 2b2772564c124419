"""A real MultiWorkerMirrored job (chief + 2 workers) on the emulator, in local-process mode."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from google.cloud import aiplatform_v1 as vertex
from google.cloud.logging_v2.types import ListLogEntriesRequest

from tests.emulator.test_jobs import follow, job_id
from tests.emulator.test_logs_and_faults import Tail, drain

pytestmark = [pytest.mark.emulator, pytest.mark.tensorflow]

SCRIPT = textwrap.dedent("""
    import json, os
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    keras.utils.set_random_seed(1)
    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(1, input_shape=(4,))])
        model.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(0).random((48, 4), dtype="float32")
    history = model.fit(x, x.sum(axis=1, keepdims=True), epochs=1, batch_size=12, verbose=0)
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    print(f"TRAINED {task['type']}-{task['index']} replicas={strategy.num_replicas_in_sync} "
          f"loss={history.history['loss'][-1]:.4f}")
""")


def test_multi_worker_mirrored_job_succeeds_and_its_logs_come_back(
        emulator: Any, jobs: Any, logs: Any, tmp_path: Path) -> None:
    pytest.importorskip("tf_keras")
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = [vertex.EnvVar(name="TF_CPP_MIN_LOG_LEVEL", value="2"),
           vertex.EnvVar(name="GRPC_FAIL_FAST", value="use_caller")]

    def pool(count: int) -> vertex.WorkerPoolSpec:
        return vertex.WorkerPoolSpec(
            replica_count=count, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
            container_spec=vertex.ContainerSpec(image_uri="local/train:1", command=[sys.executable, str(script)],
                                                env=env))

    created = jobs.create_custom_job(parent=emulator.parent, custom_job=vertex.CustomJob(
        display_name="mwms", job_spec=vertex.CustomJobSpec(worker_pool_specs=[pool(1), pool(2)])))
    job_filter = f'resource.type="ml_job" AND resource.labels.job_id="{job_id(created)}"'
    follower = Tail(logs, emulator.project, job_filter + ' AND textPayload:"TRAINED"', store=emulator.log_store)
    try:
        finished, states = follow(jobs, created.name, timeout=240)
        assert finished.state.name == "JOB_STATE_SUCCEEDED", (finished.error, _tail_of_logs(logs, emulator, job_filter))
        assert states[-1] == "JOB_STATE_SUCCEEDED"
        tailed = drain(follower.seen, 3)
    finally:
        follower.close()

    listed = [entry for entry in logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{emulator.project}"], filter=job_filter + ' AND textPayload:"TRAINED"'))]
    by_task = {entry.resource.labels["task_name"]: entry.text_payload for entry in listed}
    assert sorted(by_task) == ["workerpool0-0", "workerpool1-0", "workerpool1-1"]
    assert by_task["workerpool0-0"].startswith("TRAINED chief-0 replicas=3")
    assert by_task["workerpool1-1"].startswith("TRAINED worker-1 replicas=3")
    losses = {text.rsplit("loss=", 1)[1] for text in by_task.values()}
    assert len(losses) == 1  # every replica trained the same model
    assert sorted(tailed) == sorted(by_task.values())


def _tail_of_logs(logs: Any, emulator: Any, job_filter: str) -> list[str]:
    entries = logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{emulator.project}"], filter=job_filter, order_by="timestamp desc",
        page_size=30))
    return [f"{e.resource.labels['task_name']}: {e.text_payload}" for e in next(iter(entries.pages)).entries]
