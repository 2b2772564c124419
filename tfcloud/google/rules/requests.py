"""The rest of a CustomJob request Vertex AI checks, beyond its machines (:mod:`tfcloud.google.rules.apply`):
replica counts, each pool's container or package, the service account, the network, Cloud Storage URIs, and an
accelerator count without its type (or the reverse). Same inputs and :class:`Violation` as the other checks.

Where Google's pages leave a rule unclear, the reading that refuses before a paid build is taken: a service
account must look like a service account's email; a network is named with a project *number*, as the proto says.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from tfcloud.google.rules.apply import Violation, accelerator_name
from tfcloud.google.rules.rules import Rule
from tfcloud.google.rules.sources import Source

__all__ = ["REQUEST_RULES", "REQUEST_SOURCES", "check_job_fields"]

_PROTO = "https://github.com/googleapis/googleapis/blob/master/google/cloud/aiplatform/v1/"

#: Where each rule below comes from, each with the day it was read (these with the rules citing them: commit
#: d79ce8f, 2026-11-26).
REQUEST_SOURCES: dict[str, Source] = {
    "replica-count": Source(title="aiplatform_v1 proto field WorkerPoolSpec.replica_count; \"Configure compute "
                            "resources for custom training\" (the first worker pool has exactly one replica)",
                            url=_PROTO + "custom_job.proto", read=datetime.date(2026, 11, 26)),
    "task": Source(title="aiplatform_v1 proto field WorkerPoolSpec.task (oneof container_spec, python_package_spec; "
                   "ContainerSpec.image_uri, PythonPackageSpec.executor_image_uri / package_uris / python_module "
                   "required)", url=_PROTO + "custom_job.proto", read=datetime.date(2026, 11, 26)),
    "accelerator-pair": Source(title="Vertex AI's answer to a machine_spec with one of accelerator_type and "
                               "accelerator_count (\"Both `accelerator_type` and `accelerator_count` should be "
                               "specified or none.\", as reported in prefect-gcp issue 175)",
                               url="https://github.com/prefect-archive/prefect-gcp/issues/175",
                               read=datetime.date(2026, 11, 26)),
    "service-account": Source(title="aiplatform_v1 proto field CustomJobSpec.service_account (a service account "
                              "email)", url=_PROTO + "custom_job.proto", read=datetime.date(2026, 11, 26)),
    "network": Source(title="aiplatform_v1 proto field CustomJobSpec.network (projects/{project}/global/networks/"
                      "{network}, {project} a project number)", url=_PROTO + "custom_job.proto",
                      read=datetime.date(2026, 11, 26)),
    "output-uri": Source(title="aiplatform_v1 proto field CustomJobSpec.base_output_directory "
                         "(GcsDestination.output_uri_prefix: a Google Cloud Storage directory)",
                         url=_PROTO + "io.proto", read=datetime.date(2026, 11, 26)),
    "worker-pools": Source(title="Configure compute resources for custom training (at most 4 worker pools: "
                           "primary, workers, parameter servers, evaluators; each with a machine type)",
                           url="https://cloud.google.com/vertex-ai/docs/training/configure-compute",
                           read=datetime.date(2026, 11, 26)),
}

#: The rules below by id, as :data:`tfcloud.google.rules.rules.RULES` lists the others (``source``: a key of
#: :data:`REQUEST_SOURCES`). The emulator enforces them; tfcloud's own requests meet them by construction.
REQUEST_RULES: Mapping[str, Rule] = MappingProxyType({rule.id: rule for rule in (
    Rule(id="replica-count", source="replica-count",
         summary="The first worker pool has exactly 1 replica; a later, non-empty pool at least 1."),
    Rule(id="worker-pools", source="worker-pools",
         summary="At most 4 worker pools; every non-empty pool names its machine type."),
    Rule(id="task", source="task",
         summary="Each pool has exactly one of container_spec (with image_uri) and python_package_spec (with "
                 "executor_image_uri and python_module)."),
    Rule(id="accelerator-pair", source="accelerator-pair",
         summary="accelerator_type and accelerator_count are given together or not at all."),
    Rule(id="service-account", source="service-account", summary="service_account is a service account's email."),
    Rule(id="network", source="network",
         summary="network is projects/{project number}/global/networks/{network}."),
    Rule(id="output-uri", source="output-uri",
         summary="base_output_directory and package_uris are Cloud Storage (gs://) URIs."),
)})

_SERVICE_ACCOUNT = re.compile(r"^[a-z0-9][a-z0-9.+_-]*@[a-z0-9][a-z0-9.-]*\.[a-z]{2,}$")
_NETWORK = re.compile(r"^projects/\d+/global/networks/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
_GCS_URI = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](/.*)?$")


def _violation(field: str, rule: str, *, expected: str, received: object, hint: str) -> Violation:
    shown = received if isinstance(received, str) else repr(received)
    return Violation(field=field, rule=rule, source=str(REQUEST_SOURCES[rule]), expected=expected, received=shown,
                     hint=hint, description=f"expected {expected}; received {shown}. {hint}")


def _int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return 0


def _pool(f: str, index: int, pool: Mapping[str, Any]) -> list[Violation]:
    found: list[Violation] = []
    replicas = _int(pool.get("replica_count"))
    if index == 0 and replicas != 1:
        found.append(_violation(f"{f}.replica_count", "replica-count", received=replicas,
                                expected="exactly 1 replica in the first worker pool (the primary replica)",
                                hint="Put further machines in worker_pool_specs[1]."))
    elif index > 0 and replicas < 1:
        found.append(_violation(f"{f}.replica_count", "replica-count", expected="at least 1 replica",
                                received=replicas, hint="Leave the pool out (an empty pool) or give it replicas."))
    spec = pool.get("machine_spec") or {}
    if not spec.get("machine_type"):
        found.append(_violation(f"{f}.machine_spec.machine_type", "worker-pools", expected="a machine type",
                                received="none", hint="Every worker pool names its machine type."))
    has_type = accelerator_name(spec.get("accelerator_type")) is not None
    count = _int(spec.get("accelerator_count"))
    if has_type != (count > 0):
        found.append(Violation(
            field=f"{f}.machine_spec.accelerator_type", rule="accelerator-pair",
            source=str(REQUEST_SOURCES["accelerator-pair"]), expected="both or none", received=f"type "
            f"{spec.get('accelerator_type') or 'none'}, count {count}", hint="Give both, or neither.",
            description="Both `accelerator_type` and `accelerator_count` should be specified or none."))
    container, package = pool.get("container_spec"), pool.get("python_package_spec")
    if bool(container) == bool(package):
        found.append(_violation(f, "task", expected="exactly one of container_spec and python_package_spec",
                                received="both" if container else "neither", hint="Give the pool its code."))
    if container and not container.get("image_uri"):
        found.append(_violation(f"{f}.container_spec.image_uri", "task", expected="an image URI", received="none",
                                hint="Name the training image."))
    if package:
        for key, what in (("executor_image_uri", "an executor image URI"), ("python_module", "a Python module")):
            if not package.get(key):
                found.append(_violation(f"{f}.python_package_spec.{key}", "task", expected=what, received="none",
                                        hint="Package specs need executor_image_uri, package_uris and "
                                             "python_module."))
        for number, uri in enumerate(package.get("package_uris") or []):
            if not isinstance(uri, str) or not _GCS_URI.match(uri):
                found.append(_violation(f"{f}.python_package_spec.package_uris[{number}]", "output-uri",
                                        expected="a Cloud Storage URI (gs://BUCKET/OBJECT)", received=uri,
                                        hint="Upload the package to a bucket first."))
    return found


def check_job_fields(spec: Mapping[str, Any], *, field: str = "job_spec") -> list[Violation]:
    """A ``CustomJobSpec`` (a job's ``job_spec``, a tuning job's ``trial_job_spec``) as a dict, beyond its
    machines: pools' replicas and code, accelerator pairs, service account, network, output URI."""
    found: list[Violation] = []
    pools: Sequence[Mapping[str, Any]] = spec.get("worker_pool_specs") or []
    if len(pools) > 4:
        found.append(_violation(f"{field}.worker_pool_specs", "worker-pools", expected="at most 4 worker pools",
                                received=len(pools), hint="Pools: primary, workers, parameter servers, evaluator."))
    for index, pool in enumerate(pools):
        empty = index > 0 and not _int(pool.get("replica_count")) and not pool.get("container_spec") \
            and not pool.get("python_package_spec")
        if not empty:
            found += _pool(f"{field}.worker_pool_specs[{index}]", index, pool)
    account = spec.get("service_account")
    if account and not (isinstance(account, str) and _SERVICE_ACCOUNT.match(account)):
        found.append(_violation(f"{field}.service_account", "service-account", received=account,
                                expected="a service account email (NAME@PROJECT.iam.gserviceaccount.com)",
                                hint="Give the service account's email."))
    network = spec.get("network")
    if network and not (isinstance(network, str) and _NETWORK.match(network)):
        found.append(_violation(f"{field}.network", "network", received=network,
                                expected="projects/{project number}/global/networks/{network}",
                                hint="Name the VPC network with its project's number."))
    uri = (spec.get("base_output_directory") or {}).get("output_uri_prefix")
    if uri and not (isinstance(uri, str) and _GCS_URI.match(uri)):
        found.append(_violation(f"{field}.base_output_directory.output_uri_prefix", "output-uri",
                                expected="a Cloud Storage URI (gs://BUCKET/PATH)", received=uri,
                                hint="Write outputs to a bucket."))
    return found
