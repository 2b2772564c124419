"""Which optional extras a command needs, checked up front.

The base install (typer, rich, jinja2, ...) plans jobs and runs them locally without TensorFlow's
strategies; everything else is an extra. :func:`require_extras` is told what a command will do and checks
every package that needs, before any validation side effect, build, upload or submission, without
importing anything (``importlib.util.find_spec``). What is missing is reported once, naming the exact extra::

    Building the image with Docker needs the `docker` package, which is not installed.
    Install it with: pip install "tfcloud[docker]"

    extra        needed by
    -----------  -----------------------------------------------------------------------------
    cloud        target "vertex" (submit, and list/status/logs/cancel of Vertex AI jobs); Cloud Build
    docker       building the image on a Docker engine (submit --vertex, build); the emulator's Docker mode
    notebook     a notebook (.ipynb) as the entry point, dry runs included
    emulator     ``tfcloud emulator start``
    tensorflow   a local job whose launcher sets up a TensorFlow strategy (any strategy but "none")
    ray          target "ray" (submit, and list/status/logs/cancel of Ray jobs)
    tune         ``tfcloud tune`` / ``tfcloud.tune()``: optuna (local studies), matplotlib (plots)
    ui           ``tfcloud ui`` / ``tfcloud.ui()``: the dashboard (starlette, served by uvicorn)
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from tfcloud.errors import MissingExtraError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from tfcloud.targets._base import Target

__all__ = ["Command", "Need", "missing", "needed", "require_extras", "require_tune_extra", "require_ui_extra"]


@dataclass(frozen=True, kw_only=True)
class Need:
    """A package a command imports later, the extra that installs it, and what needs it (for the message)."""

    module: str
    extra: str
    feature: str


_DOCKER = "Building the image with Docker"
_CLOUD_BUILD = "Building with Cloud Build"
_NOTEBOOK = "Running a notebook"
_EMULATOR = "The Google Cloud emulator"
_EMULATOR_DOCKER = "The emulator's Docker mode"
_TENSORFLOW = "A local job with a TensorFlow distribution strategy"

_NEEDS: dict[str, tuple[Need, ...]] = {
    "docker": (Need(module="docker", extra="docker", feature=_DOCKER),),
    "cloudbuild": tuple(Need(module=m, extra="cloud", feature=_CLOUD_BUILD) for m in (
        "google.cloud.devtools.cloudbuild_v1", "google.cloud.storage", "google.cloud.logging_v2", "google.auth")),
    "notebook": tuple(Need(module=m, extra="notebook", feature=_NOTEBOOK) for m in ("nbformat", "IPython")),
    "emulator": tuple(Need(module=m, extra="emulator", feature=_EMULATOR) for m in (
        "grpc", "google.cloud.aiplatform_v1", "google.cloud.devtools.cloudbuild_v1", "google.cloud.logging_v2",
        "gcp_storage_emulator", "psutil", "grpc_status", "cryptography")),
    "emulator_docker": (Need(module="docker", extra="docker", feature=_EMULATOR_DOCKER),),
}


class Command(TypedDict, total=False):
    """What a command will do, as :func:`needed` takes it (:func:`require_extras` passes it on)."""

    target: Target | None
    entry_point: object
    strategy: object
    build: bool | None
    image_build_bucket: str | None
    dry_run: bool
    emulator: bool
    emulator_docker: bool


def needed(
    *,
    target: Target | None = None,
    entry_point: object = None,
    strategy: object = None,
    build: bool | None = None,
    image_build_bucket: str | None = None,
    dry_run: bool = False,
    emulator: bool = False,
    emulator_docker: bool = False,
) -> tuple[Need, ...]:
    """What a command will import, given what it will do.

    - ``target``: a target's value (:class:`~tfcloud.targets.Target`; the caller looks a name up) for a
      submission or a job command: what its backend imports (``Target.needs``); None when the command runs no
      job (``build``, ``emulator start``).
    - ``entry_point``: a notebook (``.ipynb``) needs the notebook extra, also for a dry run (a value that is
      not a path is left to validation).
    - ``strategy``: for a local submission, the requested strategy: any but None/``"none"`` makes the
      launcher import TensorFlow (None also for the job commands, which launch nothing).
    - ``build``: whether an image is built (default: when the target runs images; False for the job
      commands); ``image_build_bucket`` picks Cloud Build over the Docker engine.
    - ``dry_run``: only the plan is made (nothing is built or submitted).
    - ``emulator`` / ``emulator_docker``: ``tfcloud emulator start`` (with a Docker engine).
    """
    kinds: list[str] = []
    if isinstance(entry_point, (str, os.PathLike)) and Path(entry_point).suffix.lower() == ".ipynb":
        kinds.append("notebook")
    found: list[Need] = []
    if not dry_run and target is not None:
        value = target
        feature = f"The {value.title or value.name} backend"
        found += [Need(module=module, extra=extra, feature=feature) for module, extra in value.needs]
        runs_tf = strategy is not None and str(getattr(strategy, "value", strategy)).lower() != "none"
        found += [Need(module=module, extra=extra, feature=_TENSORFLOW)
                  for module, extra in value.needs_for(strategy_runs_tensorflow=runs_tf)]
        if build is None:
            build = value.container
    if not dry_run and build:
        kinds.append("cloudbuild" if image_build_bucket else "docker")
    if emulator:
        kinds.append("emulator")
    if emulator_docker:
        kinds.append("emulator_docker")
    return (*found, *(need for kind in kinds for need in _NEEDS[kind]))


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(needs: tuple[Need, ...]) -> tuple[Need, ...]:
    """The needs whose package is not installed: the first missing package of each extra."""
    found: dict[str, Need] = {}
    for need in needs:
        if need.extra not in found and not _installed(need.module):
            found[need.extra] = need
    return tuple(found.values())


def require_extras(**command: Unpack[Command]) -> None:
    """Raise :class:`~tfcloud.errors.MissingExtraError` naming every missing extra (``pip install
    "tfcloud[cloud,docker]"``) for a command described as for :func:`needed` (the same keywords); import
    nothing."""
    _refuse(missing(needed(**command)))


def _refuse(absent: tuple[Need, ...]) -> None:
    """One MissingExtraError naming every extra in ``absent`` (nothing when it is empty)."""
    if absent:
        first, *more = absent
        raise MissingExtraError(first.feature, first.extra, first.module,
                                more=tuple((n.feature, n.extra, n.module) for n in more))


def require_tune_extra(*, search: bool = True) -> None:
    """optuna (the local search, ``search``) and matplotlib (the plots): MissingExtraError naming
    ``tfcloud[tune]`` when one is missing. Imports nothing."""
    needs = [Need(module="matplotlib", extra="tune", feature="Tuning plots")]
    if search:
        needs.insert(0, Need(module="optuna", extra="tune", feature="Local hyperparameter tuning"))
    _refuse(missing(tuple(needs)))


def require_ui_extra() -> None:
    """starlette and uvicorn (``tfcloud ui``): MissingExtraError naming ``tfcloud[ui]`` when one is missing.
    Imports nothing."""
    _refuse(missing(tuple(Need(module=m, extra="ui", feature="The dashboard (tfcloud ui)")
                          for m in ("starlette", "uvicorn"))))
