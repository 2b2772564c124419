"""Google's documented rules for Vertex AI custom training, as data, and the checks that apply them.

Pure Python (the standard library only): the client's gate (:mod:`tfcloud.google.vertex.options`) and the
emulator (:mod:`tfcloud.emulator`) check requests against the same table, so they cannot drift. Inputs are the
protos' messages as plain dicts with snake_case field names (what ``type(m).to_dict(m,
preserving_proto_field_name=True)`` gives, and what :mod:`tfcloud.google.vertex.request` builds); enums may be
names or numbers. Dated rules (end of support) are judged on ``today`` (the day of the run when None).

- :mod:`tfcloud.google.rules.sources`: the Google pages and proto fields each rule comes from, and the date read;
- :mod:`tfcloud.google.rules.data`: the tables of machine types, accelerators, regions and TPUs;
- :mod:`tfcloud.google.rules.fields`: the rules on a job's own fields (boot disk, TPU Pod image, capacity, names);
- :mod:`tfcloud.google.rules.apply`: ``check_*`` → a list of :class:`Violation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfcloud.google.rules.apply import (
        Violation,
        accelerator_name,
        check_custom_job,
        check_framework,
        check_image_architecture,
        check_labels,
        check_persistent_resource,
        check_sdk_rules,
        check_tpu_pod_image,
        check_worker_pool_specs,
    )
    from tfcloud.google.rules.data import ACCELERATORS, MACHINE_TYPES, N1_GPU_LIMITS, TPU_MACHINES, TRAINING_REGIONS
    from tfcloud.google.rules.fields import BOOT_DISK, DISPLAY_NAME, FLEX_START, LABELS, TPU_POD_BASE
    from tfcloud.google.rules.sources import SOURCES, VERTEX_AI_LAUNCH, Source

__all__ = ["ACCELERATORS", "BOOT_DISK", "DISPLAY_NAME", "FLEX_START", "LABELS", "MACHINE_TYPES", "N1_GPU_LIMITS",
           "SOURCES", "TPU_MACHINES", "TPU_POD_BASE", "TRAINING_REGIONS", "VERTEX_AI_LAUNCH", "Source", "Violation",
           "accelerator_name", "check_custom_job", "check_framework", "check_image_architecture", "check_labels",
           "check_persistent_resource", "check_sdk_rules", "check_tpu_pod_image", "check_worker_pool_specs"]

#: Each name's module, imported when the name is first read (PEP 562): `tfcloud machines` reads the tables only,
#: and the checks' module and the sources cost a tenth of its start-up (benchmarks/bench_cli.py).
_MODULES = {**dict.fromkeys(["Violation", "accelerator_name", "check_custom_job", "check_framework",
                             "check_image_architecture", "check_labels", "check_persistent_resource",
                             "check_sdk_rules", "check_tpu_pod_image", "check_worker_pool_specs"], "apply"),
            **dict.fromkeys(["ACCELERATORS", "MACHINE_TYPES", "N1_GPU_LIMITS", "TPU_MACHINES", "TRAINING_REGIONS"],
                            "data"),
            **dict.fromkeys(["BOOT_DISK", "DISPLAY_NAME", "FLEX_START", "LABELS", "TPU_POD_BASE"], "fields"),
            **dict.fromkeys(["SOURCES", "VERTEX_AI_LAUNCH", "Source"], "sources")}


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
    globals()[name] = value
    return value
