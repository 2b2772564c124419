"""`tfcloud stacks`: every thread's stack of a running local replica, from the launcher's SIGUSR1 dump; the
hung-replica watchdog shows the stacks of the replica it blames."""

from __future__ import annotations

import json

import pytest

from tests.targets.localjobs import assert_no_survivors, wait_for_line
from tfcloud.cli import main
from tfcloud.job.states import JobState

# The chief waits in wait_here_forever, a thread of its own in sleeping_in_a_thread; a worker wedges in
# native code that holds the GIL inside wedged_in_native_code (its heartbeat thread cannot run).
HANG = r"""
import ctypes, os, sys, threading, time

def sleeping_in_a_thread():
    while True:
        time.sleep(0.1)

def wait_here_forever():
    print("ready", flush=True)
    while True:
        time.sleep(0.1)

def wedged_in_native_code():
    print("ready", flush=True)
    ctypes.PyDLL(None).sleep(600)

if os.environ["TFCLOUD_REPLICA"] == "chief-0":
    threading.Thread(target=sleeping_in_a_thread, daemon=True).start()
    wait_here_forever()
elif "wedge" in sys.argv[1:]:
    wedged_in_native_code()
else:
    wait_here_forever()
"""


def test_stacks_show_where_each_replica_waits(submit, write_script, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    handle = submit(write_script("hang.py", HANG), distribution_strategy=None, worker_count=1)
    wait_for_line(handle, "ready", replica="chief-0", timeout=60)
    wait_for_line(handle, "ready", replica="worker-0", timeout=60)
    capsys.readouterr()

    assert main(["stacks", handle.job_id]) == 0
    out = capsys.readouterr().out
    chief, worker = out.split("== worker-0 ==\n")
    assert chief.startswith("== chief-0 ==\n")
    assert "in wait_here_forever" in chief and "in sleeping_in_a_thread" in chief  # every thread
    assert "in beat" in chief  # the launcher's heartbeat thread
    assert "in wait_here_forever" in worker and "sleeping_in_a_thread" not in worker

    assert main(["stacks", handle.job_id, "--replica", "worker-0", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert list(found) == ["worker-0"] and "in wait_here_forever" in found["worker-0"]

    assert main(["stacks", handle.job_id, "--replica", "worker-9"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        "Error: Invalid `--replica`: expected one of the job's replicas: chief-0, worker-0, received 'worker-9'."
    )

    assert main(["stacks"]) == 0  # without JOB: the last job
    assert "in wait_here_forever" in capsys.readouterr().out

    handle.cancel()
    assert handle.wait(60).state is JobState.CANCELLED
    assert main(["stacks", handle.job_id]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"Error: Invalid `JOB`: expected a running job, received '{handle.job_id} (cancelled)'.",
        f"Nothing is running: the job is cancelled. `tfcloud logs {handle.job_id}` shows what it printed.",
    ]
    assert_no_survivors(handle)


def test_the_watchdog_shows_the_stacks_of_the_replica_it_blames(submit, write_script) -> None:  # type: ignore[no-untyped-def]
    handle = submit(
        write_script("hang.py", HANG),
        distribution_strategy=None,
        worker_count=1,
        liveness_timeout=3,
        entry_point_args=["wedge"],
    )
    info = handle.wait(60)
    assert (info.state, info.failed_replica) == (JobState.FAILED, "worker-0")
    said = [ln.text for ln in handle.logs(replica="tfcloud")]
    assert said[0] == "tfcloud: the stacks of worker-0 when it was blamed:", said
    assert any("in wedged_in_native_code" in line for line in said)
    assert not any("wait_here_forever" in line for line in said)  # the chief's are not shown
    assert_no_survivors(handle)
