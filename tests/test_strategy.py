from __future__ import annotations

import pytest

from tfcloud import COMMON_MACHINE_CONFIGS as M
from tfcloud import MachineConfig
from tfcloud.job.spec import Strategy
from tfcloud.job.strategy import choose_strategy, one_device_name, parse_strategy


@pytest.mark.parametrize(("chief", "worker", "workers", "ps", "expected", "reason"), [
    ("CPU", None, 0, 0, Strategy.ONE_DEVICE, "one chief without accelerators: /cpu:0"),
    ("T4_1X", None, 0, 0, Strategy.ONE_DEVICE, "one chief with one GPU: /gpu:0"),
    ("T4_4X", None, 0, 0, Strategy.MIRRORED, "one chief with 4 accelerators"),
    ("CPU", "CPU", 2, 0, Strategy.MULTI_WORKER_MIRRORED, "a chief and 2 worker(s)"),
    ("T4_1X", "T4_1X", 3, 0, Strategy.MULTI_WORKER_MIRRORED, "a chief and 3 worker(s)"),
    ("CPU", "CPU", 2, 1, Strategy.PARAMETER_SERVER, "1 parameter server(s) requested"),
    ("CPU", "TPU", 1, 0, Strategy.TPU, "the workers are TPUs"),
])
def test_auto_choice_follows_the_table(chief: str, worker: str | None, workers: int, ps: int,
                                       expected: Strategy, reason: str) -> None:
    got = choose_strategy(requested=None, chief=M[chief], worker=M[worker] if worker else None,
                          worker_count=workers, ps_count=ps)
    assert got == (expected, reason)


def test_cpu_chief_uses_cpu_device_unlike_tensorflow_cloud() -> None:
    assert one_device_name(M["CPU"]) == "/cpu:0"
    assert one_device_name(M["T4_1X"]) == "/gpu:0"


def test_explicit_choice_wins() -> None:
    assert choose_strategy(requested=Strategy.MIRRORED, chief=M["T4_1X"], worker=None, worker_count=0,
                           ps_count=0) == (Strategy.MIRRORED, "chosen explicitly")
    assert choose_strategy(requested=Strategy.NONE, chief=M["CPU"], worker=M["CPU"], worker_count=2,
                           ps_count=0)[0] is Strategy.NONE


@pytest.mark.parametrize(("value", "expected"), [
    ("auto", None), ("AUTO", None), (None, Strategy.NONE), ("mirrored", Strategy.MIRRORED),
    ("MirroredStrategy", Strategy.MIRRORED), ("multi-worker-mirrored", Strategy.MULTI_WORKER_MIRRORED),
    ("ParameterServerStrategy", Strategy.PARAMETER_SERVER), ("one_device", Strategy.ONE_DEVICE),
    (Strategy.TPU, Strategy.TPU),
])
def test_parse_strategy(value: object, expected: Strategy | None) -> None:
    assert parse_strategy(value) is expected


def test_gpu_count_two_is_mirrored() -> None:
    from tfcloud import AcceleratorType

    two = MachineConfig(cpu_cores=8, memory=30, accelerator_type=AcceleratorType.NVIDIA_TESLA_V100,
                        accelerator_count=2)
    assert choose_strategy(requested=None, chief=two, worker=None, worker_count=0, ps_count=0)[0] is Strategy.MIRRORED
