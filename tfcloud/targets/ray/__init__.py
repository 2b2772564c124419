"""The Ray target: a job on a Ray cluster, by its dashboard's address (:mod:`tfcloud.targets.ray.backend`
submits a driver through Ray's Jobs API; :mod:`tfcloud.targets.ray.driver` runs the replicas as actors)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tfcloud.errors import ValidationError
from tfcloud.targets._base import Option, Target, check_text
from tfcloud.targets._shared import DEFAULT_LIVENESS_TIMEOUT, LIVENESS_TIMEOUT

if TYPE_CHECKING:
    from tfcloud.machines import MachineConfig
    from tfcloud.settings import Settings

__all__ = ["RayTarget", "check_address"]

_ADDRESS = re.compile(r"^(?:https?://)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?/?$")
_EXPECTED_ADDRESS = "a Ray dashboard address such as http://HEAD:8265 (or HEAD:8265)"


def check_address(name: str, value: object) -> str | None:
    """A dashboard address: ``http(s)://HOST[:PORT]`` or ``HOST:PORT`` (``auto``: Ray's own discovery)."""
    text = check_text(name, value, expected=_EXPECTED_ADDRESS)
    if text is None or text == "auto":
        return text
    if not _ADDRESS.match(text):
        raise ValidationError(name, _EXPECTED_ADDRESS, value)
    return text


def _cpus(name: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):  # from TFCLOUD_RAY_CPUS or the config files
        try:
            value = float(value)
        except ValueError:
            raise ValidationError(name, "a number of CPUs > 0 (e.g. 1 or 0.5)", value) from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 10_000:
        raise ValidationError(name, "a number of CPUs > 0 (e.g. 1 or 0.5)", value)
    return float(value)


@dataclass(frozen=True, kw_only=True)
class RayTarget(Target):
    """A Ray cluster, by its dashboard's address (``http://HEAD:8265``). ``address`` None: the settings'
    (``TFCLOUD_RAY_ADDRESS``, then ``RAY_ADDRESS``). ``cpus``: the CPUs each replica reserves (default: its
    machine config's cores). ``liveness_timeout``: seconds a replica may go without a heartbeat before it fails
    the job (0: never)."""

    name: ClassVar[str] = "ray"
    title: ClassVar[str] = "Ray"
    options: ClassVar[tuple[Option, ...]] = (
        Option(name="ray_address", flag="--ray", setting="ray_address", field="address", check=check_address,
               metavar="ADDRESS", example="http://127.0.0.1:8265",
               help="The Ray cluster's dashboard, http://HEAD:8265 (default: TFCLOUD_RAY_ADDRESS, then "
                    "RAY_ADDRESS). See docs/ray.md."),
        Option(name="ray_cpus", type=float, setting="ray_cpus", field="cpus", check=_cpus, metavar="CPUS", example=1.5,
               help="CPUs each replica reserves (default: its machine config's cores)."),
        LIVENESS_TIMEOUT,
    )
    id_prefix: ClassVar[str | None] = "ray-"
    needs: ClassVar[tuple[tuple[str, str], ...]] = (("ray", "ray"),)
    backend: ClassVar[str] = "tfcloud.targets.ray.backend:RayBackend"

    address: str | None = None
    cpus: float | None = None
    liveness_timeout: int = DEFAULT_LIVENESS_TIMEOUT

    @property
    def ships_files(self) -> bool:
        return True  # the working directory travels in Ray's runtime environment

    def settings_for(self, settings: Settings) -> Settings:
        from dataclasses import replace

        return replace(settings, ray_address=self.address or settings.ray_address,
                       ray_cpus=str(self.cpus) if self.cpus is not None else settings.ray_cpus)

    def check(self, settings: Settings | None) -> None:
        if settings is not None:
            check_address("ray_address", settings.ray_address)
            _cpus("ray_cpus", settings.ray_cpus)

    def describe_machine(self, machine: MachineConfig) -> str:
        cpus = self.cpus if self.cpus is not None else machine.cpu_cores
        gpus = f" + {machine.accelerator_count} GPU" if machine.is_gpu else ""
        return f"Ray bundle: {cpus:g} CPU{gpus} ({machine.machine_type})"

    def endpoint(self, settings: Settings) -> str:
        return f"the Ray cluster at {self.address or settings.ray_address or '(not set: --ray ADDRESS)'}"
