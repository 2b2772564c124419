"""The ``tfcloud`` application object and its one error handler.

:func:`main` turns a :class:`~tfcloud.errors.TfcloudError` into a message and its exit code (2 bad input or
configuration, 1 the job or build failed); Ctrl-C exits 130. Tracebacks only with ``TFCLOUD_DEBUG=1``.
Commands live one family per module (:mod:`tfcloud.cli.jobs`, ``tune``, ``inspect``, ``machines``); the plan
and study printers in :mod:`tfcloud.view.printers`.
"""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up, and
# evaluating them from strings cost ~5 ms of each command's start-up (benchmarks/bench_cli.py).
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, TypeVar

import typer
import typer.core

from tfcloud._version import __version__
from tfcloud.errors import TfcloudError

__all__ = ["HELP_PANELS", "PanelCommand", "app", "dumps", "main"]


def dumps(value: Any, **options: Any) -> str:
    """json.dumps, imported on first use: --help and most commands never need the json module (~1.5 ms)."""
    import json

    return json.dumps(value, **options)

# Printed by click's plain formatter: typer's rich help would import most of rich (~3x this command's start-up).
HELP_PANELS = {
    **dict.fromkeys(["local", "vertex", "target", "target_option"], "Target"),
    **dict.fromkeys(["worker_count", "chief_config", "worker_config", "ps_count", "ps_config", "evaluator",
                     "strategy"], "Cluster"),
    **dict.fromkeys(["requirements", "label", "env", "secret", "data", "display_name"], "Job"),
    **dict.fromkeys(["image", "parent_image", "cache_from", "image_build_bucket", "context", "build_logs",
                     "no_push"], "Image"),
    # a target's own options carry their target's panel (tfcloud.cli._options.with_target_options)
    **dict.fromkeys(["project", "region", "cancel_on_interrupt"], "Vertex AI"),
    **dict.fromkeys(["dry_run", "show_files", "show_request", "json_output", "detach", "follow", "all_replicas",
                     "yes"], "Output"),
}

COMMAND_HELP_PANELS = {
    "list": dict.fromkeys(["state", "label", "limit"], "Filter"),
    "logs": {**dict.fromkeys(["replica", "tail", "since"], "Filter"), "timestamps": "Output"},
    "status": {"show_timeline": "Output", "study": "Target"},
    "tune": dict.fromkeys(["param", "metric", "goal", "trials", "parallel", "algorithm", "early_stopping"], "Study")
    | {"plot": "Output"},
    "ui": dict.fromkeys(["host", "port", "token", "browser"], "Server") | {"target": "Target"},
}


class PanelCommand(typer.core.TyperCommand):
    """A command whose --help groups its options under headings (rich_help_panel, else HELP_PANELS)."""

    def format_options(self, ctx: Any, formatter: Any) -> None:  # click's Context and HelpFormatter
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": []}
        panels = {**HELP_PANELS, **COMMAND_HELP_PANELS.get(self.name or "", {})}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                title = "Arguments"
            else:
                title = getattr(param, "rich_help_panel", None) or panels.get(param.name or "", "Options")
            sections.setdefault(title, []).append(record)
        sections["Options"] = sections.pop("Options", [])  # the ungrouped ones (and --help) last
        for title, records in sections.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


_Command = TypeVar("_Command", bound=Callable[..., Any])


class _Typer(typer.Typer):
    def command(self, *args: Any, **kwargs: Any) -> Callable[[_Command], _Command]:
        kwargs.setdefault("cls", PanelCommand)
        return super().command(*args, **kwargs)


class _LazyGroup(typer.core.TyperGroup):
    """The ``tfcloud`` group: a command's click object (its parameters read from the function's signature) is
    made when that command runs, shows its help or completes, not at every start-up; a sub-group's module is
    imported then too. typer makes every command eagerly, and tfcloud's took a tenth of `tfcloud --help`."""

    #: name -> ("module", the module that defines the command: imported when it is needed), then ("command",
    #: typer's CommandInfo) once it is; or ("group", "module:attribute", help). In the order `--help` lists them.
    lazy: ClassVar[dict[str, tuple[Any, ...]]] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.commands, *(name for name in self.lazy if name not in self.commands)]

    @classmethod
    def _entry(cls, name: str) -> tuple[Any, ...]:
        entry = cls.lazy[name]
        if entry[0] == "module":  # its @app.command() replaces the entry with the command's CommandInfo
            import importlib

            importlib.import_module(entry[1])
            entry = cls.lazy[name]
        return entry

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            entry = self._entry(cmd_name)
            if entry[0] == "command":
                self.commands[cmd_name] = typer.main.get_command_from_info(
                    entry[1], pretty_exceptions_short=True, rich_markup_mode=None)
            else:
                import importlib

                module, _, attribute = entry[1].partition(":")
                from typer.models import TyperInfo

                sub = getattr(importlib.import_module(module), attribute)
                self.commands[cmd_name] = typer.main.get_group_from_info(
                    TyperInfo(sub, name=cmd_name, help=entry[2]), pretty_exceptions_short=True,
                    rich_markup_mode=None, suggest_commands=True)
        return self.commands.get(cmd_name)

    @classmethod
    def summary(cls, name: str) -> str:
        """A lazy command's help (its ``help=``, else its docstring) or a lazy group's, importing the command's
        module if needed: what ``--help`` lists (first paragraph) when ``_summaries.py`` lacks it."""
        import inspect

        entry = cls._entry(name)
        return entry[2] if entry[0] == "group" else (entry[1].help or inspect.getdoc(entry[1].callback) or "")

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list of ``--help``: each lazy command's first paragraph from ``tfcloud/cli/_summaries.py``
        (generated from the commands; importing the seven command modules to read their docstrings cost a
        tenth of ``tfcloud --help``), else from the command itself."""
        from typer._click.utils import make_default_short_help

        from tfcloud.cli._summaries import SUMMARIES

        rows = []
        for name in self.list_commands(ctx):
            if name not in self.lazy:
                rows.append((name, self.commands[name].get_short_help_str()))
            else:
                rows.append((name, SUMMARIES.get(name) or self.summary(name)))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, make_default_short_help(text, limit)) for name, text in rows])


class _RootTyper(_Typer):
    """The root application: commands and sub-groups registered lazily (:class:`_LazyGroup`)."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[_Command], _Command]:
        register = super().command(*args, **kwargs)

        def lazily(function: _Command) -> _Command:
            register(function)
            info = self.registered_commands.pop()
            _LazyGroup.lazy[info.name or typer.main.get_command_name(function.__name__)] = ("command", info)
            return function

        return lazily

    def add_lazy_group(self, name: str, ref: str, *, help: str) -> None:
        """A sub-group (``tfcloud emulator``, ``tfcloud cluster``) whose module is imported when it is used."""
        _LazyGroup.lazy[name] = ("group", ref, help)

    def add_lazy_commands(self, module: str, *names: str) -> None:
        """Commands that ``module`` defines (``@app.command()``), imported when one of them runs or ``--help``
        lists them: `tfcloud status JOB` imports the job commands' module only."""
        for name in names:
            _LazyGroup.lazy.setdefault(name, ("module", module))


app = _RootTyper(
    name="tfcloud",
    cls=_LazyGroup,
    help="Run a TensorFlow script or notebook as a distributed job: on this machine (the default), on a Ray "
    "cluster (--ray ADDRESS) or on Google Cloud Vertex AI (--vertex).",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tfcloud {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    verbose: Annotated[int, typer.Option(
        "--verbose", "-v", count=True, help="Say more: retries and other diagnostics (-vv: debug), and the "
                                            "replicas' TensorFlow start-up lines.", show_default=False)] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only errors and the job's own output: no "
                                                              "progress or warnings.")] = False,
) -> None:
    """Run a TensorFlow script or notebook as a distributed job, locally, on Ray or on Vertex AI."""
    from tfcloud.view.console import configure

    configure(verbosity=-1 if quiet else verbose)


def _caused_by_ctrl_c(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tfcloud`` command. Returns the exit code when given ``argv``, else exits."""
    debug = os.environ.get("TFCLOUD_DEBUG") == "1"
    try:
        app(args=argv, prog_name="tfcloud")
        code = 0
    except SystemExit as exc:  # typer (click) always ends with SystemExit in standalone mode
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if _caused_by_ctrl_c(exc):  # click turns Ctrl-C into "Aborted!" and exit 1; our convention is 130
            code = 130
    except TfcloudError as exc:
        if debug:
            raise
        from rich.markup import escape

        from tfcloud.view.console import get_error_console

        console = get_error_console()
        console.print(f"[bold red]Error:[/bold red] {escape(exc.message)}", highlight=False, soft_wrap=True)
        if exc.hint:
            console.print(exc.hint, markup=False, highlight=False, soft_wrap=True)
        code = exc.exit_code
    finally:
        if argv is not None:  # run in the caller's process (tests, scripts): leave its logging as it was
            from tfcloud.view.console import reset

            reset()
    if argv is None:
        sys.exit(code)
    return code
