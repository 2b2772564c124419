"""Every rule the checks apply, by its stable id: what Google documents, and where (docs/vertex.md's table of rules
is generated from this, ``python docs/captures.py options``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["RULES", "Rule"]


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One documented rule. ``source``: a key of :data:`tfcloud.google.rules.sources.SOURCES`; ``client``: checked
    by tfcloud before it sends (the SDK's checks, or what only the client knows: the framework, the image's
    architecture), not by the service."""

    id: str
    summary: str
    source: str
    client: bool = False


_RULES = (
    Rule(id="region-serves-training", source="locations",
         summary="The job's region is one where Vertex AI serves custom training."),
    Rule(id="machine-type-for-training", source="configure-compute",
         summary="Each pool's machine type is one Google lists for custom training (no ct5p-*, no n1-highcpu-4/8)."),
    Rule(id="first-pool-required", source="configure-compute",
         summary="worker_pool_specs[0] (the primary replica) is set."),
    Rule(id="accelerator-for-training", source="configure-compute",
         summary="The accelerator is one Vertex AI offers for custom training."),
    Rule(id="accelerator-for-machine", source="configure-compute",
         summary="The accelerator is one the machine type takes (a TPU VM or A2/A3/A4/G2 machine fixes its own)."),
    Rule(id="accelerator-required", source="configure-compute",
         summary="An accelerator-optimized machine (A2, A3, A4, A4X, G2, cloud-tpu) names its accelerator and count."),
    Rule(id="accelerator-count", source="configure-compute",
         summary="The accelerator count is one the machine type takes."),
    Rule(id="n1-gpu-limits", source="gpus",
         summary="An N1 machine with GPUs stays within Compute Engine's vCPU and memory limits for that GPU count."),
    Rule(id="accelerator-no-longer-offered", source="k80-eol",
         summary="Accelerators Vertex AI no longer offers (NVIDIA K80) are refused, naming the replacement."),
    Rule(id="accelerator-end-of-support", source="p100-eol",
         summary="An accelerator past its end of support (NVIDIA P100: 2026-09-15) is refused, judged on the day "
                 "of the run."),
    Rule(id="accelerator-region", source="locations",
         summary="The job's region serves the accelerator (GPU or TPU) for training."),
    Rule(id="tpu-topology-required", source="sdk-tpu-topology",
         summary="A TPU v5e or v6e pool names its tpu_topology (2x2 for ct5lp-hightpu-4t, ...), single host too."),
    Rule(id="tpu-topology-valid", source="tpu-training",
         summary="The tpu_topology is one the machine type makes (a whole number of its hosts)."),
    Rule(id="tpu-topology-not-taken", source="tpu-topology",
         summary="Only TPU VM machine types take a tpu_topology."),
    Rule(id="tpu-one-pool-one-replica", source="tpu-training",
         summary="A TPU job is one worker pool with one replica: no CPU/GPU chief, workers, PS or evaluator beside "
                 "it; a multi-host slice is one replica with a larger topology."),
    Rule(id="spot-multi-host-tpu", source="spot",
         summary="Spot VMs are not used with multi-host TPU slices (TPU Pods)."),
    Rule(id="tpu-framework", source="tpu-frameworks", client=True,
         summary="TensorFlow runs on TPU v2, v3 and v5e; TPU v6e runs JAX and PyTorch only."),
    Rule(id="tpu-pod-tensorflow-image", source="tpu-training", client=True,
         summary="TensorFlow on a multi-host TPU slice (a TPU Pod) runs on Vertex AI's TPU Pod base image "
                 "(tf-tpu-pod-base-cp310), its command as CMD (or the container spec's args), never ENTRYPOINT."),
    Rule(id="boot-disk-type", source="disk-spec",
         summary="The boot disk type is one the machine takes (A3 Ultra, A4, A4X: hyperdisk-balanced only; G2, A3: "
                 "no pd-standard)."),
    Rule(id="boot-disk-size", source="disk-spec", summary="The boot disk is 100 to 64,000 GB."),
    Rule(id="reservation-required", source="reservations",
         summary="NVIDIA GB200 (a4x-highgpu-4g) runs only on a reservation (ANY or SPECIFIC)."),
    Rule(id="arm-image-required", source="accelerator-family", client=True,
         summary="An Arm machine (a4x-highgpu-4g) runs an arm64 image; tfcloud builds amd64 images only, so it "
                 "refuses until it can build one."),
    Rule(id="flex-start-accelerator", source="dws",
         summary="FLEX_START serves L4, A100 (40/80 GB), H100 (and Mega), H200 and B200 machines only."),
    Rule(id="flex-start-one-machine", source="dws",
         summary="With FLEX_START, every pool has the same machine configuration."),
    Rule(id="flex-start-timeout", source="dws", summary="A FLEX_START job's timeout is at most 7 days."),
    Rule(id="flex-start-max-wait", source="dws",
         summary="max_wait_duration only with FLEX_START, at most 14 days."),
    Rule(id="experiment-with-tensorboard", source="sdk-experiment", client=True,
         summary="An experiment and a TensorBoard instance are not set together (the SDK refuses the pair)."),
    Rule(id="experiment-service-account", source="sdk-experiment", client=True,
         summary="An experiment needs the job's service account."),
    Rule(id="labels-count", source="label-count", summary="At most 64 labels."),
    Rule(id="label-key", source="labels",
         summary="Label keys: 1 to 63 lowercase letters (international ones too), digits, '_' or '-', starting "
                 "with a letter (the proto says 64, the Labels overview 63: 63 is kept)."),
    Rule(id="label-value", source="labels",
         summary="Label values: up to 63 lowercase letters (international ones too), digits, '_' or '-'."),
    Rule(id="display-name", source="display-name", summary="The display name is 1 to 128 characters."),
    Rule(id="resource-pool-required", source="persistent-resources",
         summary="A persistent resource has at least one resource pool."),
)
#: Every rule by id.
RULES: Mapping[str, Rule] = MappingProxyType({rule.id: rule for rule in _RULES})
