"""``tfcloud doctor``: what this machine can do, each line with its fix (thin: :mod:`tfcloud.flow.doctor` checks)."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import Annotated, Any, Optional

import typer

from tfcloud.cli._app import app, dumps
from tfcloud.cli._options import where, with_where

__all__ = ["doctor"]

_MARKS = {True: "ok", False: "FIX", None: " - "}


@app.command()
@with_where
def doctor(
    ctx: typer.Context,
    image_build_bucket: Annotated[Optional[str], typer.Option(  # noqa: UP045
        "--image-build-bucket", metavar="BUCKET", help="Check for builds with Cloud Build, staging the source in "
        "this bucket, as submit's flag does (default: the image_build_bucket setting); no Docker engine needed.",
        show_default=False)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
    **target_options: Any,
) -> None:
    """Check this machine before a first job: installed extras, the builder (the Docker engine, or Cloud Build),
    the TensorFlow and parent image the job's images are built on, then each target's own checks: Google
    credentials, project and region (and whether gcloud's configuration gave them), the staging bucket, the image
    registry and one call to Vertex AI's endpoint; a Ray address. Exit 0 when the chosen target can run a job, 2
    otherwise. The target and its place (--project, --region, --emulator-host; --ray; -o) are given as to
    every other verb."""
    from tfcloud.flow.doctor import can_run
    from tfcloud.flow.doctor import doctor as run_checks

    chosen = where(ctx, target_options)
    name, found = run_checks(chosen.pop("target"), place=chosen, image_build_bucket=image_build_bucket)
    ready = can_run(found)
    if json_output:
        typer.echo(dumps({"target": name, "can_run": ready, "checks": [c.to_dict() for c in found]},
                         indent=2))
        raise typer.Exit(0 if ready else 2)
    width = max(len(c.name) for c in found)
    for check in found:
        need = "  (needed)" if check.needed and not check.ok else ""
        typer.echo(f"{_MARKS[check.ok]:>3}  {check.name:<{width}}  {check.found}{need}")
        if check.fix and not check.ok:
            typer.echo(f"{'':>3}  {'':<{width}}  fix: {check.fix}")
    if ready:
        typer.echo(f"\nThe {name} target can run jobs here.")
        return
    typer.echo(f"\nThe {name} target cannot run a job here yet: fix the lines marked FIX (needed).")
    raise typer.Exit(2)
