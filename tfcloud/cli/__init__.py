"""The ``tfcloud`` command: thin typer commands over the SDK, one module per command family.

- :mod:`tfcloud.cli._app`: the application, help panels and the one error handler (:func:`main`);
- :mod:`tfcloud.cli._options`: options shared by commands, and the target flags generated from the targets'
  option specs;
- :mod:`tfcloud.cli.jobs` (``submit``, ``build``), :mod:`tfcloud.cli.tune`, :mod:`tfcloud.cli.inspect`
  (``status``, ``logs``, ``cancel``, ``artifacts``, ``tensorboard``, ``list``, ``cost``),
  :mod:`tfcloud.cli.machines`, :mod:`tfcloud.cli.ui` (``tfcloud ui``, the dashboard), :mod:`tfcloud.cli.doctor`
  (``tfcloud doctor``), :mod:`tfcloud.cli.docs` (``tfcloud docs``), the ``cluster`` group
  (:mod:`tfcloud.cli.cluster`: Vertex AI persistent resources) and the ``emulator`` group
  (:mod:`tfcloud.emulator.cli`).
"""

from tfcloud.cli._app import app, main

__all__ = ["app", "main"]


# The command families, in the order `tfcloud --help` lists their commands; each module is imported when one of
# its commands runs (or --help lists them).
app.add_lazy_commands("tfcloud.cli.jobs", "submit", "build")
app.add_lazy_commands("tfcloud.cli.tune", "tune")
app.add_lazy_commands("tfcloud.cli.machines", "machines")
app.add_lazy_commands("tfcloud.cli.inspect", "status", "stacks", "logs", "cancel", "artifacts", "tensorboard",
                         "list", "cost")
app.add_lazy_commands("tfcloud.cli.ui", "ui")
app.add_lazy_commands("tfcloud.cli.doctor", "doctor")
app.add_lazy_commands("tfcloud.cli.docs", "docs")
app.add_lazy_group("emulator", "tfcloud.emulator.cli:app", help="Run the offline Google Cloud emulator.")
app.add_lazy_group("cluster", "tfcloud.cli.cluster:cluster_app",
                   help="Vertex AI persistent resources: clusters that jobs run on with --persistent-resource ID.")

