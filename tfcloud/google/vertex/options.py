"""The Vertex AI target's capacity, TensorBoard and experiment options: one small check per option, and one for
the combinations Vertex AI refuses (each refused here first, naming both options, before anything is built).

- ``scheduling`` (``Scheduling.strategy``): ``standard``, ``spot`` or ``flex-start``; ``spot=True`` is the older
  spelling of ``scheduling="spot"``.
- ``max_wait`` (``Scheduling.max_wait_duration``): how long a ``flex-start`` job waits for its VMs.
- ``reservation`` (``MachineSpec.reservation_affinity`` of every pool): ``any``, ``none``, or a reservation.
- ``disable_retries`` (``Scheduling.disable_retries``).
- ``persistent_resource`` (``CustomJobSpec.persistent_resource_id``).
- ``tensorboard`` (``CustomJobSpec.tensorboard``), ``experiment`` / ``experiment_run``
  (``CustomJobSpec.experiment`` / ``experiment_run``).

Pure functions of their arguments (no Google import): the Vertex AI target's option specs call the ``option_*``
functions (``(name, value) -> value``: each option alone), its ``check`` calls :func:`check_rules` and its
``check_job`` :func:`check_pools`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tfcloud.config.digits import is_ascii_digits
from tfcloud.errors import ValidationError
from tfcloud.google.rules.fields import FLEX_START
from tfcloud.google.vertex.place import SchedulingStrategy
from tfcloud.targets._base import LazyPattern

if TYPE_CHECKING:
    from tfcloud.google.vertex.place import VertexSetup
    from tfcloud.job.spec import JobSpec

__all__ = [
    "DWS_ACCELERATORS",
    "FALLBACK_KEYS",
    "MAX_FALLBACKS",
    "MAX_WAIT_LIMIT_S",
    "RESERVATION_KEY",
    "SchedulingStrategy",
    "check_capacity",
    "check_experiment",
    "check_experiment_run",
    "check_max_wait",
    "check_persistent_resource",
    "check_pools",
    "check_requirements",
    "check_reservation",
    "check_rules",
    "check_scheduling",
    "check_tensorboard",
    "expand_experiment",
    "expand_experiment_run",
    "expand_reservation",
    "expand_tensorboard",
    "option_experiment",
    "option_experiment_run",
    "option_fallback",
    "option_fallback_after",
    "option_max_wait",
    "option_persistent_resource",
    "option_reservation",
    "option_scheduling",
    "option_tensorboard",
    "persistent_resource_id",
]

#: ``ReservationAffinity.key`` that names one reservation (its ``values``: the reservation's full name).
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
#: The GPUs the Dynamic Workload Scheduler (FLEX_START) serves, by Vertex AI's accelerator names, its longest wait
#: and a FLEX_START job's longest timeout (7 days): Google's rules table, :data:`tfcloud.google.rules.FLEX_START`.
DWS_ACCELERATORS = FLEX_START.accelerators
MAX_WAIT_LIMIT_S = FLEX_START.max_wait_s
DWS_TIMEOUT_LIMIT_S = FLEX_START.max_timeout_s
METADATA_STORE = "default"  # experiments live in the region's default metadata store

_NAME = r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?"  # RFC 1035 (reservations, persistent resources)
_ZONE = r"[a-z]+-[a-z]+[0-9]+-[a-z]"
_PROJECT = r"[a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]+"
_RESERVATION = LazyPattern(rf"^projects/(?:{_PROJECT})/zones/(?P<zone>{_ZONE})/reservations/{_NAME}$")
_ZONE_NAME = LazyPattern(rf"^(?P<zone>{_ZONE})/(?P<name>{_NAME})$")
_PERSISTENT = LazyPattern(rf"^projects/(?P<project>{_PROJECT})/locations/(?P<region>[a-z0-9-]+)/persistentResources/"
                         rf"(?P<id>{_NAME})$")
_PERSISTENT_ID = LazyPattern(rf"^{_NAME}$")
_TENSORBOARD = LazyPattern(rf"^projects/(?:{_PROJECT})/locations/(?P<region>[a-z0-9-]+)/tensorboards/[0-9]+$")
_EXPERIMENT_NAME = r"[a-z0-9][a-z0-9-]{0,127}"
_EXPERIMENT = LazyPattern(rf"^(?P<store>projects/(?:{_PROJECT})/locations/(?P<region>[a-z0-9-]+)/metadataStores/"
                         rf"[a-z0-9-]+)/contexts/(?P<name>{_EXPERIMENT_NAME})$")
_SHORT_EXPERIMENT = LazyPattern(rf"^{_EXPERIMENT_NAME}$")


_FLEX = SchedulingStrategy.FLEX_START.flag


def check_scheduling(value: object, spot: object) -> SchedulingStrategy | None:
    """``scheduling`` (``standard``, ``spot``, ``flex-start``; the API's names are accepted too) with ``spot``,
    its older spelling: both may be given only when they agree."""
    if not isinstance(spot, bool):
        raise ValidationError("spot", "a bool", spot)
    if value is None:
        return SchedulingStrategy.SPOT if spot else None
    expected = "one of " + ", ".join(s.flag for s in SchedulingStrategy)
    if isinstance(value, SchedulingStrategy):
        strategy = value
    elif isinstance(value, str) and value.strip().upper().replace("-", "_") in SchedulingStrategy.__members__:
        strategy = SchedulingStrategy[value.strip().upper().replace("-", "_")]
    else:
        raise ValidationError("scheduling", expected, value)
    if spot and strategy is not SchedulingStrategy.SPOT:
        raise ValidationError("scheduling", '"spot" when spot is set (--spot is --scheduling spot), or spot left '
                              "unset", strategy.flag,
                              hint="Give one of --spot and --scheduling (spot= and scheduling= in run()).")
    return strategy


def _seconds(field: str, value: object, expected: str) -> int:
    from tfcloud.config.digits import ascii_int, parse_duration

    seconds: float | None
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str):  # ASCII digits only: "²".isdigit() is True, and int("²") raises
        seconds = ascii_int(value)
        if seconds is None:
            duration = parse_duration(value.strip(" "))
            seconds = duration if duration is not None and duration.is_integer() else None  # inf is not
    else:
        seconds = None
    if seconds is None:
        raise ValidationError(field, expected, value)
    if not 0 <= seconds <= MAX_WAIT_LIMIT_S:
        raise ValidationError(field, expected, value)
    return int(seconds)


def check_max_wait(value: object, strategy: SchedulingStrategy | None) -> int | None:
    """``max_wait``: a duration (``90s``, ``30m``, ``6h``, ``1d``, ``1h30m``) or a number of seconds, 0 to 14 days
    (0: wait as long as it takes); only with ``scheduling="flex-start"``, the one strategy that waits."""
    if value is None:
        return None
    seconds = _seconds("max_wait", value, "a duration such as 30m, 6h or 1d (or seconds), at most 14 days; "
                                          "0 waits as long as it takes")
    if strategy is not SchedulingStrategy.FLEX_START:
        raise ValidationError(
            "max_wait", f'to be given only with scheduling="{_FLEX}" (Scheduling.max_wait_duration is how long a '
            "FLEX_START job waits for its VMs)", f"max_wait={value!r} with scheduling="
            f"{strategy.flag if strategy else 'unset'}".join("<>"),
            hint=f"Add --scheduling {_FLEX}, or leave out --max-wait.")
    return seconds


def persistent_resource_id(value: str) -> str:
    """A persistent resource's ID, from its ID or full name."""
    return value.rsplit("/", 1)[-1]


def check_reservation(value: object, *, region: str | None) -> str | None:
    """``reservation``: ``any`` (``ANY_RESERVATION``), ``none`` (``NO_RESERVATION``), a reservation's full name
    (``projects/P/zones/Z/reservations/NAME``) or ``ZONE/NAME`` (in the job's project). Its zone must be in the
    job's region. A bare NAME is refused: the API needs the zone."""
    if value is None:
        return None
    expected = ('"any", "none", ZONE/NAME or projects/PROJECT/zones/ZONE/reservations/NAME (a Compute Engine '
                "reservation)")
    if not isinstance(value, str):
        raise ValidationError("reservation", expected, value)
    text = value.strip()
    if text.lower() in ("any", "none"):
        return text.lower()
    match = _RESERVATION.match(text) or _ZONE_NAME.match(text)
    if match is None:
        hint = None
        if re.fullmatch(_NAME, text):
            hint = f"Give the reservation's zone too, e.g. --reservation {region or 'us-central1'}-a/{text}."
        raise ValidationError("reservation", expected, value, hint=hint)
    zone = match["zone"]
    if region is not None and zone.rsplit("-", 1)[0] != region:
        raise ValidationError("reservation", f"a reservation in a zone of the job's region {region}", value,
                              hint="Vertex AI consumes reservations in the job's region only: pass --region "
                                   f"{zone.rsplit('-', 1)[0]}, or a reservation in {region}.")
    return text


def expand_reservation(value: str, project: str) -> str:
    """``ZONE/NAME`` as the reservation's full name in ``project``; a full name as it is."""
    match = _ZONE_NAME.match(value)
    if match is None:
        return value
    return f"projects/{project}/zones/{match['zone']}/reservations/{match['name']}"


def _resource_name(field: str, value: object, *, expected: str, full: LazyPattern, what: str, region: str | None,
                   short: LazyPattern | None = None, instead: str = "") -> str | re.Match[str] | None:
    """The one rule the persistent resource, TensorBoard and experiment options share: None; a short name
    (``short``: as it is); or a full resource name (``projects/P/locations/REGION/...``, pattern ``full`` with a
    ``region`` group) in the job's ``region`` (Vertex AI looks each up in the job's own region), as its match.
    ``instead``: the hint's other way out."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(field, expected, value)
    if short is not None and short.match(value):
        return value
    match = full.match(value)
    if match is None:
        raise ValidationError(field, expected, value)
    if region is not None and match["region"] != region:
        raise ValidationError(field, f"{what} in the job's region {region}", value,
                              hint=f"Pass --region {match['region']}{instead}.")
    return match


def check_persistent_resource(value: object, *, region: str | None, project: str | None = None) -> str | None:
    """``persistent_resource``: a PersistentResource's ID (``tfcloud cluster create``), or its full name
    ``projects/P/locations/REGION/persistentResources/ID`` in the job's project and region. Returns the ID (the API
    field is ``persistent_resource_id``: Vertex AI looks for it in the job's own project and region, so a name of
    another project or region would run the job on a same-named cluster there: refused). A project *number* in
    the name cannot be told from the job's project id without a call: it is taken as the job's."""
    found = _resource_name("persistent_resource", value, expected=(
        "a persistent resource ID (1 to 63 lowercase letters, digits or '-', starting with a letter) or "
        "projects/PROJECT/locations/REGION/persistentResources/ID"), full=_PERSISTENT, short=_PERSISTENT_ID,
        what="a persistent resource", region=region)
    if not isinstance(found, re.Match):
        return found
    if project is not None and not found["project"].isdigit() and found["project"] != project:
        raise ValidationError("persistent_resource", f"a persistent resource in the job's project {project}", value,
                              hint=f"Pass --project {found['project']}, or a cluster of {project} (a job runs on "
                                   "a cluster of its own project only).")
    return found["id"]


def check_tensorboard(value: object, *, region: str | None) -> str | None:
    """``tensorboard``: a Vertex AI TensorBoard instance, ``projects/P/locations/REGION/tensorboards/ID`` or its
    numeric ID (in the job's project and region)."""
    if value is not None and is_ascii_digits(value):
        return str(value)
    found = _resource_name("tensorboard", value, full=_TENSORBOARD, what="a TensorBoard instance", region=region,
                           expected="a TensorBoard instance: projects/PROJECT/locations/REGION/tensorboards/ID or "
                                    "its numeric ID", instead=f", or an instance in {region}")
    return found.string if isinstance(found, re.Match) else found


def expand_tensorboard(value: str, parent: str) -> str:
    """A numeric ID as the instance's full name under ``parent`` (``projects/P/locations/L``)."""
    return f"{parent}/tensorboards/{value}" if is_ascii_digits(value) else value


def check_experiment(value: object, *, region: str | None) -> str | None:
    """``experiment``: a Vertex AI Experiment's name (lowercase letters, digits, '-'; up to 128) or its full name
    ``projects/P/locations/REGION/metadataStores/STORE/contexts/NAME``."""
    found = _resource_name("experiment", value, full=_EXPERIMENT, short=_SHORT_EXPERIMENT, what="an experiment",
                           region=region, expected="an experiment name (lowercase letters, digits and '-', up to "
                                                   "128) or projects/PROJECT/locations/REGION/metadataStores/"
                                                   "default/contexts/NAME")
    return found.string if isinstance(found, re.Match) else found


def check_experiment_run(value: object, experiment: str | None, *, region: str | None = None) -> str | None:
    """``experiment_run``: a run's name (or its full context name); only with ``experiment``, the run's
    experiment."""
    if value is None:
        return None
    if experiment is None:
        raise ValidationError("experiment_run", "to be given with experiment (a run belongs to an experiment)",
                              value, hint="Add --experiment NAME, or leave out --experiment-run.")
    expected = "a run name (lowercase letters, digits and '-') or its full context name"
    if not isinstance(value, str) or not (_SHORT_EXPERIMENT.match(value) or _EXPERIMENT.match(value)):
        raise ValidationError("experiment_run", expected, value)
    run = _EXPERIMENT.match(value)
    if run is not None and experiment:  # a run's context is "{experiment's context}-{run}", in its metadata store
        owner = _EXPERIMENT.match(experiment)
        short = owner["name"] if owner is not None else experiment
        if not run["name"].startswith(short + "-") or (owner is not None and owner["store"] != run["store"]):
            raise ValidationError("experiment_run", f"a run of the experiment {short} (its context name starts "
                                  f"with {short}-)", value, hint="Give the run's own name, or a run of --experiment.")
        if region is not None and run["region"] != region:
            raise ValidationError("experiment_run", f"a run in the job's region {region}", value,
                                  hint=f"Pass --region {run['region']}.")
    return value


def expand_experiment(value: str, parent: str) -> str:
    """An experiment name as its context under ``parent``'s default metadata store."""
    if value.startswith("projects/"):
        return value
    return f"{parent}/metadataStores/{METADATA_STORE}/contexts/{value}"


def expand_experiment_run(value: str, experiment: str, parent: str) -> str:
    """A run name as its context: ``{experiment's context}-{run}`` (Vertex AI's naming)."""
    if value.startswith("projects/"):
        return value
    return f"{expand_experiment(experiment, parent)}-{value}"


def check_capacity(*, strategy: SchedulingStrategy | None, reservation: str | None, persistent_resource: str | None,
                   disable_retries: object, restart_on_worker_restart: bool, max_restarts: int | None,
                   timeout_s: int | None, machines: Sequence[tuple[str, str, str]]) -> None:
    """The combinations Vertex AI refuses, refused before anything is built; each message names both options.

    ``machines``: (option, machine type, accelerator name) of every pool, for FLEX_START's requirements (one
    machine configuration for every pool, a GPU it serves, a timeout of at most 7 days)."""
    if not isinstance(disable_retries, bool):
        raise ValidationError("disable_retries", "a bool", disable_retries)
    if disable_retries and restart_on_worker_restart:
        raise ValidationError("disable_retries", "to be left unset with restart_on_worker_restart (Vertex AI's "
                              "disable_retries turns restart_job_on_worker_restart off)", "<both given>",
                              hint="Give one of --disable-retries and --restart-on-worker-restart.")
    if disable_retries and max_restarts:
        raise ValidationError("disable_retries", "to be left unset with max_restarts ≥ 1 (it restarts nothing)",
                              f"<disable_retries with max_restarts={max_restarts}>",
                              hint="Give one of --disable-retries and --max-restarts.")
    reserved = reservation not in (None, "none")
    if reserved and strategy is SchedulingStrategy.SPOT:
        raise ValidationError("reservation", '"none" or unset with scheduling="spot" (Spot VMs do not consume '
                              "reservations)", reservation,
                              hint="Give one of --reservation and --spot/--scheduling spot.")
    if reserved and strategy is SchedulingStrategy.FLEX_START:
        raise ValidationError("reservation", f'"none" or unset with scheduling="{_FLEX}" (the Dynamic Workload '
                              "Scheduler does not use reservations)", reservation,
                              hint=f"Give one of --reservation and --scheduling {_FLEX}.")
    if persistent_resource is not None:
        if strategy in (SchedulingStrategy.SPOT, SchedulingStrategy.FLEX_START):
            assert strategy is not None
            raise ValidationError("persistent_resource", f'to be left unset with scheduling="{strategy.flag}" (a '
                                  "job on a persistent resource runs on its VMs, which are already provisioned)",
                                  persistent_resource,
                                  hint="Give one of --persistent-resource and --scheduling/--spot.")
        if reserved:
            raise ValidationError("persistent_resource", "to be left unset with reservation (Vertex AI does not "
                                  "run jobs that consume a reservation on a persistent resource)",
                                  persistent_resource, hint="Give one of --persistent-resource and --reservation.")
    if strategy is SchedulingStrategy.FLEX_START and machines:
        _check_flex_start(timeout_s, machines)


def _check_flex_start(timeout_s: int | None, machines: Sequence[tuple[str, str, str]]) -> None:
    if timeout_s is not None and timeout_s > DWS_TIMEOUT_LIMIT_S:
        raise ValidationError("timeout", f'at most {DWS_TIMEOUT_LIMIT_S} seconds (7 days) with scheduling="{_FLEX}"',
                              timeout_s, hint=f"Lower --timeout, or leave out --scheduling {_FLEX}.")
    first = machines[0]
    for option, machine_type, accelerator in machines:
        if accelerator not in DWS_ACCELERATORS:
            raise ValidationError(option, f'a machine with one of the GPUs scheduling="{_FLEX}" serves ('
                                  + ", ".join(sorted(DWS_ACCELERATORS)) + ")", f"{machine_type} ({accelerator})",
                                  hint=f"Pick a machine from `tfcloud machines`, or leave out --scheduling {_FLEX}.")
        if (machine_type, accelerator) != first[1:]:
            raise ValidationError(option, f'the same machine as {first[0]} with scheduling="{_FLEX}" (the Dynamic '
                                  "Workload Scheduler provisions one machine configuration for every pool)",
                                  f"{machine_type} ({accelerator})",
                                  hint=f"Give every pool the same machine config, or leave out --scheduling {_FLEX}.")


def check_requirements(*, tensorboard: str | None, reservation: str | None, service_account: str | None,
                       output_dir: str | None, staging_bucket: str | None) -> None:
    """What Vertex AI needs beside an option: a TensorBoard instance takes the logs the job writes under its
    base output directory (``AIP_TENSORBOARD_LOG_DIR``) and uploads them as the job's service account (the SDK:
    "service_account is required with provided tensorboard"). A reservation needs no service account of its own
    (Google states no such rule). The SDK's experiment rules (no TensorBoard beside an experiment; an experiment
    needs a service account) are checked on the request, with Google's other rules
    (:func:`tfcloud.google.rules.check_sdk_rules`)."""
    if tensorboard is not None and service_account is None:
        raise ValidationError("service_account", "a service account when tensorboard is given (Vertex AI uploads "
                              "the TensorBoard logs as the job's service account)", None,
                              hint="Add --service-account NAME@PROJECT.iam.gserviceaccount.com, or leave out "
                                   "--tensorboard.")
    if tensorboard is not None and output_dir is None and staging_bucket is None:
        raise ValidationError("base_output_dir", "a gs:// directory when tensorboard is given (the logs are read "
                              "from its logs/, AIP_TENSORBOARD_LOG_DIR)", None,
                              hint="Add --output-dir gs://BUCKET/PATH (or set TFCLOUD_STAGING_BUCKET), or leave "
                                   "out --tensorboard.")


# -- the option specs' checks: (option name, value) -> the field's value ---------------------------------------
def option_scheduling(name: str, value: object) -> SchedulingStrategy | None:
    return check_scheduling(value, False)


def option_max_wait(name: str, value: object) -> int | None:
    return None if value is None else check_max_wait(value, SchedulingStrategy.FLEX_START)


def option_reservation(name: str, value: object) -> str | None:
    return check_reservation(value, region=None)


def option_persistent_resource(name: str, value: object) -> str | None:
    check_persistent_resource(value, region=None)
    return value  # type: ignore[return-value]  # as given: check_rules compares a full name's project and region


def option_tensorboard(name: str, value: object) -> str | None:
    return check_tensorboard(value, region=None)


def option_experiment(name: str, value: object) -> str | None:
    return check_experiment(value, region=None)


def option_experiment_run(name: str, value: object) -> str | None:
    return check_experiment_run(value, "")


def check_rules(target: VertexSetup, *, region: str | None, staging_bucket: str | None,
                project: str | None = None) -> None:
    """The rules between a VertexTarget's options (``region``: the job's, from the option or the settings;
    ``staging_bucket``: the settings', which gives a job its output directory when it has none)."""
    strategy = target.scheduling
    if target.max_wait_s is not None and strategy is not SchedulingStrategy.FLEX_START:
        raise ValidationError(
            "max_wait", f'to be given only with scheduling="{_FLEX}" (Scheduling.max_wait_duration is how long a '
            "FLEX_START job waits for its VMs)",
            f"<max_wait={target.max_wait_s}s with scheduling={strategy.flag if strategy else 'unset'}>",
            hint=f"Add --scheduling {_FLEX}, or leave out --max-wait.")
    check_reservation(target.reservation, region=region)
    check_persistent_resource(target.persistent_resource, region=region, project=project)
    check_tensorboard(target.tensorboard, region=region)
    check_experiment(target.experiment, region=region)
    check_experiment_run(target.experiment_run, target.experiment, region=region)
    check_capacity(strategy=strategy, reservation=target.reservation,
                   persistent_resource=target.persistent_resource, disable_retries=target.disable_retries,
                   restart_on_worker_restart=target.restart_on_worker_restart, max_restarts=target.max_restarts,
                   timeout_s=target.timeout_s, machines=())
    check_requirements(tensorboard=target.tensorboard, reservation=target.reservation,
                       service_account=target.service_account, output_dir=target.base_output_dir,
                       staging_bucket=staging_bucket)


def check_pools(target: VertexSetup, spec: JobSpec) -> None:
    """The rules between a VertexTarget's options and the job's pools (FLEX_START's machines and timeout)."""
    if target.scheduling is SchedulingStrategy.FLEX_START:
        _check_flex_start(target.timeout_s, [(f"{p.role.value}_config", p.machine.machine_type,
                                              p.machine.accelerator_type.name) for p in spec.pools])


# -- --fallback (tfcloud.google.vertex.fallback: what the submission does with them) ----------------------------
#: The fields an alternative may replace (the issue's list: where, on what, on which capacity).
FALLBACK_KEYS = ("region", "chief_config", "worker_config", "spot", "reservation")
#: At most this many alternatives (each one is a job Vertex AI is asked for in turn).
MAX_FALLBACKS = 5
_FALLBACK_EXPECTED = ("KEY=VALUE[,KEY=VALUE] alternatives, KEY one of " + ", ".join(FALLBACK_KEYS)
             + " (e.g. region=europe-west4,spot=true)")


def _fallback_one(index: int, value: object) -> dict[str, object]:
    field = f"fallback[{index}]"
    if isinstance(value, str):
        pairs: dict[str, object] = {}
        for item in (part.strip() for part in value.split(",")):
            key, sep, text = item.partition("=")
            if not sep or not key.strip() or not text.strip():
                raise ValidationError(field, _FALLBACK_EXPECTED, value,
                                      hint="--fallback region=europe-west4 (repeatable).")
            if key.strip() in pairs:
                raise ValidationError(field, "each KEY once", value)
            pairs[key.strip()] = text.strip()
        value = pairs
    if not isinstance(value, Mapping) or not value:
        raise ValidationError(field, _FALLBACK_EXPECTED, value, hint="run(fallback=[{\"region\": \"europe-west4\"}]).")
    unknown = [key for key in value if key not in FALLBACK_KEYS]
    if unknown:
        raise ValidationError(field, "keys among " + ", ".join(FALLBACK_KEYS), ", ".join(map(str, unknown)),
                              hint="An alternative replaces where the job runs and on what; its other options "
                                   "stay the job's.")
    out: dict[str, object] = {}
    for key, item in value.items():
        if key == "spot":
            words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
            spot = words.get(item.lower()) if isinstance(item, str) else item
            if not isinstance(spot, bool):
                raise ValidationError(f"{field}.spot", "true or false", item)
            out["spot"] = spot
            continue
        elif not isinstance(item, str) or not item.strip():
            raise ValidationError(f"{field}.{key}", "text" + (" (a name from `tfcloud machines`)"
                                                             if key.endswith("_config") else ""), item)
        out[str(key)] = item
    return out


def option_fallback(name: str, value: object) -> tuple[tuple[tuple[str, object], ...], ...]:
    """``--fallback`` (repeatable), ``run(fallback=[...])`` or ``TFCLOUD_FALLBACK`` (alternatives separated by
    ``;``) as a tuple of alternatives, each (KEY, value) pairs; the values are checked with the job
    (:meth:`tfcloud.google.vertex.value.VertexOptions.alternatives`)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part for part in value.split(";") if part.strip()]
    if isinstance(value, Mapping) or not isinstance(value, Sequence) or isinstance(value, bytes):
        raise ValidationError(name, "a list of alternatives (" + _FALLBACK_EXPECTED + ")", value)
    if len(value) > MAX_FALLBACKS:
        raise ValidationError(name, f"at most {MAX_FALLBACKS} alternatives", len(value))
    return tuple(tuple(_fallback_one(i, item).items()) for i, item in enumerate(value, 1))


def option_fallback_after(name: str, value: object) -> int | None:
    """``--fallback-after DURATION``: how long an attempt may stay QUEUED or PENDING before the next is tried."""
    from tfcloud.config.digits import parse_duration

    if value is None:
        return None
    seconds = value if isinstance(value, int) and not isinstance(value, bool) else parse_duration(value)
    if seconds is None or not 1 <= seconds <= 7 * 86400:
        raise ValidationError(name, "a duration from 1s to 7d (90s, 10m, 2h)", value)
    return int(seconds)
