"""Vertex AI HyperparameterTuningJobs on the emulator, driven by the real ``aiplatform_v1.JobServiceClient``.

The trial script reports as ``cloudml-hypertune`` does, by hand (JSON lines in ``$CLOUD_ML_HP_METRIC_FILE``),
so these tests hold no tfcloud code between the client and the emulator.
"""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1 as vertex
from google.cloud.logging_v2.types import ListLogEntriesRequest

from tests.emulator.conftest import wait_until

pytestmark = pytest.mark.emulator

TERMINAL = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}

#: Reports ``accuracy`` = units / 10 (the role in it: the chief's line is the last), or exits 2 when units is 0.
TRIAL = textwrap.dedent("""
    import json, os, sys, time
    values = dict(arg[2:].split("=", 1) for arg in sys.argv[1:] if arg.startswith("--") and "=" in arg)
    task = json.loads(os.environ["CLUSTER_SPEC"])["task"]
    print("trial", os.environ["CLOUD_ML_TRIAL_ID"], task["type"], "args", sys.argv[1:], flush=True)
    print("model dir", os.environ.get("AIP_MODEL_DIR"), flush=True)
    if values["units"] == "0":
        sys.exit(2)
    if task["type"] == "workerpool0":
        with open(os.environ["CLOUD_ML_HP_METRIC_FILE"], "a") as out:
            out.write(json.dumps({"accuracy": "0.01", "global_step": "1"}) + "\\n")
            out.write(json.dumps({"accuracy": str(int(values["units"]) / 10), "global_step": "2",
                                  "trial": os.environ["CLOUD_ML_TRIAL_ID"]}) + "\\n")
""")


def _pool(count: int = 1, *, command: list[str] | None = None, image: str = "us-docker.pkg.dev/p/r/tune:1",
          args: tuple[str, ...] = ("--fixed=1",)) -> vertex.WorkerPoolSpec:
    return vertex.WorkerPoolSpec(
        replica_count=count, machine_spec=vertex.MachineSpec(machine_type="n1-standard-4"),
        container_spec=vertex.ContainerSpec(image_uri=image, command=command or [sys.executable, "-c", TRIAL],
                                            args=list(args)))


def _units(low: int, high: int) -> vertex.StudySpec.ParameterSpec:
    return vertex.StudySpec.ParameterSpec(
        parameter_id="units", integer_value_spec=vertex.StudySpec.ParameterSpec.IntegerValueSpec(
            min_value=low, max_value=high),
        scale_type=vertex.StudySpec.ParameterSpec.ScaleType.UNIT_LINEAR_SCALE)


def tuning_job(*pools: vertex.WorkerPoolSpec, params: list[Any] | None = None, name: str = "tuning-test",
               trials: int = 3, parallel: int = 2, algorithm: str = "GRID_SEARCH", max_failed: int = 0,
               base: str = "") -> vertex.HyperparameterTuningJob:
    spec = vertex.CustomJobSpec(worker_pool_specs=list(pools or [_pool()]))
    if base:
        spec.base_output_directory = vertex.GcsDestination(output_uri_prefix=base)
    return vertex.HyperparameterTuningJob(
        display_name=name, labels={"suite": "tuning"},
        study_spec=vertex.StudySpec(
            metrics=[vertex.StudySpec.MetricSpec(metric_id="accuracy",
                                                 goal=vertex.StudySpec.MetricSpec.GoalType.MAXIMIZE)],
            parameters=params or [_units(1, 3)], algorithm=getattr(vertex.StudySpec.Algorithm, algorithm)),
        max_trial_count=trials, parallel_trial_count=parallel, max_failed_trial_count=max_failed,
        trial_job_spec=spec)


def finish(jobs: Any, name: str, timeout: float = 90) -> Any:
    return wait_until(lambda: (job := jobs.get_hyperparameter_tuning_job(name=name)).state.name in TERMINAL
                      and job, timeout)


def test_trials_run_the_trial_spec_with_their_parameters_and_report_their_metric(emulator: Any, jobs: Any,
                                                                                 logs: Any) -> None:
    created = jobs.create_hyperparameter_tuning_job(
        parent=emulator.parent, hyperparameter_tuning_job=tuning_job(_pool(), _pool(1), base="gs://bkt/out"))
    number = emulator.settings.project_number
    assert created.name.startswith(f"projects/{number}/locations/us-central1/hyperparameterTuningJobs/")
    assert created.state == vertex.JobState.JOB_STATE_QUEUED and not created.trials
    done = finish(jobs, created.name)

    assert done.state == vertex.JobState.JOB_STATE_SUCCEEDED, done.error
    assert done.start_time and done.end_time and done.end_time >= done.start_time
    trials = sorted(done.trials, key=lambda t: int(t.id))
    assert [t.id for t in trials] == ["1", "2", "3"]
    assert [t.parameters[0].value for t in trials] == [1.0, 2.0, 3.0]  # the grid, in order
    for trial in trials:
        assert trial.state == vertex.Trial.State.SUCCEEDED
        units = int(trial.parameters[0].value)
        # The final measurement: the last line that holds the metric.
        assert [(m.metric_id, m.value) for m in trial.final_measurement.metrics] == [("accuracy", units / 10)]
        job = jobs.get_custom_job(name=trial.custom_job)
        assert job.state == vertex.JobState.JOB_STATE_SUCCEEDED
        for pool in job.job_spec.worker_pool_specs:  # every pool: the spec's args, then the trial's
            assert list(pool.container_spec.args) == ["--fixed=1", f"--units={units}"]
            assert {e.name: e.value for e in pool.container_spec.env}["CLOUD_ML_TRIAL_ID"] == trial.id
        assert job.job_spec.base_output_directory.output_uri_prefix == f"gs://bkt/out/{trial.id}"
    trial_two = jobs.get_custom_job(name=trials[1].custom_job).name.rsplit("/", 1)[1]
    entries = list(logs.list_log_entries(request=ListLogEntriesRequest(
        resource_names=[f"projects/{emulator.project}"],
        filter=f'resource.labels.job_id="{trial_two}" AND resource.labels.task_name="workerpool0-0"')))
    assert entries and {e.labels["ml.googleapis.com/trial_id"] for e in entries} == {"2"}
    assert "trial 2 workerpool0 args ['--fixed=1', '--units=2']" in [e.text_payload for e in entries]
    listed = {j.name for j in jobs.list_custom_jobs(parent=emulator.parent)}
    assert not listed & {t.custom_job for t in trials}  # a trial's job is found by name, not listed
    found = [j.name for j in jobs.list_hyperparameter_tuning_jobs(request=vertex.ListHyperparameterTuningJobsRequest(
        parent=emulator.parent, filter='labels.suite="tuning"'))]
    assert created.name in found


def test_a_failed_trial_is_infeasible_and_max_failed_trial_count_ends_the_study(emulator: Any, jobs: Any) -> None:
    created = jobs.create_hyperparameter_tuning_job(parent=emulator.parent, hyperparameter_tuning_job=tuning_job(
        params=[_units(0, 3)], trials=4, parallel=1, max_failed=1))
    done = finish(jobs, created.name)
    assert done.state == vertex.JobState.JOB_STATE_FAILED
    assert len(done.trials) == 1  # units=0 failed first; no trial after it
    trial = done.trials[0]
    assert trial.state == vertex.Trial.State.INFEASIBLE and "non-zero status of 2" in trial.infeasible_reason
    assert "final_measurement" not in trial


def test_random_search_samples_within_the_ranges_on_their_scale(emulator: Any, jobs: Any) -> None:
    log_double = vertex.StudySpec.ParameterSpec(
        parameter_id="lr", double_value_spec=vertex.StudySpec.ParameterSpec.DoubleValueSpec(
            min_value=1e-4, max_value=1e-1), scale_type=vertex.StudySpec.ParameterSpec.ScaleType.UNIT_LOG_SCALE)
    created = jobs.create_hyperparameter_tuning_job(parent=emulator.parent, hyperparameter_tuning_job=tuning_job(
        params=[_units(1, 9), log_double], trials=5, parallel=5, algorithm="ALGORITHM_UNSPECIFIED"))
    done = finish(jobs, created.name)
    assert done.state == vertex.JobState.JOB_STATE_SUCCEEDED
    values = [{p.parameter_id: p.value for p in t.parameters} for t in done.trials]
    assert len(values) == 5
    assert all(1 <= v["units"] <= 9 and float(v["units"]).is_integer() and 1e-4 <= v["lr"] <= 1e-1 for v in values)
    assert len({v["lr"] for v in values}) == 5


@pytest.mark.parametrize(("change", "message"), [
    (lambda j: setattr(j.study_spec, "parameters", [vertex.StudySpec.ParameterSpec(
        parameter_id="lr", double_value_spec=vertex.StudySpec.ParameterSpec.DoubleValueSpec(
            min_value=0.1, max_value=0.2))]), "GRID_SEARCH cannot search a double_value_spec"),
    (lambda j: setattr(j.study_spec, "parameters", [_units(3, 3)]), "min_value must be less than max_value"),
    (lambda j: j.study_spec.metrics.pop(), "exactly one metric"),
    (lambda j: setattr(j, "max_trial_count", 0), "max_trial_count must be positive"),
    (lambda j: setattr(j.trial_job_spec.worker_pool_specs[0], "replica_count", 2),
     r"Field: trial_job_spec\.worker_pool_specs\[0\]\.replica_count; Message: expected exactly 1 replica"),
    (lambda j: setattr(j.study_spec, "median_automated_stopping_spec",
                       vertex.StudySpec.MedianAutomatedStoppingSpec(use_elapsed_duration=True)),
     "use_elapsed_duration is not supported"),
], ids=["grid-double", "empty-range", "no-metric", "no-trials", "two-chiefs", "stopping-on-time"])
def test_invalid_tuning_jobs_are_rejected(emulator: Any, jobs: Any, change: Any, message: str) -> None:
    job = tuning_job()
    change(job)
    with pytest.raises(exceptions.InvalidArgument, match=message):
        jobs.create_hyperparameter_tuning_job(parent=emulator.parent, hyperparameter_tuning_job=job)


def test_the_median_rule_is_the_one_the_api_documents() -> None:
    from tfcloud.emulator.tuning import _should_stop

    # Finished trials' performance up to step 3 is the running average of their values at steps <= 3: 2 and 4
    # (the values after step 3 do not count); the median is 3.
    finished = [[(1, 1.0), (2, 2.0), (3, 3.0), (4, 100.0)], [(1, 3.0), (2, 4.0), (3, 5.0)]]
    assert _should_stop([(1, 2.0), (2, 2.5), (3, 2.9)], finished, maximize=True)  # its best, 2.9, is below 3
    assert not _should_stop([(1, 3.0), (2, 2.0), (3, 1.0)], finished, maximize=True)  # its best, 3, is not below
    assert not _should_stop([(1, 0.0)], finished, maximize=True)  # the first step is never judged
    assert not _should_stop([(1, 0.0), (2, 0.0)], finished[:1], maximize=True)  # one finished trial is too few
    # Minimizing: its best is its lowest value, stopped when strictly above the median.
    assert _should_stop([(1, 9.0), (2, 3.1)], finished, maximize=False)  # median at step 2: (1.5 + 3.5) / 2 = 2.5
    assert not _should_stop([(1, 9.0), (2, 2.5)], finished, maximize=False)


def test_cancel_delete_and_names(emulator: Any, jobs: Any) -> None:
    slow = _pool(command=[sys.executable, "-c", "import time; time.sleep(60)"])
    created = jobs.create_hyperparameter_tuning_job(parent=emulator.parent,
                                                    hyperparameter_tuning_job=tuning_job(slow))
    with pytest.raises(exceptions.FailedPrecondition, match="cancel it first"):
        jobs.delete_hyperparameter_tuning_job(name=created.name)
    wait_until(lambda: len(jobs.get_hyperparameter_tuning_job(name=created.name).trials) == 2)
    jobs.cancel_hyperparameter_tuning_job(name=created.name)
    done = finish(jobs, created.name)
    assert done.state == vertex.JobState.JOB_STATE_CANCELLED and done.error.code == 1
    assert [t.state for t in done.trials] == [vertex.Trial.State.INFEASIBLE] * 2
    for trial in done.trials:
        job = wait_until(lambda t=trial: (j := jobs.get_custom_job(name=t.custom_job)).state.name in TERMINAL and j)
        assert job.state == vertex.JobState.JOB_STATE_CANCELLED
    with pytest.raises(exceptions.FailedPrecondition):
        jobs.cancel_hyperparameter_tuning_job(name=created.name)
    jobs.delete_hyperparameter_tuning_job(name=created.name).result(timeout=10)
    with pytest.raises(exceptions.NotFound):
        jobs.get_hyperparameter_tuning_job(name=created.name)
    with pytest.raises(exceptions.InvalidArgument):
        jobs.get_hyperparameter_tuning_job(name=f"{emulator.parent}/hyperparameterTuningJobs/abc")


def test_faults_apply_to_the_tuning_methods(emulator: Any, jobs: Any) -> None:
    emulator.faults.fail("ListHyperparameterTuningJobs", code="UNAVAILABLE")
    with pytest.raises(exceptions.ServiceUnavailable):
        list(jobs.list_hyperparameter_tuning_jobs(parent=emulator.parent, retry=None))
    emulator.faults.fail("CreateHyperparameterTuningJob", code="UNAVAILABLE", after=True)
    with pytest.raises(exceptions.ServiceUnavailable):
        jobs.create_hyperparameter_tuning_job(parent=emulator.parent, retry=None,
                                              hyperparameter_tuning_job=tuning_job(name="lost-answer"))
    # The answer was lost, the job made.
    made = wait_until(lambda: [j for j in jobs.list_hyperparameter_tuning_jobs(parent=emulator.parent)
                               if j.display_name == "lost-answer"])
    assert len(made) == 1
    assert finish(jobs, made[0].name).state == vertex.JobState.JOB_STATE_SUCCEEDED


@pytest.mark.docker
def test_trials_in_containers_report_through_the_mounted_metrics_file(engine: Any, python_base: str) -> None:
    from tfcloud.emulator import Emulator

    with Emulator(project="tuning-docker", storage=False, docker_host=engine.docker_host) as emulator:
        jobs = emulator.job_client()
        try:
            created = jobs.create_hyperparameter_tuning_job(
                parent=emulator.parent, hyperparameter_tuning_job=tuning_job(
                    _pool(image=python_base, command=["python3", "-c", TRIAL]), trials=2, parallel=2))
            done = finish(jobs, created.name, timeout=180)
        finally:
            jobs.transport.close()
    assert done.state == vertex.JobState.JOB_STATE_SUCCEEDED, [t.infeasible_reason for t in done.trials]
    assert sorted(t.final_measurement.metrics[0].value for t in done.trials) == [0.1, 0.2]
