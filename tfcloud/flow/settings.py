"""Settings and job defaults, resolved in one place, highest first:

1. a CLI flag or an SDK keyword;
2. a ``TFCLOUD_*`` environment variable;
3. ``[tool.tfcloud]`` in the nearest pyproject.toml (the project's config);
4. the user's config: ``$TFCLOUD_CONFIG``, else ``$XDG_CONFIG_HOME/tfcloud/config.toml`` (``~/.config/...``);
5. other tools' settings: an option's ``fallback_env`` (``GOOGLE_CLOUD_PROJECT``, ``RAY_ADDRESS``, ...), then
   (for a target with ``gcloud_defaults``: Vertex AI) the active gcloud configuration's ``[core] project`` and
   ``[ai]``/``[compute] region``;
6. the default.

:func:`resolve_settings` gives the :class:`Settings` (what is no one target's: the default target, the image
repository, the Docker engine, the state directory, deadlines); :func:`resolve_job_defaults` fills the job
options a caller left out (``worker_count``, ``chief_config``, ...) and the chosen target's options (Vertex AI's
``project``, ``region``, ``staging_bucket``, ``emulator_host``; they resolve into the target value).
Both record where each value came from (``Settings.sources``, shown in the plan). A bad value in a config file
is a :class:`~tfcloud.errors.ConfigurationError` (exit 2) naming the file and the key. Library code receives a
:class:`Settings`; it never reads globals.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from tfcloud.config.docsite import page
from tfcloud.config.value import Settings
from tfcloud.errors import ConfigurationError, TfcloudError, ValidationError

__all__ = ["JOB_DEFAULTS", "Settings", "find_pyproject", "gcloud_config", "given_origin", "resolve_job_defaults",
           "resolve_settings", "user_config_path"]


_SETTING_NAMES = tuple(f.name for f in fields(Settings) if f.name not in ("sources", "job_defaults"))
_ENV_NAMES = {name: f"TFCLOUD_{name.upper()}" for name in _SETTING_NAMES}
_ENV_NAMES["state_dir"] = "TFCLOUD_HOME"
#: Other tools' variables, read after tfcloud's own and the config files.
_FALLBACK_ENV = {"docker_host": ("DOCKER_HOST",)}


# --- job defaults: config key -> (the JobOptions key it fills, what it holds) ------------------------------------
# The job's own options are listed here; a target's options with a setting key are its own (target_defaults).
_COUNT, _TEXT, _MACHINE, _STRATEGY, _PATH, _PAIRS, _FLAG, _SECONDS = (
    "count", "text", "machine", "strategy", "path", "pairs", "flag", "seconds")
JOB_DEFAULTS: Mapping[str, tuple[str, str]] = {
    "worker_count": ("worker_count", _COUNT),
    "ps_count": ("ps_count", _COUNT),
    "chief_config": ("chief_config", _MACHINE),
    "worker_config": ("worker_config", _MACHINE),
    "ps_config": ("ps_config", _MACHINE),
    "strategy": ("distribution_strategy", _STRATEGY),
    "requirements": ("requirements_txt", _PATH),
    "labels": ("job_labels", _PAIRS),
    "env": ("env", _PAIRS),
    "secrets": ("secrets", _PAIRS),
    "data": ("data", _PAIRS),
}
#: An option's type -> the kind of value its setting holds (target options: :func:`target_defaults`).
_LIST = "list"  # a list of strings in a file; one string, its items separated by `;`, in a variable
_KIND_OF = {bool: _FLAG, int: _COUNT, float: _TEXT, str: _TEXT, list: _LIST}
_EXPECTED = {
    _COUNT: "an integer ≥ 0", _SECONDS: "an integer > 0 (seconds)", _TEXT: "a string", _PATH: "a path (a string)",
    _FLAG: "true or false", _PAIRS: "a table of strings (KEY = \"VALUE\")",
    _MACHINE: "a name from `tfcloud machines`, or \"auto\"", _STRATEGY: "a strategy name",
    _LIST: "a list of strings (or one string, its items separated by ;)",
}


def _check_target(value: str) -> None:
    import tfcloud.targets as targets

    if value in targets.BUILTIN:  # the plug-ins' entry points are read only for another name (~15 ms)
        return
    known = targets.names()
    if value not in known:
        raise ValidationError("target", " or ".join(f'"{n}"' for n in known), value)


def _check_image_repository(value: str) -> None:
    from tfcloud.job.checks import validate_image_repository

    validate_image_repository(value)


def _check_docker_host(value: str) -> None:
    scheme, sep, rest = value.partition("://")
    if not sep or scheme not in _DOCKER_SCHEMES or not rest or any(c.isspace() for c in value):
        raise ValidationError("docker_host", "a Docker engine address: unix:///PATH, tcp://HOST:PORT, ssh://HOST, "
                              "npipe:////./pipe/NAME, http(s)://HOST:PORT", value)


def _check_image_build_bucket(value: str) -> None:
    from tfcloud.job.checks import validate_bucket

    validate_bucket("image_build_bucket", value)


def _check_state_dir(value: str) -> None:
    if not value.strip():
        raise ValidationError("state_dir", "a directory path", value)


def _check_retry_deadline(value: str) -> None:
    from tfcloud.google.cloud.gcloud import RetryPolicy

    RetryPolicy.from_setting(value)


def _check_cluster_idle_warn(value: str) -> None:
    from tfcloud.config.digits import parse_duration

    seconds = parse_duration(value.strip())
    if value.strip().lower() not in FALSE_WORDS and (seconds is None or not 0 < seconds < float("inf")):
        raise ValidationError("cluster_idle_warn", "a duration such as 30m, 1h or 1d, or off", value)


def _check_yes(value: str) -> None:
    if value.strip().lower() not in (*TRUE_WORDS, *FALSE_WORDS):
        raise ValidationError("yes", "1, true, yes, on, 0, false, no or off", value)


#: Text that turns a setting on, or off (the ``yes`` setting, ``TFCLOUD_*`` flags).
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")
_DOCKER_SCHEMES = ("unix", "tcp", "ssh", "npipe", "fd", "http", "https")
#: Each setting's one rule (a :class:`~tfcloud.errors.ValidationError` naming it), applied to its value wherever
#: it came from: a flag or keyword, a ``TFCLOUD_*`` variable, a config file, another tool's variable.
_SETTING_CHECKS: Mapping[str, Callable[[str], None]] = {
    "target": _check_target, "image_repository": _check_image_repository, "docker_host": _check_docker_host,
    "image_build_bucket": _check_image_build_bucket, "state_dir": _check_state_dir,
    "retry_deadline": _check_retry_deadline, "cluster_idle_warn": _check_cluster_idle_warn, "yes": _check_yes,
}


class _Layer:
    """One config file's table (a plain class: a dataclass costs every command's start-up ~0.3 ms)."""

    def __init__(self, *, path: Path, table: Mapping[str, object], key_prefix: str) -> None:
        self.path = path
        self.table = table
        self.key_prefix = key_prefix  # how its keys are named in messages: "tool.tfcloud." or ""

    @property
    def origin(self) -> str:
        return f"[tool.tfcloud] in {self.path}" if self.key_prefix else str(self.path)

    def error(self, key: str, expected: str, received: object) -> ConfigurationError:
        return ConfigurationError(f"Invalid `{self.key_prefix}{key}` in {self.path}: expected {expected}, "
                                  f"received {received!r}.")


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The user-level config file: ``$TFCLOUD_CONFIG``, else ``$XDG_CONFIG_HOME/tfcloud/config.toml``, else
    ``~/.config/tfcloud/config.toml`` (it need not exist)."""
    environ = os.environ if environ is None else environ
    if environ.get("TFCLOUD_CONFIG"):
        return Path(environ["TFCLOUD_CONFIG"]).expanduser()
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "tfcloud" / "config.toml"


def _read_toml(path: Path) -> dict[str, object]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        data: dict[str, object] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigurationError(f"Could not read {path}: {exc}") from exc
    return data


def _layers(cwd: Path, environ: Mapping[str, str]) -> list[_Layer]:
    """The config files, highest first: the project's [tool.tfcloud], then the user's config."""
    layers = []
    pyproject = find_pyproject(cwd)
    if pyproject is not None:
        tool = _read_toml(pyproject).get("tool", {})
        table = tool.get("tfcloud", {}) if isinstance(tool, dict) else {}
        if not isinstance(table, dict):
            raise ConfigurationError(f"[tool.tfcloud] in {pyproject} must be a table.")
        layers.append(_Layer(path=pyproject, table=table, key_prefix="tool.tfcloud."))
    user = user_config_path(environ)
    if user.is_file():
        layers.append(_Layer(path=user, table=_read_toml(user), key_prefix=""))
    elif environ.get("TFCLOUD_CONFIG") and user.exists():
        raise ConfigurationError(f"TFCLOUD_CONFIG names {user}, which is not a file.")
    known = {*_SETTING_NAMES, *JOB_DEFAULTS}
    for layer in layers:
        unknown = sorted(set(layer.table) - known)
        if unknown:  # a target's own setting (built-in targets first; plug-ins only when still unknown)
            known |= set(target_defaults())
            unknown = sorted(set(layer.table) - known)
        if unknown:
            known |= set(target_defaults(plugins=True))
            unknown = sorted(set(layer.table) - known)
        if unknown:
            where = f"[tool.tfcloud] of {layer.path}" if layer.key_prefix else str(layer.path)
            raise ConfigurationError(f"Unknown key(s) in {where}: {', '.join(unknown)}.",
                                     hint="Known keys: " + ", ".join(sorted(known)) + " (" + page("settings") + ").")
    return layers


def gcloud_config(environ: Mapping[str, str] | None = None) -> tuple[dict[str, str], Path | None]:
    """The active gcloud configuration's project and region (``{"project": ..., "region": ...}``, either may be
    missing) and the file they came from: ``$CLOUDSDK_CONFIG`` (else ``~/.config/gcloud``), its
    ``active_config`` (or ``$CLOUDSDK_ACTIVE_CONFIG_NAME``), ``configurations/config_NAME``: ``[core] project``,
    ``[ai] region``, else ``[compute] region``. Unreadable files count as absent (gcloud is not tfcloud's)."""
    found, path = _gcloud_entries(environ)
    return {name: value for name, (value, _) in found.items()}, path


def _gcloud_entries(environ: Mapping[str, str] | None) -> tuple[dict[str, tuple[str, str]], Path | None]:
    """:func:`gcloud_config`, each value with the key it was read from (``[compute] region``)."""
    import configparser

    environ = os.environ if environ is None else environ
    base = Path(environ.get("CLOUDSDK_CONFIG") or Path("~/.config/gcloud").expanduser())
    try:
        name = environ.get("CLOUDSDK_ACTIVE_CONFIG_NAME") or (base / "active_config").read_text().strip()
    except OSError:
        name = "default"
    path = base / "configurations" / f"config_{name or 'default'}"
    parser = configparser.ConfigParser(interpolation=None)
    try:
        if not parser.read(path, encoding="utf-8"):
            return {}, None
    except (configparser.Error, UnicodeDecodeError):
        return {}, None
    found: dict[str, tuple[str, str]] = {}
    for name, keys in (("project", (("core", "project"),)), ("region", (("ai", "region"), ("compute", "region")))):
        for section, option in keys:
            value = parser.get(section, option, fallback="").strip()
            if value:
                found[name] = (value, f"[{section}] {option}")
                break
    return found, path


def resolve_settings(
    flags: Mapping[str, object] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    given_as: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve every setting. ``flags`` holds explicit values (CLI options, ``run()`` keywords); ``None``
    values count as not given. ``given_as``: how the caller spelled each one (the CLI: ``--vertex``); by default
    a keyword (``image_repository= (keyword)``)."""
    flags = flags or {}
    environ = os.environ if environ is None else environ
    layers = _layers(cwd or Path.cwd(), environ)
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    for name in _SETTING_NAMES:
        candidates: list[tuple[object, str, _Layer | None]] = [(flags.get(name), given_origin(name, given_as),
                                                                None)]
        candidates.append((environ.get(_ENV_NAMES[name]) or None, _ENV_NAMES[name], None))
        candidates += [(layer.table.get(name), layer.origin, layer) for layer in layers]
        candidates += [(environ.get(var) or None, var, None) for var in _FALLBACK_ENV.get(name, ())]
        for value, origin, layer in candidates:
            if value is None:
                continue
            if not isinstance(value, str):
                if layer is not None:
                    raise layer.error(name, "a string", value)
                raise ConfigurationError(f"Invalid setting `{name}`: expected a string, received {value!r}.")
            _check_setting(name, value, origin, layer)  # one rule, whichever source gave the value
            values[name], sources[name] = value, origin
            break
    return Settings(sources=sources, **values)  # type: ignore[arg-type]  # values: the str fields only


def _check_setting(name: str, value: str, origin: str, layer: _Layer | None) -> None:
    """``name``'s one rule on ``value``; a bad value names where it came from: the file and key, the variable, or
    (a flag or keyword) the setting itself."""
    try:
        _SETTING_CHECKS[name](value)
    except ValidationError as exc:
        if layer is not None:
            failure = layer.error(name, exc.expected, value)
        elif origin.startswith("TFCLOUD_") or origin in _FALLBACK_ENV.get(name, ()):
            failure = ConfigurationError(f"Invalid `{origin}`: expected {exc.expected}, received {value!r}.")
        else:
            raise
        failure.hint = exc.hint
        raise failure from None


def given_origin(name: str, given_as: Mapping[str, str] | None = None) -> str:
    """Where a value a call gave came from, as the plan names it: the caller's spelling (``given_as``: the CLI's
    ``--project`` or ``-o project``), else the Python keyword (``project= (keyword)``)."""
    return (given_as or {}).get(name) or f"{name}= (keyword)"


def target_defaults(target: object = None, *, plugins: bool = False) -> dict[str, tuple[str, str, object]]:
    """The settings keys of a target's options (``target``: a :class:`~tfcloud.targets.Target` class; None:
    every built-in target's, and with ``plugins`` the installed plug-ins' too): key -> (option name, kind, the
    :class:`~tfcloud.targets.Option`). Keys that are :class:`Settings` fields are not job defaults."""
    import tfcloud.targets as targets

    classes: list[Any]
    if target is not None:
        classes = [target]
    else:
        classes = targets.loadable(targets.names()) if plugins else targets.builtin_targets()
    found: dict[str, tuple[str, str, object]] = {}
    for cls in classes:
        for option in cls.options:
            if option.setting and option.setting not in _SETTING_NAMES:
                found.setdefault(option.setting, (option.name, _KIND_OF.get(option.type, _TEXT), option))
    return found


def resolve_job_defaults(
    given: Mapping[str, object],
    *,
    target: object = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    jobs: bool = True,
) -> tuple[dict[str, object], dict[str, str]]:
    """The job options (:class:`tfcloud.sdk.JobOptions` keys) that ``given`` leaves out and a ``TFCLOUD_*``
    variable or a config file sets (:data:`JOB_DEFAULTS`, and the settings of ``target``'s options: a
    :class:`~tfcloud.targets.Target` class, None for every built-in target's), with where each came from. A
    target's setting applies to the targets that take it: another target's is left alone. Values are checked
    here, so that a bad one names its file (or variable) and key. ``jobs`` False: the target's options only (a
    verb that talks to a submitted job)."""
    environ = os.environ if environ is None else environ
    cwd = cwd or Path.cwd()
    layers = _layers(cwd, environ)
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    table: dict[str, tuple[str, str, object]] = {key: (option, kind, None) for key, (option, kind)
                                                 in JOB_DEFAULTS.items() if jobs}
    table.update(target_defaults(target))
    for key, (option, kind, spec) in table.items():
        if option in given and (spec is None or given[option] is not None):  # a target option None: not given
            continue
        var = f"TFCLOUD_{key.upper()}"
        if environ.get(var):
            value = _from_env(var, environ[var], kind, cwd)
            values[option], sources[key] = _by_spec(spec, value, lambda e, v=var: ConfigurationError(  # type: ignore[misc]
                f"Invalid `{v}`: expected {e}, received {environ[v]!r}.")), var
            continue
        for layer in layers:
            if key in layer.table:
                value = _from_file(layer, key, layer.table[key], kind)
                values[option] = _by_spec(spec, value, lambda e, lay=layer, k=key: lay.error(  # type: ignore[misc]
                    k, e, lay.table[k]))
                sources[key] = layer.origin
                break
        else:  # other tools' variables (a target option's fallback_env: RAY_ADDRESS), last
            for other in (spec.fallback_env if spec is not None else ()):  # type: ignore[attr-defined]
                if environ.get(other):
                    value = _from_env(other, environ[other], kind, cwd)
                    values[option], sources[key] = _by_spec(spec, value, lambda e, v=other: ConfigurationError(  # type: ignore[misc]
                        f"Invalid `{v}`: expected {e}, received {environ[v]!r}.")), other
                    break
    _check_unused(table, layers, environ, cwd)
    if target is not None and _uses_gcloud(target):
        _from_gcloud(target, given, values, sources, environ)
    return values, sources


def _check_unused(table: Mapping[str, object], layers: list[_Layer], environ: Mapping[str, str], cwd: Path) -> None:
    """Another target's options in the variables and files (Vertex AI's ``region`` on a local run) are not used
    here, but are checked by their option's rule all the same: a value the flag would refuse is never accepted
    silently, to fail only the day that target is chosen."""
    in_files = {key for layer in layers for key in layer.table} - {*table, *_SETTING_NAMES, *JOB_DEFAULTS}
    in_env = {var.removeprefix("TFCLOUD_").lower() for var in environ if var.startswith("TFCLOUD_") and environ[var]}
    in_env -= {*table, *_SETTING_NAMES, *JOB_DEFAULTS}
    if not in_files and not in_env:
        return
    others = target_defaults()  # a plug-in's are read only for a file that names one (its variables: by it)
    if in_files - set(others):
        others = target_defaults(plugins=True)
    others = {key: found for key, found in others.items() if key in in_files | in_env}
    for key, (_, kind, spec) in others.items():
        var = f"TFCLOUD_{key.upper()}"
        if environ.get(var):
            _by_spec(spec, _from_env(var, environ[var], kind, cwd), lambda e, v=var: ConfigurationError(  # type: ignore[misc]
                f"Invalid `{v}`: expected {e}, received {environ[v]!r}."))
        for layer in layers:
            if key in layer.table:
                _by_spec(spec, _from_file(layer, key, layer.table[key], kind),
                         lambda e, lay=layer, k=key: lay.error(k, e, lay.table[k]))  # type: ignore[misc]


def _uses_gcloud(target: object) -> bool:
    import tfcloud.targets as targets

    return isinstance(target, type) and issubclass(target, targets.Target) and target.gcloud_defaults


def _from_gcloud(target: object, given: Mapping[str, object], values: dict[str, object], sources: dict[str, str],
                 environ: Mapping[str, str]) -> None:
    """A target with ``gcloud_defaults`` (Vertex AI) gets its ``project`` and ``region`` options, when nothing
    else gave them, from the active gcloud configuration (read only then: it is a file of another tool)."""
    wanted = [name for name in ("project", "region") if given.get(name) is None and name not in values
              and target.option(name) is not None]  # type: ignore[attr-defined]
    if not wanted:
        return
    found, path = _gcloud_entries(environ)
    for name in wanted:
        if name in found:
            value, key = found[name]
            values[name] = _by_spec(target.option(name), value, lambda e, k=key, v=value: ConfigurationError(  # type: ignore[attr-defined, misc]
                f"Invalid `{k}` in the gcloud configuration {path}: expected {e}, received {v!r}."))
            sources[name] = f"gcloud configuration {path}"


def _by_spec(spec: object, value: object, error: Callable[[str], ConfigurationError]) -> object:
    """A target option's own check (its :class:`~tfcloud.targets.Option`), as a configuration error."""
    if spec is None:
        return value
    from tfcloud.errors import ValidationError

    try:
        spec.convert(value)  # type: ignore[attr-defined]
    except ValidationError as exc:
        failure = error(exc.expected)
        example = spec.example  # type: ignore[attr-defined]
        if failure.hint is None and example is not None and not isinstance(example, bool):
            flag = spec.cli_flag.partition("/")[0]  # type: ignore[attr-defined]
            failure.hint = f"Give a value such as {example!r} there, or remove it" + (
                f" (a flag overrides it: {flag})." if flag else ".")
        raise failure from None
    return value


def _check(kind: str, value: object) -> object:
    """The value as the job option takes it; raises ValueError/TypeError/TfcloudError when it is not one."""
    if kind in (_COUNT, _SECONDS):
        if isinstance(value, bool) or not isinstance(value, int) or value < (1 if kind == _SECONDS else 0):
            raise ValueError(value)
        return value
    if kind == _FLAG:
        if not isinstance(value, bool):
            raise ValueError(value)
        return value
    if kind == _PAIRS:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError(value)
        return dict(value)
    if kind == _LIST and isinstance(value, list):
        if not value or not all(isinstance(v, str) and v for v in value):
            raise ValueError(value)
        return list(value)
    if not isinstance(value, str) or not value:
        raise ValueError(value)
    if kind == _MACHINE and value.lower() != "auto":
        from tfcloud.google.catalog.machines import machine_config_from_name

        machine_config_from_name(value, field="machine")
    if kind == _STRATEGY:
        from tfcloud.job.strategy import parse_strategy

        parse_strategy(value)
        return None if value.lower() == "none" else value
    return value


def _job_rule(key: str, value: object) -> None:
    """A job default's own rule beyond its kind (the labels: Google's, :func:`tfcloud.job.checks.validate_labels`)."""
    if key == "labels":
        from tfcloud.job.checks import validate_labels

        validate_labels(value, field="labels")


def _from_file(layer: _Layer, key: str, value: object, kind: str) -> object:
    try:
        checked = _check(kind, value)
    except (ValueError, TfcloudError):
        raise layer.error(key, _expected(kind), value) from None
    try:
        _job_rule(key, checked)
    except ValidationError as exc:
        failure = layer.error(exc.field, exc.expected, exc.received)
        failure.hint = exc.hint
        raise failure from None
    if kind == _PATH:  # relative to the file that names it
        return str(layer.path.parent / str(checked))
    return checked


def _flag(text: str) -> object:
    lowered = text.lower()
    return True if lowered in TRUE_WORDS else False if lowered in FALSE_WORDS else text


def _pairs(text: str) -> object:
    pairs: dict[str, object] = {}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        pairs[key] = value if sep and key else None  # None: not KEY=VALUE (the check rejects it)
    return pairs


_FROM_TEXT: Mapping[str, Callable[[str], object]] = {_COUNT: int, _SECONDS: int, _FLAG: _flag, _PAIRS: _pairs}


def _from_env(var: str, text: str, kind: str, cwd: Path) -> object:
    from tfcloud.config.usertext import CONTROL

    if CONTROL.search(text):  # before the strip below: one rule for every text value (tfcloud.config.usertext)
        raise ConfigurationError(f"Invalid `{var}`: expected text without control characters (newline, tab, "
                                 f"escape...), received {text!r}.", hint=f"Remove them from {var}.")
    try:
        checked = _check(kind, _FROM_TEXT.get(kind, str)(text.strip()))
    except (ValueError, TfcloudError):
        expected = _expected(kind).replace('a table of strings (KEY = "VALUE")', "KEY=VALUE[,KEY=VALUE...]")
        expected = expected.replace("true or false", "1, true, 0 or false")
        raise ConfigurationError(f"Invalid `{var}`: expected {expected}, received {text!r}.") from None
    try:
        _job_rule(var.removeprefix("TFCLOUD_").lower(), checked)
    except ValidationError as exc:
        raise ConfigurationError(f"Invalid `{var}`: expected {exc.expected} ({exc.field}), received {text!r}.",
                                 hint=exc.hint) from None
    if kind == _PATH:
        return str(cwd / str(checked))
    return checked


def _expected(kind: str) -> str:
    if kind == _MACHINE:
        from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS

        return _EXPECTED[kind] + " (" + ", ".join(COMMON_MACHINE_CONFIGS) + ")"
    if kind == _STRATEGY:
        from tfcloud.job.spec import Strategy

        return "one of " + ", ".join(["auto", *(s.value for s in Strategy)])
    return _EXPECTED[kind]
