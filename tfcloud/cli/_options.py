"""Options several commands share, and the target options generated from the targets' own specs.

:func:`with_target_options` adds to a command one flag per option of every built-in target (its flag, type,
help and panel come from the target's :class:`~tfcloud.targets.Option`), so that the option list is written
once, in the target's package. Plug-in targets are chosen with ``--target NAME`` and take their options as
``-o KEY=VALUE``.
"""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from tfcloud.cli._common import ascii_integer, pairs
from tfcloud.config.docsite import page
from tfcloud.view import completion

__all__ = ["DEFAULTABLE", "EntryPointArg", "LocalOpt", "TargetOpt", "TargetOptionOpt", "VertexOpt",
           "given_target_options", "leave_defaults", "machine", "pairs", "strategy_value", "where",
           "with_place_options", "with_target_options", "with_where"]


def machine(value: str | None, field: str) -> object:
    if value is None or value.lower() == "auto":
        return "auto"
    from tfcloud.google.catalog.machines import machine_config_from_name

    return machine_config_from_name(value, field=field)


# Options that `submit` and `build` share (typer reads the help from these annotations).
EntryPointArg = Annotated[Path, typer.Argument(help="The training script (.py) or notebook (.ipynb).",
                                               show_default=False)]
WorkerCountOpt = Annotated[int, typer.Option(help="Workers besides the chief.", parser=ascii_integer,
                                             metavar="INTEGER")]
PsCountOpt = Annotated[int, typer.Option(help="Parameter servers (ParameterServerStrategy).", parser=ascii_integer,
                                         metavar="INTEGER")]
ChiefConfigOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045 (typer needs Optional)
    metavar="NAME", autocompletion=completion.machine_names,
    help="Chief machine, a name from `tfcloud machines` (default: auto).", show_default=False)]
WorkerConfigOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    metavar="NAME", autocompletion=completion.machine_names,
    help="Worker machine (default: auto).", show_default=False)]
StrategyOpt = Annotated[str, typer.Option(
    "--strategy", metavar="STRATEGY", autocompletion=completion.strategies,
    help="One of: " + ", ".join(completion.STRATEGIES) + " (none: the script sets up its own).")]
RequirementsOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--requirements", "-r", help="A requirements.txt for the job.", show_default=False)]
ProjectOpt = Annotated[Optional[str], typer.Option(help="Google Cloud project.", show_default=False)]  # noqa: UP045
RegionOpt = Annotated[Optional[str], typer.Option(help="Vertex AI region.", show_default=False)]  # noqa: UP045
ImageOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    help="Image URI to build and push (DockerConfig.image).", show_default=False)]
ParentImageOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    help="Base image (DockerConfig.parent_image).", show_default=False)]
CacheFromOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    help="An image to take build cache from (DockerConfig.cache_from).", show_default=False)]
BuildBucketOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    help="Build with Cloud Build, staging the source in this bucket.", show_default=False)]
BuildLogsOpt = Annotated[bool, typer.Option("--build-logs", help="Print the image build's log as it comes.")]
ContextOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--context", help="The image's build context, a directory that contains the entry point (default: the "
                      "entry point's directory).", show_default=False)]
LabelOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--label", help="A job label KEY=VALUE (repeatable).", show_default=False)]
EnvOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--env", help="An environment variable NAME=VALUE for every replica (repeatable).", show_default=False)]
DataOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--data", metavar="[NAME=]DIR", help="A data set every replica reads at $TFCLOUD_DATA_<NAME> "
    "(tfcloud.data(\"name\")): a local directory (used in place locally, else uploaded once, by content) or "
    "gs://BUCKET/PATH. Repeatable.", show_default=False)]
SecretOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--secret", metavar="NAME=REF", help="A secret every replica gets as the variable NAME, by reference only: "
    "projects/P/secrets/S/versions/V (Secret Manager), or env:VAR / file:PATH (local, Ray). Repeatable.",
    show_default=False)]


#: CLI parameter -> the job option it sets, for those the environment and config files can default
#: (tfcloud.flow.settings.JOB_DEFAULTS): left out of the SDK call unless given on the command line.
DEFAULTABLE = {"worker_count": "worker_count", "ps_count": "ps_count", "chief_config": "chief_config",
               "worker_config": "worker_config", "ps_config": "ps_config", "strategy": "distribution_strategy",
               "requirements": "requirements_txt", "label": "job_labels", "env": "env",
               "secret": "secrets", "data": "data"}


def leave_defaults(ctx: typer.Context, options: Any) -> Any:
    """Drop from ``options`` (a JobOptions dict, changed in place and returned) each option that the command
    line did not give, so that TFCLOUD_* variables, [tool.tfcloud] and the user's config can fill it."""
    for param, option in DEFAULTABLE.items():
        source = ctx.get_parameter_source(param)
        if option in options and (source is None or source.name == "DEFAULT"):
            del options[option]
    return options


def strategy_value(value: str) -> str | None:
    return None if value.lower() == "none" else value


def docker(image: str | None, parent_image: str | None, cache_from: str | None, bucket: str | None) -> object:
    from tfcloud import DockerConfig

    return DockerConfig(image=image, parent_image=parent_image, cache_from=cache_from, image_build_bucket=bucket)



TargetOpt = Annotated[Optional[str], typer.Option(  # noqa: UP045
    "--target", metavar="NAME", help="The target NAME: a built-in one (local, vertex, ray) or one an "
                                     "installed package adds (" + page("architecture", "adding-a-target") + ").",
    show_default=False)]
LocalOpt = Annotated[bool, typer.Option("--local", help="The local target: this machine, one process per replica "
                                                        "(the default target).")]
VertexOpt = Annotated[bool, typer.Option("--vertex", help="The vertex target: Google Cloud Vertex AI.")]
TargetOptionOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
    "--target-option", "-o", metavar="KEY=VALUE", help="An option of the chosen target, by name (repeatable).",
    show_default=False)]


@functools.cache
def _parameters(*, place_only: bool = False, of: tuple[str, ...] | None = None) -> tuple[inspect.Parameter, ...]:
    """One typer parameter per built-in target option, from ``tfcloud/cli/_target_flags.py`` (generated from
    the targets' option specs: reading it costs start-up nothing, importing every target would); once per
    process (submit and tune both take them). ``place_only``: only the place options (how a target is
    reached), for the verbs that talk to existing jobs or to the place; ``of``: only these targets' options."""
    from tfcloud.cli._target_flags import FLAGS

    params = []
    for name, flag, kind, metavar, text, panel, takers, place in FLAGS:
        if (place_only and not place) or (of is not None and not set(takers) & set(of)):
            continue
        shared = len(takers) > 1
        text += f" ({', '.join(takers)})" if shared else ""
        panel = "Targets" if shared else panel
        if kind == "bool":
            annotation: Any = Annotated[bool, typer.Option(flag, help=text, rich_help_panel=panel)]
            default: Any = "/" in flag  # --build/--no-build: on unless turned off
        elif kind == "list":  # repeatable: each use one item
            annotation = Annotated[Optional[list[str]], typer.Option(  # noqa: UP045
                flag, help=text + " (repeatable)", metavar=metavar or "VALUE", show_default=False,
                rich_help_panel=panel)]
            default = None
        else:
            value = {"int": int, "float": float}.get(kind, str)
            annotation = Annotated[Optional[value], typer.Option(  # noqa: UP045
                flag, help=text, metavar=metavar or "VALUE", show_default=False, rich_help_panel=panel,
                parser=ascii_integer if value is int else None)]
            default = None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=annotation))
    return tuple(params)


def with_target_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add to ``command`` (which takes ``**target_options``) a flag for each built-in target option; typer
    reads the signature. The command gets each one as a keyword (:func:`given_target_options` keeps those the
    command line gave)."""
    signature = inspect.signature(command)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += _parameters()
    command.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {**command.__annotations__, **{p.name: p.annotation for p in params}}
    return command


def with_place_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`with_target_options` with the built-in targets' place flags only (``--project``, ``--region``,
    ``--emulator-host``, ``--ray``): for a command that talks to the places, not to one job's setup."""
    signature = inspect.signature(command)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += _parameters(place_only=True)
    command.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {**command.__annotations__, **{p.name: p.annotation for p in params}}
    return command


def given_target_options(ctx: typer.Context, values: dict[str, Any], *, target: str | None,
                         plugin_options: list[str] | None = None) -> dict[str, Any]:
    """The target options the command line gave (a flag left at its default is not given: the target's
    settings may fill it), and ``-o KEY=VALUE`` as ``target_options`` (text: the SDK reads each as the chosen
    target's option says, and refuses a key that is not one, naming the flag that sets it). A KEY given twice
    is refused here."""
    from tfcloud.errors import ValidationError

    given: dict[str, Any] = {}
    given_as: dict[str, str] = {}  # how each was given, for the plan's sources (tfcloud.flow.where.resolve)
    for name, value in values.items():
        source = ctx.get_parameter_source(name)
        if source is not None and source.name != "DEFAULT":
            given[name] = value
            given_as[name] = _spelling(ctx, name, value)
    texts: dict[str, str] = {}
    for item in plugin_options or []:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ValidationError("-o", "KEY=VALUE (an option of the chosen target)", item)
        if key in texts:
            raise ValidationError(f"-o {key}", "each KEY once", f"{key}={texts[key]} and {item}",
                                  hint=f"Give -o {key}=... once.")
        texts[key] = text
        given_as[key] = f"-o {key}"
    if texts:
        given["target_options"] = texts
    chose = [_spelling(ctx, name, True) for name in ("local", "vertex", "target")
             if (source := ctx.get_parameter_source(name)) is not None and source.name != "DEFAULT"]
    if target is not None and (chose or "ray_address" in given_as):
        given_as["target"] = chose[0] if chose else given_as["ray_address"]
    if given_as:
        given["given_as"] = given_as
    return given


def _spelling(ctx: typer.Context, name: str, value: object) -> str:
    """The flag a command's parameter ``name`` was given with (``--project``; ``--no-build`` for a flag turned
    off)."""
    param = next((p for p in ctx.command.params if p.name == name), None)
    if param is None or not param.opts:
        return "--" + name.replace("_", "-")
    if value is False and param.secondary_opts:
        return param.secondary_opts[0]
    return max(param.opts, key=len)


def with_where(command: Callable[..., Any] | None = None, *,
               targets: tuple[str, ...] | None = None) -> Callable[..., Any]:
    """For a command that talks to existing jobs or to the place: ``--local``, ``--vertex``, ``--target NAME``,
    ``-o KEY=VALUE`` and the built-in targets' *place* flags only (``--project``, ``--region``,
    ``--emulator-host``, ``--ray``), into its ``**target_options`` (:func:`where` reads them). A job option's flag
    is then an unknown option (exit 2), and one given as ``-o`` is refused by
    :func:`tfcloud.flow.where.resolve_for_job`. ``@with_where(targets=("vertex",))``: a verb that acts on those
    targets only (``tfcloud cluster``) takes only their flags (``--vertex``, its place), so ``--help`` lists what
    it acts on and ``--local``/``--ray`` are unknown options."""
    if command is None:
        def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
            return with_where(command, targets=targets)

        return decorate
    chosen: tuple[inspect.Parameter, ...] = (
        inspect.Parameter("local", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=LocalOpt),
        inspect.Parameter("vertex", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=VertexOpt),
        inspect.Parameter("target", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=TargetOpt),
        inspect.Parameter("target_option", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=TargetOptionOpt),
    )
    if targets is not None:
        chosen = tuple(p for p in chosen if p.name not in ("local", "vertex", "target") or p.name in targets)
    signature = inspect.signature(command)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += [*chosen, *_parameters(place_only=True, of=targets)]
    command.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {**command.__annotations__, **{p.name: p.annotation for p in params}}
    return command


def where(ctx: typer.Context, values: dict[str, Any]) -> dict[str, Any]:
    """The target a command's flags choose and its options, as the SDK takes them (``target=``, the options
    the command line gave, ``target_options=`` from ``-o``): the same for ``submit`` and every job command.
    ``values``: the command's ``**target_options`` (:func:`with_where` put ``--local``, ``--vertex``,
    ``--target`` and ``-o`` there too)."""
    from tfcloud.cli._common import selected_target

    values = dict(values)
    local, vertex = values.pop("local", False), values.pop("vertex", False)
    target, plugin_options = values.pop("target", None), values.pop("target_option", None)
    chosen = selected_target(local, vertex, values.get("ray_address"), target)
    return {"target": chosen, **given_target_options(ctx, values, target=chosen, plugin_options=plugin_options)}
