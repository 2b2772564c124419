"""What people see of a job's lines: one program, not N copies (issue 33). A real local job with three
replicas under MultiWorkerMirroredStrategy (the script imports no TensorFlow: the lines are what matter), and
the printer's rules line by line."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from tfcloud.backends.base import LogLine
from tfcloud.cli import main
from tfcloud.logview import LogPrinter
from tfcloud.noise import LineFilter, without_launcher_frames

#: Every replica prints the same lines, then one line of its own, then fails the same way. They start together
#: (a barrier of files): what is compared is the output, not how fast three processes start on a busy machine.
SCRIPT = """\
import os, pathlib, sys, time
me = os.environ["TFCLOUD_REPLICA"]
here = pathlib.Path(__file__).parent / "barrier"
def together(step):
    here.mkdir(exist_ok=True)
    (here / f"{me}-{step}").touch()
    while len(list(here.glob(f"*-{step}"))) < 3:
        time.sleep(0.01)
together("start")
for epoch in (1, 2):
    print(f"Epoch {epoch}/2", flush=True)
    print(f"loss: 0.{epoch}", flush=True)
print("I am", me, flush=True)
def fit():
    raise ValueError("the data has no labels")
if len(sys.argv) > 1:
    together("fail")
    fit()
"""


def _job_id(err: str) -> str:
    return err.split("Submitted job ", 1)[1].split(".")[0]


def test_a_three_replica_job_reads_like_one_program(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    assert main(["submit", str(script), "--worker-count", "2", "--strategy", "multi_worker_mirrored"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    # Each identical line once, with how many replicas printed it; the lines that differ, each replica's own.
    for shared in ("Epoch 1/2", "loss: 0.1", "Epoch 2/2", "loss: 0.2"):
        assert lines.count(f"3 replicas | {shared}") == 1, out
        assert not any(line.endswith(f"| {shared}") and not line.startswith("3 replicas") for line in lines), out
    for me in ("chief-0", "worker-0", "worker-1"):
        assert f"{me:<10} | I am {me}" in lines, out
    assert lines.index("3 replicas | Epoch 1/2") < lines.index("3 replicas | loss: 0.1") < lines.index(
        "3 replicas | Epoch 2/2") < lines.index("3 replicas | loss: 0.2")

    # --all-replicas (and -v) shows every line; the log files keep everything.
    job_id = _job_id(err)
    for flags in (["--all-replicas"], ["-v"]):
        assert main([*flags[1:], *(["-v"] if flags == ["-v"] else []), "logs", job_id,
                     *(flags if flags == ["--all-replicas"] else [])]) == 0
        every = capsys.readouterr().out.splitlines()
        for me in ("chief-0", "worker-0", "worker-1"):
            assert every.count(f"{me:<8} | Epoch 1/2") == 1, every
            assert every.count(f"{me:<8} | loss: 0.2") == 1, every
    assert main(["logs", job_id]) == 0  # without: folded again
    assert capsys.readouterr().out.splitlines().count("3 replicas | Epoch 1/2") == 1


def test_a_failing_job_shows_its_traceback_once_without_the_launcher(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    assert main(["submit", str(script), "--worker-count", "2", "--strategy", "multi_worker_mirrored",
                 "--", "fail"]) == 1
    out, err = capsys.readouterr()
    assert out.count("Traceback (most recent call last):") == 1, out
    assert out.count('ValueError: the data has no labels') == 1, out
    assert "tfcloud_launcher.py" not in out and "runpy" not in out, out
    assert f'File "{script}", line 18, in <module>' in out and f'File "{script}", line 15, in fit' in out
    assert "Traceback" not in err  # the failure's summary does not show it a second time
    # (whichever replica exited first: they all fail the same way)
    assert re.search(r"failed: (chief-0|worker-[01]) exited with code 1\.$", err.splitlines()[-1]), err

    job_id = _job_id(err)
    monkeypatch.setenv("TFCLOUD_DEBUG", "1")  # tfcloud's own frames: kept, and shown with TFCLOUD_DEBUG=1
    assert main(["logs", job_id]) == 0
    assert "tfcloud_launcher.py" in capsys.readouterr().out


def _printed(lines: list[LogLine], **options: object) -> list[str]:
    out = io.StringIO()
    with LogPrinter(Console(file=out, width=300, color_system=None), **options) as printer:  # type: ignore[arg-type]
        for line in lines:
            printer.print(line)
    return out.getvalue().splitlines()


def test_lines_that_differ_are_never_folded_and_each_replica_keeps_its_order() -> None:
    names = ["chief-0", "worker-0"]
    lines = [LogLine(replica="chief-0", text="step 1 loss 0.50", timestamp=100.0),
             LogLine(replica="worker-0", text="step 1 loss 0.51", timestamp=100.0),
             LogLine(replica="chief-0", text="B", timestamp=100.1),
             LogLine(replica="worker-0", text="A", timestamp=100.1),  # A, then B: never shown as B, A
             LogLine(replica="chief-0", text="A", timestamp=100.2),
             LogLine(replica="worker-0", text="B", timestamp=100.2)]
    shown = _printed(lines, replicas=names)
    assert shown[:2] == ["chief-0    | step 1 loss 0.50", "worker-0   | step 1 loss 0.51"]
    worker = [line for line in shown if line.startswith(("worker-0", "2 replicas"))]
    chief = [line for line in shown if line.startswith(("chief-0", "2 replicas"))]
    assert [line.split("| ")[1] for line in worker][1:] == ["A", "B"]
    assert [line.split("| ")[1] for line in chief][1:] == ["B", "A"]


def test_identical_lines_far_apart_in_time_are_not_folded() -> None:
    lines = [LogLine(replica="chief-0", text="saving", timestamp=100.0),
             LogLine(replica="worker-0", text="saving", timestamp=160.0)]
    assert _printed(lines, replicas=["chief-0", "worker-0"]) == ["chief-0    | saving", "worker-0   | saving"]


def test_a_dump_is_hidden_whole_and_launcher_frames_only_inside_a_traceback() -> None:
    dump = ["I0000 00:00:1795431374.452381    5161 master_session.cc:1136] Start master session 03149 with config: ",
            "device_count {", '  key: "CPU"', "  value: 1", "}", "isolate_session_state: true"]
    hidden = LineFilter()
    assert [hidden.hides("ps-0", line) for line in [*dump, "Epoch 1/3"]] == [True] * len(dump) + [False]
    assert not LineFilter(show_noise=True).hides("ps-0", dump[1])
    traceback = ["Traceback (most recent call last):",
                 '  File "/job/tfcloud_launcher.py", line 292, in <module>', "    main()",
                 '  File "<frozen runpy>", line 291, in run_path',
                 '  File "/usr/lib/python3.12/runpy.py", line 88, in _run_code', "    exec(code, run_globals)",
                 '  File "/job/train.py", line 5, in <module>', "    fit()", "    ^^^^^", "ValueError: no"]
    assert without_launcher_frames(traceback) == [traceback[0], *traceback[6:]]
    assert without_launcher_frames(['  File "/job/tfcloud_launcher.py", line 1']) == [
        '  File "/job/tfcloud_launcher.py", line 1']  # outside a traceback: the user's own text
    assert LineFilter(show_frames=True).hides("c", traceback[1]) is False


def test_many_lines_are_written_in_batches() -> None:
    class Counting(io.StringIO):
        writes = 0

        def write(self, s: str) -> int:
            Counting.writes += 1
            return super().write(s)

    out = Counting()
    with LogPrinter(Console(file=out, width=300, color_system=None), replicas=["chief-0"]) as printer:
        for i in range(10_000):
            printer.print(LogLine(replica="chief-0", text=f"line {i}"))
    assert out.getvalue().splitlines() == [f"chief-0 | line {i}" for i in range(10_000)]
    assert Counting.writes <= 10_000 // 512 + 10
