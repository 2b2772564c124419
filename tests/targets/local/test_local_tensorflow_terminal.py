"""What a person sees of a real TensorFlow job: a 3-replica MultiWorkerMirrored run (chief + 2 workers) through
the CLI shows the job's own lines under fixed-width prefixes, without TensorFlow's start-up noise; the replicas'
log files keep every line, and ``tfcloud --verbose logs`` shows them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tfcloud.cli import main
from tfcloud.targets.local.backend import LocalBackend
from tfcloud.view.logview import is_noise

pytestmark = pytest.mark.tensorflow

REPLICAS = ("chief-0", "worker-0", "worker-1")
#: Any absl-format line (``I0000 00:00:1795431374.452381    5161 port.cc:153] ...``): none is the job's own here.
ABSL = re.compile(r"^[IWEF]\d{4} \d+:\d+:\d+\.\d+\s+\d+ \S+:\d+\] ")


def test_a_three_replica_run_shows_the_job_not_tensorflow_start_up(scripts: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)  # the noise a user gets (conftest silences it)
    out_dir = tmp_path / "weights"
    out_dir.mkdir()
    assert main(["submit", str(scripts / "train_tfkeras.py"), "--worker-count", "2", "--strategy",
                 "multi_worker_mirrored", "--", str(out_dir)]) == 0
    out, err = capsys.readouterr()
    job_id = err.split("Submitted job ", 1)[1].split(".")[0]
    assert err.splitlines()[-1] == f"Job {job_id} succeeded."

    lines = out.splitlines()
    # The prefix is as wide as the longest replica name, or the label of a line several replicas printed alike
    # ("3 replicas"), from the first line on.
    assert lines and all(re.match(r"^(chief-0   |worker-0  |worker-1  |[23] replicas) \| ", line)
                         for line in lines), lines[:5]
    texts = [line.split(" | ", 1)[1] for line in lines]
    assert [t for t in texts if is_noise(t) or ABSL.match(t) or "absl::InitializeLog" in t] == []

    def printed(match: Callable[[str], bool]) -> int:  # by how many replicas: a folded line counts for each
        return sum(int(line[0]) if line[1:].startswith(" replicas ") else 1
                   for line, text in zip(lines, texts, strict=True) if match(text))

    assert printed(lambda t: t == "strategy: CollectiveAllReduceStrategy") == 3
    assert printed(lambda t: t.startswith("Epoch 1/")) == 3

    handle = LocalBackend().attach(job_id)
    kept = {r: handle.log_file(r).read_text(encoding="utf-8", errors="replace") for r in REPLICAS}
    for replica, text in kept.items():
        assert "oneDNN custom operations are on" in text and "cpu_feature_guard" in text, replica
        assert any(is_noise(line) for line in text.splitlines())

    assert main(["--verbose", "logs", job_id, "--replica", "chief-0"]) == 0
    shown = [line.split(" | ", 1)[1] for line in capsys.readouterr().out.splitlines()]
    assert any("oneDNN custom operations are on" in t for t in shown)
    assert sum(is_noise(t) for t in shown) == sum(is_noise(t) for t in kept["chief-0"].splitlines())
    assert main(["logs", job_id, "--replica", "chief-0"]) == 0
    assert not any(is_noise(line.split(" | ", 1)[1]) for line in capsys.readouterr().out.splitlines())


def test_a_tf1_parameter_server_run_shows_no_session_noise(scripts: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """TF1 between-graph replication (tf.distribute.Server + MonitoredTrainingSession): the master's "Scanning
    workers for devices" at start-up and each session's "Local rendezvous is aborting ... Cleanup" at shutdown
    stay in the log files."""
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    assert main(["submit", str(scripts / "tf1_between_graph.py"), "--strategy", "none", "--worker-count", "1",
                 "--ps-count", "1"]) == 0
    out, err = capsys.readouterr()
    job_id = err.split("Submitted job ", 1)[1].split(".")[0]
    texts = [line.split(" | ", 1)[1] for line in out.splitlines()]
    assert "chief-0 done, w = 3.00" in texts
    assert [t for t in texts if ABSL.match(t) or "absl::InitializeLog" in t] == []
    kept = "\n".join(LocalBackend().attach(job_id).log_file(r).read_text(encoding="utf-8", errors="replace")
                     for r in ("chief-0", "worker-0", "ps-0"))
    assert "Scanning workers for devices" in kept  # the lines left off the terminal are still there


def test_a_failure_repeats_no_start_up_noise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A failed replica's last lines, in the failure message, leave out the noise the stream hid (a CPU
    machine's `failed call to cuInit`): so the lines just streamed are not repeated at all."""
    script = tmp_path / "fails.py"
    script.write_text(
        "import sys\n"
        "print('E0000 00:00:1795577382.215875    5090 cuda_executor.cc:1228] INTERNAL: CUDA error: Failed call "
        "to cuInit: UNKNOWN ERROR (303)', file=sys.stderr, flush=True)\n"
        "print('loading data', flush=True)\n"
        "print('2026-11-25 03:24:32.123456: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:152] "
        "failed call to cuInit: INTERNAL: CUDA error', file=sys.stderr, flush=True)\n"
        "sys.exit('no data found')\n")
    assert main(["submit", str(script), "--strategy", "none"]) == 1
    out, err = capsys.readouterr()
    assert "cuInit" not in out + err
    # stdout and stderr are two pipes: their lines may arrive in either order
    assert sorted(out.splitlines()) == ["chief-0 | loading data", "chief-0 | no data found"]
    assert err.splitlines()[-1].endswith(" failed: chief-0 exited with code 1.")  # nothing repeated after it
    job_id = err.split("Submitted job ", 1)[1].split(".")[0]
    assert main(["status", job_id]) == 0
    status = capsys.readouterr()
    lines = status.err.splitlines()
    assert lines[1] == "Last 2 lines of chief-0:"
    assert sorted(lines[2:]) == ["  chief-0 | loading data", "  chief-0 | no data found"]  # either order
