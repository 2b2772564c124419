"""Where a call goes: the target value, resolved once, on one path, for every verb that talks to a job.

``submit``/``plan``/``build``/``tune`` (:func:`tfcloud.sdk.make_spec`) and ``status``/``logs``/``cancel``/
``list``/``artifacts``/``tensorboard``/``ui`` (:func:`tfcloud.sdk.attach`, :func:`tfcloud.sdk.list_jobs`) take
the target the same way: a name or a :class:`~tfcloud.targets.Target` value (default: the target whose ids look
like the job's, else the ``target`` setting), its options as keywords (``project=``, ``ray_address=``; the CLI's
built-in flags) or by name and text (``target_options=``, the CLI's ``-o KEY=VALUE``), and the options no call
gives from ``TFCLOUD_*`` variables and the config files. :func:`resolve` turns them into the target value and
the settings its backend is reached with, recording where each value came from (the plan shows it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ValidationError

if TYPE_CHECKING:
    from tfcloud.flow.settings import Settings
    from tfcloud.targets import Target

__all__ = ["Resolved", "resolve", "resolve_for_job", "sources"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Resolved:
    """A call's target value, the settings (with ``sources``: where each value came from), and the call's other
    keywords (the job options, with the defaults the settings give them)."""

    target: Target
    settings: Settings
    rest: dict[str, Any]


def resolve(target: object, options: Mapping[str, object], *, job_keys: frozenset[str] = frozenset(),
            flags: Mapping[str, object] | None = None, place_only: bool = False) -> Resolved:
    """The target value for ``target`` (a name, a value, or None: the ``target`` setting) and ``options``: the
    keywords of the call. A keyword that is a job option (``job_keys``) stays in :attr:`Resolved.rest`; every
    other one, and ``target_options``, must be the target's (refused otherwise, naming the targets that take
    it). ``flags``: settings given by the call (``image_repository``). ``options["given_as"]`` (optional): how
    the caller spelled each value it gave (the CLI: ``{"project": "--project", "spot": "-o spot"}``), for the
    plan's sources; by default a keyword's name (``project= (keyword)``, ``target_options["spot"]``).
    ``place_only``: a verb that talks to existing jobs or to the place takes the target's place options only
    (:attr:`tfcloud.targets.Option.place`); a job option is refused, naming it."""
    import tfcloud.targets as targets
    from tfcloud.flow.settings import (
        JOB_DEFAULTS,
        given_origin,
        resolve_job_defaults,
        resolve_settings,
        target_defaults,
    )
    from tfcloud.targets._given import make_target, split_options

    given: dict[str, Any] = dict(options)
    given_as = _given_as(given.pop("given_as", None))
    value = target if isinstance(target, targets.Target) else None
    settings = resolve_settings({"target": value.name if value is not None else target, **(flags or {})},
                                given_as=given_as)
    cls = type(value) if value is not None else targets.get(settings.target)
    by_name = given.get("target_options")
    if place_only:
        _refuse_job_options(cls, [*given, *(by_name if isinstance(by_name, Mapping) else ())], given_as)
    named = {k: f"target_options[{k!r}]" for k in by_name} if isinstance(by_name, Mapping) else {}
    target_options = split_options(cls, given, job_keys=set(job_keys))  # -o KEY=VALUE too
    inside = value.given() if value is not None else {}  # the options a target value carries are given
    defaults, sources = resolve_job_defaults({**given, **inside, **target_options}, target=cls, jobs=bool(job_keys))
    for option, default in defaults.items():
        (target_options if cls.option(option) is not None else given)[option] = default
    by_key = {key: defaults[option] for key, (option, _) in JOB_DEFAULTS.items() if key in sources}
    by_key.update({key: defaults[option] for key, (option, _, _) in target_defaults(cls).items() if key in sources})
    given_sources = {k: given_as.get(k) or named.get(k) or given_origin(k) for k, v in target_options.items()
                     if k not in defaults and v is not None}
    given_sources.update({k: f"{type(value).__name__}({k}=...)" for k in inside})
    settings = dataclasses.replace(settings, sources={**settings.sources, **given_sources, **sources},
                                   job_defaults=by_key)
    if value is not None:  # options beside a value are refused (given twice); its unset ones take the defaults
        where = make_target(value, {k: v for k, v in target_options.items() if k not in defaults})
        where = _filled(where, {k: v for k, v in target_options.items() if k in defaults}, settings)
    else:
        where = make_target(cls.name, target_options, settings=settings)
    return Resolved(target=where, settings=settings, rest=given)


def _refuse_job_options(cls: type[Target], names: list[str], given_as: Mapping[str, str]) -> None:
    """Refuse a job option (:meth:`~tfcloud.targets.Target.job_options`) given to a verb that takes the place only."""
    jobs = {o.name: o for o in cls.job_options()}
    for name in names:
        if name in jobs:
            place = ", ".join(o.name for o in cls.place_options()) or "none"
            spelled = given_as.get(name) or name
            raise ValidationError(spelled, f"a place option of the {cls.name} target ({place})",
                                  f"{name}, a job option",
                                  hint=f"{name} sets up a job: give it to submit, plan, build or tune, not to a verb "
                                       "that talks to existing jobs.")


def _given_as(value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in value.items()):
        raise ValidationError("given_as", "a mapping of option names to how they were given (str to str)", value,
                              hint='Leave out given_as (the CLI sets it), or give e.g. {"project": "--project"}.')
    return dict(value)


def _filled(value: Target, defaults: Mapping[str, object], settings: Settings) -> Target:
    """A target value a caller made, with the options it leaves unset taken from the variables, config files
    (and gcloud's configuration) as a target named by the call would get them; checked again."""
    if not defaults:
        return value
    changes = {}
    for name, default in defaults.items():
        spec = type(value).option(name)
        assert spec is not None
        changes[spec.attribute] = spec.convert(default)
    filled = dataclasses.replace(value, **changes)  # type: ignore[type-var]  # targets are dataclasses
    filled.check(settings)
    return filled


def resolve_for_job(job_id: str | None, target: object, options: Mapping[str, object]) -> Resolved:
    """:func:`resolve` for a verb that talks to a job (``job_id``; None: to a target's jobs, ``list``): the target
    defaults to the one whose ids look like ``job_id``; a target given must own such ids."""
    import tfcloud.targets as targets
    from tfcloud.job.jobids import validate_job_id

    if job_id is not None:
        validate_job_id(job_id)
        if target is None:
            target = targets.for_job_id(job_id).name
        else:
            cls = type(target) if isinstance(target, targets.Target) else targets.get(target)
            if not cls.owns_job_id(job_id):
                raise ValidationError("JOB", f"a job id of the {cls.name} target ({cls.job_id_form()})", job_id,
                                      hint=f"Leave out the target ({targets.for_job_id(job_id).name} runs such "
                                           "jobs), or give the id of one of its jobs (`tfcloud list --target "
                                           f"{cls.name}`).")
    return resolve(target, options, place_only=True)


def sources(target: Target, settings: Settings) -> dict[str, dict[str, object]]:
    """Each value a setting, a variable, a config file or the call gave (``settings.sources``), as the plan shows
    it: name -> {"value": the value the job gets, "from": where it came from}. A target option's value is the
    target value's (``--spot``: True), else the settings' (a project from gcloud's configuration), a job default's
    the one the settings gave."""
    values: dict[str, object] = {name: getattr(settings, name) for name in settings.sources
                                 if hasattr(settings, name)}
    values.update(settings.job_defaults)
    for option in target.options:  # given to the target (a setting the target leaves unset keeps the settings')
        if option.name in settings.sources and getattr(target, option.attribute, None) is not None:
            values[option.name] = option.shown(getattr(target, option.attribute))
    return {name: {"value": values.get(name), "from": origin} for name, origin in settings.sources.items()}
