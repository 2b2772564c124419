"""How the suite runs on two cores (issue 38): pytest-xdist's ``--dist loadgroup`` with each test's work unit
chosen from the fixtures it uses, so that no engine starts twice and nothing shared is used by two workers at once.

- A test that uses one of the suite's engines (:data:`ENGINE_GROUPS`: the Docker engine and registry, the Ray
  clusters) runs in that engine's group: one worker starts the engine once and runs every test that needs it.
- A test that uses a module-scoped fixture (an emulator, a served dashboard, a built wheel) runs with the rest of
  its module, so the fixture is made once.
- Every other test is its own unit, spread over the workers as they free up.

xdist orders the units by their number of tests (``--loadscope-reorder``, its default), so the engines' groups
start first, one on each worker, and the single tests fill in around them. Without xdist (``-p no:xdist`` or
``-n 0``) the marks change nothing."""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["ENGINE_GROUPS", "group_of", "quiet_machine"]

#: A session-scoped fixture that starts an engine, and the group every test that uses it runs in (through any
#: fixture: the Ray tests' ``ray_cluster`` and ``two_host_ray`` use ``_ray_engines``, in tests/rayengines.py).
#: The Ray clusters share one group: each is started once, on one worker.
ENGINE_GROUPS = {
    "engine": "docker",
    "_ray_engines": "ray",
}


def group_of(item: pytest.Item) -> str | None:
    """The work unit ``item`` belongs to (``None``: a unit of its own)."""
    names = getattr(item, "fixturenames", ())
    for fixture, group in ENGINE_GROUPS.items():
        if fixture in names:
            return group
    info: Any = getattr(item, "_fixtureinfo", None)
    for definitions in (info.name2fixturedefs.values() if info is not None else ()):
        if any(d.scope in ("module", "package", "class") for d in definitions):
            return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = group_of(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
        _name_the_group(config, item)


def _name_the_group(config: pytest.Config, item: pytest.Item) -> None:
    """What xdist's worker does for ``--dist loadgroup`` (the group after an ``@`` in the test's id, which its
    scheduler reads), done here: xdist 3.8 writes ``item._nodeid``, which pytest 9.2 no longer reads (the id is
    ``item._id``), so every test was a unit of its own, and each worker started every engine it met."""
    marks = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")})
    if not marks or not getattr(config.option, "loadgroup", False) or "@" in item.nodeid.rpartition("]")[2]:
        return
    from _pytest.nodeid import NodeId

    item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(marks)}")  # type: ignore[attr-defined]


# --- a quiet machine for the tests whose figures are bounds (the benchmarks) -----------------------------------
# Two workers share two cores: a bound on latency (the dashboard's longest timer gap, the CLI's start-up) measures
# the other worker's load as much as the code. A test that asks for `quiet_machine` runs alone: it waits until the
# other worker's current test ends, and the other worker starts no test until it is done. Two file locks across
# the workers: every test holds the machine's lock shared while it runs; a quiet test takes the gate first (so the
# other worker cannot pass it again, whatever order the kernel wakes waiters in), then the machine's lock alone.


class _Lock:
    """A lock file all the workers open: under the run's base temporary directory (shared by the workers, removed
    with it by pytest's own retention); ``None`` without xdist."""

    def __init__(self, config: pytest.Config, name: str) -> None:
        import os

        self.fd = None
        if os.environ.get("PYTEST_XDIST_WORKER"):
            shared = config._tmp_path_factory.getbasetemp().parent  # type: ignore[attr-defined]
            self.fd = open(shared / f"tfcloud-{name}.lock", "a+b")  # noqa: SIM115 (held for the run)

    def take(self, exclusive: bool) -> None:
        import fcntl

        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)

    def drop(self) -> None:
        import fcntl

        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)


_held: dict[str, _Lock] = {}


def _locks(config: pytest.Config) -> tuple[_Lock, _Lock]:
    if not _held:
        _held.update(gate=_Lock(config, "gate"), machine=_Lock(config, "machine"))
    return _held["gate"], _held["machine"]


@pytest.fixture(autouse=True)
def _shared_machine(request: pytest.FixtureRequest) -> Any:
    if "quiet_machine" in request.fixturenames:
        yield
        return
    gate, machine = _locks(request.config)
    gate.take(exclusive=False)  # waits while a quiet test holds it
    gate.drop()
    machine.take(exclusive=False)
    try:
        yield
    finally:
        machine.drop()


@pytest.fixture
def quiet_machine(request: pytest.FixtureRequest) -> Any:
    """This test runs with no other test running on the machine (under xdist; without it, nothing to do)."""
    gate, machine = _locks(request.config)
    gate.take(exclusive=True)
    try:
        machine.take(exclusive=True)
        try:
            yield
        finally:
            machine.drop()
    finally:
        gate.drop()
