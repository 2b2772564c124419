"""Helpers for the local backend's tests: which processes a job left, waiting for a replica's line."""

from __future__ import annotations

import time

import psutil

from tfcloud.targets.local.backend import LocalJob


def job_processes(job_id: str) -> list[psutil.Process]:
    """Every live process that belongs to the job: started with its ``TFCLOUD_JOB_ID`` in the environment."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if proc.environ().get("TFCLOUD_JOB_ID") == job_id:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def assert_no_survivors(handle: LocalJob) -> None:
    """No process of the job is left: neither the supervisor nor any replica (nor anything they started), and
    no zombie either."""
    info = handle.raw_status()
    pids = [info["supervisor_pid"], *(r["pid"] for r in info["replicas"].values())]
    alive = [pid for pid in pids if pid and psutil.pid_exists(pid)
             and _cmdline_mentions(pid, handle)]
    assert alive == [], f"processes left behind: {alive}"
    assert job_processes(handle.job_id) == []


def _cmdline_mentions(pid: int, handle: LocalJob) -> bool:
    try:
        return str(handle.job_dir) in " ".join(psutil.Process(pid).cmdline())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False


def wait_for_line(handle: LocalJob, text: str, *, replica: str | None = None, timeout: float = 120) -> None:
    """Block until ``replica`` printed a line containing ``text``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in line.text for line in handle.logs(replica=replica)):
            return
        if handle.info().state.is_final:
            raise AssertionError(f"the job ended before {replica or 'any replica'} printed {text!r}:\n"
                                 + "\n".join(f"{ln.replica} | {ln.text}" for ln in handle.logs()))
        time.sleep(0.1)
    raise AssertionError(f"{replica or 'no replica'} printed {text!r} within {timeout} s")


def replica_pid(handle: LocalJob, replica: str) -> int:
    pid = handle.replicas[replica]["pid"]
    assert pid is not None
    return int(pid)
