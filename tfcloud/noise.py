"""Known TensorFlow start-up and shutdown lines that say nothing about the user's job (:data:`NOISE`): the
terminal hides them by default (:mod:`tfcloud.logview`) and a failure's last lines leave them out
(:func:`tfcloud.backends.base.failure`). Imports nothing of tfcloud's, so both can use it."""

from __future__ import annotations

import re

__all__ = ["NOISE", "is_noise"]

# An absl (``I0000 00:00:1795431374.452381    5161 port.cc:153] ``) or older TensorFlow
# (``2026-11-23 10:56:14.123456: I tensorflow/core/util/port.cc:113] ``) log line from one of these sources.
_ABSL = r"^(?:[IWEF]\d{4} \d+:\d+:\d+\.\d+\s+\d+ |\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] \S*/)"
_STARTUP_SOURCES = (
    "port", "cpu_feature_guard", "grpc_server_lib", "coordination_service", "coordination_service_agent",
    "cuda_executor", "cuda_driver", "cuda_diagnostics", "cuda_dnn", "cuda_fft", "cuda_blas", "cudart_stub",
    "cuda_platform", "computation_placer", "gpu_device", "mlir_graph_optimization_pass", "device_compiler",
)

#: Known TensorFlow start-up lines that say nothing about the user's job: hidden from the terminal by default.
NOISE: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    _ABSL + r"(?:" + "|".join(_STARTUP_SOURCES) + r")\.(?:cc|h):\d+\] ",
    _ABSL + r"generator_dataset_op\.cc:\d+\] Memory patch applied",
    _ABSL + r"dataset\.cc:\d+\] Input of GeneratorDatasetOp::Dataset will not be optimized",
    # TF1 between-graph jobs (tf.distribute.Server + a session on server.target): the master's device scan at
    # start-up, and each session's cleanup of its rendezvous at shutdown (an ABORTED status that is no error).
    _ABSL + r"master\.cc:\d+\] Scanning workers for devices: ",
    _ABSL + r"local_rendezvous\.cc:\d+\] Local rendezvous is aborting with status: ABORTED: Cleanup \d+",
    r"^WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR$",
    r"^To enable the following instructions: .*rebuild TensorFlow with the appropriate compiler flags\.$",
    r"^/job:[a-z_]+/replica:\d+/task:\d+$",  # the coordination service's list of stragglers
    r"TF-TRT Warning: Could not find TensorRT",
    r"Could not find cuda drivers on your machine, GPU will not be used",
    r"failed call to cuInit",
))


def is_noise(text: str) -> bool:
    """Whether ``text`` (one log line) is known TensorFlow start-up noise (:data:`NOISE`)."""
    return any(pattern.search(text) for pattern in NOISE)
