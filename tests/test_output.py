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
from tfcloud.view.logview import LogPrinter
from tfcloud.view.noise import LineFilter, without_launcher_frames

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


def test_lines_that_differ_in_a_word_are_never_folded_and_each_replica_keeps_its_order() -> None:
    names = ["chief-0", "worker-0"]
    lines = [LogLine(replica="chief-0", text="step 1 loss 0.50", timestamp=100.0),
             LogLine(replica="worker-0", text="step 1 gain 0.50", timestamp=100.0),
             LogLine(replica="chief-0", text="B", timestamp=100.1),
             LogLine(replica="worker-0", text="A", timestamp=100.1),  # A, then B: never shown as B, A
             LogLine(replica="chief-0", text="A", timestamp=100.2),
             LogLine(replica="worker-0", text="B", timestamp=100.2)]
    shown = _printed(lines, replicas=names)
    assert shown[:2] == ["chief-0    | step 1 loss 0.50", "worker-0   | step 1 gain 0.50"]
    worker = [line for line in shown if line.startswith(("worker-0", "2 replicas"))]
    chief = [line for line in shown if line.startswith(("chief-0", "2 replicas"))]
    assert [line.split("| ")[1] for line in worker][1:] == ["A", "B"]
    assert [line.split("| ")[1] for line in chief][1:] == ["B", "A"]


def test_lines_that_differ_only_in_words_with_digits_fold_as_the_first() -> None:
    """As Ray's log deduplication: Keras's epoch lines of three replicas differ in their times, and read as one."""
    names = ["chief-0", "worker-0", "worker-1"]
    times = {"chief-0": "915ms/epoch", "worker-0": "930ms/epoch", "worker-1": "1s/epoch"}
    lines = [LogLine(replica=r, text=f"23/23 - 1s - loss: 0.1740 - {t}", timestamp=100.0) for r, t in times.items()]
    lines += [LogLine(replica=r, text=f"I am {r}", timestamp=100.0) for r in names]  # its own name: its own line
    assert _printed(lines, replicas=names) == ["3 replicas | 23/23 - 1s - loss: 0.1740 - 915ms/epoch",
                                               "chief-0    | I am chief-0", "worker-0   | I am worker-0",
                                               "worker-1   | I am worker-1"]


def test_a_replica_three_seconds_late_folds_by_content_not_time() -> None:
    """One replica's lines come 3 s after the others' (its timestamps too): they fold all the same, in order."""
    from tfcloud.view.logview import fold

    names = ["chief-0", "worker-0", "worker-1"]
    texts = ["Epoch 1/2", "loss: 0.5", "Epoch 2/2", "loss: 0.4", "saved"]
    lines = [LogLine(replica=r, text=t, timestamp=100.0 + i / 10) for i, t in enumerate(texts)
             for r in names[:2]]
    lines += [LogLine(replica="worker-1", text=t, timestamp=103.0 + i / 10) for i, t in enumerate(texts)]
    folded = fold(lines, names)
    assert [(label, line.text) for label, line in folded] == [("3 replicas", t) for t in texts]
    assert _printed(lines, replicas=names) == [f"3 replicas | {t}" for t in texts]


def test_identical_lines_far_apart_in_lines_are_not_folded() -> None:
    """The window is of lines per replica: a line FOLD_LINES lines later than another replica's is its own."""
    from tfcloud.view.logview import Folder

    folder, shown = Folder(["chief-0", "worker-0"], lines=3), []
    for text in ["saving", "a", "b", "c", "d"]:
        folder.add(LogLine(replica="chief-0", text=text), 0.0)
        shown += folder.release(0.0)
    folder.add(LogLine(replica="worker-0", text="saving"), 0.0)
    shown += folder.release(0.0, everything=True)
    assert [(label, line.text) for label, line in shown] == [
        ("chief-0", "saving"), ("chief-0", "a"), ("chief-0", "b"), ("chief-0", "c"), ("chief-0", "d"),
        ("worker-0", "saving")]


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


class Counting(io.StringIO):
    """A stream that counts the writes made to it."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, s: str) -> int:
        self.writes += 1
        return super().write(s)


def test_many_lines_are_written_in_batches() -> None:
    out = Counting()
    with LogPrinter(Console(file=out, width=300, color_system=None), replicas=["chief-0"]) as printer:
        for i in range(10_000):
            printer.print(LogLine(replica="chief-0", text=f"line {i}"))
    assert out.getvalue().splitlines() == [f"chief-0 | line {i}" for i in range(10_000)]
    assert out.writes <= 10_000 // 512 + 10


def _batched(batches: list[tuple[str, list[str]]], **options: object) -> list[str]:
    from tfcloud.backends.base import LogBatch

    out = io.StringIO()
    with LogPrinter(Console(file=out, width=300, color_system=None), **options) as printer:  # type: ignore[arg-type]
        for replica, texts in batches:
            printer.print_batch(LogBatch(replica=replica, texts=texts, timestamp=100.0))
    return out.getvalue().splitlines()


#: Lines of every kind the filter looks at: noise, a dump after it, a traceback with tfcloud's frames, text.
KINDS = ["Epoch 1/3", "loss: 0.5", "x" * 600,
         "I0000 00:00:1795431374.452381    5161 port.cc:153] oneDNN custom operations are on.",
         "2024-01-01 10:00:00.123456: I external/local_tsl/tsl/cuda/cudart_stub.cc:31] Could not find cuda drivers "
         "on your machine, GPU will not be used.",
         "I0000 00:00:1795431374.452381    5161 master_session.cc:1136] Start master session 03149 with config: ",
         "device_count {", '  key: "CPU"', "}", "Traceback (most recent call last):",
         '  File "/job/tfcloud_launcher.py", line 292, in <module>', "    main()",
         '  File "/job/train.py", line 5, in <module>', "    fit()", "ValueError: no", "bell\x07 and \r return"]


@pytest.mark.parametrize(("show_noise", "timestamps"), [(False, False), (True, False), (False, True)])
def test_a_batch_shows_what_its_lines_one_by_one_show(show_noise: bool, timestamps: bool) -> None:
    """print_batch (a local job's lines, as they are read) filters and prints exactly as print, line after line:
    noise, dumps, launcher frames in a traceback, control characters, on long lines and short ones."""
    import random

    rng = random.Random(7)
    for _ in range(40):
        batches = [(rng.choice(["chief-0", "worker-0"]), [rng.choice(KINDS) for _ in range(rng.randint(1, 30))])
                   for _ in range(rng.randint(1, 8))]
        options = {"replicas": ["chief-0", "worker-0"], "show_noise": show_noise, "all_replicas": True,
                   "timestamps": timestamps}
        one_by_one = _printed([LogLine(replica=r, text=t, timestamp=100.0) for r, texts in batches for t in texts],
                              **options)
        assert _batched(batches, **options) == one_by_one


def test_a_batch_is_written_with_one_write_and_folds_as_lines_do() -> None:
    from tfcloud.backends.base import LogBatch

    out = Counting()
    with LogPrinter(Console(file=out, width=300, color_system=None), replicas=["chief-0"]) as printer:
        printer.print_batch(LogBatch(replica="chief-0", texts=[f"line {i}" for i in range(10_000)]))
        assert out.writes == 1
    assert out.getvalue().splitlines() == [f"chief-0 | line {i}" for i in range(10_000)]
    # Several replicas: alike lines still fold, whether they came in batches or one by one.
    lines = [("chief-0", ["Epoch 1/2", "mine"]), ("worker-0", ["Epoch 1/2", "yours"])]
    assert _batched(lines, replicas=["chief-0", "worker-0"]) == _printed(
        [LogLine(replica=r, text=t, timestamp=100.0) for r, texts in lines for t in texts],
        replicas=["chief-0", "worker-0"]) == ["2 replicas | Epoch 1/2", "chief-0    | mine", "worker-0   | yours"]


def test_every_line_reaches_the_terminal_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A replica that prints 30,000 lines of every kind (short, 3 kB long, quotes, backslashes, tabs, non-ASCII,
    colour codes, a trailing carriage return) through `tfcloud submit`: each one shows once, in order, as printed
    (the lines.jsonl fast path and its JSON path both, batch after batch)."""
    script = tmp_path / "talk.py"
    script.write_text(
        "import sys\n"
        "kinds = ['plain {}', 'say \"{}\"', 'back\\\\slash {}', 'tab\\t{}', 'caf\\u00e9 {} \\u20ac',\n"
        "         '\\x1b[1m{}\\x1b[0m', '{} progress\\r', 'x' * 3000 + ' {}']\n"
        "for i in range(30000):\n"
        "    print(kinds[(i // 1000) % len(kinds)].format(i))\n"
        "print('done', file=sys.stderr)\n")
    assert main(["submit", str(script), "--strategy", "none"]) == 0
    out = capsys.readouterr().out.splitlines()
    kinds = ["plain {}", 'say "{}"', "back\\slash {}", "tab\t{}", "caf\u00e9 {} \u20ac", "\x1b[1m{}\x1b[0m",
             "{} progress", "x" * 3000 + " {}"]
    expected = [f"chief-0 | {kinds[(i // 1000) % len(kinds)].format(i)}" for i in range(30000)]
    assert [line for line in out if line != "chief-0 | done"] == expected
    assert out.count("chief-0 | done") == 1


LATE = """\
import os, time
if os.environ["TFCLOUD_REPLICA"] == "worker-1":
    time.sleep(2)  # the behaviour under test: it starts 2 s after the others, as TensorFlow's replicas may
for epoch in (1, 2, 3):
    print(f"Epoch {epoch}/3", flush=True)
    print(f"23/23 - 1s - loss: 0.17{epoch} - {900 + os.getpid() % 90}ms/epoch", flush=True)
print("done", flush=True)
"""


def test_a_replica_that_starts_2_s_late_folds_and_tail_counts_lines_as_they_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "late.py"
    script.write_text(LATE)
    assert main(["submit", str(script), "--strategy", "none", "--worker-count", "2"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    for epoch in (1, 2, 3):
        assert lines.count(f"3 replicas | Epoch {epoch}/3") == 1, out
        assert sum(line.startswith(f"3 replicas | 23/23 - 1s - loss: 0.17{epoch} - ") for line in lines) == 1, out
    assert lines[-1] == "3 replicas | done", out
    assert not any(line.startswith(("chief-0", "worker-")) for line in lines), out

    job_id = _job_id(err)
    assert main(["logs", job_id, "--tail", "3"]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0] == "3 replicas | Epoch 3/3" and shown[2] == "3 replicas | done", shown
    assert len(shown) == 3 and shown[1].startswith("3 replicas | 23/23 - 1s - loss: 0.173 - "), shown
