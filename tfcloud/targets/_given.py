"""A target's options given to a call: the keywords that are a target's (:func:`split_options`), each refused
where the chosen target does not take it (:func:`refuse_options`), and the target value made from them
(:func:`make_target`); and those given by name and text (``-o KEY=VALUE``, ``run(target_options={...})``): each key
must be an option of the chosen target, given once, and its text is read as that target's option says.

``-o`` sets a target's options only. A key that is a job option (``display_name``, ``worker_count``), the target
itself, or another target's option is refused naming the chosen target and the flag that sets it; a key given as
``-o`` and as its flag (or keyword) is refused naming both. The texts are typed here, once the target is known
(the ``target`` setting may choose it: ``TFCLOUD_TARGET=vertex tfcloud submit ... -o spot=true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tfcloud.config.usertext import refuse_control
from tfcloud.errors import UnsupportedOptionError, ValidationError

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.targets._base import Target

__all__ = ["FIELD", "flag_for", "make_target", "refuse_options", "split_options", "target_options"]

#: How errors name the mapping (the CLI's ``-o`` and ``run()``'s ``target_options=``).
FIELD = "-o"

#: A job option's flag where it is not ``--`` and its name with dashes.
_JOB_FLAGS = {
    "requirements_txt": "--requirements",
    "docker_config": "--image, --parent-image, --cache-from or --image-build-bucket",
    "distribution_strategy": "--strategy",
    "entry_point_args": "the script's arguments after --",
    "job_labels": "--label KEY=VALUE",
    "env": "--env NAME=VALUE",
    "evaluator_count": "--evaluator",
    "evaluator_config": "run(evaluator_config=...)",
    "target": "--local, --vertex, --ray ADDRESS or --target NAME",
    "context_dir": "--context",
    "image_repository": "TFCLOUD_IMAGE_REPOSITORY (image_repository= in run() or [tool.tfcloud])",
}

#: Job options whose flag is ``--`` and the name with dashes.
_PLAIN_FLAGS = frozenset({"worker_count", "worker_config", "chief_config", "ps_count", "ps_config", "display_name"})


def flag_for(key: str) -> str:
    """The flag that sets ``key`` when it is not the chosen target's option: a job option's, or another built-in
    target's (with that target's flag)."""
    import tfcloud.targets as targets

    if key in _JOB_FLAGS:
        return _JOB_FLAGS[key]
    takers = [cls for cls in targets.builtin_targets() if cls.option(key) is not None]
    if takers:
        option = takers[0].option(key)
        assert option is not None
        flag = option.cli_flag.partition("/")[0] if option.type is bool else option.cli_flag
        return f"{flag} (an option of {' and '.join(c.name for c in takers)}: with --target {takers[0].name})"
    if key in _PLAIN_FLAGS:
        return "--" + key.replace("_", "-")
    return ""


def target_options(cls: type[Target], values: object, given: Mapping[str, object]) -> dict[str, object]:
    """``values`` (KEY -> text or value) as target ``cls``'s options: each key one of its options, not also in
    ``given`` (the call's other keywords and flags, None: not given), each text read as the option's type."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise ValidationError("target_options", "a mapping of the target's option names to values", values)
    out: dict[str, object] = {}
    names = ", ".join(o.name for o in cls.options) or "none"
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise ValidationError(FIELD, "KEY=VALUE with KEY an option of the target", key)
        refuse_control(FIELD, key)
        option = cls.option(key)
        if option is None:
            flag = flag_for(key)
            how = f"`{key}` is not an option of the {cls.name} target" + (f": set it with {flag}" if flag else "")
            raise ValidationError(f"{FIELD} {key}", f"an option of the {cls.name} target ({names})", value,
                                  hint=how + ". -o sets the chosen target's options only.")
        if given.get(key) is not None:
            raise ValidationError(f"{FIELD} {key}", f"to be given once: as -o {key}=... or as "
                                  f"{option.cli_flag.partition('/')[0] or key}, not both", value,
                                  hint="Give it one way.")
        if isinstance(value, str):
            refuse_control(f"{FIELD} {key}", value)
            if option.type is not str:
                value = option.from_text(value)
        out[key] = value
    return out


def make_target(target: object, options: Mapping[str, object], *, settings: Settings | None = None) -> Target:
    """The target value for ``target`` (a :class:`~tfcloud.targets.Target` value, or a registered name) and
    its ``options``: every option checked by the target's own spec; one it does not take is refused, naming the
    targets that do take it."""
    import tfcloud.targets as targets

    if isinstance(target, targets.Target):
        given = {k: v for k, v in options.items() if v is not None}
        if given:
            name = sorted(given)[0]
            raise ValidationError(name, f"to be given once: inside the target value ({type(target).__name__}) or "
                                  "as a keyword, not both", given[name],
                                  hint=f"Pass {type(target).__name__}({name}=...) alone.")
        return target
    cls = targets.get(target)
    refuse_options(cls, options)  # what is left of the others' options is unset (None, or a flag left off)
    with targets.plugin_errors(cls, "option check or check()"):
        return cls.from_options({k: v for k, v in options.items() if v is not None and cls.option(k) is not None},
                                settings=settings)


def refuse_options(cls: type[Target], options: Mapping[str, object]) -> None:
    """Refuse (exit 2) each option in ``options`` that target ``cls`` does not take. An option left at its
    "unset" value (None or False) counts as not given."""
    import tfcloud.targets as targets

    for name, value in options.items():
        if value is None or cls.option(name) is not None:
            continue
        takers = [c for c in targets.builtin_targets() if c.option(name) is not None]
        spec = next((c.option(name) for c in takers), None)
        if value is False and spec is not None and "/" not in spec.cli_flag:
            continue  # a flag left off (spot=False) asks for nothing; --no-build (build=False) does
        how = " / ".join(f"--{c.name}" + (f' / target="{c.name}"') for c in takers)
        raise UnsupportedOptionError(name, value, target=cls.name, takers=[c.name for c in takers], how=how)


def split_options(cls: type[Target], given: dict[str, object], *, job_keys: set[str]) -> dict[str, object]:
    """Take out of ``given`` (a call's keywords, changed in place) the options of target ``cls``: every keyword
    that is not a job option (``job_keys``) or that ``cls`` takes, and ``target_options`` (``-o``) read by
    :func:`target_options`; each one ``cls`` does not take is refused (:func:`refuse_options`)."""
    import tfcloud.targets as targets

    by_name = target_options(cls, given.pop("target_options", None), given)
    job_keys = job_keys - {o.name for c in targets.builtin_targets() for o in c.options}
    options = {k: given.pop(k) for k in list(given) if k not in job_keys or cls.option(k) is not None}
    options.update(by_name)
    refuse_options(cls, options)
    return options
