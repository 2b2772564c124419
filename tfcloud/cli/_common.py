"""What every command family shares, light enough for the job commands' start-up (`tfcloud status JOB`):
KEY=VALUE pairs, the target a command's flags choose, ``--ray ADDRESS``, and the integer type of every integer
flag (:func:`ascii_integer`)."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import Annotated, Any, Optional

import typer

from tfcloud.config.docsite import page
from tfcloud.errors import ValidationError

__all__ = ["AllReplicasOpt", "RayOpt", "ascii_integer", "pairs", "selected_target"]


def ascii_integer(value: Any) -> int:
    """An integer flag's text read as ASCII digits (an optional ``-`` sign): click's own ``INT`` calls ``int()``,
    which takes ``١٢٠٠`` for 1200 and raises on ``²``. Every integer flag is read with it (``parser=``); the
    message is click's (``Invalid value for '--worker-count': '²' is not a valid integer.``, exit 2)."""
    from tfcloud.config.digits import ascii_int

    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip(" ")
    number = ascii_int(text.removeprefix("-"))
    if number is None:
        raise typer.BadParameter(f"{value!r} is not a valid integer.")
    return -number if text.startswith("-") else number


def pairs(values: list[str] | None, field: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValidationError(field, "KEY=VALUE", item)
        result[key] = value
    return result


def selected_target(local: bool, vertex: bool, ray: str | None = None, other: str | None = None) -> str | None:
    """The target the flags choose (None: the ``target`` setting's): ``--local``, ``--vertex``, ``--ray ADDRESS``
    or ``--target NAME``, one at most."""
    chosen = [(flag, name) for flag, name, on in (("--local", "local", local), ("--vertex", "vertex", vertex),
                                                  ("--target", other, other is not None)) if on]
    if len({name for _, name in chosen}) > 1:
        raise ValidationError("target", "one of --local, --vertex, --ray ADDRESS or --target NAME",
                              " and ".join(flag for flag, _ in chosen))
    name = chosen[0][1] if chosen else None
    if ray is not None and name not in (None, "ray"):  # the Ray target's address, given to another target
        from tfcloud.errors import UnsupportedOptionError

        raise UnsupportedOptionError("ray_address", ray, target=str(name), takers=["ray"], how="--ray ADDRESS")
    return "ray" if ray is not None else name


RayOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--ray", metavar="ADDRESS", help="A Ray cluster's dashboard, http://HEAD:8265 (default: TFCLOUD_RAY_ADDRESS, "
                                     "then RAY_ADDRESS). See " + page("ray") + ".", show_default=False)]
AllReplicasOpt = Annotated[bool, typer.Option(
    "--all-replicas", help="Every line of every replica (by default a line that several replicas print alike "
                           "shows once, with how many printed it; -v does this too).")]
