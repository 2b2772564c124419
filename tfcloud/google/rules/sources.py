"""Where each of Google's rules comes from: a page (title + URL) or an ``aiplatform_v1`` proto field, and the date
it was read. Every table in :mod:`tfcloud.google.rules.data` and :mod:`~tfcloud.google.rules.fields` names one
of these.

Each source carries its own ``read`` date (no default: a source whose content is read again gets that day, the
others keep theirs): the day its content was read, or, where no note says, the day the rule citing it was written
(``git log -S`` on the rule). ``since``: the earliest day the content can date from, where the source says (a
page's "last updated", a commit's date); tests/vertexrules/test_checks.py checks each date is no later than today
and no earlier than ``since`` or Vertex AI's launch (:data:`VERTEX_AI_LAUNCH`)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

__all__ = ["SOURCES", "VERTEX_AI_LAUNCH", "Source"]

#: Vertex AI's general availability (Google I/O, 2021-05-18): no Vertex AI page or aiplatform_v1 proto was read
#: before it.
VERTEX_AI_LAUNCH = datetime.date(2021, 5, 18)


@dataclass(frozen=True, kw_only=True)
class Source:
    """One Google page or proto field. ``str()`` is what a :class:`~tfcloud.google.rules.Violation` names."""

    title: str
    url: str
    read: datetime.date
    since: datetime.date | None = None

    def __str__(self) -> str:
        return f"{self.title} ({self.url}), read {self.read.isoformat()}"


def _day(text: str) -> datetime.date:
    return datetime.date.fromisoformat(text)


def _page(title: str, path: str, read: str, since: str | None = None) -> Source:
    return Source(title=title, url=f"https://cloud.google.com/{path}", read=_day(read),
                  since=_day(since) if since else None)


def _proto(field: str, path: str, read: str) -> Source:
    return Source(title=f"aiplatform_v1 proto field {field}", read=_day(read),
                  url=f"https://github.com/googleapis/googleapis/blob/master/google/cloud/aiplatform/v1/{path}")


def _sdk(what: str, path: str, read: str, since: str | None = None) -> Source:
    return Source(title=f"google-cloud-aiplatform SDK check: {what}", read=_day(read),
                  since=_day(since) if since else None,
                  url=f"https://github.com/googleapis/python-aiplatform/blob/main/google/cloud/aiplatform/{path}")


SOURCES: dict[str, Source] = {
    "configure-compute": _page("Configure compute resources for custom training",
                               "vertex-ai/docs/training/configure-compute", "2026-11-26"),
    "locations": _page("Vertex AI locations (Available locations; Using accelerators; page last updated 2026-04-10)",
                       "vertex-ai/docs/general/locations", "2026-11-26", since="2026-04-10"),
    "tpu-regions": _page("Cloud TPU: TPU regions and zones (the zones Compute Engine creates TPU VMs in)",
                         "tpu/docs/regions-zones", "2026-11-26"),
    # Read again 2026-11-29 for its "TPU Pod" section (the TPU Pod base image, CMD not ENTRYPOINT).
    "tpu-training": _page("Training with TPU accelerators (Vertex AI; formerly \"Training with TPU VMs\")",
                          "vertex-ai/docs/training/training-with-tpu-vm", "2026-11-29"),
    "tpu-frameworks": _page("Cloud TPU: TPU v6e (supported frameworks: JAX and PyTorch)", "tpu/docs/v6e", "2026-11-26"),
    "spot": _page("Use Spot VMs with training (limitations: Spot VMs with TPU Pods isn't supported)",
                  "vertex-ai/docs/training/use-spot-vms", "2026-11-26"),
    "reservations": _page("Use reservations with training", "vertex-ai/docs/training/use-reservations", "2026-11-26"),
    "dws": _page("Schedule training jobs based on resource availability (Dynamic Workload Scheduler, FLEX_START)",
                 "vertex-ai/docs/training/schedule-jobs-dws", "2026-11-26"),
    "gpus": _page("Compute Engine: GPU machine types (N1 vCPU and memory limits per attached GPU)",
                  "compute/docs/gpus", "2026-11-26"),
    "accelerator-family": _page("Compute Engine: Accelerator-optimized machine family (A3 Ultra, A4, A4X: "
                                "Hyperdisk only; A4X: Arm CPUs)", "compute/docs/accelerator-optimized-machines",
                                "2026-11-26"),
    "k80-eol": _page("Compute Engine: NVIDIA K80 end of support", "compute/docs/eol/k80-eol", "2026-11-26"),
    "p100-eol": _page("Compute Engine: NVIDIA P100 end of support (2026-09-15)", "compute/docs/eol/p100-eol",
                      "2026-11-26"),
    "persistent-resources": _page("Vertex AI persistent resources: create a persistent resource",
                                  "vertex-ai/docs/training/persistent-resource-create", "2026-11-26"),
    "accelerator-enum": _proto("MachineSpec.accelerator_type (enum AcceleratorType)", "accelerator_type.proto",
                               "2026-11-26"),
    "tpu-topology": _proto("MachineSpec.tpu_topology", "machine_resources.proto", "2026-11-26"),
    "disk-spec": _proto("DiskSpec.boot_disk_type / boot_disk_size_gb", "machine_resources.proto", "2026-11-26"),
    "labels": _proto("CustomJob.labels (up to 64 characters, lowercase letters, digits, '_' and '-', "
                     "international characters allowed)", "custom_job.proto", "2026-11-26"),
    "label-count": _page("Resource Manager: Labels overview (at most 64 labels per resource; keys and values up to "
                         "63 characters; keys start with a lowercase letter or an international character)",
                         "resource-manager/docs/labels-overview", "2026-11-26"),
    "display-name": _proto("CustomJob.display_name (required, up to 128 UTF-8 characters)", "custom_job.proto",
                           "2026-11-26"),
    "service-account-spec": _proto("ResourceRuntimeSpec.service_account_spec.enable_custom_service_account",
                                   "persistent_resource.proto", "2026-11-26"),
    "sdk-tpu-topology": _sdk("worker_spec_utils: tpu_topology is required for the TPU v5 versions; TPU jobs only "
                             "allow 1 replica", "utils/worker_spec_utils.py", "2026-11-26"),
    "sdk-regions": _sdk("constants.base.SUPPORTED_REGIONS, the locations aiplatform.init accepts "
                        "(google-cloud-aiplatform 2.7.0; commit 91cc8ce, 2026-08-21)", "constants/base.py",
                        "2026-11-26", since="2026-08-21"),
    "sdk-experiment": _sdk("jobs.CustomJob.submit: 'experiment' and 'tensorboard' cannot be set together; "
                           "service_account is required with experiment", "jobs.py", "2026-11-26"),
}
