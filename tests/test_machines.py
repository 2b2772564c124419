from __future__ import annotations

from pathlib import Path

import pytest

from tfcloud import COMMON_MACHINE_CONFIGS, AcceleratorType, MachineConfig, ValidationError
from tfcloud.google.catalog.machines import machine_config_from_name

TFC_NAMES = ["CPU", "P100_1X", "P100_4X", "P4_1X", "P4_4X", "V100_1X", "V100_4X", "T4_1X", "T4_4X", "TPU"]


def test_catalog_keeps_tensorflow_cloud_names_and_adds_current_hardware() -> None:
    assert set(TFC_NAMES) <= set(COMMON_MACHINE_CONFIGS)
    assert not {"K80_1X", "K80_4X", "K80_8X", "TPU_V5P_4X", "TPU_V5P_8X"} & set(COMMON_MACHINE_CONFIGS)
    types = {m.accelerator_type for m in COMMON_MACHINE_CONFIGS.values()}
    for current in (AcceleratorType.NVIDIA_L4, AcceleratorType.NVIDIA_TESLA_A100, AcceleratorType.NVIDIA_A100_80GB,
                    AcceleratorType.NVIDIA_H100_80GB, AcceleratorType.NVIDIA_H200_141GB, AcceleratorType.NVIDIA_B200,
                    AcceleratorType.NVIDIA_GB200, AcceleratorType.TPU_V5_LITEPOD):
        assert current in types


@pytest.mark.parametrize(("name", "machine_type", "accelerator", "count"), [
    ("CPU", "n1-standard-4", AcceleratorType.NO_ACCELERATOR, 0),
    ("T4_1X", "n1-standard-8", AcceleratorType.NVIDIA_TESLA_T4, 1),
    ("TPU", "cloud-tpu", AcceleratorType.TPU_V3, 8),
    ("L4_1X", "g2-standard-8", AcceleratorType.NVIDIA_L4, 1),
    ("A100_80GB_8X", "a2-ultragpu-8g", AcceleratorType.NVIDIA_A100_80GB, 8),
    ("H100_8X", "a3-highgpu-8g", AcceleratorType.NVIDIA_H100_80GB, 8),
    ("H200_8X", "a3-ultragpu-8g", AcceleratorType.NVIDIA_H200_141GB, 8),
    ("B200_8X", "a4-highgpu-8g", AcceleratorType.NVIDIA_B200, 8),
    ("GB200_4X", "a4x-highgpu-4g", AcceleratorType.NVIDIA_GB200, 4),
    ("TPU_V5E_4X", "ct5lp-hightpu-4t", AcceleratorType.TPU_V5_LITEPOD, 4),
    ("TPU_V6E_8X", "ct6e-standard-8t", AcceleratorType.TPU_V6E, 8),
])
def test_each_config_maps_to_a_vertex_machine(name: str, machine_type: str, accelerator: AcceleratorType,
                                             count: int) -> None:
    config = COMMON_MACHINE_CONFIGS[name]
    assert (config.machine_type, config.accelerator_type, config.accelerator_count) == (
        machine_type, accelerator, count)


def test_tensorflow_cloud_constructor_still_works() -> None:
    config = MachineConfig(cpu_cores=16, memory=104, accelerator_type=AcceleratorType.NVIDIA_TESLA_V100,
                           accelerator_count=2)
    assert config.machine_type == "n1-highmem-16"
    assert config.is_gpu and not config.is_tpu


def test_impossible_accelerator_count_lists_valid_ones() -> None:
    with pytest.raises(ValidationError) as err:
        MachineConfig(cpu_cores=8, memory=30, accelerator_type=AcceleratorType.NVIDIA_TESLA_T4, accelerator_count=3)
    assert str(err.value) == "Invalid `accelerator_count`: expected one of [1, 2, 4] for NVIDIA_TESLA_T4, received 3."


def test_impossible_cpu_memory_lists_the_machines_that_carry_the_accelerator() -> None:
    with pytest.raises(ValidationError) as err:
        MachineConfig(cpu_cores=8, memory=30, accelerator_type=AcceleratorType.NVIDIA_L4, accelerator_count=1)
    assert str(err.value) == (
        "Invalid `MachineConfig`: expected a (cpu_cores, memory) pair available with 1 x NVIDIA_L4: "
        "(cpu_cores=4, memory=16) g2-standard-4, (cpu_cores=8, memory=32) g2-standard-8, "
        "(cpu_cores=12, memory=48) g2-standard-12, (cpu_cores=16, memory=64) g2-standard-16, "
        "(cpu_cores=32, memory=128) g2-standard-32, received <cpu_cores=8, memory=30>.")


def test_machine_type_by_name_and_wrong_name() -> None:
    config = MachineConfig(accelerator_type=AcceleratorType.NVIDIA_H100_80GB, accelerator_count=8,
                           machine_type="a3-highgpu-8g")
    assert config.cpu_cores == 208
    with pytest.raises(ValidationError) as err:
        MachineConfig(accelerator_type=AcceleratorType.NVIDIA_H100_80GB, accelerator_count=8,
                      machine_type="n1-standard-8")
    assert str(err.value) == ("Invalid `machine_type`: expected a machine type that carries 8 x NVIDIA_H100_80GB: "
                              "a3-highgpu-8g, received 'n1-standard-8'.")


def test_accelerator_type_must_be_the_enum() -> None:
    with pytest.raises(ValidationError, match=r"^Invalid `accelerator_type`: expected one of AcceleratorType\."):
        MachineConfig(accelerator_type="T4")  # type: ignore[arg-type]


def test_configs_are_frozen_and_comparable() -> None:
    assert COMMON_MACHINE_CONFIGS["T4_1X"] == MachineConfig(
        cpu_cores=8, memory=30, accelerator_type=AcceleratorType.NVIDIA_TESLA_T4, accelerator_count=1)
    with pytest.raises(AttributeError):
        COMMON_MACHINE_CONFIGS["CPU"].cpu_cores = 2  # type: ignore[misc]


@pytest.mark.parametrize(("name", "replacement"), [("K80_1X", "T4_1X"), ("k80_8x", "T4_4X"),
                                                 ("TPU_V5P_8X", "TPU_V5E_8X")])
def test_names_google_no_longer_offers_are_refused_naming_the_replacement(name: str, replacement: str) -> None:
    with pytest.raises(ValidationError) as err:
        machine_config_from_name(name, field="chief_config")
    assert str(err.value).startswith(f"Invalid `chief_config`: expected a machine Vertex AI offers for custom "
                                     f"training, received {name!r}.")
    assert f"use {replacement}" in str(err.value)


def test_k80_is_refused_by_the_constructor_too() -> None:
    with pytest.raises(ValidationError) as err:
        MachineConfig(cpu_cores=8, memory=30, accelerator_type=AcceleratorType.NVIDIA_TESLA_K80)
    assert "NVIDIA K80 is no longer offered" in str(err.value) and "T4_1X" in str(err.value)


@pytest.mark.parametrize(("kwargs", "google_allows"), [
    # Compute Engine's N1 limits: 1 x V100 on at most 12 vCPUs; 1 x T4 on at most 48 (source "gpus").
    ({"cpu_cores": 96, "memory": 360, "accelerator_type": AcceleratorType.NVIDIA_TESLA_V100}, False),
    ({"cpu_cores": 8, "memory": 30, "accelerator_type": AcceleratorType.NVIDIA_TESLA_V100}, True),
    ({"cpu_cores": 64, "memory": 240, "accelerator_type": AcceleratorType.NVIDIA_TESLA_T4}, False),
    # n1-highcpu-4 and -8 are not custom training machine types (Google lists n1-highcpu-16 and up).
    ({"cpu_cores": 8, "memory": 7.2}, False),
    ({"cpu_cores": 4, "memory": 3.6}, False),
    ({"cpu_cores": 16, "memory": 14.4}, True),
])
def test_configs_map_only_to_valid_training_machines(kwargs: dict[str, object], google_allows: bool) -> None:
    if google_allows:
        MachineConfig(**kwargs)  # type: ignore[arg-type]
        return
    with pytest.raises(ValidationError, match=r"^Invalid `MachineConfig`: expected a \(cpu_cores, memory\) pair"):
        MachineConfig(**kwargs)  # type: ignore[arg-type]


def test_catalog_is_derived_from_google_rules_table() -> None:
    from tfcloud.google.catalog.machines import MACHINE_TYPES
    from tfcloud.google.rules import MACHINE_TYPES as ROWS

    assert set(MACHINE_TYPES) == set(ROWS)
    assert "ct5p-hightpu-4t" not in MACHINE_TYPES and "n1-highcpu-8" not in MACHINE_TYPES
    for config in COMMON_MACHINE_CONFIGS.values():
        assert config.machine_type in ROWS


def test_names_are_case_insensitive_on_the_command_line() -> None:
    assert machine_config_from_name("t4_1x", field="worker_config") is COMMON_MACHINE_CONFIGS["T4_1X"]
    with pytest.raises(ValidationError, match=r"^Invalid `worker_config`: expected a name from `tfcloud machines`"):
        machine_config_from_name("T5_1X", field="worker_config")


@pytest.mark.parametrize(("name", "topology", "hosts"), [
    ("TPU_V5E_4X", "2x2", 1), ("TPU_V5E_16X", "4x4", 4), ("TPU_V6E_1X", "1x1", 1), ("TPU_V6E_16X", "4x4", 4),
    ("TPU_V5E_1X", "1x1", 1), ("TPU_V5E_8X", "2x4", 1), ("TPU", None, 1), ("T4_1X", None, 1),
])
def test_tpu_vm_slices_have_a_topology_and_a_host_count(name: str, topology: str | None, hosts: int) -> None:
    config = COMMON_MACHINE_CONFIGS[name]
    assert (config.tpu_topology, config.tpu_hosts) == (topology, hosts)
    assert config.is_tpu_vm == (topology is not None)


def test_a_multi_host_slice_is_named_by_its_topology() -> None:
    config = MachineConfig(None, None, AcceleratorType.TPU_V6E, 4, tpu_topology="8x8")
    assert (config.machine_type, config.tpu_hosts) == ("ct6e-standard-4t", 16)
    assert "8x8 slice, 16 hosts" in config.describe()
    assert "tpu_topology='8x8'" in repr(config)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"accelerator_type": AcceleratorType.TPU_V5_LITEPOD, "accelerator_count": 4, "tpu_topology": "2x4"},
     "tpu_topology"),
    ({"accelerator_type": AcceleratorType.TPU_V5_LITEPOD, "accelerator_count": 4, "tpu_topology": "2x2x1"},
     "tpu_topology"),
    ({"accelerator_type": AcceleratorType.TPU_V6E, "accelerator_count": 1, "tpu_topology": "2x2"}, "tpu_topology"),
    ({"accelerator_type": AcceleratorType.TPU_V6E, "accelerator_count": 16}, "accelerator_count"),
])
def test_bad_tpu_shapes_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        MachineConfig(None, None, **kwargs)  # type: ignore[arg-type]
    assert f"`{field}`" in str(err.value) and err.value.exit_code == 2


def test_every_gpu_is_named_as_the_installed_vertex_client_names_it() -> None:
    """The request sends accelerator_type by name: each GPU must be a member of aiplatform_v1's enum."""
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="the vertex extra is not installed")
    names = {member.name for member in aiplatform_v1.AcceleratorType}
    for accelerator in AcceleratorType:
        if accelerator.is_gpu:
            assert accelerator.value in names


# -- what can run: GB200 (Arm) is marked and refused with one reason (issue 40) ----------------------------------
def test_only_the_arm_machine_is_not_yet_runnable() -> None:
    from tfcloud.google.catalog.machines import IMAGE_ARCHITECTURES, not_yet_runnable
    from tfcloud.google.rules import MACHINE_TYPES

    blocked = {name for name, config in COMMON_MACHINE_CONFIGS.items() if not_yet_runnable(config)}
    assert blocked == {"GB200_4X"}
    assert MACHINE_TYPES["a4x-highgpu-4g"].arm and "arm64" not in IMAGE_ARCHITECTURES  # the two facts it reads


@pytest.mark.parametrize("flags", [["--chief-config", "GB200_4X"],
                                   ["--chief-config", "GB200_4X", "--reservation", "us-central1-a/gb200"],
                                   ["--worker-count", "1", "--worker-config", "GB200_4X", "--chief-config", "B200_8X",
                                    "--reservation", "any", "--region", "us-central1"]],
                         ids=["chief", "chief-with-reservation", "worker"])
def test_machines_marks_gb200_and_a_job_on_it_is_refused_with_the_same_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    import json

    from tfcloud.cli import main
    from tfcloud.google.catalog.machines import not_yet_runnable

    reason = not_yet_runnable(COMMON_MACHINE_CONFIGS["GB200_4X"])
    assert reason is not None and reason.startswith("not yet runnable: a4x-highgpu-4g has Arm CPUs")
    assert main(["machines"]) == 0
    out = capsys.readouterr().out
    assert "\nGB200_4X *  " in out and f"\n* GB200_4X: {reason}.\n" in out
    assert main(["machines", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["GB200_4X"]["not_yet_runnable"] == reason
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    assert main(["submit", str(script), "--vertex", *flags, "--dry-run"]) == 2
    option = "worker_config" if "--worker-config" in flags else "chief_config"
    assert capsys.readouterr().err == (f"Error: Invalid `{option}`: expected a machine a job can run on, received "
                                       f"'GB200_4X'.\nGB200_4X is {reason}.\n")
