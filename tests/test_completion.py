"""Shell completion of --strategy, --state, machine names and job ids: the lists agree with what tfcloud
accepts, and the real `tfcloud` command completes them through the shell protocol."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS
from tfcloud.job.spec import Strategy
from tfcloud.job.states import JobState
from tfcloud.job.strategy import parse_strategy
from tfcloud.view import completion


def test_strategies_are_what_submit_accepts() -> None:
    assert set(completion.STRATEGIES) == {"auto"} | {s.value for s in Strategy}
    for name in completion.STRATEGIES:
        parse_strategy(name)  # raises on a name tfcloud does not accept


def test_states_are_the_job_states() -> None:
    assert set(completion.STATES) == {s.value for s in JobState} - {"unknown"}


def test_prefixes() -> None:
    assert [n for n, _ in completion.strategies("m")] == ["mirrored", "multi_worker_mirrored"]
    assert [n for n, _ in completion.states("c")] == ["cancelling", "cancelled"]
    t4 = [n for n in COMMON_MACHINE_CONFIGS if n.startswith("T4")]
    assert [n for n, _ in completion.machine_names("T4")] == t4 and t4
    assert [n for n, _ in completion.machine_names("")] == ["auto", *COMMON_MACHINE_CONFIGS]


def _run_job(tmp_path: Path, name: str) -> str:
    from tfcloud.cli import main

    script = tmp_path / f"{name}.py"
    script.write_text("print('done')\n")
    assert main(["-q", "submit", str(script), "--strategy", "none"]) == 0
    from tfcloud.targets.local.backend import LocalBackend

    return next(i for i in LocalBackend().job_ids() if i.startswith(f"local-{name}-"))


def test_job_ids_newest_first(tmp_path: Path) -> None:
    first = _run_job(tmp_path, "alpha")
    second = _run_job(tmp_path, "beta")
    os.utime(Path(os.environ["TFCLOUD_HOME"]) / "jobs" / first, (1, 1))
    assert [n for n, _ in completion.job_ids("local-")] == [second, first]
    assert [n for n, _ in completion.job_ids("local-a")] == [first]
    assert completion.job_ids("ray-") == []


def test_job_ids_of_an_unreadable_state_dir_complete_nothing(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("TFCLOUD_HOME", str(tmp_path / "file"))
    assert completion.job_ids("") == []
    monkeypatch.setenv("TFCLOUD_HOME", str(tmp_path / "missing"))
    assert completion.job_ids("") == []


def _complete(words: str) -> list[str]:
    """What bash completion gets from the real command for the last word of ``words``."""
    env = {**os.environ, "_TFCLOUD_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
    proc = subprocess.run([sys.executable, "-m", "tfcloud.cli"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_command_completes(tmp_path: Path) -> None:
    job = _run_job(tmp_path, "gamma")
    assert _complete("tfcloud submit t.py --strategy mu") == ["multi_worker_mirrored"]
    assert _complete("tfcloud list --state fa") == ["failed"]
    assert _complete("tfcloud submit t.py --worker-config A100_") == [
        n for n in COMMON_MACHINE_CONFIGS if n.startswith("A100_")]
    assert _complete("tfcloud status ") == [job]
    assert _complete("tfcloud logs local-g") == [job]
