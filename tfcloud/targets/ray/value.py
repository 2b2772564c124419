"""The Ray target's value: its options, rules and plan rows (:class:`RayOptions`), which its backend reads.
:class:`tfcloud.targets.ray.RayTarget` binds it to that backend; the value sits below both, so that the backend
never imports the module that names it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, ClassVar

from tfcloud.config.docsite import page
from tfcloud.errors import ValidationError
from tfcloud.targets._base import LazyPattern, Option, Target, check_text
from tfcloud.targets._shared import DEFAULT_LIVENESS_TIMEOUT, LIVENESS_TIMEOUT, MAX_RESTARTS, check_gcs_uri

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.google.catalog.machines import MachineConfig

__all__ = ["RayOptions", "check_address", "check_output_dir"]

_ADDRESS = LazyPattern(r"^(?:https?://)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?/?$")
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
    if isinstance(value, str):  # from TFCLOUD_RAY_CPUS or the config files (ASCII digits only)
        from tfcloud.config.digits import ascii_float

        number = ascii_float(value)
        if number is None:
            raise ValidationError(name, "a number of CPUs > 0 (e.g. 1 or 0.5)", value)
        value = number
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 10_000:
        raise ValidationError(name, "a number of CPUs > 0 (e.g. 1 or 0.5)", value)
    return float(value)


_EXPECTED_OUTPUT_DIR = ("a path every node of the Ray cluster reaches (an absolute path on a shared filesystem, "
                        "such as /mnt/shared/out) or a Cloud Storage URI such as gs://my-bucket/outputs")


def check_output_dir(name: str, value: object) -> str | None:
    """``--output-dir`` on Ray: ``gs://BUCKET/PATH`` or an absolute POSIX path, kept as given (it names a place
    on the cluster's nodes, not on this machine: nothing is resolved here)."""
    if isinstance(value, PurePosixPath):
        value = str(value)
    text = check_text(name, value, expected=_EXPECTED_OUTPUT_DIR)
    if text is None:
        return None
    if text.startswith("gs://"):
        return check_gcs_uri(name, text)
    if not text.startswith("/") or text.startswith("//"):
        raise ValidationError(name, _EXPECTED_OUTPUT_DIR, value,
                              hint=None if text.startswith("/") else "A relative path means nothing to the "
                              "cluster's nodes: give the shared directory's absolute path.")
    return str(PurePosixPath(text))


@dataclass(frozen=True, kw_only=True)
class RayOptions(Target):
    """The Ray target's value: its fields, options, rules and plan rows, which its backend reads
    (:class:`~tfcloud.targets.ray.RayTarget` without its backend)."""

    name: ClassVar[str] = "ray"
    local_sources: ClassVar[bool] = True  # the user runs the nodes: env: and file: sources are theirs
    title: ClassVar[str] = "Ray"
    options: ClassVar[tuple[Option, ...]] = (
        Option(name="ray_address", place=True, flag="--ray", setting="ray_address", field="address",
               check=check_address,
               metavar="ADDRESS", example="http://127.0.0.1:8265", fallback_env=("RAY_ADDRESS",),
               help="The Ray cluster's dashboard, http://HEAD:8265 (default: TFCLOUD_RAY_ADDRESS, then "
                    "RAY_ADDRESS). See " + page("ray") + "."),
        Option(name="ray_cpus", type=float, setting="ray_cpus", field="cpus", check=_cpus, metavar="CPUS", example=1.5,
               help="CPUs each replica reserves (default: its machine config's cores)."),
        LIVENESS_TIMEOUT,
        MAX_RESTARTS,
        Option(name="base_output_dir", flag="--output-dir", setting="output_dir", field="output_dir", metavar="DIR",
               check=check_output_dir, example="gs://my-bucket/outputs",
               help="Base output directory on Ray: a path every node reaches, or gs://... (" + page("ray") + ")."),
    )
    id_prefix: ClassVar[str | None] = "ray-"
    id_form: ClassVar[str | None] = "ray-NAME-DATE-TIME-XXXX"
    needs: ClassVar[tuple[tuple[str, str], ...]] = (("ray", "ray"),)
    stacks_shown: ClassVar[str] = "Ray"

    address: str | None = None
    cpus: float | None = None
    liveness_timeout: int = DEFAULT_LIVENESS_TIMEOUT
    max_restarts: int = 0
    output_dir: str | None = None

    def data_store(self, settings: Settings) -> str | None:
        return f"{self.output_dir.rstrip('/')}/tfcloud-data" if self.output_dir else None

    @property
    def ships_files(self) -> bool:
        return True  # the working directory travels in Ray's runtime environment

    def describe_machine(self, machine: MachineConfig) -> str:
        cpus = self.cpus if self.cpus is not None else machine.cpu_cores
        gpus = f" + {machine.accelerator_count} GPU" if machine.is_gpu else ""
        return f"Ray bundle: {cpus:g} CPU{gpus} ({machine.machine_type})"

    def endpoint(self, settings: Settings) -> str:
        return f"the Ray cluster at {self.address or '(not set: --ray ADDRESS)'}"
