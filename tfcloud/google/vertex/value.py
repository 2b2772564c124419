"""The Vertex AI target's value: its options, rules and plan rows (:class:`VertexOptions`), which its request and
backend read. :class:`tfcloud.google.vertex.VertexTarget` binds it to that backend and its tuner; the value sits
below them, so that neither imports the module that names them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from tfcloud.config.docsite import page
from tfcloud.errors import ValidationError
from tfcloud.google.rules.data import TRAINING_REGIONS
from tfcloud.google.vertex import options as _capacity
from tfcloud.google.vertex.place import DEFAULT_REGION, SchedulingStrategy, VertexSetup
from tfcloud.targets._base import GoogleCloud, LazyPattern, Option, Target, check_text
from tfcloud.targets._shared import MAX_RESTARTS, output_dir_option

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.google.catalog.machines import MachineConfig
    from tfcloud.google.catalog.prices import JobPrice
    from tfcloud.job.spec import DockerConfig, JobSpec, PoolSpec

__all__ = ["DEFAULT_REGION", "MAX_TIMEOUT_S", "VERTEX_REGIONS", "SchedulingStrategy", "VertexOptions",
           "check_project", "check_region", "refuse_image_options"]

#: The regions Vertex AI serves custom training in (Google's "Vertex AI locations" page, from the rules table
#: :data:`tfcloud.google.rules.TRAINING_REGIONS`). A region outside it would be refused by Vertex AI only after the
#: image was built and pushed.
VERTEX_REGIONS: frozenset[str] = TRAINING_REGIONS
#: The region a job runs in when no call, variable, config file or gcloud configuration names one.
MAX_TIMEOUT_S = 14 * 24 * 3600  # Vertex AI: at most 14 days (default 7)
_PROJECT = LazyPattern(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$|^[a-z0-9.-]+:[a-z][a-z0-9-]{4,28}[a-z0-9]$")
_NETWORK = LazyPattern(r"^projects/[0-9]+/global/networks/[a-z]([-a-z0-9]*[a-z0-9])?$")
_JOB_ID = LazyPattern(r"[0-9]{1,20}|projects/[a-z0-9.:-]{1,64}/locations/[a-z0-9-]{1,64}/customJobs/[0-9]{1,20}")
_SERVICE_ACCOUNT = LazyPattern(r"^[a-z0-9][a-z0-9._-]*@[a-z0-9][a-z0-9.-]*\.gserviceaccount\.com$")


def _pattern(pattern: LazyPattern, expected: str) -> Callable[[str, object], str | None]:
    def check(name: str, value: object) -> str | None:
        text = check_text(name, value, expected=expected)
        if text is not None and not pattern.match(text):
            raise ValidationError(name, expected, value)
        return text
    return check


check_project = _pattern(_PROJECT, "a Google Cloud project id (6 to 30 lowercase letters, digits or '-')")


def check_region(name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in VERTEX_REGIONS:
        near = sorted(r for r in VERTEX_REGIONS if isinstance(value, str) and r.split("-")[0] == value.split("-")[0])
        raise ValidationError(name, "a region Vertex AI serves custom training in, such as us-central1",
                              value, hint="Regions: " + ", ".join(near or sorted(VERTEX_REGIONS)) + ".")
    return value


def _timeout(name: str, value: object) -> int | None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                              or not 0 < value <= MAX_TIMEOUT_S):
        raise ValidationError(name, f"a number of seconds from 1 to {MAX_TIMEOUT_S} (14 days)", value)
    return value


def _staging_bucket(name: str, value: object) -> str | None:
    from tfcloud.job.checks import validate_bucket

    text = check_text(name, value, expected="a Cloud Storage bucket name")
    if text is not None:
        validate_bucket(name, text, hint="Name a bucket of 3 to 63 lowercase letters, digits, '-', '_' or '.', "
                                         "such as --staging-bucket gs://my-bucket.")
    return text


def _emulator_host(name: str, value: object) -> str | None:
    from tfcloud.job.checks import validate_host_port

    return validate_host_port(name, check_text(name, value, expected="HOST:PORT"), flag="--emulator-host")


#: The image options ``--no-build`` leaves nothing to act on: DockerConfig field → its CLI flag. (The base image
#: takes ``--parent-image``, and ``--image-build-bucket`` to build it with Cloud Build:
#: tfcloud.google.staging.baseimage.)
_IMAGE_OPTIONS = {"image": "--image", "cache_from": "--cache-from"}


def refuse_image_options(docker: DockerConfig) -> None:
    """``--no-build`` builds no image of the job's code: ``--image`` and ``--cache-from`` would be ignored, so
    they are refused, naming both. (Its base image, built once, takes ``--parent-image``.)"""
    given = [flag for field, flag in _IMAGE_OPTIONS.items() if getattr(docker, field)]
    if given:
        raise ValidationError(given[0], "to be left out with --no-build (the code is not built into an image)",
                              f"--no-build and {given[0]}",
                              hint=f"Leave out {given[0]}, or leave out --no-build to build an image.")


@dataclass(frozen=True)
class Alternative:
    """One alternative as it will be submitted: its number (from 1), what it changes, the job and the target."""

    number: int
    changes: Mapping[str, object]
    spec: JobSpec
    target: VertexOptions

    def describe(self) -> str:
        return ", ".join(f"{key}={value}" for key, value in self.changes.items())


@dataclass(frozen=True, kw_only=True)
class VertexOptions(Target, VertexSetup):
    """The Vertex AI target's value: its fields, options, rules and plan rows, which its request and backend
    read (:class:`~tfcloud.google.vertex.VertexTarget` without its backend and tuner)."""

    name: ClassVar[str] = "vertex"
    title: ClassVar[str] = "Vertex AI"
    options: ClassVar[tuple[Option, ...]] = (
        Option(name="project", place=True, setting="project", check=check_project, metavar="PROJECT",
               example="my-project",
               fallback_env=("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"), help="Google Cloud project."),
        Option(name="region", place=True, setting="region", check=check_region, metavar="REGION",
               help="Vertex AI region.",
               fallback_env=("CLOUDSDK_AI_REGION", "CLOUDSDK_COMPUTE_REGION"), example="europe-west4"),
        Option(name="service_account", setting="service_account", metavar="EMAIL",
               example="trainer@my-project.iam.gserviceaccount.com",
               check=_pattern(_SERVICE_ACCOUNT, "a service account e-mail such as "
                                                "trainer@my-project.iam.gserviceaccount.com"),
               help="Service account the job runs as."),
        Option(name="network", setting="network", metavar="NETWORK", example="projects/12345/global/networks/vpc",
               check=_pattern(_NETWORK, "a VPC network name such as projects/12345/global/networks/my-vpc"),
               help="VPC network, projects/NUMBER/global/networks/NAME."),
        Option(name="spot", type=bool, setting="spot", help="Run on Spot (preemptible) capacity.", example=True),
        Option(name="timeout", type=int, setting="timeout", field="timeout_s", check=_timeout, metavar="SECONDS",
               example=3600,
               help="Stop the job after this many seconds."),
        Option(name="restart_on_worker_restart", type=bool, example=True,
               help="Restart the whole job when a worker restarts."),
        MAX_RESTARTS,
        output_dir_option(directories=False, field="base_output_dir", where=""),
        # Capacity, TensorBoard and experiments (docs/vertex.md; tfcloud/google/vertex/options.py).
        Option(name="scheduling", setting="scheduling", check=_capacity.option_scheduling, metavar="STRATEGY",
               choices=tuple(s.flag for s in SchedulingStrategy),
               example="spot", help="standard, spot (as --spot) or flex-start (the Dynamic Workload Scheduler: "
                                    "waits for every VM at once)."),
        Option(name="max_wait", setting="max_wait", field="max_wait_s", check=_capacity.option_max_wait,
               metavar="DURATION", example="30m",
               example_with=(("scheduling", "flex-start"), ("chief_config", "A100_1X")),
               help="flex-start: how long to wait for VMs (30m, 6h, 1d; 0: no limit; Vertex AI's "
                                        "default 1d)."),
        Option(name="fallback", type=list, setting="fallback", check=_capacity.option_fallback,
               metavar="KEY=VALUE[,KEY=VALUE]", example=["region=europe-west4"],
               help="An alternative tried when the job finds no capacity (repeatable, in order): the job with "
                    "region, chief_config, worker_config, spot or reservation replaced; same image."),
        Option(name="fallback_after", setting="fallback_after", field="fallback_after_s",
               check=_capacity.option_fallback_after, metavar="DURATION", example="30m",
               example_with=(("fallback", "region=europe-west4"),),
               help="With --fallback: also move on when an attempt stays QUEUED or PENDING this long (90s, 30m)."),
        Option(name="reservation", setting="reservation", check=_capacity.option_reservation,
               metavar="any|none|NAME", example="none", help="Consume any reservation, none, or one (ZONE/NAME or "
                                             "projects/P/zones/Z/reservations/NAME)."),
        Option(name="disable_retries", type=bool, setting="disable_retries", example=True,
               help="Never restart the job after an internal error."),
        Option(name="web_access", type=bool, setting="web_access", example=True,
               help="An interactive shell in each replica (Vertex AI's enable_web_access): `tfcloud status` "
                    "shows each replica's URI while it runs."),
        Option(name="persistent_resource", setting="persistent_resource", metavar="ID",
               check=_capacity.option_persistent_resource, example="my-cluster",
               help="Run on this persistent resource (tfcloud cluster create): no wait for VMs."),
        Option(name="tensorboard", setting="tensorboard", check=_capacity.option_tensorboard, metavar="RESOURCE",
               example="1234567890",
               example_with=(("service_account", "trainer@my-project.iam.gserviceaccount.com"),
                             ("base_output_dir", "gs://my-bucket/outputs")),
               help="Upload the job's TensorBoard logs to this TensorBoard instance "
                    "(projects/P/locations/L/tensorboards/ID or ID)."),
        Option(name="experiment", setting="experiment", check=_capacity.option_experiment, metavar="NAME",
               example="my-experiment",
               example_with=(("service_account", "trainer@my-project.iam.gserviceaccount.com"),),
               help="The Vertex AI Experiment the job belongs to (needs --service-account; not with "
                    "--tensorboard)."),
        Option(name="experiment_run", check=_capacity.option_experiment_run, metavar="RUN", example="run-1",
               example_with=(("experiment", "my-experiment"),
                             ("service_account", "trainer@my-project.iam.gserviceaccount.com")),
               help="Its run in that experiment (with --experiment)."),
        Option(name="emulator_host", place=True, setting="emulator_host", metavar="HOST:PORT", example="127.0.0.1:8470",
               check=_emulator_host,
               help="Reach the tfcloud emulator at HOST:PORT instead of Google Cloud (" + page("emulator") + ")."),
        Option(name="staging_bucket", setting="staging_bucket", metavar="BUCKET", example="my-staging-bucket",
               check=_staging_bucket, help="Cloud Storage bucket for staged files."),
        Option(name="build", type=bool, flag="--build/--no-build", setting="build", example=False,
               example_with=(("staging_bucket", "my-staging-bucket"),),
               help="--no-build (build=False): build no image of the code; ship the job's files as a package to the "
                    "staging bucket and run it on the job's base image (TensorFlow and the requirements, built and "
                    "pushed once; " + page("vertex") + ")."),
    )
    id_prefix: ClassVar[str | None] = None
    stacks_elsewhere: ClassVar[str] = ("On Vertex AI, submit with --web-access and open a replica's shell "
                                       "(`tfcloud status {job_id}` shows each URI); there, `py-spy dump --pid 1`.")
    id_form: ClassVar[str | None] = "a Vertex AI job number or projects/PROJECT/locations/REGION/customJobs/NUMBER"
    gcloud_defaults: ClassVar[bool] = True
    needs: ClassVar[tuple[tuple[str, str], ...]] = (
        ("google.cloud.aiplatform_v1", "cloud"), ("google.cloud.logging_v2", "cloud"), ("google.auth", "cloud"),
        ("grpc", "cloud"))

    @classmethod
    def owns_job_id(cls, job_id: str) -> bool:
        """A CustomJob's number, or its full resource name (Vertex AI's ids have no prefix)."""
        return _JOB_ID.fullmatch(job_id) is not None

    def __post_init__(self) -> None:
        spot = SchedulingStrategy.SPOT
        if self.spot and self.scheduling not in (None, spot):
            assert self.scheduling is not None
            raise ValidationError("scheduling", '"spot" when spot is set (--spot is --scheduling spot), or spot '
                                  "left unset", self.scheduling.flag,
                                  hint="Give one of --spot and --scheduling (spot= and scheduling= in run()).")
        if self.spot and self.scheduling is None:
            object.__setattr__(self, "scheduling", spot)
        elif self.scheduling is spot:
            object.__setattr__(self, "spot", True)

    @property
    def container(self) -> bool:
        return self.build

    @property
    def packaged(self) -> bool:
        return not self.build

    @property
    def ships_files(self) -> bool:
        return True

    def needs_for(self, *, strategy_runs_tensorflow: bool) -> tuple[tuple[str, str], ...]:
        return () if self.build else (("google.cloud.storage", "cloud"),)  # the package goes to Cloud Storage

    @property
    def emulated(self) -> bool:
        return self.emulator_host is not None

    def data_store(self, settings: Settings) -> str | None:
        bucket = self.google().bucket
        return f"gs://{bucket}/tfcloud-data" if bucket else None

    def google(self) -> GoogleCloud:
        return GoogleCloud(project=self.project, region=self.location, emulator_host=self.emulator_host,
                           staging_bucket=self.staging_bucket)

    def repository(self, settings: Settings) -> str | None:
        """``image_repository``, else Artifact Registry's ``tfcloud`` repository of the project in the region."""
        if settings.image_repository:
            return settings.image_repository
        return f"{self.location}-docker.pkg.dev/{self.project}/tfcloud" if self.project else None

    def check(self, settings: Settings | None) -> None:
        _capacity.check_rules(self, region=self.location if settings is not None else self.region,
                              staging_bucket=self.staging_bucket, project=self.project)

    def check_job(self, spec: JobSpec, *, intent: str, settings: Settings | None) -> None:
        from tfcloud.google.vertex.gate import check_google_rules

        _capacity.check_pools(self, spec)
        check_google_rules(spec, self, region=self.location)  # Google's documented rules (tfcloud.google.rules)
        if self.fallback_after_s is not None and not self.fallback:
            raise ValidationError("fallback_after", "to be left unset without --fallback (there is no alternative to "
                                  "move on to)", f"{self.fallback_after_s}s", hint="Add --fallback KEY=VALUE, or "
                                  "leave out --fallback-after.")
        self.alternatives(spec)  # each alternative passes the same checks, now
        if not self.build:
            refuse_image_options(spec.docker_config)
            if settings is not None and intent in ("submit", "plan") and not self.staging_bucket:  # a dry run too
                raise ValidationError("staging_bucket", "a Cloud Storage bucket for the job's package (--no-build "
                                      "uploads it there)", None, hint="Pass --staging-bucket, or set "
                                      "TFCLOUD_STAGING_BUCKET (staging_bucket= in run() or [tool.tfcloud]).")
        if settings is None:
            return
        # Google is reached to submit, and to build with Cloud Build; a Docker build pushes with Docker's login.
        if intent == "submit" or (intent == "build" and spec.docker_config.image_build_bucket):
            if not self.project:
                raise ValidationError("project", "a Google Cloud project id for Vertex AI", None,
                                      hint="Pass --project (project= in run()), or set TFCLOUD_PROJECT or "
                                           "GOOGLE_CLOUD_PROJECT.")
            from tfcloud.google.cloud.auth import check_credentials

            check_credentials(emulator_host=self.emulator_host)

    def auto_machine(self) -> MachineConfig:
        from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS

        return COMMON_MACHINE_CONFIGS["T4_1X"]  # tensorflow-cloud's default

    def arrange_pools(self, pools: list[PoolSpec], *, chief_given: bool) -> list[PoolSpec]:
        """A TPU job on Vertex AI is one worker pool with one replica ("Training with TPU VMs"; the SDK: "TPU jobs
        only allow 1 replica"): the TPU host runs the program itself, so a TPU worker becomes pool 0 and no CPU or
        GPU chief is added. A chief_config given beside a TPU worker, or another pool, is refused by the gate
        (rule tpu-one-pool-one-replica). A multi-host slice is still one replica (its tpu_topology)."""
        from dataclasses import replace

        from tfcloud.job.spec import Role

        workers = [p for p in pools if p.role is Role.WORKER]
        if not chief_given and workers and workers[0].machine.is_tpu:
            return [replace(workers[0], role=Role.CHIEF, replica_count=1),
                    *(p for p in pools if p.role not in (Role.CHIEF, Role.WORKER))]
        return pools

    def describe_machine(self, machine: MachineConfig) -> str:
        return machine.machine_type

    def endpoint(self, settings: Settings) -> str:
        if self.emulator_host:
            return f"the tfcloud emulator at {self.emulator_host} (no web console: tfcloud status JOB)"
        return f"Vertex AI: project {self.project or '(not set: --project)'}, region {self.location}"

    def check_service(self, spec: JobSpec, settings: Settings) -> None:
        """A persistent resource the job names exists, runs, and has a pool for each of the job's pools (machine,
        replicas and service account as Google requires): looked up before anything is built or uploaded."""
        if self.persistent_resource:
            from tfcloud.google.vertex.fit import check_job_fits

            check_job_fits(spec, self, settings)

    def request(self, spec: JobSpec, *, image_uri: str | None, package: Any = None) -> dict[str, Any] | None:
        """The CustomJob as Google receives it, built as the backend builds it
        (:func:`~tfcloud.google.vertex.customjob.custom_job_body`), but for what only the submission knows: its id
        (label ``tfcloud-submission``: ``planned``) and the default output directory, which carries the time of
        submission."""
        from tfcloud.google.vertex.customjob import custom_job_body
        from tfcloud.image.dockerfile import installed_tensorflow_version

        return custom_job_body(spec, self, image_uri=image_uri, package=package, submission_id="planned",
                               tensorflow_version=installed_tensorflow_version(), region=self.location)

    def price(self, spec: JobSpec, settings: Settings) -> JobPrice | None:
        """The job's hourly price by how Google bills its capacity (:mod:`tfcloud.google.catalog.prices`): on a
        persistent resource (not charged), a reservation, Flex Start, Spot or on demand."""
        from tfcloud.google.catalog.prices import job_price

        return job_price([(pool.role.value, pool.replica_count, pool.machine) for pool in spec.pools],
                         region=self.location, spot=self.spot,
                         flex_start=self.scheduling is SchedulingStrategy.FLEX_START,
                         persistent_resource=self.persistent_resource, reservation=self.reservation,
                         timeout_s=self.timeout_s)

    def alternatives(self, spec: JobSpec) -> list[Alternative]:
        """Each alternative of ``--fallback`` (:mod:`tfcloud.google.vertex.fallback`) as the job and target it
        submits, checked as the job is (its options, pools and Google's rules for its region): a
        :class:`ValidationError` names ``fallback[N].FIELD``."""
        import dataclasses

        from tfcloud.google.catalog.machines import machine_config_from_name
        from tfcloud.google.vertex.gate import check_google_rules
        from tfcloud.google.vertex.options import check_pools, check_rules
        from tfcloud.job.spec import Role

        target = self
        if target.fallback and target.persistent_resource:
            raise ValidationError("fallback", "to be left unset on a persistent resource (its VMs are in one region "
                                  "and always there)", f"<{len(target.fallback)} alternatives>",
                                  hint="Leave out --fallback, or --persistent-resource.")
        out = []
        for number, pairs in enumerate(target.fallback, 1):
            changes = dict(pairs)
            field = f"fallback[{number}]"
            fields: dict[str, Any] = {"fallback": (), "fallback_after_s": None}
            pools = list(spec.pools)
            for key, value in changes.items():
                if key in ("chief_config", "worker_config"):  # the catalog's one rule for a machine's name
                    role = Role.CHIEF if key == "chief_config" else Role.WORKER
                    machine = machine_config_from_name(str(value), field=f"{field}.{key}")
                    if spec.pool(role) is None:
                        raise ValidationError(f"{field}.{key}", f"a pool the job has (it has no {role.value})", value)
                    pools = [dataclasses.replace(p, machine=machine) if p.role is role else p for p in pools]
            try:
                for key, value in changes.items():
                    option = type(target).option(key)
                    if key.endswith("_config") or option is None:
                        continue
                    fields[option.attribute] = option.convert(value)
                    if key == "spot":  # spot and scheduling set each other (VertexSetup): the alternative's decides
                        spot = SchedulingStrategy.SPOT
                        fields["scheduling"] = None if target.scheduling is spot else target.scheduling
                alt = dataclasses.replace(target, **fields)
                alt_spec = dataclasses.replace(spec, pools=tuple(pools))
                check_rules(alt, region=alt.location, staging_bucket=alt.staging_bucket, project=alt.project)
                check_pools(alt, alt_spec)
                check_google_rules(alt_spec, alt, region=alt.location)
            except ValidationError as exc:
                raise ValidationError(f"{field} ({', '.join(f'{k}={v}' for k, v in changes.items())}): {exc.field}",
                                      exc.expected, exc.received, hint=exc.hint) from None
            out.append(Alternative(number=number, changes=changes, spec=alt_spec, target=alt))
        return out

    def notes(self, spec: JobSpec) -> list[str]:
        notes = []
        if spec.chief.machine.is_tpu:
            notes.append("TPU: the TPU host runs your program as the job's one pool (pool 0, one replica), as "
                         "Vertex AI requires; no CPU/GPU chief is added.")
        alternatives = self.alternatives(spec)
        if alternatives:
            after = (f", or stays QUEUED/PENDING over {self.fallback_after_s}s" if self.fallback_after_s else "")
            notes.append(f"Fallback: when the job finds no capacity in {self.location} (RESOURCE_EXHAUSTED{after}), "
                         "these are tried in turn with the same image; at most one attempt is alive:")
        from tfcloud.config.value import Settings

        for alt in alternatives:
            price = alt.target.price(alt.spec, Settings())
            notes.append(f"Fallback {alt.number}: {alt.describe()} -> {alt.target.location}; "
                         + (price.brief() if price is not None else "no price known"))
        return notes
