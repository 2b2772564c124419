"""Printers of what the commands show people: a job's plan, its image's plan, a study's outcome.

They live beside the console (:mod:`tfcloud.view.console`), not in command bodies. User text (paths, arguments,
labels, requirements, notebook notes) is printed as plain text, never as markup.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tfcloud.flow.plan import ImagePlan, Plan
    from tfcloud.flow.settings import Settings
    from tfcloud.job.spec import JobSpec
    from tfcloud.job.study import StudyInfo, TrialInfo
    from tfcloud.targets._base import Target

__all__ = ["confirm_launch", "print_image_plan", "print_plan", "print_price", "say", "study_outcome"]


class RerunsTrials(Protocol):
    """What :func:`study_outcome` asks of a study (:class:`tfcloud.sdk.Study`, which imports this module)."""

    def rerun_command(self, trial: TrialInfo | None = None) -> str | None: ...


def study_outcome(study: RerunsTrials, info: StudyInfo, plot: Path | None) -> None:
    """After a study: why it failed, the command that reruns the best trial, where the plots are."""
    import typer

    from tfcloud.view.console import get_console, get_error_console

    console = get_console()
    best = info.best_trial
    if best is None:
        get_error_console().print(f"Study {info.study_id} {info.state.value}: no trial succeeded.",
                                  style="bold red", markup=False)
        for trial in info.trials:
            if trial.message:
                get_error_console().print(f"  trial {trial.trial_id}: {trial.message}", markup=False,
                                          highlight=False)
                break
    else:
        console.print(f"Best trial {best.trial_id}: {info.study.metric} = {best.metric}. Rerun it with:",
                      markup=False)
        typer.echo(study.rerun_command(best))
    if plot is not None:
        from tfcloud.view.tuneview import write_plots

        html = plot.suffix.lower() in (".html", ".htm")
        write_plots(info, png=None if html else plot, html_path=plot if html else None)
        console.print(f"Plot: {plot}", markup=False)
    paths = info.plots  # the local tuner's (StudyInfo.plots)
    if paths is not None and paths[0].is_file():
        console.print(f"Plots: {paths[0]}\n       {paths[1]}", markup=False)


def print_plan(plan: Plan, *, show_files: bool = False, show_request: bool = False) -> None:

    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from tfcloud.view.console import get_console

    console = get_console()
    spec = plan.spec
    console.print(f"[bold]Plan[/bold] for {escape(str(spec.entry_point))} (target: {plan.target.name}; "
                  "nothing submitted)")
    console.print(f"Strategy: [bold]{plan.strategy}[/bold] ({escape(plan.strategy_reason)})")
    table = Table("role", "replicas", "machine type", "accelerator")
    for row in plan.pools:
        table.add_row(Text(row.role), str(row.replicas), Text(row.machine_type), Text(row.accelerator))
    console.print(table)
    # The facts are the ones every view shows (tfcloud.flow.plan.plan_rows: the notebook's HTML, plan_text), printed
    # as plain text, never as markup; the image part and the generated files in full below.
    from tfcloud.flow.plan import plan_rows

    # the image's rows are printed whole by print_image_plan (a --no-build package's "Base image" is its own)
    image_rows = {"Generated"} | ({"Image", "Base image", "Builder", "Build context"} if plan.image else set())
    for label, value in plan_rows(plan):
        if label not in image_rows:
            say(f"{label}: {value}", style="yellow" if label == "Warning" else None)
    if plan.image is not None:
        print_image_plan(plan.image)
    if show_request:  # the request as the service receives it (--json holds it too)
        import json

        if plan.request is None:
            say(f"Request: none (the {plan.target.name} target sends no one request to start a job)")
        else:
            console.rule("request")
            console.print(json.dumps(plan.request, indent=2, ensure_ascii=False), markup=False, highlight=False,
                          soft_wrap=True)
    if not show_files:  # the plan stays on screen; the generated files only when asked for
        from tfcloud.flow.plan import generated_files

        say("Generated: " + generated_files(plan))
        return
    console.rule("tfcloud_launcher.py")
    console.print(plan.launcher.rstrip("\n"), markup=False, highlight=False, soft_wrap=True)
    if plan.script is not None:
        console.rule(f"{spec.entry_point.name}, converted to a script")
        console.print(plan.script.rstrip("\n"), markup=False, highlight=False, soft_wrap=True)


def say(text: str, *, style: str | None = None) -> None:
    """Print user text (paths, arguments, requirements) to the console as it is: never as markup, unwrapped so
    that commands and paths copy whole."""
    from tfcloud.view.console import get_console

    get_console().print(text, style=style, markup=False, highlight=False, soft_wrap=True)


#: At most this many of the context's own files are listed in the text plan (--json lists every one).
_PLAN_FILES = 40


def print_image_plan(image: ImagePlan) -> None:
    """The image part of a plan: tag, base, builder, the build context's files and what was kept out, the
    Dockerfile. tfcloud's generated files are summed up, one line per group."""
    from tfcloud.image.context import format_size, shown
    from tfcloud.view.console import get_console

    console = get_console()
    say(f"Image: {image.uri} (tag computed from the files below; nothing built)")
    say(f"Base image: {image.base_image}")
    say(f"Builder: {image.builder}")
    if image.cache_from:
        say(f"Build cache from: {image.cache_from}")
    say(f"Build context {shown(image.context_root)}: {len(image.files)} files, {format_size(image.total_size)}")
    own = [f for f in image.files if not f.generated]
    for f in own[:_PLAN_FILES]:
        say(f"  {shown(f.path)}  {format_size(f.size)}")
    if len(own) > _PLAN_FILES:
        say(f"  ... and {len(own) - _PLAN_FILES} more (--json lists every file)")
    groups: dict[str, list[int]] = {}
    for f in image.files:
        if f.generated:
            key = ".tfcloud/python/ (tfcloud's own package)" if f.path.startswith(".tfcloud/python/") else f.path
            groups.setdefault(key, []).append(f.size)
    for key, sizes in groups.items():
        count = f"{len(sizes)} files, " if len(sizes) > 1 else ""
        say(f"  {key}  {count}{format_size(sum(sizes))} (generated)")
    for path, reason in image.kept_out:
        say(f"  kept out: {shown(path)} ({reason}; secret deny-list)", style="yellow")
    for path, reason in image.let_in:
        say(f"  let in: {shown(path)} ({reason}; a `!path` line in .dockerignore)", style="yellow")
    for path in image.dropped_links:
        say(f"  dropped: {shown(path)} (a symlink that leaves the build context)")
    console.rule("Dockerfile")
    say(image.dockerfile.rstrip("\n"))



def print_price(spec: JobSpec, target: Target, settings: Settings) -> None:
    """The job's hourly list price in brief (no per-pool lines), before it is submitted; nothing for a target
    that bills nothing, or for a job on the emulator (it bills nothing either)."""
    from tfcloud.flow.plan import price_of

    price = None if target.emulated else price_of(spec, target, settings)
    for line in price.lines(pools=False) if price is not None else ():
        say(line)


def confirm_launch(spec: JobSpec, target: Target, settings: Settings, *, yes: bool = False) -> None:
    """Before a paid launch, on a terminal: ask ``Proceed? [Y/n]`` under the price :func:`print_price` just
    printed (SkyPilot's ``sky launch`` asks the same). Not asked with ``yes`` (``--yes``), the ``yes`` setting
    (``TFCLOUD_YES=1``), for a target that bills nothing, on the emulator, or when stdin or the console is not a
    terminal (a script, CI, a notebook). Answering no submits nothing and raises KeyboardInterrupt (exit 130)."""
    import sys

    from tfcloud.flow.plan import price_of
    from tfcloud.view.console import get_console

    if yes or _truthy(settings.yes) or target.emulated or price_of(spec, target, settings) is None:
        return
    console = get_console()
    if console.quiet or not (sys.stdin.isatty() and console.is_terminal):
        return
    answer = console.input("Proceed? [Y/n] ")
    if answer.strip().lower() in ("", "y", "yes"):
        return
    console.print("Not submitted: nothing was built or created.", markup=False, highlight=False)
    raise KeyboardInterrupt


def _truthy(value: str | None) -> bool:
    from tfcloud.flow.settings import TRUE_WORDS

    return (value or "").strip().lower() in TRUE_WORDS
