"""The local target's value: its options, rules and plan rows (:class:`LocalOptions`), which its backend reads.
:class:`tfcloud.targets.local.LocalTarget` binds it to that backend and its tuner; the value sits below both, so
that neither the backend nor the tuner imports the module that names them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tfcloud.errors import ValidationError
from tfcloud.targets._base import Option, Target
from tfcloud.targets._shared import DEFAULT_LIVENESS_TIMEOUT, LIVENESS_TIMEOUT, MAX_RESTARTS, output_dir_option

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.google.catalog.machines import MachineConfig
    from tfcloud.job.spec import JobSpec

__all__ = ["MAX_LOCAL_REPLICAS", "LocalOptions"]

#: Replicas in all for a local run (one process each).
MAX_LOCAL_REPLICAS = 32


@dataclass(frozen=True, kw_only=True)
class LocalOptions(Target):
    """The local target's value: its fields, options, rules and plan rows, which its backend reads
    (:class:`~tfcloud.targets.local.LocalTarget` without its backend and tuner)."""

    name: ClassVar[str] = "local"
    local_sources: ClassVar[bool] = True  # replicas run here: env: and file: secrets are read here
    runs_here: ClassVar[bool] = True  # env: secrets are read from tfcloud's environment; --data used in place
    title: ClassVar[str] = "Local"
    options: ClassVar[tuple[Option, ...]] = (
        Option(name="container", type=bool, field="use_container",
               help="Run the replicas from the job's image on the local Docker engine.", example=True),
        MAX_RESTARTS,
        LIVENESS_TIMEOUT,
        output_dir_option(directories=True, field="output_dir", where=""),
    )
    id_prefix: ClassVar[str | None] = "local-"
    id_form: ClassVar[str | None] = "local-NAME-DATE-TIME-XXXX"
    study_prefix: ClassVar[str | None] = "study-"
    cancel_on_interrupt: ClassVar[bool] = True
    queues: ClassVar[bool] = False
    poll_interval: ClassVar[float] = 0.5
    stacks_shown: ClassVar[str] = "local, --container"

    use_container: bool = False
    max_restarts: int = 0
    liveness_timeout: int = DEFAULT_LIVENESS_TIMEOUT
    output_dir: str | None = None

    @property
    def container(self) -> bool:
        return self.use_container

    @property
    def pushes_image(self) -> bool:
        return False  # a local --container image stays in the local engine

    def needs_for(self, *, strategy_runs_tensorflow: bool) -> tuple[tuple[str, str], ...]:
        """A local job whose launcher sets up a TensorFlow strategy imports TensorFlow on this machine."""
        return (("tensorflow", "tensorflow"),) if strategy_runs_tensorflow and not self.use_container else ()

    def check_job(self, spec: JobSpec, *, intent: str, settings: Settings | None) -> None:
        from tfcloud.job.spec import Role, Strategy

        if spec.strategy is Strategy.TPU:
            raise ValidationError("target", '"vertex" for a TPU job (TPUs cannot run locally)', self.name)
        total = spec.replica_count
        if total > MAX_LOCAL_REPLICAS:
            worker = spec.pool(Role.WORKER)
            workers = worker.replica_count if worker is not None else 0
            raise ValidationError("worker_count", f"at most {MAX_LOCAL_REPLICAS} replicas in all for a local run "
                                  "(one process each)", workers,
                                  hint=f"The job asks for {total} replicas; run it on Vertex AI instead.")
        if settings is not None and intent == "submit":
            from tfcloud.records.statedir import check_state_dir, source_of, state_dir

            check_state_dir(state_dir(settings), source=source_of(settings))

    def describe_machine(self, machine: MachineConfig) -> str:
        return f"this machine ({machine.machine_type} on Vertex)"

    def endpoint(self, settings: Settings) -> str:
        return "this machine" + (", each replica in a container from the job's image" if self.use_container else "")

    def notes(self, spec: JobSpec) -> list[str]:
        if spec.chief.machine.is_gpu:
            return ["Local run: machine configs describe Vertex AI machines; replicas use this machine's devices."]
        return []
