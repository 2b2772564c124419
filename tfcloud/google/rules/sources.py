"""Where each of Google's rules comes from: a page (title + URL) or an ``aiplatform_v1`` proto field, and the date
it was read. Every table in :mod:`tfcloud.google.rules.data` names one of these."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

__all__ = ["READ", "SOURCES", "Source"]

#: The day the rules below were read from Google's pages and protos.
READ = datetime.date(2026, 11, 26)


@dataclass(frozen=True, kw_only=True)
class Source:
    """One Google page or proto field. ``str()`` is what a :class:`~tfcloud.google.rules.Violation` names."""

    title: str
    url: str
    read: datetime.date = READ

    def __str__(self) -> str:
        return f"{self.title} ({self.url}), read {self.read.isoformat()}"


def _page(title: str, path: str) -> Source:
    return Source(title=title, url=f"https://cloud.google.com/{path}")


def _proto(field: str, path: str) -> Source:
    return Source(title=f"aiplatform_v1 proto field {field}",
                  url=f"https://github.com/googleapis/googleapis/blob/master/google/cloud/aiplatform/v1/{path}")


def _sdk(what: str, path: str) -> Source:
    return Source(title=f"google-cloud-aiplatform SDK check: {what}",
                  url=f"https://github.com/googleapis/python-aiplatform/blob/main/google/cloud/aiplatform/{path}")


SOURCES: dict[str, Source] = {
    "configure-compute": _page("Configure compute resources for custom training",
                               "vertex-ai/docs/training/configure-compute"),
    "locations": _page("Vertex AI locations (Available locations; Using accelerators; page last updated 2026-04-10)",
                       "vertex-ai/docs/general/locations"),
    "tpu-regions": _page("Cloud TPU: TPU regions and zones (the zones Compute Engine creates TPU VMs in)",
                         "tpu/docs/regions-zones"),
    "tpu-training": _page("Training with TPU VMs (Vertex AI)", "vertex-ai/docs/training/training-with-tpu-vm"),
    "tpu-frameworks": _page("Cloud TPU: TPU v6e (supported frameworks: JAX and PyTorch)", "tpu/docs/v6e"),
    "spot": _page("Use Spot VMs with training (limitations: Spot VMs with TPU Pods isn't supported)",
                  "vertex-ai/docs/training/use-spot-vms"),
    "reservations": _page("Use reservations with training", "vertex-ai/docs/training/use-reservations"),
    "dws": _page("Schedule training jobs based on resource availability (Dynamic Workload Scheduler, FLEX_START)",
                 "vertex-ai/docs/training/schedule-jobs-dws"),
    "gpus": _page("Compute Engine: GPU machine types (N1 vCPU and memory limits per attached GPU)",
                  "compute/docs/gpus"),
    "accelerator-family": _page("Compute Engine: Accelerator-optimized machine family (A3 Ultra, A4, A4X: "
                                "Hyperdisk only; A4X: Arm CPUs)", "compute/docs/accelerator-optimized-machines"),
    "k80-eol": _page("Compute Engine: NVIDIA K80 end of support", "compute/docs/eol/k80-eol"),
    "p100-eol": _page("Compute Engine: NVIDIA P100 end of support (2026-09-15)", "compute/docs/eol/p100-eol"),
    "persistent-resources": _page("Vertex AI persistent resources: create a persistent resource",
                                  "vertex-ai/docs/training/persistent-resource-create"),
    "accelerator-enum": _proto("MachineSpec.accelerator_type (enum AcceleratorType)", "accelerator_type.proto"),
    "tpu-topology": _proto("MachineSpec.tpu_topology", "machine_resources.proto"),
    "disk-spec": _proto("DiskSpec.boot_disk_type / boot_disk_size_gb", "machine_resources.proto"),
    "labels": _proto("CustomJob.labels (up to 64 characters, lowercase letters, digits, '_' and '-', "
                     "international characters allowed)", "custom_job.proto"),
    "label-count": _page("Resource Manager: Labels overview (at most 64 labels per resource; keys and values up to "
                         "63 characters; keys start with a lowercase letter or an international character)",
                         "resource-manager/docs/labels-overview"),
    "display-name": _proto("CustomJob.display_name (required, up to 128 UTF-8 characters)", "custom_job.proto"),
    "service-account-spec": _proto("ResourceRuntimeSpec.service_account_spec.enable_custom_service_account",
                                   "persistent_resource.proto"),
    "sdk-tpu-topology": _sdk("worker_spec_utils: tpu_topology is required for the TPU v5 versions; TPU jobs only "
                             "allow 1 replica", "utils/worker_spec_utils.py"),
    "sdk-regions": _sdk("constants.base.SUPPORTED_REGIONS, the locations aiplatform.init accepts "
                        "(google-cloud-aiplatform 2.7.0; commit 91cc8ce, 2026-08-21)", "constants/base.py"),
    "sdk-experiment": _sdk("jobs.CustomJob.submit: 'experiment' and 'tensorboard' cannot be set together; "
                           "service_account is required with experiment", "jobs.py"),
}
