"""Targets: *where* a job runs, as frozen values that carry their own options (XManager's executor), and the
registry that finds them by name.

The :class:`~tfcloud.job.spec.JobSpec` says *what* runs; a :class:`Target` value beside it says where. Each target
is a package (``tfcloud/targets/local``, ``vertex``, ``ray``) that owns its options, rules, plan rows, backend and
tuner (:mod:`tfcloud.targets._base` says what a target declares). Other packages add targets through the
``tfcloud.targets`` entry-point group, read only when a name is not a built-in one (start-up never reads it)::

    [project.entry-points."tfcloud.targets"]
    echo = "tfcloud_echo:EchoTarget"

Nothing outside the target packages and this registry branches on a target's name.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfcloud.errors import TfcloudError, ValidationError
from tfcloud.targets._base import GoogleCloud, Option, SubmitTrial, Target, Tuner

if TYPE_CHECKING:
    from tfcloud.backends.base import Backend
    from tfcloud.google.vertex import VertexTarget
    from tfcloud.targets.local import LocalTarget
    from tfcloud.targets.ray import RayTarget

__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "GoogleCloud", "LocalTarget", "Option", "RayTarget", "SubmitTrial",
           "Target", "Tuner", "VertexTarget", "builtin_targets", "clashes", "for_job_id", "get", "get_backend",
           "load", "loadable", "names", "plugin_errors", "plugin_package"]

log = logging.getLogger("tfcloud")
ENTRY_POINT_GROUP = "tfcloud.targets"
#: The built-in targets, by name: the module and class of each (one line per target; the first is the default).
BUILTIN: dict[str, str] = {
    "local": "tfcloud.targets.local:LocalTarget",
    "vertex": "tfcloud.google.vertex:VertexTarget",
    "ray": "tfcloud.targets.ray:RayTarget",
}
_PLUGINS: dict[str, list[Any]] | None = None  # name -> its entry points (one, unless packages clash), read once
_SHADOWED: dict[str, list[Any]] = {}  # a built-in name -> the plug-ins' entry points that also claim it (never run)


def load(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference names: a target class, its backend or its tuner (imported
    only now)."""
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


def get_backend(target: Target | str, **options: object) -> Backend:
    """The backend for ``target`` (a target value, or a name for that target with default options), built as
    ``Class(target=<target value>, settings=<Settings or None>, **options)`` (``settings``, and backend-specific
    ones such as a local backend's ``home``): the target names its class (``Target.backend``), whose module and
    heavy imports load only now."""
    if isinstance(target, str):
        target = get(target)()
    with plugin_errors(type(target), f"backend ({target.backend})"):
        cls = load(target.backend)
        backend: Backend = cls(target=target, **options)
    return backend


def _load(ref: str) -> type[Target]:
    cls: type[Target] = load(ref)
    return cls


def _plugins() -> dict[str, list[Any]]:
    global _PLUGINS, _SHADOWED
    if _PLUGINS is None:
        from importlib.metadata import entry_points

        found: dict[str, list[Any]] = {}
        shadowed: dict[str, list[Any]] = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            (shadowed if ep.name in BUILTIN else found).setdefault(ep.name, []).append(ep)
        _PLUGINS, _SHADOWED = found, shadowed
    return _PLUGINS


def clashes() -> dict[str, list[str]]:
    """Each target name that more than one package registers, and those packages (``tfcloud`` for a built-in
    one): a plug-in name two packages add is refused whenever it is used (:func:`get`); a plug-in that takes a
    built-in name never runs (the built-in one does, and start-up never reads plug-ins to say so). ``tfcloud
    doctor`` lists both."""
    found = {name: sorted({_package(ep) for ep in eps}) for name, eps in _plugins().items() if len(eps) > 1}
    for name, eps in _SHADOWED.items():
        found[name] = ["tfcloud", *sorted({_package(ep) for ep in eps})]
    return found


def _package(ep: Any) -> str:
    """The installed package (distribution) an entry point comes from, as ``pip`` names it."""
    dist = getattr(ep, "dist", None)
    return str(dist.name) if dist is not None else ep.value.partition(":")[0].split(".")[0]


def plugin_package(cls: type[Target]) -> str | None:
    """The package that adds target ``cls`` (None: a built-in target)."""
    if f"{cls.__module__}:{cls.__qualname__}" in BUILTIN.values():
        return None
    for eps in _plugins().values():
        for ep in eps:
            if ep.value.partition(":")[0].strip() == cls.__module__:
                return _package(ep)
    return cls.__module__.split(".")[0]


@contextlib.contextmanager
def plugin_errors(cls: type[Target], what: str) -> Iterator[None]:
    """Inside: a plug-in target's code (``what``: its option check, ``check()``, backend...). An exception that is
    not tfcloud's own is reported as the plug-in's, naming its package (exit 2, no traceback); a built-in
    target's is left as it is (a bug of tfcloud's)."""
    try:
        yield
    except TfcloudError:
        raise
    except Exception as exc:
        package = plugin_package(cls)
        if package is None:
            raise
        raise ValidationError("target", f"a {cls.name!r} target whose {what} works (the plug-in package "
                              f"{package} raised {type(exc).__name__}: {exc})", cls.name,
                              hint=f"It is a bug of {package}: update it (pip install -U {package}), report it to "
                                   "its authors, or choose another target.") from exc


def names() -> list[str]:
    """Every target's name: the built-in ones, then those installed packages add."""
    return [*BUILTIN, *sorted(_plugins())]


def loadable(names: list[str]) -> list[type[Target]]:
    """The targets of ``names`` that load: a broken plug-in is left out (it is named when chosen)."""
    classes = []
    for name in names:
        try:
            classes.append(get(name))
        except ValidationError:
            log.debug("skipping the target %r: it does not load", name)
    return classes


def builtin_targets() -> list[type[Target]]:
    return [_load(ref) for ref in BUILTIN.values()]


def get(name: object) -> type[Target]:
    """The target class registered as ``name`` (a :class:`ValidationError` naming the known ones otherwise)."""
    if isinstance(name, str) and name in BUILTIN:
        return _load(BUILTIN[name])
    if isinstance(name, str) and name in _plugins():
        eps = _plugins()[name]
        packages = sorted({_package(ep) for ep in eps})
        if len(eps) > 1:  # never one of them silently
            raise ValidationError("target", f"one installed package that adds the target {name!r}",
                                  f"<{name!r} from {' and '.join(packages)}>",
                                  hint="Uninstall all but one: pip uninstall " + " or ".join(packages) + ".")
        try:
            cls = eps[0].load()
        except Exception as exc:  # a broken plug-in: say which, without a traceback
            raise ValidationError("target", f"a target that loads (the {name!r} plug-in of the package "
                                  f"{packages[0]} failed: {type(exc).__name__}: {exc})", name,
                                  hint=f"Reinstall or update it (pip install -U {packages[0]}), or uninstall "
                                       "it.") from exc
        if not (isinstance(cls, type) and issubclass(cls, Target)):
            raise ValidationError("target", f"a tfcloud.targets.Target subclass from the {name!r} plug-in of the "
                                  f"package {packages[0]}", cls)
        return cls
    raise ValidationError("target", " or ".join(f'"{n}"' for n in names()), name)


def for_job_id(job_id: str, *, studies: bool = False) -> type[Target]:
    """The target whose jobs have ids like ``job_id`` (:meth:`Target.owns_job_id`: ``local-...``, ``ray-...``,
    Vertex AI's numbers, a plug-in's own prefix); a :class:`ValidationError` naming every target's form when none
    does. ``studies``: a tuning study's id, by ``study_prefix``, else the target with a tuner and no prefix."""
    classes = []
    for ref in BUILTIN.values():  # one at a time: `tfcloud status local-...` loads the local target only
        cls = _load(ref)
        if (job_id.startswith(cls.study_prefix) if studies and cls.study_prefix else
                not studies and cls.owns_job_id(job_id)):
            return cls
        classes.append(cls)
    for name in _plugins():  # read only now: a built-in target's id never looks for plug-ins
        try:
            cls = get(name)
        except ValidationError:  # a broken plug-in never keeps another target's jobs from being found
            log.debug("skipping the target %r: it does not load", name)
            continue
        with plugin_errors(cls, "job id check"):
            owned = (job_id.startswith(cls.study_prefix) if studies and cls.study_prefix else
                     not studies and cls.owns_job_id(job_id))
        if owned:
            return cls
        classes.append(cls)
    if studies:
        return next(cls for cls in classes if cls.study_prefix is None and cls.tuner)
    forms = [cls.job_id_form() for cls in classes]
    raise ValidationError("JOB", "a job id: " + ", ".join(forms[:-1]) + ", or " + forms[-1], job_id,
                          hint="`tfcloud list` shows the ids (`tfcloud list --target NAME`: another target's).")


def __getattr__(name: str) -> Any:  # LocalTarget, VertexTarget, RayTarget: imported on first use
    ref = {"LocalTarget": BUILTIN["local"], "VertexTarget": BUILTIN["vertex"], "RayTarget": BUILTIN["ray"]}.get(name)
    if ref is None:
        raise AttributeError(f"module 'tfcloud.targets' has no attribute {name!r}")
    return _load(ref)
