"""Validation: the user's arguments in, one frozen :class:`~tfcloud.job.spec.JobSpec` out.

Every check runs before anything is uploaded, built or submitted. Each failure is a
:class:`~tfcloud.errors.ValidationError` naming the field, what was expected and what was received.
The checks include every one tensorflow-cloud makes, plus parameter-server rules and Vertex AI limits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tfcloud.config.usertext import refuse_control as check_text
from tfcloud.errors import UnsupportedOptionError, ValidationError
from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS, MachineConfig
from tfcloud.job.checks import (
    MAX_LABELS,
    check_settings,
    validate_bucket,
    validate_image_reference,
    validate_labels,
)
from tfcloud.job.datasets import job_data, store_for
from tfcloud.job.jobids import validate_job_id
from tfcloud.job.secretrefs import RESERVED_ENV, job_secrets
from tfcloud.job.spec import DockerConfig, EntryPointKind, JobSpec, PoolSpec, Role
from tfcloud.job.strategy import choose_strategy, parse_strategy

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.targets._base import Target

__all__ = [
    "MAX_LABELS",
    "MAX_POOLS",
    "MAX_REPLICAS",
    "build_job",
    "build_spec",
    "check_entry_name",
    "check_entry_point",
    "check_settings",
    "check_text",
    "validate_bucket",
    "validate_image_reference",
    "validate_job_id",
    "validate_labels",
    "validate_limit",
]

MAX_POOLS = 4  # Vertex AI: chief, workers, parameter servers, evaluator
#: Replicas per worker pool: tfcloud's cap for Vertex AI (the API field is an int64; a request above the
#: project's quota is refused only after the image was pushed) and for a local run (one process each).
MAX_REPLICAS = 1000
MAX_ARG_LENGTH = 100_000  # one script argument; Linux refuses a single argument above 128 KiB
#: One ``--env`` variable, ``NAME=VALUE`` in bytes: Linux's MAX_ARG_STRLEN (32 pages, 131,072 bytes) counts the
#: string's terminating NUL, so exec takes 131,071 (measured 2026-11-26: 131,072 fails with E2BIG).
MAX_ENV_LENGTH = 131_071
MAX_ENV_TOTAL = 1_000_000  # every --env variable together; Linux's ARG_MAX (2 MiB) also holds the arguments
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: What tfcloud sets in every replica (TFCLOUD_AUTO_CHECKPOINT, TFCLOUD_LOGICAL_CPUS... are the user's to set).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DISPLAY_NAME_MAX = 128


def _path(field: str, value: object, expected: str) -> Path:
    """``value`` as a path with ``~`` expanded; a bad type, a NUL byte or an unknown ``~user`` is refused."""
    if not isinstance(value, str | Path) or not str(value):
        raise ValidationError(field, expected, value)
    if "\0" in str(value):
        raise ValidationError(field, f"{expected} (a path without NUL bytes)", str(value))
    if any(len(part.encode("utf-8", "surrogatepass")) > 255 for part in Path(value).parts):  # NAME_MAX
        raise ValidationError(field, f"{expected} (each name at most 255 bytes)", f"<a name of {len(str(value))} "
                              "characters>", hint="No file system holds a name that long.")
    try:
        return Path(value).expanduser()
    except RuntimeError:  # "~nosuchuser/...": no such user, or no home directory
        raise ValidationError(field, expected, str(value),
                              hint=f"{str(value).split('/', 1)[0]} is not a user's home directory here.") from None


def _read_bytes(field: str, path: Path, expected: str, shown: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValidationError(field, expected, shown, hint=f"It cannot be read: {exc.strerror or exc}.") from None


def _check_script(path: Path, shown: str) -> None:
    """The script must be Python source that compiles: not binary, not empty, no syntax error. Checked here
    because otherwise the mistake shows only after the image was built and the job started."""
    import ast
    import warnings

    expected = "a Python script that compiles"
    data = _read_bytes("entry_point", path, expected, shown)
    if b"\0" in data:
        raise ValidationError("entry_point", expected, f"<{path.name}: a binary file (it holds NUL bytes)>")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes: the script's business
            tree = ast.parse(data, filename=str(path))
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise ValidationError("entry_point", expected, f"<{path.name}: {where}{exc.msg}>",
                              hint=f"Run `python -m py_compile {path}` to see the error.") from None
    except (ValueError, UnicodeDecodeError) as exc:  # an undecodable file, a bad coding cookie
        raise ValidationError("entry_point", expected, f"<{path.name}: not Python source text ({exc})>") from None
    except (RecursionError, MemoryError):
        raise ValidationError("entry_point", expected, f"<{path.name}: nested too deeply to compile>") from None
    if not tree.body:
        raise ValidationError("entry_point", expected + " and has at least one statement",
                              f"<{path.name}: an empty script>")


def check_entry_point(value: object) -> tuple[Path, EntryPointKind]:
    """The entry point exists and is a .py script that compiles or an .ipynb file: the first thing a submission
    checks (before the extras it needs: a missing script is not a missing package). A notebook's cells are
    checked by :func:`build_spec` (that needs the notebook extra); a name that is not UTF-8, by
    :func:`check_entry_name` once the target is known (a local run takes it)."""
    expected = "a path to an existing Python file (.py) or notebook (.ipynb)"
    path = _path("entry_point", value, expected)
    suffix = path.suffix.lower()
    if suffix not in (".py", ".ipynb"):
        raise ValidationError("entry_point", expected, str(value))
    if not path.is_file():
        raise ValidationError("entry_point", expected, str(value), hint=f"No file at {path.absolute()}.")
    kind = EntryPointKind.NOTEBOOK if suffix == ".ipynb" else EntryPointKind.SCRIPT
    if kind is EntryPointKind.SCRIPT:
        _check_script(path, str(value))
    return path, kind


def check_entry_name(value: object, path: Path, *, ships_files: bool) -> None:
    """A job whose files travel (an image, a package, a Ray working directory) writes the entry point's name
    into them, as UTF-8 text: a name the filesystem gave as bytes that are not UTF-8 is refused there. A local
    run's replicas open the file where it is, by the same bytes: it runs."""
    if not ships_files or path.name.isascii():
        return
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:  # the bytes that are not UTF-8 came as surrogates
        raise ValidationError("entry_point", "a path to an existing Python file (.py) or notebook (.ipynb) whose "
                              "name is UTF-8 text", f"<{str(value)!a}: the name is not UTF-8>",
                              hint="Rename the file: its name is written into the launcher and the image (a "
                                   "local run takes it as it is).") from None


def _entry_point(value: object, *, ships_files: bool = True) -> tuple[Path, EntryPointKind]:
    path, kind = check_entry_point(value)
    # a notebook is converted to a script named after it, next to the launcher: its name must be text there
    check_entry_name(value, path, ships_files=ships_files or kind is EntryPointKind.NOTEBOOK)
    if kind is EntryPointKind.NOTEBOOK:
        from tfcloud.entry.notebook import check_notebook

        check_notebook(path)
    return path.resolve(), kind


def _requirements(value: object) -> Path | None:
    if value is None:
        return None
    expected = "a path to an existing requirements file"
    path = _path("requirements_txt", value, expected)
    if not path.is_file():
        raise ValidationError("requirements_txt", expected, str(value), hint=f"No file at {path.absolute()}.")
    from tfcloud.entry.requirements import validate_requirements_file

    validate_requirements_file(path)
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
    """``<role>_config``: None is allowed only when ``<role>_count`` is 0; a machine chosen for a pool of no
    replicas is refused (it would be silently ignored)."""
    if config is None:
        if count > 0:
            raise ValidationError(f"{role}_config", f"a MachineConfig when {role}_count > 0", None)
        return None
    if count == 0 and not (isinstance(config, str) and config.lower() == "auto"):
        raise ValidationError(f"{role}_config", f'"auto" (or None) when {role}_count is 0: the pool has no '
                              "replicas", config.describe() if isinstance(config, MachineConfig) else config,
                              hint=f"Give {role}_count (--{role}-count N) too, or leave out {role}_config.")
    return _machine(f"{role}_config", config, auto=auto)


def _count(field: str, value: object, *, maximum: int = MAX_REPLICAS) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(field, "an integer ≥ 0", value)
    count = value
    if count > maximum:
        raise ValidationError(field, f"an integer from 0 to {maximum}", value)
    return count


def _args(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(isinstance(a, str) for a in value):
        raise ValidationError("entry_point_args", "a list of strings", value)
    for index, arg in enumerate(value):
        if "\0" in arg:
            raise ValidationError(f"entry_point_args[{index}]", "a string without NUL bytes", arg)
        if len(arg) > MAX_ARG_LENGTH:
            raise ValidationError(f"entry_point_args[{index}]", f"at most {MAX_ARG_LENGTH} characters",
                                  f"<{len(arg)} characters>")
    return tuple(value)


def _docker_config(value: object) -> DockerConfig:
    if isinstance(value, str) and value.lower() == "auto":
        return DockerConfig()
    if not isinstance(value, DockerConfig):
        raise ValidationError("docker_config", 'a tfcloud.DockerConfig or "auto"', value)
    for name in ("image", "parent_image", "cache_from", "image_build_bucket"):
        check_text(f"docker_config.{name}", getattr(value, name))
    for name in ("image", "parent_image", "cache_from"):
        image = getattr(value, name)
        if image is not None:
            validate_image_reference(f"docker_config.{name}", image)
    if value.image is not None and "@" in value.image:
        raise ValidationError("docker_config.image", "an image name with a tag, not a digest (tfcloud pushes it)",
                              value.image)
    bucket = value.image_build_bucket
    if bucket is not None:
        validate_bucket("docker_config.image_build_bucket", bucket)
    return value


def _env(value: object) -> Mapping[str, str]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and _ENV_NAME.match(k) and isinstance(v, str)
        for k, v in value.items()
    ):
        raise ValidationError("env", "a dict of environment variable names to string values", value)
    for key, val in value.items():
        check_text("env", key)
        if key in RESERVED_ENV:
            raise ValidationError("env", "names other than " + ", ".join(RESERVED_ENV) + " (tfcloud sets them)",
                                  key)
        if "\0" in val:
            raise ValidationError(f"env[{key!r}]", "a value without NUL bytes", val)
        if len(f"{key}={val}".encode()) > MAX_ENV_LENGTH:  # else the replica's exec fails, after the job exists
            raise ValidationError(f"env[{key!r}]", f"at most {MAX_ENV_LENGTH} bytes with its name (Linux refuses "
                                  "a larger variable to a process)", f"<{len(val.encode())} bytes>",
                                  hint="Pass large data in a file beside the script instead.")
    total = sum(len(k) + len(v.encode()) + 2 for k, v in value.items())
    if total > MAX_ENV_TOTAL:
        raise ValidationError("env", f"at most {MAX_ENV_TOTAL} bytes in all", f"<{total} bytes>",
                              hint="Pass large data in a file beside the script instead.")
    return MappingProxyType(dict(value))


def _context_dir(value: object, entry: Path) -> Path | None:
    if value is None:
        return None
    expected = "an existing directory that contains the entry point"
    try:  # a name too long for the file system (ENAMETOOLONG) is not a directory either
        path = _path("context_dir", value, expected).resolve()
        found = path.is_dir() and entry.is_relative_to(path)
    except OSError as exc:
        raise ValidationError("context_dir", expected, str(value), hint=exc.strerror) from None
    if not found:
        raise ValidationError("context_dir", expected, str(value))
    return path


def default_display_name(entry: Path) -> str:
    """The display name a job gets when none is given (``tfcloud-<the entry point's stem>``)."""
    return _display_name(None, entry)


def _display_name(value: object, entry: Path) -> str:
    if value is None:
        return f"tfcloud-{entry.stem}"[:_DISPLAY_NAME_MAX]
    if isinstance(value, str) and 0 < len(value) <= _DISPLAY_NAME_MAX and not _CONTROL.search(value) \
            and value.strip():
        return value
    raise ValidationError("display_name",
                          f"a string of 1 to {_DISPLAY_NAME_MAX} characters without control characters", value)


def validate_limit(value: object, field: str = "--limit") -> int:
    """``tfcloud list --limit``: a positive number of jobs."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 10_000:
        raise ValidationError(field, "an integer from 1 to 10000", value)
    return value


def build_job(
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
    ps_config: object = "auto",
    ps_count: object = 0,
    evaluator_config: object = "auto",
    evaluator_count: object = 0,
    display_name: object = None,
    env: object = None,
    secrets: object = None,
    data: object = None,
    context_dir: object = None,
    image_repository: object = None,
    target: object = "local",
    settings: Settings | None = None,
    intent: str = "submit",
    **target_options: object,
) -> tuple[JobSpec, Target]:
    """Check every argument and return the frozen spec and the target it runs on. Raises :class:`ValidationError`
    on the first problem.

    ``target`` is where the job runs: a :class:`~tfcloud.targets.Target` value, or a target's name with that
    target's options as further keywords (``target="vertex", spot=True``). An option the target does not take
    is refused (:class:`~tfcloud.errors.UnsupportedOptionError`), and so are the image options
    (``docker_config``, ``image_repository``) for a target that builds no image.

    With ``settings`` (the SDK passes them) the settings are checked too. ``intent`` says what follows:
    ``"plan"`` (nothing more is checked), ``"build"`` or ``"submit"`` (the target's own checks: a usable state
    dir for a local job; a project and Google credentials for Vertex AI, unless the emulator host is set).
    Everything is checked before anything is built, uploaded or submitted."""
    if intent not in ("plan", "build", "submit"):
        raise ValueError(f"intent must be plan, build or submit, not {intent!r}")
    from tfcloud.targets._given import make_target

    check_text("display_name", display_name)
    where = make_target(target, target_options, settings=settings)
    entry, kind = _entry_point(entry_point, ships_files=where.ships_files)
    requirements = _requirements(requirements_txt)
    requested = parse_strategy(distribution_strategy)

    auto = where.auto_machine()
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
    chief_given = not (isinstance(chief_config, str) and chief_config.lower() == "auto")
    pools = where.arrange_pools(pools, chief_given=chief_given)
    if len(pools) > MAX_POOLS:  # pragma: no cover - four roles at most by construction
        raise ValidationError("worker pools", f"at most {MAX_POOLS}", len(pools))

    name = _display_name(display_name, entry)
    args = _args(entry_point_args)
    docker = _docker_config(docker_config)
    labels = validate_labels(job_labels)
    environment = _env(env)
    secret_refs, environment = job_secrets(secrets, target=where.name, local_sources=where.local_sources,
                                           from_here=where.runs_here, env=environment,
                                           warn=intent != "plan")
    data_sets = job_data(data, env=environment)
    if settings is not None and intent in ("submit", "plan"):  # a dry run runs the submission's checks too
        store_for(data_sets, target=where.name, in_place=where.runs_here, store=where.data_store(settings))
    context = _context_dir(context_dir, entry)
    if requirements is not None and intent != "plan":  # a plan reaches no network
        from tfcloud.entry.requirements import check_remote_includes

        check_remote_includes(requirements)
    if not where.container:
        # A packaged target (--no-build) refuses the DockerConfig's fields itself, by flag (its check_job).
        given_image = {"docker_config": docker != DockerConfig() and not where.packaged and docker,
                       "image_repository": not where.packaged and image_repository}  # --no-build: its base image
        for option, value in given_image.items():
            if value:
                raise UnsupportedOptionError(option, value, target=where.name, takers=["a target that builds an "
                                             "image (vertex, local with container)"])
    spec = JobSpec(
        entry_point=entry,
        entry_point_kind=kind,
        entry_point_args=args,
        requirements_txt=requirements,
        pools=tuple(pools),
        strategy=strategy,
        strategy_reason=reason,
        docker_config=docker,
        job_labels=labels,
        display_name=name,
        env=environment,
        context_dir=context,
        secrets=secret_refs,
        data=data_sets,
    )
    if settings is not None:  # the settings it reaches Docker and a registry with (a target's own: its options)
        check_settings(settings)
    import tfcloud.targets as targets

    with targets.plugin_errors(type(where), "check_job()"):
        where.check_job(spec, intent=intent, settings=settings)
    return spec, where


def build_spec(*, entry_point: object, **options: Any) -> JobSpec:
    """:func:`build_job`'s spec alone (its target dropped): what runs, for a caller that knows where."""
    return build_job(entry_point=entry_point, **options)[0]


#: The earliest and latest times ``--since`` may name (epoch seconds): from 1970 to the year 9999.
_SINCE_RANGE = (0.0, 253402300799.0)


def validate_tail(value: object, field: str = "--tail") -> int:
    """``tfcloud logs --tail N``: a number of lines, 0 or more (given as text on the command line, ASCII digits)."""
    from tfcloud.config.digits import ascii_int

    if isinstance(value, str):
        number = ascii_int(value)
        value = value if number is None else number
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1_000_000:
        raise ValidationError(field, "a number of lines from 0 to 1000000 (e.g. 100)", value)
    return value


def parse_since(value: object, *, now: float | None = None, field: str = "--since") -> float:
    """``tfcloud logs --since``: a duration back from now (``90s``, ``10m``, ``2h``, ``1d``, ``1h30m``) or a
    time (ISO 8601: ``2026-11-23T14:05:00Z``; without a zone, this machine's local time), as epoch seconds.
    Either must land between 1970-01-01 and now-ish (a time in the future is allowed: it shows nothing yet)."""
    import datetime as dt
    import time

    from tfcloud.config.digits import parse_duration

    expected = "a duration like 30s, 10m, 2h or 1d, or an ISO 8601 time like 2026-11-23T14:05:00Z"
    if not isinstance(value, str) or not value.strip(" "):
        raise ValidationError(field, expected, value)
    text = value.strip(" ")
    seconds = parse_duration(text)
    if seconds is not None:
        when_s = (time.time() if now is None else now) - seconds
        if not _SINCE_RANGE[0] <= when_s:
            raise ValidationError(field, "a duration back from now that stays after 1970-01-01 (e.g. 2h or 30d)",
                                  value, hint="Give a shorter duration, or a time such as 2026-11-23T14:05:00Z.")
        return when_s
    if not text.isascii():
        raise ValidationError(field, expected, value)
    try:
        when = dt.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise ValidationError(field, expected, value) from None
    try:
        if when.tzinfo is None:
            when = when.astimezone()  # this machine's local time
        stamp = when.timestamp()
    except (ValueError, OverflowError, OSError):  # too early or too late for this machine's clock
        stamp = -1.0
    if not _SINCE_RANGE[0] <= stamp <= _SINCE_RANGE[1]:
        raise ValidationError(field, "a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z", value)
    return stamp
