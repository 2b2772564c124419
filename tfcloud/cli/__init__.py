"""The ``tfcloud`` command: thin typer commands over the SDK, one module per command family.

- :mod:`tfcloud.cli._app`: the application, help panels and the one error handler (:func:`main`);
- :mod:`tfcloud.cli._options`: options shared by commands, and the target flags generated from the targets'
  option specs;
- :mod:`tfcloud.cli.jobs` (``submit``, ``build``), :mod:`tfcloud.cli.tune`, :mod:`tfcloud.cli.inspect`
  (``status``, ``logs``, ``cancel``, ``artifacts``, ``tensorboard``, ``list``), :mod:`tfcloud.cli.machines`,
  :mod:`tfcloud.cli.ui` (``tfcloud ui``, the dashboard), the ``cluster`` group (:mod:`tfcloud.cli.cluster`:
  Vertex AI persistent resources) and the ``emulator`` group (:mod:`tfcloud.emulator.cli`).
"""

from tfcloud.cli._app import app, main

# The command families, in the order `tfcloud --help` lists their commands.
from tfcloud.cli import jobs, tune, machines, inspect, ui  # isort: skip

__all__ = ["app", "main"]


def _mount_subcommands() -> None:
    try:
        from tfcloud.emulator.cli import app as emulator_app
    except ImportError:  # pragma: no cover - the emulator package is part of tfcloud
        return
    app.add_typer(emulator_app, name="emulator", help="Run the offline Google Cloud emulator.")
    from tfcloud.cli.cluster import cluster_app

    app.add_typer(cluster_app, name="cluster")


_mount_subcommands()
del inspect, jobs, machines, tune, ui
