"""The launcher: a small Python file, rendered from ``templates/launcher.py.j2``, that each replica runs.

It marks the process as remote, beats for its supervisor (liveness: :mod:`tfcloud.replicas.supervisor`), dumps
every thread's stack on SIGUSR1 (:mod:`tfcloud.replicas.stacks`), masks the job's secret values in what its
process tree writes to fds 1 and 2 (:mod:`tfcloud.replicas.masking`, copied in), builds the chosen strategy from
``TF_CONFIG``, routes Keras to tf-keras where Keras 3 cannot train, and runs the user's script unchanged as
``__main__`` with the user's arguments exactly as given (no shell, nothing added).
"""

from __future__ import annotations

from pathlib import Path

from tfcloud._version import __version__
from tfcloud.entry.templates import render
from tfcloud.job.spec import JobSpec
from tfcloud.job.strategy import one_device_name
from tfcloud.replicas import masking
from tfcloud.replicas.stacks import STACKS_VAR
from tfcloud.replicas.supervisor import BEAT_INTERVAL_S, HEARTBEAT_VAR

__all__ = ["LAUNCHER_NAME", "render_launcher"]

#: The file name the launcher gets in a build context or a local job's directory.
LAUNCHER_NAME = "tfcloud_launcher.py"


def render_launcher(spec: JobSpec, *, script: str) -> str:
    """The launcher's text for ``spec``. ``script`` is the script the replica runs: a path relative to the
    launcher's own directory (in an image, where both sit in the image's work dir; a converted notebook
    copied next to the launcher) or an absolute path (the user's script in a local run)."""
    return render(
        "launcher.py.j2",
        version=__version__,
        strategy=spec.strategy.value,
        strategy_class=spec.strategy.tf_class,
        strategy_reason=spec.strategy_reason,
        device=one_device_name(spec.chief.machine),
        script=script,
        # a comment's text: a name whose bytes are not UTF-8 (a local run takes it) shows them escaped
        script_name=spec.entry_point.name.encode("utf-8", errors="backslashreplace").decode("utf-8"),
        heartbeat_var=HEARTBEAT_VAR,
        beat_interval=f"{BEAT_INTERVAL_S:g}",
        stacks_var=STACKS_VAR,
        secrets=bool(spec.secrets),
        # with secrets: the masker, copied in (a replica may have no tfcloud to import)
        masking=Path(masking.__file__).read_text(encoding="utf-8").rstrip("\n") if spec.secrets else "",
        data=bool(spec.data),
    )
