"""The local backend without TensorFlow: cluster plan, environment, logs, outcome rules, attach/cancel.

The scripts here run through the real launcher with ``distribution_strategy=None`` (the launcher then does
not import TensorFlow), so each job takes a fraction of a second.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.targets.localjobs import assert_no_survivors, replica_pid, wait_for_line
from tfcloud.backends.base import JobHandle
from tfcloud.entry.launcher import render_launcher
from tfcloud.errors import ConfigurationError, JobNotFoundError
from tfcloud.flow.validate import build_spec
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.jobids import make_job_id
from tfcloud.job.states import JobState
from tfcloud.replicas import loopback_env, plan_cluster
from tfcloud.targets import get_backend
from tfcloud.targets.local.backend import LocalBackend, LocalJob
from tfcloud.view.outcome import failure

# Every replica prints its view of the job, then does what its role's argument says:
# "ok" exits 0, "raise" raises ("raise<N>" after N seconds), "exit3" calls sys.exit(3), "forever" waits until killed,
# "ignore-term" waits and ignores SIGTERM, "sleep<N>" sleeps N seconds and exits 0, "wedge" blocks in native code
# that holds the GIL (as a wedged extension would: the launcher's heartbeat thread cannot run).
REPLICA = r'''
import json, os, signal, sys, time
task = json.loads(os.environ["TF_CONFIG"])["task"]
name = "{type}-{index}".format(**task)
print("view", json.dumps({"task": task, "argv": sys.argv[1:], "cwd": os.getcwd(),
      "cluster": json.loads(os.environ["TF_CONFIG"])["cluster"],
      "env": {k: os.environ.get(k) for k in ("PYTHONUNBUFFERED", "no_proxy", "NO_PROXY", "no_grpc_proxy",
                                             "TFCLOUD_REMOTE", "TFCLOUD_REPLICA", "MY_SETTING",
                                             "TFCLOUD_HEARTBEAT_FILE")}}))
print("ready", name, flush=True)
actions = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
action = actions.get(task["type"], "ok")
if action.startswith("raise"):
    time.sleep(float(action[5:] or 0))
    raise RuntimeError("boom in " + name)
if action == "exit3":
    sys.exit(3)
if action == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if action in ("forever", "ignore-term"):
    while True:
        time.sleep(0.1)
if action == "wedge":
    import ctypes
    ctypes.PyDLL(None).sleep(600)
if action.startswith("sleep"):
    time.sleep(float(action[5:]))
if action == "flood":
    for i in range(20000):
        print("line", i)
    sys.stdout.write("last line without a newline")
    sys.exit(0)
print("done", name)
'''


@pytest.fixture
def replica_script(write_script) -> Path:  # type: ignore[no-untyped-def]
    return write_script("replica.py", REPLICA)


def views(handle: LocalJob) -> dict[str, dict[str, object]]:
    found = {}
    for line in handle.logs():
        if line.text.startswith("view "):
            found[line.replica] = json.loads(line.text[5:])
    return found


# -- the plan ---------------------------------------------------------------------------------------------
def test_plan_cluster_gives_every_replica_its_own_port_and_task(script: Path) -> None:
    spec = build_spec(entry_point=script, worker_count=2, worker_config="CPU", ps_count=1,
                      evaluator_count=1)
    plan = plan_cluster(spec, ports=[5000, 5001, 5002, 5003, 5004])
    assert [r.name for r in plan] == ["chief-0", "worker-0", "worker-1", "ps-0", "evaluator-0"]
    cluster = {"chief": ["127.0.0.1:5000"], "worker": ["127.0.0.1:5001", "127.0.0.1:5002"],
               "ps": ["127.0.0.1:5003"]}
    assert plan[2].tf_config == {"cluster": cluster, "task": {"type": "worker", "index": 1}}
    assert plan[4].tf_config == {"cluster": cluster, "task": {"type": "evaluator", "index": 0}}
    assert json.loads(plan[0].env()["TF_CONFIG"])["task"] == {"type": "chief", "index": 0}


def test_plan_cluster_picks_distinct_free_ports(script: Path) -> None:
    spec = build_spec(entry_point=script, worker_count=3, worker_config="CPU")
    addresses = [a for r in plan_cluster(spec)[:1] for pool in r.tf_config["cluster"].values() for a in pool]
    assert len(addresses) == 4 and len(set(addresses)) == 4
    assert all(a.startswith("127.0.0.1:") for a in addresses)


def test_loopback_env_appends_to_existing_values() -> None:
    env = loopback_env({"no_proxy": "corp.example,localhost", "NO_PROXY": ""})
    assert env == {"no_proxy": "corp.example,localhost,127.0.0.1", "NO_PROXY": "127.0.0.1,localhost",
                   "no_grpc_proxy": "127.0.0.1,localhost"}


def test_job_id_is_short_and_readable(tmp_path: Path) -> None:
    script = tmp_path / "My Train_v2.py"
    script.write_text("pass\n")
    spec = build_spec(entry_point=script)
    job_id = make_job_id(spec, now=datetime.datetime(2025, 1, 2, 3, 4, 5))
    assert job_id.startswith("local-my-train-v2-20250102-030405-")
    assert len(job_id.rsplit("-", 1)[1]) == 4


def test_registry_gives_the_local_backend(tmp_path: Path) -> None:
    backend = get_backend("local", home=tmp_path)
    assert isinstance(backend, LocalBackend)
    assert backend.jobs_dir == tmp_path / "jobs"


def test_state_dir_comes_from_tfcloud_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TFCLOUD_HOME", str(tmp_path / "state"))
    assert LocalBackend().jobs_dir == tmp_path / "state" / "jobs"
    monkeypatch.delenv("TFCLOUD_HOME")
    assert LocalBackend().jobs_dir == Path("~/.local/state/tfcloud/jobs").expanduser()


# -- a job that succeeds ----------------------------------------------------------------------------------
def test_every_replica_runs_the_launcher_with_its_own_tf_config(submit, replica_script: Path,  # type: ignore[no-untyped-def]
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("no_proxy", "corp.example")
    handle = submit(replica_script, distribution_strategy=None, worker_count=2, ps_count=0,
                    entry_point_args=["a b", "--flag", "worker=ok"], env={"MY_SETTING": "42"})
    assert isinstance(handle, JobHandle)
    assert handle.wait(60).state is JobState.SUCCEEDED
    assert handle.info().exit_code == 0
    seen = views(handle)
    assert sorted(seen) == ["chief-0", "worker-0", "worker-1"]
    clusters = {json.dumps(v["cluster"], sort_keys=True) for v in seen.values()}
    assert len(clusters) == 1
    for name, view in seen.items():
        assert "{type}-{index}".format(**view["task"]) == name  # type: ignore[arg-type]
        assert view["argv"] == ["a b", "--flag", "worker=ok"]
        assert view["cwd"] == str(replica_script.parent)
        env = view["env"]
        assert env["PYTHONUNBUFFERED"] == "1" and env["TFCLOUD_REMOTE"] == "1"  # type: ignore[index]
        assert env["TFCLOUD_REPLICA"] == name and env["MY_SETTING"] == "42"  # type: ignore[index]
        assert env["no_proxy"] == "corp.example,127.0.0.1,localhost"  # type: ignore[index]
        assert env["no_grpc_proxy"].split(",")[-2:] == ["127.0.0.1", "localhost"]  # type: ignore[index]
        assert env["TFCLOUD_HEARTBEAT_FILE"] == str(handle.job_dir / "heartbeats" / name)  # type: ignore[index]
    assert sorted(p.name for p in handle.log_dir.iterdir()) == ["chief-0.log", "worker-0.log", "worker-1.log"]
    assert "done chief-0" in handle.log_file("chief-0").read_text()
    assert_no_survivors(handle)


def test_no_line_is_lost_at_the_end(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, worker_count=1,
                    entry_point_args=["chief=flood", "worker=flood"])
    followed = list(handle.logs(follow=True))
    assert handle.info().state is JobState.SUCCEEDED
    for name in ("chief-0", "worker-0"):
        texts = [ln.text for ln in followed if ln.replica == name]
        assert texts[-1] == "last line without a newline"
        assert [t for t in texts if t.startswith("line ")] == [f"line {i}" for i in range(20000)]
        assert handle.log_file(name).read_text().endswith("line 19999\nlast line without a newline\n")
    assert [ln.text for ln in handle.logs(replica="worker-0")] == \
        [ln.text for ln in followed if ln.replica == "worker-0"]


def test_stderr_lines_are_marked(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    script = write_script("err.py", "import sys\nprint('out')\nprint('err', file=sys.stderr)\n")
    handle = submit(script, distribution_strategy=None)
    handle.wait(30)
    streams = {ln.text: ln.stream for ln in handle.logs()}
    assert streams["out"] == "stdout" and streams["err"] == "stderr"
    assert all(ln.timestamp for ln in handle.logs())


def test_workers_that_serve_forever_are_stopped_when_the_chief_ends(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    # A grace no run reaches: the job ends within the wait because the workers are stopped when the chief ends,
    # not after the grace (a bound that a loaded machine meets, where a stopwatch's "< 8 s" was not).
    backend = LocalBackend(finish_grace_s=600)
    handle = submit(replica_script, backend=backend, distribution_strategy=None, worker_count=2, ps_count=1,
                    entry_point_args=["chief=sleep0.5", "worker=forever", "ps=forever"])
    assert handle.wait(60).state is JobState.SUCCEEDED
    replicas = handle.replicas
    assert replicas["chief-0"]["exit_code"] == 0
    for name in ("worker-0", "worker-1", "ps-0"):
        assert replicas[name]["stopped_by_tfcloud"] is True
        assert replicas[name]["exit_code"] == 128 + signal.SIGTERM
    assert_no_survivors(handle)


def test_the_chief_decides_and_late_workers_get_a_grace_period(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    backend = LocalBackend(finish_grace_s=1.0)
    handle = submit(replica_script, backend=backend, distribution_strategy=None, worker_count=1,
                    entry_point_args=["chief=ok", "worker=forever"])
    assert handle.wait(30).state is JobState.SUCCEEDED
    assert handle.info().exit_code == 0
    assert handle.replicas["worker-0"]["stopped_by_tfcloud"] is True
    assert_no_survivors(handle)


def test_a_worker_that_ends_first_does_not_end_the_job(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, worker_count=1,
                    entry_point_args=["chief=sleep1", "worker=ok"])
    assert handle.wait(30).state is JobState.SUCCEEDED
    assert any(ln.text == "done chief-0" for ln in handle.logs(replica="chief-0"))


# -- failures, repeated -----------------------------------------------------------------------------------
FAULTS = {
    # name: (script arguments, what the test does to the running job, exit code, failing replica)
    "chief raises": (["chief=raise", "worker=forever"], None, 1, "chief-0"),
    "chief sys.exit(3)": (["chief=exit3", "worker=forever"], None, 3, "chief-0"),
    "worker raises": (["chief=forever", "worker=raise"], None, 1, "worker-0"),
    "SIGKILL worker": (["chief=forever", "worker=forever"], ("worker-0", signal.SIGKILL), 137, "worker-0"),
    "SIGKILL chief": (["chief=forever", "worker=forever"], ("chief-0", signal.SIGKILL), 137, "chief-0"),
    "SIGSTOP worker": (["chief=forever", "worker=forever"], ("worker-0", signal.SIGSTOP), 1, "worker-0"),
}


@pytest.mark.parametrize("attempt", range(3))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_failing_replica_stops_the_whole_job(submit, replica_script: Path, fault: str, attempt: int) -> None:  # type: ignore[no-untyped-def]
    args, action, exit_code, failed = FAULTS[fault]
    handle = submit(replica_script, distribution_strategy=None, worker_count=1, ps_count=0, liveness_timeout=3,
                    entry_point_args=args)
    if action is not None:
        replica, sig = action
        wait_for_line(handle, "ready", replica=replica, timeout=30)
        os.kill(replica_pid(handle, replica), sig)
    started = time.monotonic()
    assert handle.wait(30).state is JobState.FAILED
    assert time.monotonic() - started < 30
    assert handle.info().exit_code == exit_code
    assert handle.info().failed_replica == failed
    error = failure(handle)
    assert error is not None and error.exit_code == exit_code
    if "raises" in fault:
        assert "RuntimeError: boom in" in error.log_tail
        assert f"{failed} | RuntimeError: boom in {failed}" in str(error)
    assert_no_survivors(handle)


# -- liveness -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["SIGSTOP", "wedged"])
def test_a_replica_without_heartbeat_fails_the_job_by_its_name(submit, replica_script: Path, how: str) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, worker_count=1, liveness_timeout=5,
                    entry_point_args=["chief=forever", "worker=forever" if how == "SIGSTOP" else "worker=wedge"])
    wait_for_line(handle, "ready", replica="worker-0", timeout=30)
    if how == "SIGSTOP":
        os.kill(replica_pid(handle, "worker-0"), signal.SIGSTOP)
    info = handle.wait(60)
    assert info.state is JobState.FAILED
    assert (info.exit_code, info.failed_replica) == (1, "worker-0")
    assert info.message == "worker-0 sent no heartbeat for 5 s (stopped or hung)."
    assert handle.replicas["chief-0"]["stopped_by_tfcloud"] is True  # the rest of the cluster is stopped
    assert_no_survivors(handle)  # the frozen one too


def test_a_failure_after_a_peer_went_silent_is_the_silent_peers(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    """As TensorFlow's collectives do about ten seconds after a peer stopped, the chief fails (raises) before the
    liveness limit: the job names the worker that stopped beating, not the chief."""
    handle = submit(replica_script, distribution_strategy=None, worker_count=1,
                    entry_point_args=["chief=raise12", "worker=forever"])
    wait_for_line(handle, "ready", replica="worker-0", timeout=30)
    os.kill(replica_pid(handle, "worker-0"), signal.SIGSTOP)
    info = handle.wait(60)
    assert (info.state, info.exit_code, info.failed_replica) == (JobState.FAILED, 1, "worker-0"), info.message
    assert re.fullmatch(r"worker-0 sent no heartbeat for \d+ s \(stopped or hung\); chief-0 exited with code 1 "
                        r"after losing it\.", info.message or ""), info.message
    assert_no_survivors(handle)


def test_liveness_can_be_turned_off(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, liveness_timeout=0, entry_point_args=["chief=ok"])
    assert handle.wait(30).state is JobState.SUCCEEDED
    assert views(handle)["chief-0"]["env"]["TFCLOUD_HEARTBEAT_FILE"] is None  # type: ignore[index]
    assert not (handle.job_dir / "heartbeats").exists()


def test_a_replica_that_ignores_sigterm_is_killed(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    backend = LocalBackend(stop_grace_s=1.0)
    handle = submit(replica_script, backend=backend, distribution_strategy=None, worker_count=1,
                    entry_point_args=["chief=raise1", "worker=ignore-term"])
    assert handle.wait(30).state is JobState.FAILED
    assert handle.replicas["worker-0"]["exit_code"] == 128 + signal.SIGKILL
    assert_no_survivors(handle)


def test_processes_a_replica_started_are_stopped_too(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    script = write_script("spawn.py", (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "print('child', child.pid, flush=True)\n"
        "raise SystemExit(0)\n"))
    handle = submit(script, distribution_strategy=None)
    assert handle.wait(30).state is JobState.SUCCEEDED
    child = int(next(ln.text.split()[1] for ln in handle.logs() if ln.text.startswith("child ")))
    deadline = time.monotonic() + 5
    while psutil.pid_exists(child) and psutil.Process(child).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the replica's child survived the job"
        time.sleep(0.05)
    assert_no_survivors(handle)


# -- cancel, attach, the supervisor ----------------------------------------------------------------------
def test_cancel_stops_every_replica(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, worker_count=2, ps_count=1,
                    entry_point_args=["chief=forever", "worker=forever", "ps=forever"])
    wait_for_line(handle, "ready", replica="ps-0", timeout=30)
    handle.cancel()
    assert handle.wait(30).state is JobState.CANCELLED
    assert handle.info().exit_code == 130
    assert failure(handle) is not None
    assert_no_survivors(handle)


def test_attach_status_logs_and_cancel_from_another_process(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, worker_count=1,
                    entry_point_args=["chief=forever", "worker=forever"])
    wait_for_line(handle, "ready", replica="worker-0", timeout=30)
    code = (
        "import sys\n"
        "from tfcloud.targets.local.backend import LocalBackend\n"
        "job = LocalBackend().attach(sys.argv[1])\n"
        "print(job.info().state.value, [l.text for l in job.logs(replica='worker-0')][-1])\n"
        "job.cancel()\n"
        "print(job.wait(30).state.value, job.info().exit_code)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, handle.job_id], capture_output=True, text=True,
                         timeout=60, check=True).stdout.splitlines()
    assert out == ["running ready worker-0", "cancelled 130"]
    assert handle.wait(10).state is JobState.CANCELLED
    assert_no_survivors(handle)


def test_logs_follow_from_an_attached_handle_ends_with_the_job(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, entry_point_args=["chief=sleep1"])
    attached = LocalBackend().attach(handle.job_id)
    texts = [ln.text for ln in attached.logs(follow=True)]
    assert texts[-1] == "done chief-0"
    assert attached.info().state is JobState.SUCCEEDED and attached.info().exit_code == 0


def test_attach_an_unknown_job_says_so(tmp_path: Path) -> None:
    with pytest.raises(JobNotFoundError, match="No local job `local-nope` in"):
        LocalBackend(home=tmp_path).attach("local-nope")


def test_wait_with_a_timeout_returns_the_current_state(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, entry_point_args=["chief=forever"])
    assert handle.wait(0.3).state in (JobState.PROVISIONING, JobState.RUNNING)
    handle.cancel()
    assert handle.wait(30).state is JobState.CANCELLED


def test_a_killed_supervisor_takes_its_replicas_with_it(submit, replica_script: Path) -> None:  # type: ignore[no-untyped-def]
    handle = submit(replica_script, distribution_strategy=None, worker_count=1,
                    entry_point_args=["chief=forever", "worker=forever"])
    wait_for_line(handle, "ready", replica="worker-0", timeout=30)
    os.kill(handle.raw_status()["supervisor_pid"], signal.SIGKILL)
    assert handle.wait(30).state is JobState.FAILED
    assert "supervisor" in (handle.info().message or "")
    deadline = time.monotonic() + 5
    while True:
        try:
            assert_no_survivors(handle)
            break
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# -- what submit checks and copies ------------------------------------------------------------------------
def test_missing_requirements_stop_the_job_before_it_starts(submit, replica_script: Path,  # type: ignore[no-untyped-def]
                                                           tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("pytest\nno-such-package-tfcloud>=1\n")
    with pytest.raises(ConfigurationError) as info:
        submit(replica_script, requirements_txt=reqs, requirements=("another-missing-one",))
    message = str(info.value)
    assert "no-such-package-tfcloud>=1 (requirements.txt:2): not installed" in message
    assert "another-missing-one (extra requirement): not installed" in message
    assert f"pip install -r {reqs}" in message
    assert "pytest" not in message.split("\n")[1:3]
    assert LocalBackend().list() == []


def test_a_script_outside_the_workdir_is_kept_with_the_job(tmp_path: Path, write_script) -> None:  # type: ignore[no-untyped-def]
    entry = write_script("notebook.py", "pass\n")  # the entry point; its directory is the working directory
    write_script("helpers.py", "VALUE = 'from the workdir'\n")
    converted_dir = tmp_path / "converted"
    converted_dir.mkdir()
    converted = converted_dir / "notebook.py"
    converted.write_text("import os, helpers\nprint(helpers.VALUE, os.getcwd())\n")
    spec = build_spec(entry_point=entry, distribution_strategy=None)
    launcher = converted_dir / "tfcloud_launcher.py"
    launcher.write_text(render_launcher(spec, script=converted.name))
    handle = LocalBackend().submit(PreparedJob(spec=spec, workdir=entry.parent, launcher=launcher,
                                               script=converted))
    for path in (launcher, converted):
        path.unlink()
    assert handle.wait(30).state is JobState.SUCCEEDED, handle.tail("chief-0")
    assert [ln.text for ln in handle.logs() if ln.stream == "stdout"] == [f"from the workdir {entry.parent}"]
    assert (handle.job_dir / "notebook.py").is_file()


# -- logs: --tail and --since -----------------------------------------------------------------------------
TWO_BATCHES = r'''
import os, pathlib, sys, time
me = os.environ["TFCLOUD_REPLICA"]
for i in range(5):
    print("first", me, i, flush=True)
gate = pathlib.Path(sys.argv[1])
while not gate.exists():
    time.sleep(0.05)
for i in range(3):
    print("second", me, i, flush=True)
'''


def test_logs_tail_and_since_select_among_the_lines(submit, write_script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    gate = tmp_path / "gate"
    script = write_script("batches.py", TWO_BATCHES)
    handle = submit(script, distribution_strategy=None, worker_count=1, entry_point_args=[str(gate)])
    wait_for_line(handle, "first chief-0 4", replica="chief-0")
    wait_for_line(handle, "first worker-0 4", replica="worker-0")

    # Following with --tail: the last 2 lines there are, then every new line until the job ends.
    followed = handle.logs(follow=True, tail=2)
    head = [next(followed), next(followed)]
    assert [ln.text.split()[0] for ln in head] == ["first", "first"] and head[-1].text.endswith(" 4")
    gate.touch()
    rest = list(followed)
    assert sorted(ln.text for ln in rest) == sorted(f"second {r} {i}" for r in ("chief-0", "worker-0")
                                                    for i in range(3))
    assert handle.info().state is JobState.SUCCEEDED

    everything = list(handle.logs())
    assert len(everything) == 16
    assert list(handle.logs(tail=3)) == everything[-3:]
    assert list(handle.logs(tail=0)) == [] and list(handle.logs(tail=0, follow=True)) == []
    assert list(handle.logs(tail=100)) == everything
    assert [ln.text for ln in handle.logs(replica="worker-0", tail=2)] == ["second worker-0 1", "second worker-0 2"]
    cut = next(ln.timestamp for ln in everything if ln.text.startswith("second"))
    assert cut is not None
    since = list(handle.logs(since=cut))
    assert since == [ln for ln in everything if ln.timestamp is not None and ln.timestamp >= cut]
    assert {ln.text.split()[0] for ln in since} == {"second"}
    assert list(handle.logs(since=cut, tail=1)) == everything[-1:]
    assert list(handle.logs(since=everything[-1].timestamp + 3600)) == []  # type: ignore[operator]


def test_a_line_to_stderr_after_many_to_stdout_shows_while_the_replica_runs(tmp_path: Path) -> None:
    """A replica that prints 50,000 lines, then one to stderr, then waits: that stderr line reaches the log while
    the replica still runs (a supervisor that resized its pipes once lost it until the replica ended)."""
    import tfcloud

    script = tmp_path / "chatty.py"
    script.write_text("import sys, time\nfor i in range(50000):\n    print(f'line {i}')\n"
                      "print('to stderr', file=sys.stderr, flush=True)\ntime.sleep(120)\n")
    job = tfcloud.submit(script, distribution_strategy=None)
    try:
        deadline = time.monotonic() + 60
        seen: list[str] = []
        while time.monotonic() < deadline:
            seen = [line.text for line in job.logs(tail=2)]
            if "to stderr" in seen:
                break
            time.sleep(0.2)
        assert "to stderr" in seen, seen
        assert job.info().state is JobState.RUNNING
    finally:
        job.cancel()
        job.wait(60)


def test_a_replica_prints_a_line_with_one_write_into_a_widened_stdout_pipe(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    """The replica's stdout pipe holds 1 MiB (its stderr keeps the kernel's 64 KiB), and its launcher writes a
    line at its newline, with one write, although PYTHONUNBUFFERED is set for the script's child processes."""
    import fcntl

    size = fcntl.F_GETPIPE_SZ
    script = write_script("pipes.py", "import fcntl, os, sys\n"
                                      f"print(fcntl.fcntl(1, {size}), fcntl.fcntl(2, {size}),"
                                      " sys.stdout.line_buffering, sys.stdout.write_through,"
                                      " os.environ['PYTHONUNBUFFERED'])\n")
    handle = submit(script, distribution_strategy=None)
    assert handle.wait(30).state is JobState.SUCCEEDED
    limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    stdout_size = 1024 * 1024 if limit >= 1024 * 1024 or os.geteuid() == 0 else 64 * 1024
    assert [ln.text for ln in handle.logs()][-1] == f"{stdout_size} 65536 True False 1"


def test_stdout_printed_before_a_stderr_line_comes_before_it_beyond_a_full_pipe(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    """Three times what the widened pipe holds goes to stdout, then one line to stderr: every stdout line, in
    order, before the stderr line (the supervisor empties stdout before it reads stderr), none lost."""
    script = write_script("burst.py", "import sys\nfor i in range(300000):\n    print(f'line {i:07d}')\n"
                                      "print('to stderr', file=sys.stderr)\n")
    handle = submit(script, distribution_strategy=None)
    assert handle.wait(60).state is JobState.SUCCEEDED
    texts = [ln.text for ln in handle.logs()]
    assert texts.index("to stderr") == len(texts) - 1
    assert texts[:-1] == [f"line {i:07d}" for i in range(300000)]
