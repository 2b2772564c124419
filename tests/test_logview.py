"""Log lines for people: prefixes, stable colours, tails."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from tfcloud.backends.base import LogLine
from tfcloud.view.logview import LogPrinter, format_tail, is_noise, last_lines, print_lines, replica_color, tail


def test_prefixes_are_aligned_and_text_is_not_markup() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    print_lines([LogLine(replica="chief-0", text="loss [bold]0.5[/bold]"),
                 LogLine(replica="worker-1", text="step 1")], console, replicas=["chief-0", "worker-1"])
    # The column is as wide as the longest name, or the label of a line several replicas printed alike.
    assert out.getvalue() == "chief-0    | loss [bold]0.5[/bold]\nworker-1   | step 1\n"


def test_colours_are_stable_and_differ_between_workers() -> None:
    assert replica_color("chief-0") == replica_color("chief-0") == "bold cyan"
    workers = {replica_color(f"worker-{i}") for i in range(4)}
    assert len(workers) == 4
    assert replica_color("ps-0") != replica_color("worker-0")
    assert replica_color("odd name")  # anything gets a colour


def test_colour_reaches_a_terminal() -> None:
    out = io.StringIO()
    with LogPrinter(Console(file=out, force_terminal=True, color_system="standard")) as printer:
        printer.print(LogLine(replica="worker-0", text="hi"))
    assert "\x1b[" in out.getvalue() and "worker-0 | " in out.getvalue()


def test_tail_and_last_lines(tmp_path: Path) -> None:
    lines = [LogLine(replica=f"worker-{i % 2}", text=str(i)) for i in range(10)]
    assert [ln.text for ln in tail(lines, 2, replica="worker-1")] == ["7", "9"]
    log = tmp_path / "chief-0.log"
    log.write_text("".join(f"line {i}\n" for i in range(5000)))
    assert last_lines(log, 3, block=64) == ["line 4997", "line 4998", "line 4999"]
    assert last_lines(tmp_path / "missing.log") == []
    assert format_tail("chief-0", ["a", "b"]) == "Last 2 lines of chief-0:\n  chief-0 | a\n  chief-0 | b"
    assert format_tail("chief-0", []) == "chief-0 printed nothing."


#: Start-up lines one replica of a real MultiWorkerMirrored run printed (TensorFlow 2.21, CPU), and older forms.
NOISE = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795431374.452381    5161 port.cc:153] oneDNN custom operations are on. You may see slightly "
    "different numerical results due to floating-point round-off errors from different computation orders.",
    "I0000 00:00:1795431374.655659    5161 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use "
    "available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the "
    "appropriate compiler flags.",
    "I0000 00:00:1795431380.700957    5162 grpc_server_lib.cc:467] Started server with target: grpc://127.0.0.1:1",
    "I0000 00:00:1795431380.964785    5350 coordination_service.cc:502] Waiting for 2/3 tasks to connect.",
    "I0000 00:00:1795431380.964696    5350 coordination_service.h:529] /job:worker/replica:0/task:1 has connected",
    "/job:chief/replica:0/task:0",
    "I0000 00:00:1795431381.014291    5161 coordination_service_agent.cc:245] Coordination agent has successfully "
    "connected.",
    "I0000 00:00:1795431384.376462    5160 generator_dataset_op.cc:213] Memory patch applied: M_TRIM_THRESHOLD=128",
    "E0000 00:00:1732000000.000000    4242 cuda_executor.cc:1228] failed call to cuInit: INTERNAL: CUDA error: "
    "Failed call to cuInit: UNKNOWN ERROR (303)",
    "2024-01-01 10:00:00.123456: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on.",
    "2024-01-01 10:00:00.123456: I external/local_tsl/tsl/cuda/cudart_stub.cc:31] Could not find cuda drivers on "
    "your machine, GPU will not be used.",
    "2024-01-01 10:00:00.123456: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could "
    "not find TensorRT",
]
#: Lines that look alike but say something about the job: always shown.
NOT_NOISE = [
    "Epoch 1/3",
    "tfcloud: running train.py under tf.distribute.MultiWorkerMirroredStrategy with 3 replica(s) in sync.",
    "E0000 00:00:1795431384.380476    5160 collective_ops.cc:123] Collective ops is aborted by: worker-1 died",
    "W0000 00:00:1795431384.380476    5160 op_level_cost_estimator.cc:699] Error in PredictCost() for the op",
    "Traceback (most recent call last):",
    "ValueError: the port.cc:153] of my own program",
    "print('/job:chief/replica:0/task:0')",
    # TensorFlow's CUDA and TensorRT notices are its log lines: the same words elsewhere are the job's own
    "hint: 'failed call to cuInit' means this machine has no GPU",
    "TF-TRT Warning: Could not find TensorRT",
]


def test_known_start_up_noise_is_recognised_and_nothing_else() -> None:
    assert [line for line in NOISE if not is_noise(line)] == []
    assert [line for line in NOT_NOISE if is_noise(line)] == []


def test_noise_is_left_off_the_terminal_unless_asked_for() -> None:
    lines = [LogLine(replica="worker-0", text=text) for text in [NOISE[0], "Epoch 1/3", NOISE[1], "done"]]
    quiet, verbose = io.StringIO(), io.StringIO()
    printer = LogPrinter(Console(file=quiet, width=300, color_system=None))
    for line in lines:
        printer.print(line)
    printer.close()
    assert quiet.getvalue() == "worker-0 | Epoch 1/3\nworker-0 | done\n"
    assert printer.hidden == 2
    print_lines(lines, Console(file=verbose, width=300, color_system=None), show_noise=True)
    assert verbose.getvalue().splitlines() == [f"worker-0 | {line.text}" for line in lines]


def test_the_prefix_has_its_final_width_from_the_first_line() -> None:
    out = io.StringIO()
    print_lines([LogLine(replica="ps-0", text="up"), LogLine(replica="worker-1", text="step"),
                 LogLine(replica="ps-0", text="down")], Console(file=out, width=200, color_system=None),
                replicas=["chief-0", "worker-0", "worker-1", "ps-0"])
    assert out.getvalue() == "ps-0       | up\nworker-1   | step\nps-0       | down\n"
