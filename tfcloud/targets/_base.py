"""What a target is, for the built-in targets and for plug-ins alike: :class:`Option` and :class:`Target`.

A target is a frozen value (XManager's executor) whose class says everything the rest of tfcloud needs to know
about it, so that nothing outside the target's own package branches on its name:

- ``name``, ``title``: the registry's name (``run(target="vertex")``, ``--target vertex``) and how people read it;
- ``options``: the :class:`Option` specs it takes. The CLI's flags and help panels, ``run()``'s keyword check,
  the ``[tool.tfcloud]``/``TFCLOUD_*`` keys and the docs' option tables are generated from them;
  :meth:`Target.from_options` checks them, and the gate refuses every option the target does not take;
- ``id_prefix``, ``cancel_on_interrupt``, ``queues``, ``poll_interval``: its job ids and how a terminal follows
  its jobs;
- ``needs``: the optional extras its backend imports (checked before anything happens);
- ``backend``, ``tuner``: ``"module:attribute"`` strings, imported only when a job is submitted or tuned;
- ``doctor_checks``: ``"module:function"``, its lines of ``tfcloud doctor`` (imported only there);
- ``notices``: ``"module:function"``, what its verbs say besides their answer (Vertex AI: an idle cluster);
- :meth:`Target.describe_machine`, :meth:`Target.endpoint`, :meth:`Target.notes`: its rows in the plan.

A plug-in needs nothing from tfcloud but this module's two classes and the backend protocol
(:mod:`tfcloud.backends.base`); ``tfcloud docs architecture#adding-a-target`` walks one
through.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeAlias

from tfcloud.config.usertext import LazyPattern, check_bool, check_count, check_text, refuse_control
from tfcloud.errors import ValidationError
from tfcloud.google.cloud.place import GoogleCloud

if TYPE_CHECKING:
    from typing_extensions import Self

    from tfcloud.backends.base import JobHandle
    from tfcloud.config.value import Settings
    from tfcloud.google.catalog.machines import MachineConfig
    from tfcloud.google.catalog.prices import JobPrice
    from tfcloud.job.artifacts import PreparedJob
    from tfcloud.job.spec import JobSpec, PoolSpec
    from tfcloud.job.study import StudyHandle, StudyInfo, StudySpec

__all__ = [
    "GoogleCloud",
    "LazyPattern",
    "Option",
    "SubmitTrial",
    "Target",
    "Tuner",
    "check_bool",
    "check_count",
    "check_text",
    "refuse_control",
]

#: What follows a target's ``id_prefix`` in its job ids (:meth:`Target.owns_job_id`).
_ID_REST = LazyPattern(r"[a-z0-9][a-z0-9-]{0,119}")


class Option:
    """One option a target takes, written once: everything the edges need to offer it.

    - ``name``: the keyword of ``run()`` and the key of :class:`tfcloud.sdk.JobOptions` (``max_restarts``).
    - ``type``: what the command line converts its text to (``int``, ``float``, ``bool``: a flag, ``str``;
      ``list``: a repeatable flag, each use one text item).
    - ``help``: one sentence for ``--help`` and the docs' table.
    - ``flag``: the CLI flag (default ``--`` and the name with dashes); ``""``: not on the command line.
    - ``setting``: its key in ``[tool.tfcloud]`` and the user config (its variable is ``TFCLOUD_<KEY>``);
      None: not a setting. A setting from a file or variable applies to the targets that take it and is left
      alone by the others; only an option *given* to a target that does not take it is refused.
    - ``field``: the target value's field it fills (default: ``name``).
    - ``check``: the value (after the CLI's conversion) to the field's value; raises
      :class:`~tfcloud.errors.ValidationError` naming the option.
    - ``metavar``, ``choices``: how ``--help`` shows the value.
    - ``example``: a valid value, for the docs and for the contract test that runs every option on every target
      (tests/targets/test_contract.py): taken, it must show in the plan; not taken, refused.
    - ``example_with``: (option, value) pairs the example is given with, by ``run()`` keyword, for an option that
      acts only beside another (``max_wait`` beside ``scheduling="flex-start"``); a target option's pair is also
      its flag, a job option's ``--`` and its name with dashes.
    - ``fallback_env``: other tools' variables that give the setting when neither ``TFCLOUD_<KEY>`` nor a config
      file does (``RAY_ADDRESS``).
    - ``place``: whether it is part of the target's *place*, how the target is reached (a project, a region, an
      endpoint, a Ray address), rather than of a *job setup* (how one job runs there: machines, capacity,
      restarts, buckets it writes to). Every verb takes the place; only the verbs that start jobs (``submit``,
      ``run()``, ``plan``, ``build``, ``tune``) take the job setup, and the verbs that talk to existing jobs or
      to the place (``status``, ``logs``, ``cancel``, ``list``, ``artifacts``, ``tensorboard``, ``ui``,
      ``doctor``, ``cluster``) refuse it.
    """

    # A plain class, not a frozen dataclass: every command's start-up defines it (a dataclass costs ~1 ms there).
    __slots__ = ("check", "choices", "example", "example_with", "fallback_env", "field", "flag", "help", "metavar",
                 "name", "place", "setting", "type")

    name: str
    type: builtins.type
    help: str
    flag: str | None
    setting: str | None
    field: str | None
    check: Callable[[str, object], object] | None
    metavar: str | None
    choices: tuple[str, ...]
    example: object
    example_with: tuple[tuple[str, object], ...]
    fallback_env: tuple[str, ...]
    place: bool

    def __init__(self, *, name: str, type: builtins.type = str, help: str = "",
                 flag: str | None = None, setting: str | None = None, field: str | None = None,
                 check: Callable[[str, object], object] | None = None, metavar: str | None = None,
                 choices: tuple[str, ...] = (), example: object = None,
                 example_with: tuple[tuple[str, object], ...] = (), fallback_env: tuple[str, ...] = (),
                 place: bool = False) -> None:
        values = {"name": name, "type": type, "help": help, "flag": flag, "setting": setting, "field": field,
                  "check": check, "metavar": metavar, "choices": choices, "example": example,
                  "example_with": example_with, "fallback_env": fallback_env, "place": place}
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"Option is frozen: cannot set {key}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, key) for key in sorted(self.__slots__))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Option) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"Option(name={self.name!r}, type={self.type.__name__}, flag={self.cli_flag!r})"

    @property
    def cli_flag(self) -> str:
        """The flag as typer declares it: ``--spot``, or for a bool that is on by default ``--build/--no-build``."""
        return self.flag if self.flag is not None else "--" + self.name.replace("_", "-")

    def cli_args(self, value: object) -> list[str]:
        """The command-line words that give ``value`` (``--spot``; ``--no-build`` for False; ``--timeout 60``)."""
        if self.type is bool:
            on, _, off = self.cli_flag.partition("/")
            return [on] if value else ([off] if off else [])
        if self.type is list and self.cli_flag:  # a repeatable flag: once per item; an item of pairs as K=V,K=V
            return [word for item in value for word in (self.cli_flag, _item_text(item))]  # type: ignore[attr-defined]
        return [self.cli_flag, str(value)] if self.cli_flag else []

    def shown(self, value: object) -> object:
        """``value`` (the target's field) as the plan, its JSON and its sources show it: a list option's items as
        its flag takes them (``["region=europe-west4"]``), any other value as it is."""
        return self.cli_args(value)[1::2] if self.type is list and value else value

    @property
    def attribute(self) -> str:
        return self.field or self.name

    def from_text(self, text: str) -> object:
        """A value given as text (``-o KEY=VALUE``, a ``TFCLOUD_*`` variable) as this option's type (a control
        character refused first, before the text is stripped)."""
        refuse_control(self.name, text)
        if self.type is bool:
            lowered = text.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValidationError(self.name, "true or false", text)
        if self.type in (int, float):
            try:
                return self.type(text.strip())
            except ValueError:
                raise ValidationError(self.name, f"a number ({self.type.__name__})", text) from None
        return text

    def convert(self, value: object) -> object:
        """The value as the target's field holds it (``check``, else a type check). Text with a control character
        is refused first, whatever the check does next (strip, ``^...$``)."""
        refuse_control(self.name, value)
        if self.check is not None:
            return self.check(self.name, value)
        if value is None:
            return None
        if self.type is bool:
            return check_bool(self.name, value)
        if self.type is int:
            return check_count(self.name, value, maximum=None)
        if self.type is str:
            return check_text(self.name, value)
        if self.type is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValidationError(self.name, "a number", value)
            return float(value)
        return value


def _item_text(item: object) -> str:
    """One item of a list option as its flag takes it: ``K=V,K=V`` for (key, value) pairs (a bool as true/false)."""
    if isinstance(item, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in item):
        return ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in item)
    return str(item)


class Target:
    """The base of every target value. Subclasses are frozen, keyword-only dataclasses whose fields are the
    options' values; they set the class variables below and may override the methods. (The base itself is a
    plain class: it has no fields, and every command's start-up defines it.)"""

    name: ClassVar[str]
    title: ClassVar[str] = ""
    #: The options this target takes (see :class:`Option`).
    options: ClassVar[tuple[Option, ...]] = ()
    #: Job ids that start with this are this target's (``tfcloud status local-...``); None: no prefix (at
    #: most one target, Vertex AI, has none).
    id_prefix: ClassVar[str | None] = None
    #: How ``tfcloud status --help`` and an unknown id's message show this target's job ids (default: the
    #: prefix and ``...``).
    id_form: ClassVar[str | None] = None
    #: Tuning studies whose ids start with this are this target's (``study-...``); None: no prefix.
    study_prefix: ClassVar[str | None] = None
    #: Whether Ctrl-C while following cancels the job (local processes die with the terminal) or detaches.
    cancel_on_interrupt: ClassVar[bool] = False
    #: Whether its jobs wait for resources before they run (the terminal then says "Queued for 1m20s").
    queues: ClassVar[bool] = True
    #: Whether the active gcloud configuration's project and region are its defaults
    #: (``tfcloud docs settings#gclouds-configuration``).
    gcloud_defaults: ClassVar[bool] = False
    #: Seconds between two looks at a running study's state.
    poll_interval: ClassVar[float] = 5.0
    #: Where its replicas' stacks are seen when its handles cannot show them (``tfcloud stacks`` names it;
    #: ``{job_id}`` is the job's id).
    stacks_elsewhere: ClassVar[str] = ""
    #: The jobs of its whose handles show their stacks (:class:`~tfcloud.backends.base.Stacks`), as ``tfcloud
    #: stacks`` lists them when it refuses another target's job ("local, --container"); empty: none.
    stacks_shown: ClassVar[str] = ""
    #: ``(module, extra)`` pairs: what its backend imports, and the ``tfcloud[extra]`` that installs it.
    needs: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: ``"module:Class"`` of its backend (:class:`tfcloud.backends.base.Backend`), built as
    #: ``Class(target=<this value>, settings=<Settings>)``.
    backend: ClassVar[str]
    #: Whether its replicas can read ``env:`` and ``file:`` secret sources (``--secret``): they run where tfcloud
    #: runs, or on machines the user set up. False: Secret Manager versions only (:mod:`tfcloud.job.secretrefs`).
    local_sources: ClassVar[bool] = False
    #: Whether its replicas run on this machine, from this process's environment (local). Two rules follow from
    #: this one fact: an ``env:`` secret's variable must be set here, checked before anything happens (a dry run
    #: too), and ``--data`` directories are read where they are; else they are shipped to :meth:`data_store`.
    runs_here: ClassVar[bool] = False
    #: ``"module:Class"`` of its tuner, a class that keeps :class:`Tuner` (:mod:`tfcloud.sdk`'s
    #: ``tune`` builds it and passes ``submit_trial`` to its ``start``), or None: it runs no studies.
    tuner: ClassVar[str | None] = None
    #: ``"module:function"`` that lists the jobs it keeps but cannot attach to (a record missing or corrupt), as
    #: rows ``{"kind": "unreadable", "job_id", "why", "created"}`` the dashboard shows rather than drops; None:
    #: it keeps none.
    unreadable: ClassVar[str | None] = None
    #: ``"module:function"`` of its own ``tfcloud doctor`` lines (credentials, its endpoint, its address...):
    #: ``function(value, settings, *, needed, environ) -> list[Check]`` (:class:`tfcloud.targets._doctor.Check`;
    #: ``needed``: it is the chosen target, so a missing piece stops its jobs); None: none of its own.
    doctor_checks: ClassVar[str | None] = None
    #: ``"module:function"`` of what a verb that talked to the target says besides its answer (Vertex AI: its
    #: clusters idle longer than the ``cluster_idle_warn`` setting, once a day each): ``function(value, settings)
    #: -> list[str]``, called by :mod:`tfcloud.sdk` after ``status``/``logs``/``cancel``/``cost`` (``attached``),
    #: ``list`` and ``submit``; it must be cheap (it may look only now and then) and never raise for a warning.
    notices: ClassVar[str | None] = None
    @property
    def container(self) -> bool:
        """Whether its replicas run from the job's container image (the stages build one first)."""
        return False

    @property
    def packaged(self) -> bool:
        """Whether its replicas run from a Python package of the job's files instead (the stages make and upload
        it first: :func:`tfcloud.flow.pipeline.stage_package`)."""
        return False

    @property
    def ships_files(self) -> bool:
        """The job's files travel to where it runs (an image, a package): the launcher names the script
        relative to the build root. Else replicas run in the user's own directory."""
        return self.container

    @property
    def pushes_image(self) -> bool:
        """Whether its image goes to a registry (else it stays in the local engine)."""
        return self.container

    @property
    def emulated(self) -> bool:
        """Whether its jobs go to an emulator (Vertex AI's ``emulator_host``): nothing is billed, so no price is
        printed before a submission and none is confirmed (the plan still prices the job)."""
        return False

    def needs_for(self, *, strategy_runs_tensorflow: bool) -> tuple[tuple[str, str], ...]:
        """What a job of this value needs besides :attr:`needs` (``strategy_runs_tensorflow``: the launcher sets
        up a TensorFlow strategy)."""
        return ()

    @classmethod
    def owns_job_id(cls, job_id: str) -> bool:
        """Whether ``job_id`` is one of this target's job ids: :attr:`id_prefix`, then lowercase letters, digits
        and ``-`` (a target without a prefix overrides this)."""
        prefix = cls.id_prefix
        return bool(prefix) and job_id.startswith(prefix or "") and _ID_REST.fullmatch(
            job_id[len(prefix or ""):]) is not None

    @classmethod
    def job_id_form(cls) -> str:
        """This target's job ids, as a message shows them (``local-NAME-DATE-TIME-XXXX``)."""
        return cls.id_form or f"{cls.id_prefix or cls.name + ' '}..."

    @classmethod
    def place_options(cls) -> tuple[Option, ...]:
        """Its place: the options that say how it is reached (:attr:`Option.place`), all that the verbs which
        talk to existing jobs or to the place take."""
        return tuple(o for o in cls.options if o.place)

    @classmethod
    def job_options(cls) -> tuple[Option, ...]:
        """Its job setup: every other option, taken only by the verbs that start jobs."""
        return tuple(o for o in cls.options if not o.place)

    @classmethod
    def option(cls, name: str) -> Option | None:
        return next((o for o in cls.options if o.name == name), None)

    @classmethod
    def from_options(cls, options: Mapping[str, object], *, settings: Settings | None = None) -> Self:
        """The target value for ``options`` (option name → value; every one of them is this target's, the
        gate checked that): each is checked by its :class:`Option`, then :meth:`check` sees them together."""
        values: dict[str, Any] = {}
        for name, value in options.items():
            spec = cls.option(name)
            if spec is None:  # the gate refuses these first; a direct call gets the same message
                raise ValidationError(name, f"an option of the {cls.name} target ("
                                      + ", ".join(o.name for o in cls.options) + ")", value)
            values[spec.attribute] = spec.convert(value)
        known = {f.name for f in fields(cls) if f.init}  # type: ignore[arg-type]  # subclasses are dataclasses
        value = cls(**{k: v for k, v in values.items() if k in known})
        value.check(settings)
        return value

    def check(self, settings: Settings | None) -> None:
        """Rules between options, and against the settings (``settings`` None: a plan without them)."""

    def check_job(self, spec: JobSpec, *, intent: str, settings: Settings | None) -> None:
        """Rules between this target and the job (its pools, strategy...), before anything is built or submitted;
        ``intent`` is plan, build or submit."""

    def check_service(self, spec: JobSpec, settings: Settings) -> None:
        """Checks against the target's service that can be made before anything is built or uploaded (a cluster
        the job names exists and can hold it, ...): called once, first, when the job is submitted. Nothing by
        default."""

    def auto_machine(self) -> MachineConfig:
        """The machine an ``"auto"`` chief or worker config gets on this target."""
        from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS

        return COMMON_MACHINE_CONFIGS["CPU"]

    def arrange_pools(self, pools: list[PoolSpec], *, chief_given: bool) -> list[PoolSpec]:
        """The worker pools as this target runs them (``chief_given``: the user chose the chief's machine)."""
        return pools

    def describe_machine(self, machine: MachineConfig) -> str:
        """A pool's machine, as the plan shows it."""
        return machine.machine_type

    def endpoint(self, settings: Settings) -> str:
        """Where the job runs, as the plan says it."""
        return self.title or self.name

    def notes(self, spec: JobSpec) -> list[str]:
        """The plan's notes that only this target adds."""
        return []

    def price(self, spec: JobSpec, settings: Settings) -> JobPrice | None:
        """The job's hourly list price (:mod:`tfcloud.google.catalog.prices`), for the plan and the submission; None:
        this target bills nothing."""
        return None

    def request(self, spec: JobSpec, *, image_uri: str | None, package: Any = None) -> dict[str, Any] | None:
        """The request its backend sends for ``spec`` to start the job, as the service receives it (the plan's
        ``request``; ``package``: a ``--no-build`` job's :class:`~tfcloud.job.artifacts.PackageRef`); None: no one
        request says it (a local cluster)."""
        return None

    def data_store(self, settings: Settings) -> str | None:
        """Where ``--data`` directories are shipped for this target's replicas (``gs://BUCKET/PATH`` or a directory
        every node reaches; :mod:`tfcloud.job.datasets`); None: none is configured (a target that is not
        :attr:`runs_here` then refuses local data sets)."""
        return None

    def google(self) -> GoogleCloud | None:
        """How this target's jobs reach Google Cloud, for the stages that call Google for it (Cloud Build, the
        staging bucket a package or data set goes to); None: they do not."""
        return None

    def repository(self, settings: Settings) -> str | None:
        """Where the job's image is pushed: the ``image_repository`` setting (a target may default it: Vertex AI's
        Artifact Registry of its project); None: nowhere is known."""
        return settings.image_repository

    def given(self) -> dict[str, object]:
        """The options whose values differ from the defaults (for the plan and a study's rerun command)."""
        out: dict[str, object] = {}
        for spec in self.options:
            if not hasattr(self, spec.attribute):
                continue
            value = getattr(self, spec.attribute)
            default = next((f.default for f in fields(self) if f.name == spec.attribute),  # type: ignore[arg-type]
                           None)
            if value != default:
                out[spec.name] = value
        return out


#: How a tuner runs one trial as a normal job of its target: the trial's job spec in (the study's job with the
#: trial's ``--NAME=VALUE`` arguments and metric variables), the job's handle out. :func:`tfcloud.sdk.tune` passes
#: one that runs every stage (:func:`tfcloud.flow.pipeline.submit`) on the target's backend: the caller, above the
#: targets, submits, so that no target imports the pipeline.
SubmitTrial: TypeAlias = "Callable[[JobSpec], JobHandle]"


class Tuner(Protocol):
    """A target's tuner (``Target.tuner``, ``"module:Class"``), built as ``Class(settings, target=<the target
    value>)``: what :func:`tfcloud.sdk.tune`, ``attach_study`` and ``list_studies`` call."""

    def __init__(self, settings: Settings, *, target: Target) -> None: ...

    def start(self, study: StudySpec, spec: JobSpec, *, job: PreparedJob | None = None,
              rerun_flags: Sequence[str] = (), submit_trial: SubmitTrial) -> tuple[StudyHandle, Sequence[str]]:
        """Start the study (``job``: its prepared job with the image built, for a target that runs images;
        ``submit_trial``: what runs a trial as a job of the target, for a tuner whose trials are its target's jobs,
        such as the local one); returns at once: the study's handle and the ``tfcloud submit`` flags that rerun a
        trial."""
        ...

    def attach(self, study_id: str) -> tuple[StudyHandle, str, Sequence[str], Sequence[str]]:
        """A study again by id: its handle, its script, the script's arguments and the rerun flags;
        :class:`~tfcloud.errors.JobNotFoundError` when there is none."""
        ...

    def list(self, *, limit: int | None = 50) -> builtins.list[StudyInfo]:
        """The target's studies, newest first."""
        ...

    def close(self) -> None:
        """Release clients (a handle reopens what it needs)."""
        ...
