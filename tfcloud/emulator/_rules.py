"""What Vertex AI refuses in a CustomJob (and a tuning job's trial spec) with INVALID_ARGUMENT, as field violations.

Each rule names its source, read 2026-11-26. Fields are named as the service names them in its "List of found
errors" answer (proto field names from the job: ``job_spec.worker_pool_specs[0].machine_spec.accelerator_type``).
Where Google's pages leave a limit unclear, the stricter reading is taken (it refuses before a paid build):
label keys and values at most 63 characters (the labels page) rather than the proto comment's 64.

Sources:

- CustomJob / CustomJobSpec / WorkerPoolSpec / MachineSpec field comments, google/cloud/aiplatform/v1/
  custom_job.proto, machine_resources.proto (display_name required, at most 128 UTF-8 characters;
  ``labels``; ``service_account``; ``network`` "projects/{project}/global/networks/{network}" with a project
  number; ``base_output_directory`` a Cloud Storage URI).
- "Create and manage labels" (https://cloud.google.com/resource-manager/docs/creating-managing-labels): at
  most 64 labels; keys 1-63 characters, starting with a lowercase letter or international character; keys and
  values only lowercase letters, digits, ``_`` and ``-``, international characters allowed; values may be empty.
- The service's own answer for an accelerator without a count (python-aiplatform users' reports, e.g.
  prefect-gcp issue 175): "Both `accelerator_type` and `accelerator_count` should be specified or none."
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["custom_job_violations", "label_violations"]

Violation = tuple[str, str]

#: Lowercase letters (any script: Unicode category Ll, or a letter without case such as CJK), digits, _ and -.
_LABEL_CHARS = re.compile(r"^[\w-]*$")
_MAX_LABELS = 64
_MAX_LABEL_LENGTH = 63
_SERVICE_ACCOUNT = re.compile(r"^[a-z0-9][a-z0-9.+_-]*@[a-z0-9][a-z0-9.-]*\.[a-z]{2,}$")
_NETWORK = re.compile(r"^projects/\d+/global/networks/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
_GCS_URI = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](/.*)?$")


def _label_text_ok(text: str) -> bool:
    return bool(_LABEL_CHARS.match(text)) and text == text.lower() and "\u0000" not in text


def label_violations(labels: Mapping[str, str], *, field: str = "labels") -> list[Violation]:
    """Google Cloud's label rules (keys, values, counts); international characters allowed."""
    found: list[Violation] = []
    if len(labels) > _MAX_LABELS:
        found.append((field, f"At most {_MAX_LABELS} labels are allowed, received {len(labels)}."))
    for key, value in labels.items():
        if not key or len(key) > _MAX_LABEL_LENGTH or not _label_text_ok(key) \
                or not (key[0].isalpha() and not key[0].isupper()):
            found.append((f"{field}[{key!r}]", f"Label key {key!r} must be 1-{_MAX_LABEL_LENGTH} characters: "
                          "lowercase letters (international ones too), digits, '_' and '-', starting with a "
                          "lowercase letter."))
        if len(value) > _MAX_LABEL_LENGTH or not _label_text_ok(value):
            found.append((f"{field}[{key!r}]", f"Label value {value!r} must be at most {_MAX_LABEL_LENGTH} "
                          "characters: lowercase letters (international ones too), digits, '_' and '-'."))
    return found


def _pool_violations(pool: Any, where: str, index: int) -> list[Violation]:
    found: list[Violation] = []
    if index > 0 and not pool.replica_count and "container_spec" not in pool and "python_package_spec" not in pool:
        return found  # an empty pool, kept to give the next ones their index
    if index == 0 and pool.replica_count != 1:
        found.append((f"{where}.replica_count", "The first worker pool (the chief) must have exactly 1 replica, "
                      f"received {pool.replica_count}."))
    elif pool.replica_count < 1:
        found.append((f"{where}.replica_count", f"Must be at least 1, received {pool.replica_count}."))
    machine = pool.machine_spec
    if not machine.machine_type:
        found.append((f"{where}.machine_spec.machine_type", "Machine type is required."))
    has_type = bool(machine.accelerator_type) and machine.accelerator_type.name != "ACCELERATOR_TYPE_UNSPECIFIED"
    if has_type != (machine.accelerator_count > 0):
        found.append((f"{where}.machine_spec.accelerator_type",
                      "Both `accelerator_type` and `accelerator_count` should be specified or none."))
    if machine.accelerator_count < 0:
        found.append((f"{where}.machine_spec.accelerator_count", "Must not be negative."))
    has_container, has_package = "container_spec" in pool, "python_package_spec" in pool
    if has_container == has_package:
        found.append((where, "Exactly one of container_spec and python_package_spec is required."))
    if has_container and not pool.container_spec.image_uri:
        found.append((f"{where}.container_spec.image_uri", "Image URI is required."))
    if has_package:
        package = pool.python_package_spec
        if not package.executor_image_uri:
            found.append((f"{where}.python_package_spec.executor_image_uri", "Executor image URI is required."))
        if not package.python_module:
            found.append((f"{where}.python_package_spec.python_module", "Python module is required."))
        for number, uri in enumerate(package.package_uris):
            if not _GCS_URI.match(uri):
                found.append((f"{where}.python_package_spec.package_uris[{number}]",
                              f"Expected a Cloud Storage URI (gs://BUCKET/OBJECT), received {uri!r}."))
    if "disk_spec" in pool and pool.disk_spec.boot_disk_type not in ("", "pd-ssd", "pd-standard", "hyperdisk-balanced"):
        found.append((f"{where}.disk_spec.boot_disk_type", "Expected pd-ssd, pd-standard or hyperdisk-balanced, "
                      f"received {pool.disk_spec.boot_disk_type!r}."))
    return found


def custom_job_violations(job: Any, *, spec_field: str = "job_spec") -> list[Violation]:
    """Every rule a CustomJob (proto-plus) breaks; empty when the service would accept it."""
    found: list[Violation] = []
    if not job.display_name:
        found.append(("display_name", "Display name is required."))
    elif len(job.display_name.encode()) > 128:
        found.append(("display_name", "Display name must be at most 128 UTF-8 characters (bytes), received "
                      f"{len(job.display_name.encode())}."))
    found += label_violations(dict(job.labels))
    spec = job.job_spec
    pools = list(spec.worker_pool_specs)
    if not pools:
        found.append((f"{spec_field}.worker_pool_specs", "At least one worker pool is required."))
    if len(pools) > 4:
        found.append((f"{spec_field}.worker_pool_specs", f"At most 4 worker pools are allowed, received "
                      f"{len(pools)}."))
    for index, pool in enumerate(pools):
        found += _pool_violations(pool, f"{spec_field}.worker_pool_specs[{index}]", index)
    if spec.service_account and not _SERVICE_ACCOUNT.match(spec.service_account):
        found.append((f"{spec_field}.service_account", "Expected a service account email "
                      f"(NAME@PROJECT.iam.gserviceaccount.com), received {spec.service_account!r}."))
    if spec.network and not _NETWORK.match(spec.network):
        found.append((f"{spec_field}.network", "Expected projects/{project number}/global/networks/{network}, "
                      f"received {spec.network!r}."))
    uri = spec.base_output_directory.output_uri_prefix
    if uri and not _GCS_URI.match(uri):
        found.append((f"{spec_field}.base_output_directory.output_uri_prefix",
                      f"Expected a Cloud Storage URI (gs://BUCKET/PATH), received {uri!r}."))
    return found
