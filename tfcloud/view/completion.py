"""Shell completion for the ``tfcloud`` command's values: strategies, job states, machine names and job ids.

Each function takes what the user typed so far and returns ``(value, description)`` pairs that start with it
(typer's ``autocompletion=`` callbacks; bash shows the values, zsh and fish the descriptions too). They run
at every Tab press, so they import only what they list, and a completion never raises: an unreadable state
dir completes nothing.
"""

# No `from __future__ import annotations`: typer reads these functions' annotations at every start-up, and
# evaluating them from strings costs more than the functions' whole module.

__all__ = ["STATES", "STRATEGIES", "job_ids", "machine_names", "states", "strategies"]

#: What ``--strategy`` accepts (tfcloud.job.spec.Strategy's values, with "auto"; tests check they agree).
STRATEGIES = {
    "auto": "choose from the cluster (the default)",
    "one_device": "one device (OneDeviceStrategy)",
    "mirrored": "the chief's GPUs (MirroredStrategy)",
    "multi_worker_mirrored": "a chief and workers (MultiWorkerMirroredStrategy)",
    "parameter_server": "workers and parameter servers (ParameterServerStrategy)",
    "tpu": "a TPU (TPUStrategy)",
    "none": "the script sets up its own",
}
#: What ``--state`` accepts (tfcloud.job.states.JobState's values but "unknown"; tests check they agree).
STATES = ("queued", "provisioning", "running", "succeeded", "failed", "cancelling", "cancelled")


def strategies(incomplete: str) -> list[tuple[str, str]]:
    return [(name, help_) for name, help_ in STRATEGIES.items() if name.startswith(incomplete.lower())]


def states(incomplete: str) -> list[tuple[str, str]]:
    return [(name, f"jobs that are {name}") for name in STATES if name.startswith(incomplete.lower())]


def machine_names(incomplete: str) -> list[tuple[str, str]]:
    """The catalog's names (``tfcloud machines``), with "auto"; matched case-insensitively (names are upper
    case, and ``--chief-config t4_1x`` is accepted)."""
    from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS

    typed = incomplete.upper()
    found = [("auto", "chosen from the cluster (the default)")] if "AUTO".startswith(typed) else []
    for name, m in COMMON_MACHINE_CONFIGS.items():
        if name.startswith(typed):
            accel = "" if m.accelerator_count == 0 else f", {m.accelerator_count} x {m.accelerator_type.name}"
            found.append((name, m.machine_type + accel))
    return found


def job_ids(incomplete: str) -> list[tuple[str, str]]:
    """The local jobs in the state dir, newest first: a directory listing (no job file is read)."""
    from tfcloud.errors import TfcloudError

    try:
        from tfcloud.flow.settings import resolve_settings
        from tfcloud.records.statedir import jobs_dir, state_dir

        found_dir = jobs_dir(state_dir(resolve_settings()))
        found = [(d.stat().st_mtime, d.name) for d in found_dir.iterdir()
                 if d.name.startswith(incomplete) and d.is_dir()]
    except (OSError, TfcloudError):
        return []
    return [(name, "local job") for _, name in sorted(found, reverse=True)]
