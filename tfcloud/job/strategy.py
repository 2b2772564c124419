"""Strategy choice: one pure function from the cluster shape (and the user's explicit choice) to a strategy.

=====================================================  ==========================================
Situation (first match wins)                           Strategy
=====================================================  ==========================================
``distribution_strategy=None``                         none: the script sets up its own
an explicit strategy name                              that strategy (checked against the shape)
``ps_count > 0``                                       ParameterServer
workers are TPUs                                       TPU
``worker_count > 0``                                   MultiWorkerMirrored
chief has more than one accelerator                    Mirrored
chief has one GPU                                      OneDevice on ``/gpu:0``
chief has no accelerator                               OneDevice on ``/cpu:0``
=====================================================  ==========================================
"""

from __future__ import annotations

from tfcloud.errors import ValidationError
from tfcloud.google.catalog.machines import MachineConfig
from tfcloud.job.spec import Strategy

__all__ = ["EXPLICIT", "STRATEGY_ALIASES", "choose_strategy", "one_device_name", "parse_strategy"]

#: The reason of a strategy the user named (any other reason means it was chosen for them: "auto").
EXPLICIT = "chosen explicitly"

#: Names accepted for ``distribution_strategy``, besides ``"auto"`` and ``None``: compared in lowercase without
#: ``_`` or ``-``, so ``multi_worker_mirrored``, ``MultiWorkerMirrored`` and ``MultiWorkerMirroredStrategy`` match.
STRATEGY_ALIASES: dict[str, Strategy] = {
    "onedevice": Strategy.ONE_DEVICE,
    "mirrored": Strategy.MIRRORED,
    "multiworkermirrored": Strategy.MULTI_WORKER_MIRRORED,
    "parameterserver": Strategy.PARAMETER_SERVER,
    "tpu": Strategy.TPU,
    "none": Strategy.NONE,
}

_EXPECTED = '"auto", None, or one of "one_device", "mirrored", "multi_worker_mirrored", "parameter_server", "tpu"'


def parse_strategy(value: object) -> Strategy | None:
    """``"auto"`` → ``None`` (choose for me); ``None`` → :attr:`Strategy.NONE`; a name → that strategy."""
    if value is None:
        return Strategy.NONE
    if isinstance(value, Strategy):
        return value
    if isinstance(value, str):
        key = value.strip().lower().replace("-", "").replace("_", "").removesuffix("strategy")
        if key == "auto":
            return None
        if key in STRATEGY_ALIASES:
            return STRATEGY_ALIASES[key]
    raise ValidationError("distribution_strategy", _EXPECTED, value)


def one_device_name(chief: MachineConfig) -> str:
    """The device OneDeviceStrategy uses: ``/gpu:0`` on a GPU chief, ``/cpu:0`` otherwise."""
    return "/gpu:0" if chief.is_gpu else "/cpu:0"


def choose_strategy(
    *,
    requested: Strategy | None,
    chief: MachineConfig,
    worker: MachineConfig | None,
    worker_count: int,
    ps_count: int,
) -> tuple[Strategy, str]:
    """Return the strategy and a one-line reason for the plan. ``requested=None`` means "auto"."""
    if requested is not None:
        _check_explicit(requested, worker=worker, worker_count=worker_count, ps_count=ps_count)
        if requested is Strategy.NONE:
            return requested, "distribution_strategy=None: the script sets up its own strategy"
        return requested, EXPLICIT
    if ps_count > 0:
        return Strategy.PARAMETER_SERVER, f"{ps_count} parameter server(s) requested"
    if worker is not None and worker_count > 0 and worker.is_tpu:
        return Strategy.TPU, "the workers are TPUs"
    if worker_count > 0:
        return Strategy.MULTI_WORKER_MIRRORED, f"a chief and {worker_count} worker(s)"
    if chief.accelerator_count > 1:
        return Strategy.MIRRORED, f"one chief with {chief.accelerator_count} accelerators"
    if chief.is_gpu:
        return Strategy.ONE_DEVICE, "one chief with one GPU: /gpu:0"
    return Strategy.ONE_DEVICE, "one chief without accelerators: /cpu:0"


def _check_explicit(strategy: Strategy, *, worker: MachineConfig | None, worker_count: int,
                    ps_count: int) -> None:
    got = f"{strategy.value} with worker_count={worker_count}, ps_count={ps_count}"
    if strategy is Strategy.PARAMETER_SERVER and (ps_count < 1 or worker_count < 1):
        raise ValidationError("distribution_strategy",
                              "parameter_server only with ps_count ≥ 1 and worker_count ≥ 1", f"<{got}>")
    if strategy is Strategy.TPU and not (worker is not None and worker.is_tpu and worker_count == 1):
        raise ValidationError("distribution_strategy", "tpu only with a TPU worker_config and worker_count=1",
                              f"<{got}>")
    if strategy in (Strategy.ONE_DEVICE, Strategy.MIRRORED) and (worker_count > 0 or ps_count > 0):
        raise ValidationError("distribution_strategy",
                              f"{strategy.value} only on a single chief (worker_count=0, ps_count=0)", f"<{got}>")
    if strategy is Strategy.MULTI_WORKER_MIRRORED and ps_count > 0:
        raise ValidationError("distribution_strategy", "multi_worker_mirrored without parameter servers",
                              f"<{got}>")
