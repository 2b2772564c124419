"""``tfcloud emulator``: run the offline Google Cloud emulator in the foreground.

The main CLI mounts :data:`app` as ``tfcloud emulator``; ``python -m tfcloud.emulator.cli start`` runs it too.
"""

# No `from __future__ import annotations`: typer reads these annotations at every `tfcloud` start-up.
import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["app"]

app = typer.Typer(help="The offline Google Cloud emulator (Vertex AI jobs, Cloud Build, Logging, Storage).",
                  no_args_is_help=True)


@app.callback()
def _main() -> None:
    """The offline Google Cloud emulator."""


def _print_kept(console: object, kept: object) -> None:
    """Whether the emulator starts empty, or what it kept from earlier runs."""
    from rich.console import Console
    from rich.markup import escape

    from tfcloud.emulator.store import Stores

    assert isinstance(console, Console) and isinstance(kept, Stores)
    if kept.directory is None:
        console.print("Jobs are kept in memory: it starts empty, and jobs are gone when it stops "
                      "(--data-dir DIR keeps them)", soft_wrap=True)
    else:
        console.print(f"Jobs kept in {escape(str(kept.directory))}: {kept.jobs_kept} jobs kept from earlier runs "
                      f"({kept.jobs_failed_on_restart} had not ended and are FAILED now), {kept.builds.kept} "
                      f"builds, {kept.persistent_resources.kept} persistent resources", soft_wrap=True)


@app.command()
def start(
    port: Annotated[int, typer.Option(help="Plaintext gRPC port on 127.0.0.1 (0: a free one).")] = 0,
    tls_port: Annotated[int, typer.Option(help="TLS gRPC port on 127.0.0.1, for Google's libraries' "
                                          "api_endpoint (0: a free one).")] = 0,
    storage_port: Annotated[int, typer.Option(help="Cloud Storage port (0: a free one).")] = 0,
    project: Annotated[str, typer.Option(help="Default project id.")] = "tfcloud-emulator",
    location: Annotated[str, typer.Option(help="Default location.")] = "us-central1",
    docker_host: Annotated[str | None, typer.Option(
        envvar="DOCKER_HOST", help="Docker engine for replicas and builds (default: local processes).")] = None,
    data_dir: Annotated[Path | None, typer.Option(
        help="Keep jobs, persistent resources, builds and storage objects here across restarts (default: memory; "
             "a restart starts empty).")]
    = None,
    no_storage: Annotated[bool, typer.Option("--no-storage", help="Do not run Cloud Storage.")] = False,
    stockout: Annotated[list[str] | None, typer.Option(
        metavar="REGION[/MACHINE_TYPE][:spot]",
        help="A region out of stock (repeatable): of one machine type, or of Spot VMs only with :spot. Jobs there "
             "fail with RESOURCE_EXHAUSTED as Vertex AI's do (FLEX_START jobs wait), or stay QUEUED with "
             "--queued.")] = None,
    queued: Annotated[bool, typer.Option("--queued", help="Jobs a --stockout covers stay QUEUED (as for want of "
                                                          "quota) instead of failing.")] = False,
) -> None:
    """Start the emulator, print its endpoint and the settings to export, and run until Ctrl-C."""
    from rich.console import Console
    from rich.markup import escape

    from tfcloud.config.extras import require_extras
    from tfcloud.errors import TfcloudError

    errors = Console(highlight=False, stderr=True)
    try:
        require_extras(emulator=True, emulator_docker=docker_host is not None)
    except TfcloudError as exc:
        errors.print(f"[red]Error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    from tfcloud.emulator.faults import parse_stockout
    from tfcloud.emulator.server import Emulator

    try:
        stockouts = [parse_stockout(text, queued=queued) for text in stockout or ()]
    except ValueError as exc:
        errors.print(f"[red]Error:[/red] Invalid `--stockout`: {escape(str(exc))}.", soft_wrap=True)
        raise typer.Exit(2) from None
    if queued and not stockouts:
        errors.print("[red]Error:[/red] Invalid `--queued`: expected beside a --stockout, received no --stockout.",
                     soft_wrap=True)
        raise typer.Exit(2)
    console = Console(highlight=False)
    emulator = Emulator(project=project, location=location, port=port, tls_port=tls_port, storage=not no_storage,
                        storage_port=storage_port, data_dir=data_dir, docker_host=docker_host)
    try:
        settings = emulator.start()
    except TfcloudError as exc:
        errors.print(f"[red]Error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from exc
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        console.print(f"tfcloud emulator listening on {settings.endpoint}")
        console.print(f"TLS (Google's libraries' api_endpoint) on {settings.tls_endpoint}")
        if settings.storage_endpoint:
            console.print(f"Cloud Storage on {settings.storage_endpoint}")
        _print_kept(console, emulator.kept)
        for out in stockouts:
            emulator.faults.stockout(out.region, machine_type=out.machine_type, spot=out.spot, queued=out.queued)
            console.print(f"Out of stock: {escape(str(out))} (its jobs "
                          + ("stay QUEUED)" if out.queued else "fail with RESOURCE_EXHAUSTED)"))
        console.print("Replicas run " + (f"on the Docker engine at {docker_host}" if docker_host
                                         else "as local processes"))
        console.print("Export these settings (before the process that uses them starts: gRPC reads "
                      "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH once):")
        console.print(escape(settings.exports()), soft_wrap=True)
        console.print("Then point Google's libraries at it:")
        console.print(escape(_snippet(settings)), soft_wrap=True)
        console.print("Press Ctrl-C to stop.", style="dim")
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        emulator.stop()
        console.print("tfcloud emulator stopped")


def _snippet(settings: object) -> str:
    """The Python lines a user pastes (docs/emulator.md shows the same forms)."""
    from tfcloud.emulator.server import EmulatorSettings

    assert isinstance(settings, EmulatorSettings)
    return "\n".join((
        "from google.auth.credentials import AnonymousCredentials",
        "from google.cloud import aiplatform",
        f'aiplatform.init(project="{settings.project}", location="{settings.location}", '
        f'api_endpoint="{settings.tls_endpoint}",',
        '                credentials=AnonymousCredentials(), staging_bucket="gs://BUCKET")',
        f'# GAPIC: aiplatform_v1.JobServiceClient(credentials=AnonymousCredentials(), '
        f'client_options={{"api_endpoint": "{settings.tls_endpoint}"}})',
    ))


if __name__ == "__main__":
    app()
