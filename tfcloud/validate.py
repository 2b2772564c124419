"""Validation: the user's arguments in, one frozen :class:`~tfcloud.spec.JobSpec` out.

Every check runs before anything is uploaded, built or submitted. Each failure is a
:class:`~tfcloud.errors.ValidationError` naming the field, what was expected and what was received.
The checks include every one tensorflow-cloud makes, plus parameter-server rules and Vertex AI limits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from tfcloud.errors import ValidationError
from tfcloud.machines import COMMON_MACHINE_CONFIGS, MachineConfig
from tfcloud.spec import DockerConfig, EntryPointKind, JobSpec, PoolSpec, Role, Strategy
from tfcloud.strategy import choose_strategy, parse_strategy
from tfcloud.targets import TARGETS, AnyTarget, LocalTarget, VertexTarget

__all__ = ["MAX_LABELS", "MAX_POOLS", "build_spec", "validate_labels"]

MAX_LABELS = 63  # Vertex AI allows 64; tfcloud adds one (tfcloud-submission) to make retries idempotent
MAX_LABEL_LENGTH = 63
MAX_POOLS = 4  # Vertex AI: chief, workers, parameter servers, evaluator
_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]*$")
_LABEL_VALUE = re.compile(r"^[a-z0-9_-]*$")
_SERVICE_ACCOUNT = re.compile(r"^[a-z0-9][a-z0-9._-]*@[a-z0-9][a-z0-9.-]*\.gserviceaccount\.com$")
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
_PROJECT = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$|^[a-z0-9.-]+:[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
_DISPLAY_NAME_MAX = 128
_NETWORK = re.compile(r"^projects/[0-9]+/global/networks/[a-z]([-a-z0-9]*[a-z0-9])?$")
_GCS_URI = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](/.*)?$")
MAX_TIMEOUT_S = 14 * 24 * 3600  # Vertex AI: at most 14 days (default 7)


def _entry_point(value: object) -> tuple[Path, EntryPointKind]:
    expected = "a path to an existing Python file (.py) or notebook (.ipynb)"
    if not isinstance(value, str | Path) or not str(value):
        raise ValidationError("entry_point", expected, value)
    path = Path(value).expanduser()
    suffix = path.suffix.lower()
    if suffix not in (".py", ".ipynb"):
        raise ValidationError("entry_point", expected, str(value))
    if not path.is_file():
        raise ValidationError("entry_point", expected, str(value), hint=f"No file at {path.absolute()}.")
    kind = EntryPointKind.NOTEBOOK if suffix == ".ipynb" else EntryPointKind.SCRIPT
    return path.resolve(), kind


def _requirements(value: object) -> Path | None:
    if value is None:
        return None
    expected = "a path to an existing requirements file"
    if not isinstance(value, str | Path) or not str(value):
        raise ValidationError("requirements_txt", expected, value)
    path = Path(value).expanduser()
    if not path.is_file():
        raise ValidationError("requirements_txt", expected, str(value), hint=f"No file at {path.absolute()}.")
    return path.resolve()


def _machine(field: str, value: object, *, auto: MachineConfig) -> MachineConfig:
    if isinstance(value, str) and value.lower() == "auto":
        return auto
    if isinstance(value, MachineConfig):
        return value
    if isinstance(value, str) and value.upper() in COMMON_MACHINE_CONFIGS:
        return COMMON_MACHINE_CONFIGS[value.upper()]
    raise ValidationError(field, 'a tfcloud.MachineConfig, a name from COMMON_MACHINE_CONFIGS, or "auto"', value)


def _pool_machine(role: str, config: object, count: int, *, auto: MachineConfig) -> MachineConfig | None:
    """``<role>_config``: None is allowed only when ``<role>_count`` is 0."""
    if config is None:
        if count > 0:
            raise ValidationError(f"{role}_config", f"a MachineConfig when {role}_count > 0", None)
        return None
    return _machine(f"{role}_config", config, auto=auto)


def _count(field: str, value: object, *, maximum: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(field, "an integer ≥ 0", value)
    count = value
    if maximum is not None and count > maximum:
        raise ValidationError(field, f"an integer from 0 to {maximum}", value)
    return count


def validate_labels(value: object) -> Mapping[str, str]:
    """GCP label rules: ≤ 64 labels (63 here: tfcloud adds one); keys 1–63 chars starting with a lowercase
    letter; keys and values only lowercase letters, digits, ``_`` and ``-``; values ≤ 63 chars (may be empty)."""
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise ValidationError("job_labels", "a dict of str to str", value)
    if len(value) > MAX_LABELS:
        raise ValidationError("job_labels", f"at most {MAX_LABELS} labels (Vertex AI allows 64; tfcloud adds one)",
                              f"<{len(value)} labels>")
    labels: dict[str, str] = {}
    for key, val in value.items():
        if key == "tfcloud-submission":
            raise ValidationError("job_labels", "keys other than 'tfcloud-submission' (tfcloud sets it)", key)
        if not isinstance(key, str) or not key or len(key) > MAX_LABEL_LENGTH or not _LABEL_KEY.match(key):
            raise ValidationError(
                "job_labels",
                f"keys of 1 to {MAX_LABEL_LENGTH} characters that start with a lowercase letter and contain "
                "only lowercase letters, digits, '_' and '-'",
                key,
            )
        if not isinstance(val, str) or len(val) > MAX_LABEL_LENGTH or not _LABEL_VALUE.match(val):
            raise ValidationError(
                f"job_labels[{key!r}]",
                f"a value of at most {MAX_LABEL_LENGTH} characters containing only lowercase letters, digits, "
                "'_' and '-'",
                val,
            )
        labels[key] = val
    return MappingProxyType(labels)


def _args(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(isinstance(a, str) for a in value):
        raise ValidationError("entry_point_args", "a list of strings", value)
    return tuple(value)


def _optional_str(field: str, value: object, pattern: re.Pattern[str], expected: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not pattern.match(value):
        raise ValidationError(field, expected, value)
    return value


def _docker_config(value: object) -> DockerConfig:
    if isinstance(value, str) and value.lower() == "auto":
        return DockerConfig()
    if not isinstance(value, DockerConfig):
        raise ValidationError("docker_config", 'a tfcloud.DockerConfig or "auto"', value)
    bucket = value.image_build_bucket
    if bucket is not None:
        name = bucket.removeprefix("gs://").rstrip("/")
        if not _BUCKET.match(name):
            raise ValidationError("docker_config.image_build_bucket", "a Cloud Storage bucket name", bucket)
    return value


def _env(value: object) -> Mapping[str, str]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", k) and isinstance(v, str)
        for k, v in value.items()
    ):
        raise ValidationError("env", "a dict of environment variable names to string values", value)
    return MappingProxyType(dict(value))


def _context_dir(value: object, entry: Path) -> Path | None:
    if value is None:
        return None
    expected = "an existing directory that contains the entry point"
    if not isinstance(value, str | Path) or not str(value):
        raise ValidationError("context_dir", expected, value)
    path = Path(value).expanduser().resolve()
    if not path.is_dir() or not entry.is_relative_to(path):
        raise ValidationError("context_dir", expected, str(value))
    return path


def _output_dir(value: object, target: str) -> str | None:
    """A gs:// URI; for a local run also a directory path (made absolute)."""
    local = target == LocalTarget.name
    if local and isinstance(value, str | Path) and str(value) and not str(value).startswith("gs://"):
        return str(Path(value).expanduser().resolve())
    return _optional_str("base_output_dir", value, _GCS_URI, "a Cloud Storage URI such as gs://my-bucket/outputs"
                         + (" or a directory" if local else ""))


def _max_restarts(value: object) -> int | None:
    return None if value is None else _count("max_restarts", value, maximum=100)


def _scheduling(timeout: object, restart: object, spot: object) -> tuple[int | None, bool, bool]:
    if timeout is not None and (not isinstance(timeout, int) or isinstance(timeout, bool)
                                or not 0 < timeout <= MAX_TIMEOUT_S):
        raise ValidationError("timeout", f"a number of seconds from 1 to {MAX_TIMEOUT_S} (14 days)", timeout)
    if not isinstance(restart, bool):
        raise ValidationError("restart_on_worker_restart", "a bool", restart)
    if not isinstance(spot, bool):
        raise ValidationError("spot", "a bool", spot)
    return timeout, restart, spot


def _target_name(value: object) -> str:
    if isinstance(value, str) and value in TARGETS:
        return value
    raise ValidationError("target", " or ".join(f'"{name}"' for name in TARGETS), value)


def build_spec(
    *,
    entry_point: object,
    requirements_txt: object = None,
    docker_config: object = "auto",
    distribution_strategy: object = "auto",
    chief_config: object = "auto",
    worker_config: object = "auto",
    worker_count: object = 0,
    entry_point_args: object = None,
    job_labels: object = None,
    service_account: object = None,
    ps_config: object = "auto",
    ps_count: object = 0,
    evaluator_config: object = "auto",
    evaluator_count: object = 0,
    target: object = "local",
    project: object = None,
    region: object = None,
    display_name: object = None,
    env: object = None,
    timeout: object = None,
    restart_on_worker_restart: object = False,
    spot: object = False,
    max_restarts: object = None,
    container: object = False,
    network: object = None,
    base_output_dir: object = None,
    context_dir: object = None,
) -> JobSpec:
    """Check every argument and return the frozen spec. Raises :class:`ValidationError` on the first problem.

    ``target`` names where the job runs; the options after ``project`` are that target's (Vertex AI's), checked
    here too and kept on the spec's target value (:mod:`tfcloud.targets`)."""
    tgt = _target_name(target)
    entry, kind = _entry_point(entry_point)
    requirements = _requirements(requirements_txt)
    requested = parse_strategy(distribution_strategy)

    # "auto" machines: tensorflow-cloud's T4_1X on Vertex AI; the CPU machine for local runs.
    auto = COMMON_MACHINE_CONFIGS["T4_1X"] if tgt == VertexTarget.name else COMMON_MACHINE_CONFIGS["CPU"]
    chief = _machine("chief_config", chief_config, auto=auto)
    n_workers = _count("worker_count", worker_count)
    worker = _pool_machine("worker", worker_config, n_workers, auto=auto)
    n_ps = _count("ps_count", ps_count)
    ps = _pool_machine("ps", ps_config, n_ps, auto=COMMON_MACHINE_CONFIGS["CPU"])
    n_eval = _count("evaluator_count", evaluator_count, maximum=1)
    evaluator = _pool_machine("evaluator", evaluator_config, n_eval, auto=COMMON_MACHINE_CONFIGS["CPU"])

    if chief.is_tpu:
        raise ValidationError("chief_config", "a CPU or GPU machine (a TPU cannot be the chief)", chief.describe(),
                              hint="Put the TPU in worker_config with worker_count=1.")
    if worker is not None and worker.is_tpu and n_workers != 1:
        raise ValidationError("worker_count", "1 when worker_config is a TPU", n_workers)
    if n_ps > 0 and n_workers < 1:
        raise ValidationError("worker_count", "an integer ≥ 1 when ps_count > 0 (parameter servers need workers)",
                              n_workers)
    if ps is not None and n_ps > 0 and ps.is_tpu:
        raise ValidationError("ps_config", "a CPU or GPU machine (parameter servers cannot be TPUs)", ps.describe())
    if n_ps > 0 and worker is not None and worker.is_tpu:
        raise ValidationError("worker_config", "a CPU or GPU machine when ps_count > 0", worker.describe())

    strategy, reason = choose_strategy(requested=requested, chief=chief, worker=worker,
                                       worker_count=n_workers, ps_count=n_ps)

    pools = [PoolSpec(role=Role.CHIEF, replica_count=1, machine=chief)]
    if n_workers and worker is not None:
        pools.append(PoolSpec(role=Role.WORKER, replica_count=n_workers, machine=worker))
    if n_ps and ps is not None:
        pools.append(PoolSpec(role=Role.PS, replica_count=n_ps, machine=ps))
    if n_eval and evaluator is not None:
        pools.append(PoolSpec(role=Role.EVALUATOR, replica_count=n_eval, machine=evaluator))
    if len(pools) > MAX_POOLS:  # pragma: no cover - four roles at most by construction
        raise ValidationError("worker pools", f"at most {MAX_POOLS}", len(pools))

    sa = _optional_str("service_account", service_account, _SERVICE_ACCOUNT,
                       "a service account e-mail such as trainer@my-project.iam.gserviceaccount.com")
    proj = _optional_str("project", project, _PROJECT,
                         "a Google Cloud project id (6 to 30 lowercase letters, digits or '-')")
    reg = _optional_str("region", region, _REGION, "a Google Cloud region such as us-central1")
    if display_name is None:
        name = f"tfcloud-{entry.stem}"
    elif isinstance(display_name, str) and 0 < len(display_name) <= _DISPLAY_NAME_MAX:
        name = display_name
    else:
        raise ValidationError("display_name", f"a string of 1 to {_DISPLAY_NAME_MAX} characters", display_name)
    if strategy is Strategy.TPU and tgt == LocalTarget.name:
        raise ValidationError("target", '"vertex" for a TPU job (TPUs cannot run locally)', tgt)

    return JobSpec(
        entry_point=entry,
        entry_point_kind=kind,
        entry_point_args=_args(entry_point_args),
        requirements_txt=requirements,
        pools=tuple(pools),
        strategy=strategy,
        strategy_reason=reason,
        docker_config=_docker_config(docker_config),
        job_labels=validate_labels(job_labels),
        target=_target(
            tgt, project=proj, region=reg, service_account=sa,
            scheduling=_scheduling(timeout, restart_on_worker_restart, spot),
            network=_optional_str("network", network, _NETWORK,
                                  "a VPC network name such as projects/12345/global/networks/my-vpc"),
            base_output_dir=_output_dir(base_output_dir, tgt), max_restarts=_max_restarts(max_restarts),
            container=container),
        display_name=name,
        env=_env(env),
        context_dir=_context_dir(context_dir, entry),
    )


def _target(name: str, *, project: str | None, region: str | None, service_account: str | None,
            scheduling: tuple[int | None, bool, bool], network: str | None,
            base_output_dir: str | None, max_restarts: int | None = None, container: object = False) -> AnyTarget:
    """The spec's target value: the checked options of the target ``name`` (a local run has none)."""
    if name == VertexTarget.name:
        timeout, restart, spot = scheduling
        return VertexTarget(project=project, region=region, network=network, spot=spot,
                            timeout_s=timeout, restart_on_worker_restart=restart,
                            base_output_dir=base_output_dir, service_account=service_account,
                            max_restarts=max_restarts)
    if name == LocalTarget.name:
        if not isinstance(container, bool):
            raise ValidationError("container", "a bool", container)
        return LocalTarget(max_restarts=max_restarts or 0, output_dir=base_output_dir, container=container)
    return TARGETS[name]()
