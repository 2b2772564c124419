"""The Vertex AI backend against the emulator: the real aiplatform_v1 and logging_v2 clients, nothing patched.

Replicas run as local processes here (the emulator maps the image URI to the launcher); the end-to-end test
with a real image on a real Docker engine is in tests/test_e2e_vertex.py.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI tests need tfcloud[cloud]")

from tfcloud.errors import JobNotFoundError
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.settings import Settings
from tfcloud.flow.validate import build_job
from tfcloud.google.cloud.gcloud import RetryPolicy
from tfcloud.google.vertex.backend import VertexBackend, VertexJob
from tfcloud.job.artifacts import ImageRef
from tfcloud.job.states import JobState
from tfcloud.targets import VertexTarget
from tfcloud.view.outcome import failure

IMAGE = "localhost:5000/tfcloud/train:test"
FAIL_IMAGE = "localhost:5000/tfcloud/fail:test"
SLOW_IMAGE = "localhost:5000/tfcloud/slow:test"

OK_SCRIPT = """
import os, sys, time, tfcloud
print("hello from", os.environ.get("CLOUD_ML_JOB_ID", "?"), "remote", tfcloud.remote(), "args", sys.argv[1:])
for i in range(3):
    print("step", i, flush=True)
print("the last line", flush=True)
"""
#: Runs until the test lets it go: ``tock`` comes once a file named after the job appears in ``{gates}``.
SLOW_SCRIPT = """
import os, pathlib, time
print("tick", flush=True)
go, deadline = pathlib.Path({gates!r}) / os.environ["CLOUD_ML_JOB_ID"], time.monotonic() + 120
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.02)
print("tock", flush=True)
"""
FAIL_SCRIPT = """
import sys
print("about to fail", flush=True)
def train():
    raise RuntimeError("loss is NaN")
train()
"""


def _image_dir(root: Path, name: str, source: str, **spec_kwargs: object) -> Path:
    """What an image's work dir holds: the script and the launcher rendered for the cloud."""
    app = root / name
    app.mkdir()
    (app / "train.py").write_text(source)
    # No strategy: these replicas need not import TensorFlow (the e2e test trains for real).
    spec, target = build_job(entry_point=str(app / "train.py"), target="vertex", chief_config="CPU",
                             distribution_strategy=None, **spec_kwargs)
    job, _ = prepare(spec, target, app)
    assert job.launcher.parent == app
    return app


@pytest.fixture(scope="module")
def gates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where a SLOW_IMAGE job's chief looks for the file that lets it go (named after its job)."""
    return tmp_path_factory.mktemp("gates")


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory, gates: Path) -> Iterator[object]:
    from tfcloud.emulator import Emulator

    root = tmp_path_factory.mktemp("images")
    ok = _image_dir(root, "ok", OK_SCRIPT)
    fail = _image_dir(root, "fail", FAIL_SCRIPT)
    slow = _image_dir(root, "slow", SLOW_SCRIPT.format(gates=str(gates)))
    entrypoints = {IMAGE: [sys.executable, str(ok / "tfcloud_launcher.py")],
                   FAIL_IMAGE: [sys.executable, str(fail / "tfcloud_launcher.py")],
                   SLOW_IMAGE: [sys.executable, str(slow / "tfcloud_launcher.py")]}
    with Emulator(project="tfcloud-test", storage=False, entrypoints=entrypoints) as emu:
        yield emu


@pytest.fixture
def backend(emulator: object) -> Iterator[VertexBackend]:
    where = VertexTarget(project="tfcloud-test", region="us-central1",
                         emulator_host=emulator.endpoint)  # type: ignore[attr-defined]
    backend = VertexBackend(settings=Settings(target="vertex"), target=where,
                            retry=RetryPolicy(initial=0.01, maximum=0.05, deadline=10))
    yield backend
    backend.clients.close()
    emulator.faults.clear()  # type: ignore[attr-defined]


def _submit(backend: VertexBackend, tmp_path: Path, image: str = IMAGE, **spec_kwargs: object) -> VertexJob:
    script = tmp_path / "train.py"
    script.write_text("pass\n")
    spec, target = build_job(entry_point=str(script), target="vertex", chief_config="CPU",
                             project=backend.target.project, region=backend.target.region,
                             emulator_host=backend.target.emulator_host, **spec_kwargs)
    job, _ = prepare(spec, target, tmp_path)
    # The job's target (its options beside the fixture's place) makes the backend that submits it, as the SDK's
    # submit does: the backend sends the request its target describes.
    own = VertexBackend(settings=Settings(target="vertex"), target=target, retry=backend.retry)
    return own.submit(replace(job, image=ImageRef(uri=image)))


def _jobs_with(backend: VertexBackend, display_name: str) -> list[VertexJob]:
    return [j for j in backend.list_jobs(limit=100) if j.job.display_name == display_name]


def test_submit_follow_and_finish(backend: VertexBackend, tmp_path: Path) -> None:
    job = _submit(backend, tmp_path, worker_count=1, worker_config="CPU", display_name="follow-me",
                  entry_point_args=["--epochs", "2", "a b"])
    # Like the real service, the emulator names jobs with the project *number*.
    assert re.fullmatch(r"projects/[0-9]+/locations/us-central1/customJobs/[0-9]+", job.name)
    lines = list(job.logs(follow=True))
    states = [line.text.split(" ")[-1] for line in lines if line.replica == "job"]  # "ID is queued", "ID succeeded"
    assert states[-1] == "succeeded"
    assert "queued" in states or "provisioning" in states or "running" in states
    chief = [line.text for line in lines if line.replica == "chief-0"]
    worker = [line.text for line in lines if line.replica == "worker-0"]
    assert chief[-1] == "the last line" and worker[-1] == "the last line"
    assert any("remote True args ['--epochs', '2', 'a b']" in text for text in chief)
    assert job.info().state is JobState.SUCCEEDED and job.info().exit_code == 0
    assert failure(job) is None
    assert len(_jobs_with(backend, "follow-me")) == 1


def test_failed_job_reports_vertex_error_and_last_lines(backend: VertexBackend, tmp_path: Path) -> None:
    job = _submit(backend, tmp_path, image=FAIL_IMAGE)
    assert job.wait(timeout=120).state is JobState.FAILED
    assert job.info().exit_code == 1
    error = failure(job)
    assert error is not None and error.exit_code == 1
    assert str(error).startswith(
        f"Job {job.job_id} failed: The replica workerpool0-0 exited with a non-zero status of 1.")
    assert re.search(r"^Last \d+ lines? of chief-0:$", str(error), re.M)
    assert "chief-0 | RuntimeError: loss is NaN" in error.log_tail


def test_transient_create_errors_make_exactly_one_job(backend: VertexBackend, emulator: object,
                                                     tmp_path: Path) -> None:
    emulator.faults.fail("CreateCustomJob", code="UNAVAILABLE", times=2)  # type: ignore[attr-defined]
    job = _submit(backend, tmp_path, display_name="retried-create")
    assert job.wait(timeout=120).state is JobState.SUCCEEDED
    assert len(_jobs_with(backend, "retried-create")) == 1


def test_transient_get_and_log_errors_are_survived(backend: VertexBackend, emulator: object,
                                                  tmp_path: Path) -> None:
    faults = emulator.faults  # type: ignore[attr-defined]
    job = _submit(backend, tmp_path)
    faults.fail("GetCustomJob", code="UNAVAILABLE", times=3)
    faults.fail("ListLogEntries", code="UNAVAILABLE", times=3)
    faults.fail("TailLogEntries", code="UNAVAILABLE", times=2)  # a broken log stream, twice
    lines = [line.text for line in job.logs(follow=True) if line.replica == "chief-0"]
    assert lines[-1] == "the last line"
    assert [line for line in lines if line.startswith("step")] == ["step 0", "step 1", "step 2"]  # none twice
    assert job.info().state is JobState.SUCCEEDED


def test_cancel_a_queued_job(backend: VertexBackend, emulator: object, tmp_path: Path) -> None:
    emulator.faults.hold_queued()  # type: ignore[attr-defined]
    job = _submit(backend, tmp_path, display_name="to-cancel")
    assert job.info().state is JobState.QUEUED
    job.cancel()
    assert job.wait(timeout=60).state is JobState.CANCELLED
    job.cancel()  # cancelling a finished job is not an error for the user


def test_attach_by_short_id_or_name_and_unknown_job(backend: VertexBackend, tmp_path: Path) -> None:
    job = _submit(backend, tmp_path)
    assert backend.attach(job.job_id).name == job.name
    assert backend.attach(job.name).job_id == job.job_id
    with pytest.raises(JobNotFoundError):
        backend.attach("999999999")
    job.wait(timeout=120)


def test_list_by_label_and_state(backend: VertexBackend, tmp_path: Path) -> None:
    job = _submit(backend, tmp_path, job_labels={"team": "vision"})
    job.wait(timeout=120)
    labelled = backend.list_jobs(labels={"team": "vision"})
    assert [j.job_id for j in labelled] == [job.job_id]
    succeeded = {j.job_id for j in backend.list_jobs(state=JobState.SUCCEEDED, limit=100)}
    assert job.job_id in succeeded
    assert not {j.job_id for j in backend.list_jobs(state=JobState.RUNNING, limit=100)} & {job.job_id}


def test_logs_of_one_replica(backend: VertexBackend, tmp_path: Path) -> None:
    job = _submit(backend, tmp_path, worker_count=2, worker_config="CPU")
    job.wait(timeout=120)
    deadline = time.monotonic() + 30  # the replica's lines reach Cloud Logging after its job ends: waited for
    while not (lines := list(job.logs(replica="worker-1"))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lines and {line.replica for line in lines} == {"worker-1"}


def test_missing_project_says_how_to_set_it() -> None:
    from tfcloud.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as err:
        VertexBackend(settings=Settings(target="vertex"))
    assert err.value.message == "No Google Cloud project for Vertex AI."
    assert "TFCLOUD_PROJECT" in str(err.value.hint)


def test_no_stray_image_dirs(tmp_path: Path) -> None:
    # The fixture's image dirs live under pytest's tmp dirs, never in the working directory.
    assert not any(Path.cwd().iterdir())
    shutil.rmtree(tmp_path, ignore_errors=True)


# --- the CLI's job commands on Vertex AI jobs ----------------------------------------------------------------
@pytest.fixture
def vertex_env(emulator: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", emulator.endpoint)  # type: ignore[attr-defined]
    monkeypatch.setenv("TFCLOUD_PROJECT", "tfcloud-test")
    monkeypatch.setenv("TFCLOUD_TARGET", "vertex")


def test_the_console_link_names_the_real_console_or_the_emulator() -> None:
    from tfcloud.google.vertex.backend import console_url

    name = "projects/my-project/locations/europe-west4/customJobs/123"
    assert console_url(name) == ("https://console.cloud.google.com/vertex-ai/locations/europe-west4/training/123/"
                                 "cpu?project=my-project")
    assert console_url(name, emulator_host="127.0.0.1:8470") == f"grpc://127.0.0.1:8470/{name}"


def test_cli_status_logs_list_cancel(backend: VertexBackend, emulator: object, tmp_path: Path, vertex_env: None,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tfcloud.cli import main

    job = _submit(backend, tmp_path, job_labels={"cli": "yes"})
    assert main(["logs", job.job_id, "-f"]) == 0
    out = capsys.readouterr().out
    assert "chief-0 | the last line" in out
    assert re.search(rf"^job +\| {job.job_id} succeeded$", out, re.M)  # state changes as they happen
    assert " is succeeded" not in out

    assert main(["status", job.name, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["job_id"] == job.job_id and info["state"] == "succeeded"
    # the emulator has no web console: its address and the job's name instead of a console.cloud link
    assert info["console_url"] == f"grpc://{emulator.endpoint}/{job.name}"  # type: ignore[attr-defined]

    assert main(["list", "--label", "cli=yes", "--json"]) == 0
    assert [row["job_id"] for row in json.loads(capsys.readouterr().out)] == [job.job_id]

    emulator.faults.hold_queued()  # type: ignore[attr-defined]
    queued = _submit(backend, tmp_path)
    assert main(["cancel", queued.job_id]) == 0
    assert capsys.readouterr().out.split("\t")[0] == queued.job_id
    assert queued.wait(timeout=60).state is JobState.CANCELLED


def test_cli_logs_follow_of_failed_job_exits_1(backend: VertexBackend, tmp_path: Path, vertex_env: None,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.cli import main

    job = _submit(backend, tmp_path, image=FAIL_IMAGE)
    assert main(["logs", job.job_id, "--follow"]) == 1
    captured = capsys.readouterr()
    assert "chief-0 | RuntimeError: loss is NaN" in captured.out
    assert f"Job {job.job_id} failed: The replica workerpool0-0 exited with a non-zero status of 1." in captured.err


def test_cli_unknown_job_exits_2(vertex_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.cli import main

    assert main(["status", "424242"]) == 2
    assert capsys.readouterr().err.startswith("Error: Looking up job 424242: not found")


def test_lost_create_answer_is_not_a_second_job(backend: VertexBackend, emulator: object, tmp_path: Path) -> None:
    # The first create makes the job but its answer is lost (UNAVAILABLE): the retry must find that job.
    emulator.faults.fail("CreateCustomJob", code="UNAVAILABLE", after=True)  # type: ignore[attr-defined]
    job = _submit(backend, tmp_path, display_name="lost-answer")
    assert job.wait(timeout=120).state is JobState.SUCCEEDED
    assert len(_jobs_with(backend, "lost-answer")) == 1


def test_missing_credentials_say_how_to_log_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tfcloud.errors import ConfigurationError

    # No key file, an empty gcloud config, and no metadata-server probe (nothing may leave this machine).
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    backend = VertexBackend(settings=Settings(target="vertex"), target=VertexTarget(project="my-project"))
    with pytest.raises(ConfigurationError) as err:
        backend.attach("123")
    assert err.value.message == "No Google Cloud credentials found (Application Default Credentials)."
    assert str(err.value.hint).startswith("Run `gcloud auth application-default login`")


def test_lines_stream_while_the_job_runs(backend: VertexBackend, gates: Path, tmp_path: Path) -> None:
    job = _submit(backend, tmp_path, image=SLOW_IMAGE)
    states_at_line = {}
    for line in job.logs(follow=True):
        if line.replica == "chief-0" and line.text in ("tick", "tock"):
            states_at_line[line.text] = job.info().state
            if line.text == "tick":
                (gates / job.job_id).touch()  # the chief waits for this: "tick" is read while it runs
    assert states_at_line["tick"] is JobState.RUNNING  # shown while the chief still waits
    assert "tock" in states_at_line  # and the last line arrives too
    assert job.info().state is JobState.SUCCEEDED


def test_the_interface_close_list_and_info(backend: VertexBackend, tmp_path: Path) -> None:
    from tfcloud.backends.base import Backend, JobHandle

    assert isinstance(backend, Backend)
    job = _submit(backend, tmp_path, display_name="through-the-interface", job_labels={"via": "interface"})
    assert isinstance(job, JobHandle)
    info = job.wait(timeout=120)
    assert info.state is JobState.SUCCEEDED and info.exit_code == 0 and info.target == "vertex"
    assert info.display_name == "through-the-interface" and info.labels["via"] == "interface"
    assert info.created is not None and info.console_url is not None and info.failed_replica is None
    listed = {i.job_id: i for i in backend.list(state=JobState.SUCCEEDED)}
    assert listed[job.job_id].labels["via"] == "interface"
    backend.close()
    assert backend.clients.opened == ()  # the clients, and their gRPC channels, are closed
    assert job.info().state is JobState.SUCCEEDED  # and a handle reopens what it needs


# --- reading only what is asked: --tail and --since through Cloud Logging --------------------------------------
def _reads_since(emulator: object, before: int) -> list[object]:
    return list(emulator.log_store.reads)[before:]  # type: ignore[attr-defined]


def test_logs_tail_and_since_read_only_what_is_asked(backend: VertexBackend, emulator: object,
                                                     tmp_path: Path) -> None:
    job = _submit(backend, tmp_path, worker_count=1, worker_config="CPU", display_name="tail-me")
    assert job.wait(timeout=120).state is JobState.SUCCEEDED
    everything = list(job.logs())
    assert len(everything) >= 10 and all(line.timestamp for line in everything)
    reads = len(emulator.log_store.reads)  # type: ignore[attr-defined]

    # --tail: newest first, one page of exactly N entries, put back in order.
    last = list(job.logs(tail=3))
    assert last == everything[-3:]
    asked = _reads_since(emulator, reads)
    assert [(r.order_by, r.page_size, r.served, r.page_token) for r in asked] == [  # type: ignore[attr-defined]
        ("timestamp desc", 3, 3, "")]

    # --since: a timestamp filter; the service serves only the lines from then on.
    cut = everything[-4].timestamp
    assert cut is not None
    reads = len(emulator.log_store.reads)  # type: ignore[attr-defined]
    recent = list(job.logs(since=cut))
    assert recent == [line for line in everything if line.timestamp is not None and line.timestamp >= cut]
    asked = _reads_since(emulator, reads)
    assert len(asked) == 1 and 'timestamp>="' in asked[0].filter  # type: ignore[attr-defined]
    assert asked[0].served == len(recent) < len(everything)  # type: ignore[attr-defined]

    # Both, one replica: the last line of worker-0 from the start of its last 3, in one page of one entry.
    worker = [line for line in everything if line.replica == "worker-0"]
    cut = worker[-3].timestamp
    reads = len(emulator.log_store.reads)  # type: ignore[attr-defined]
    assert list(job.logs(replica="worker-0", since=cut, tail=1)) == worker[-1:]
    assert [r.served for r in _reads_since(emulator, reads)] == [1]  # type: ignore[attr-defined]

    # Following a finished job with --tail: the last lines, then the job's end.
    followed = [line for line in job.logs(follow=True, tail=2) if line.replica != "job"]
    assert followed == everything[-2:]
    assert list(job.logs(tail=0)) == []
    assert [line for line in job.logs(follow=True, tail=0) if line.replica != "job"] == []  # only new lines


def test_the_timeline_of_a_vertex_job(backend: VertexBackend, tmp_path: Path, vertex_env: None,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tfcloud import sdk
    from tfcloud.cli import main
    from tfcloud.records.timeline import Recorder, record_path, save

    recorder = Recorder()
    recorder.begin("submit")
    job = _submit(backend, tmp_path, display_name="timed")
    recorder.end()
    save(record_path(sdk.state_dir(), job.job_id), recorder.stages)  # what sdk.submit keeps
    info = job.wait(timeout=120)
    assert info.state is JobState.SUCCEEDED
    assert info.created is not None and info.started is not None and info.ended is not None
    assert info.created <= info.started <= info.ended

    timeline = sdk.timeline(job)
    assert [s.name for s in timeline.stages] == ["submit", "queued", "run"]
    starts = [s.start for s in timeline.stages]
    assert starts == sorted(starts)
    assert all(s.end is not None and s.duration() >= 0 for s in timeline.stages)
    assert timeline.stages[-1].end == info.ended

    assert main(["status", job.job_id, "--timeline"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"{job.job_id}  succeeded"
    out = out[out.index("\n\n") + 1:]  # the timeline follows the status, after a blank line
    assert [row.split()[0] for row in out.splitlines()[2:]] == ["submit", "queued", "run", "total"]
    assert main(["status", job.job_id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [s["stage"] for s in shown["timeline"]] == ["submit", "queued", "run"]
    assert all(s["duration_s"] >= 0 for s in shown["timeline"])
    assert shown["started"] and shown["ended"]


def test_following_a_queued_job_says_so_on_a_terminal(backend: VertexBackend, emulator: object, tmp_path: Path,
                                                      vertex_env: None, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import threading

    from tfcloud import sdk
    from tfcloud.view import console

    monkeypatch.setenv("FORCE_COLOR", "1")  # rich draws its status line only on a terminal
    console.get_console.cache_clear()
    try:
        assert console.get_console().is_terminal
        emulator.faults.hold_queued()  # type: ignore[attr-defined]
        job = _submit(backend, tmp_path)
        release = threading.Timer(1.5, emulator.faults.release_queued)  # type: ignore[attr-defined]
        release.start()
        assert sdk.follow(job) == 0
        release.join()
    finally:
        console.get_console.cache_clear()
    err = capsys.readouterr().err
    assert re.search(r"Queued for \d+\.\ds \(waiting for resources\)", err), err


def test_the_log_prefix_has_one_width_from_the_first_line(backend: VertexBackend, tmp_path: Path,
                                                          vertex_env: None,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Replicas show up one by one on Vertex AI, and so do the ``job`` and ``service`` pseudo-replicas: the
    prefix column is aligned to every name the job's pools can have from the start, never widened mid-stream."""
    from tfcloud import sdk

    job = _submit(backend, tmp_path, worker_count=10, worker_config="CPU")
    assert job.info().log_sources == ("chief-0", *(f"worker-{i}" for i in range(10)), "job", "service")
    assert sdk.follow(job, all_replicas=True) == 0  # every replica's lines (folded, the column fits "11 replicas")
    lines = [line for line in capsys.readouterr().out.splitlines() if " | " in line]
    assert {line.split(" | ")[0].strip() for line in lines} >= {"job", "chief-0", "worker-9"}
    assert {line.index(" | ") for line in lines} == {len("worker-9")}  # the longest name, on every line


def test_status_lists_every_replica_from_the_pools_with_its_machine_and_last_line(
        backend: VertexBackend, tmp_path: Path, vertex_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    """A finished Vertex AI job's status names each replica its pools held (Vertex AI reports one state per
    job: each replica has it), the pool's machine, and the last line Cloud Logging holds of each."""
    from tfcloud.cli import main

    job = _submit(backend, tmp_path, worker_count=2, worker_config="CPU")
    assert job.wait(timeout=120).state is JobState.SUCCEEDED
    assert main(["status", job.job_id]) == 0
    out = capsys.readouterr().out
    machine = job.job.job_spec.worker_pool_specs[1].machine_spec.machine_type
    for name in ("chief-0", "worker-0", "worker-1"):
        assert re.search(rf"^ +(replicas)? +{name} +succeeded +{re.escape(machine)}$", out, re.M), out
        assert re.search(rf"^ +(said)? +{name} +the last line$", out, re.M), out
    assert "none yet" not in out

    failed = _submit(backend, tmp_path, image=FAIL_IMAGE, worker_count=1, worker_config="CPU")
    assert failed.wait(timeout=120).state is JobState.FAILED
    assert main(["status", failed.job_id, "--json"]) == 0
    replicas = {r["name"]: r for r in json.loads(capsys.readouterr().out)["replicas"]}
    # Both replicas run the failing script: the one Vertex AI's error names (the first to exit) failed with its
    # status, and the other's end is unknown (Vertex AI stopped it).
    (named,) = [name for name, r in replicas.items() if r["state"] == "failed"]
    assert replicas[named]["exit_code"] == 1
    (other,) = set(replicas) - {named}
    assert replicas[other]["state"] == "unknown" and replicas[other]["exit_code"] is None
    assert replicas["worker-0"]["machine"] == machine
