"""A broken plug-in is reported as its own (exit 2 naming its package, no traceback) and never affects another
target's jobs or the settings check; two packages that add one target name are refused naming both; a plug-in
option named like a job option (``worker_count``) reaches the plug-in through ``-o``. The plug-ins are made here:
a module and a ``*.dist-info`` with its ``entry_points.txt`` on the PYTHONPATH of a ``tfcloud`` subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

GOOD = '''
from dataclasses import dataclass
from typing import ClassVar
from tfcloud.targets import Option, Target

@dataclass(frozen=True, kw_only=True)
class {cls}(Target):
    name: ClassVar[str] = "{name}"
    options: ClassVar[tuple[Option, ...]] = (
        Option(name="worker_count", type=int, help="Its own worker count.", example=2),
        Option(name="color", help="A color.", example="red"{color_check}),
    )
    id_prefix: ClassVar[str | None] = "{name}-"
    backend: ClassVar[str] = "{backend}"
    worker_count: int = 0
    color: str = "blue"
{check}
'''
PLUGINS = {
    # package: (module, target name, source)
    "tfcloud-broken": ("tfb_broken", "broken", "raise ImportError('no module named numpyy')\n"),
    "tfcloud-badcheck": ("tfb_badcheck", "badcheck", GOOD.format(
        cls="T", name="badcheck", color_check="", backend="tfb_badcheck:B",
        check="    def check(self, settings):\n        raise RuntimeError('check blew up')\n")),
    "tfcloud-badoption": ("tfb_badoption", "badoption", "def _boom(name, value):\n    raise KeyError(value)\n"
                          + GOOD.format(cls="T", name="badoption", color_check=", check=_boom",
                                        backend="tfb_badoption:B", check="")),
    "tfcloud-badbackend": ("tfb_badbackend", "badbackend", GOOD.format(
        cls="T", name="badbackend", color_check="", backend="tfb_nobackend:Backend", check="")),
    "tfcloud-twin-a": ("tfb_twin_a", "twin", GOOD.format(cls="T", name="twin", color_check="",
                                                        backend="tfb_twin_a:B", check="")),
    "tfcloud-twin-b": ("tfb_twin_b", "twin", GOOD.format(cls="T", name="twin", color_check="",
                                                        backend="tfb_twin_b:B", check="")),
    "tfcloud-counter": ("tfb_counter", "counter", GOOD.format(cls="T", name="counter", color_check="",
                                                             backend="tfb_counter:B", check="")),
}


def _site(root: Path, packages: list[str]) -> Path:
    site = root / "site"
    site.mkdir()
    for package in packages:
        module, target, source = PLUGINS[package]
        (site / f"{module}.py").write_text(textwrap.dedent(source))
        info = site / f"{package.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[tfcloud.targets]\n{target} = {module}:T\n")
    (site / "tfb_nobackend.py").write_text("raise RuntimeError('backend import failed')\n")
    return site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _site(tmp_path_factory.mktemp("plugins"), list(PLUGINS))


def _tfcloud(site: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             ) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, **(env or {}),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "tfcloud.cli", *args], capture_output=True, text=True,
                          env=environ, cwd=cwd, check=False, timeout=120)


@pytest.mark.parametrize(("target", "args", "package", "says"), [
    ("broken", [], "tfcloud-broken", "ImportError: no module named numpyy"),
    ("badcheck", [], "tfcloud-badcheck", "RuntimeError: check blew up"),
    ("badoption", ["-o", "color=red"], "tfcloud-badoption", "KeyError"),
])
def test_a_broken_plugin_is_reported_as_its_packages(site: Path, script: Path, tmp_path: Path, target: str,
                                                     args: list[str], package: str, says: str) -> None:
    home = tmp_path / "home"
    for extra in (["--dry-run"], ["--detach"]):
        done = _tfcloud(site, "submit", str(script), "--target", target, *args, *extra,
                        env={"TFCLOUD_HOME": str(home)})
        assert done.returncode == 2, done.stderr
        assert "Invalid `target`" in done.stderr and package in done.stderr and says in done.stderr
        assert "Traceback" not in done.stderr
        assert not home.exists() or not any(home.rglob("*"))  # nothing in the state directory


def test_a_plugin_whose_backend_does_not_import_is_reported_as_its_packages(site: Path, script: Path) -> None:
    done = _tfcloud(site, "submit", str(script), "--target", "badbackend", "--strategy", "none")
    assert done.returncode == 2, done.stderr
    assert "tfcloud-badbackend" in done.stderr and "backend import failed" in done.stderr
    assert "Traceback" not in done.stderr


def test_two_packages_adding_one_target_are_refused_naming_both(site: Path, script: Path) -> None:
    done = _tfcloud(site, "submit", str(script), "--target", "twin", "--dry-run")
    assert done.returncode == 2, done.stderr
    assert "tfcloud-twin-a and tfcloud-twin-b" in done.stderr and "Traceback" not in done.stderr


def test_every_use_of_a_twice_added_name_is_refused_and_doctor_lists_the_clashes(tmp_path: Path,
                                                                                 script: Path) -> None:
    # A site of its own: the two twins, and a package whose plug-in takes the built-in name "local".
    PLUGINS["tfcloud-shadow"] = ("tfb_shadow", "local", "from tfb_twin_a import T\n")
    try:
        site = _site(tmp_path, ["tfcloud-twin-a", "tfcloud-twin-b", "tfcloud-shadow"])
    finally:
        del PLUGINS["tfcloud-shadow"]
    home = tmp_path / "home"
    for args, target in ((["submit", str(script), "--target", "twin", "--dry-run"], "local"),
                         (["submit", str(script), "--detach"], "twin"),  # the target setting, not the flag
                         (["doctor", "--target", "twin"], "local"), (["list", "--target", "twin"], "local")):
        done = _tfcloud(site, *args, env={"TFCLOUD_HOME": str(home), "TFCLOUD_TARGET": target})
        assert done.returncode == 2, (args, done.stderr)
        assert "tfcloud-twin-a and tfcloud-twin-b" in done.stderr, (args, done.stderr)
        assert "pip uninstall tfcloud-twin-a or tfcloud-twin-b" in done.stderr and "Traceback" not in done.stderr
    assert not home.exists() or not any(home.rglob("*"))
    done = _tfcloud(site, "doctor", "--target", "local", "--json")
    rows = {row["check"]: row for row in json.loads(done.stdout)["checks"]}
    assert rows["target twin"] == {
        "check": "target twin", "ok": False, "needed": False,
        "found": "added by tfcloud-twin-a and tfcloud-twin-b: neither runs (--target twin exits 2 naming both)",
        "fix": "Uninstall all but one: pip uninstall tfcloud-twin-a or tfcloud-twin-b"}
    assert rows["target local"]["found"].startswith("built in, and also added by tfcloud-shadow: the built-in")
    assert rows["target local"]["fix"] == "Uninstall the plug-in: pip uninstall tfcloud-shadow"
    assert not rows["target local"]["needed"]
    # The built-in target runs, the plug-in's never does: its plan says local, as without the plug-in.
    done = _tfcloud(site, "submit", str(script), "--target", "local", "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["target"] == "local"


def test_a_plugin_option_named_worker_count_reaches_the_plugin(site: Path, script: Path) -> None:
    done = _tfcloud(site, "submit", str(script), "--target", "counter", "-o", "worker_count=3", "--dry-run",
                    "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["target_options"] == {"worker_count": 3}
    assert [pool["role"] for pool in plan["pools"]] == ["chief"]  # the job's own worker_count is untouched


def test_a_typo_in_the_settings_is_named_beside_a_broken_plugin(site: Path, script: Path) -> None:
    (script.parent / "pyproject.toml").write_text('[tool.tfcloud]\nregoin = "us-central1"\n')
    done = _tfcloud(site, "submit", str(script), "--dry-run", cwd=script.parent)
    assert done.returncode == 2, done.stderr
    assert "regoin" in done.stderr and "pyproject.toml" in done.stderr and "Traceback" not in done.stderr


# --- another target's jobs, with every broken plug-in installed --------------------------------------------------
IMAGE = "localhost:5000/tfcloud/isolation:test"


@pytest.fixture(scope="module")
def vertex_job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, str]]:
    pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI job needs tfcloud[cloud]")
    from tfcloud.emulator import Emulator
    from tfcloud.flow.pipeline import prepare
    from tfcloud.flow.settings import Settings
    from tfcloud.flow.validate import build_job
    from tfcloud.google.cloud.gcloud import RetryPolicy
    from tfcloud.google.vertex.backend import VertexBackend
    from tfcloud.job.artifacts import ImageRef
    from tfcloud.targets import VertexTarget

    with Emulator(project="tfcloud-test", storage=False,
                  entrypoints={IMAGE: [sys.executable, "-c", "print('trained on vertex')"]}) as emu:
        work = tmp_path_factory.mktemp("vertex-job")
        (work / "train.py").write_text("pass\n")
        where = VertexTarget(project="tfcloud-test", region="us-central1", emulator_host=emu.endpoint)
        backend = VertexBackend(settings=Settings(target="vertex"), target=where,
                                retry=RetryPolicy(initial=0.01, maximum=0.05, deadline=10))
        try:
            spec, target = build_job(entry_point=str(work / "train.py"), target=where, distribution_strategy=None)
            job, _ = prepare(spec, target, work)
            handle = backend.submit(replace(job, image=ImageRef(uri=IMAGE)))
            handle.wait(timeout=60)
            yield emu, handle.job_id
        finally:
            backend.close()


@pytest.mark.parametrize("command", [["status"], ["logs"], ["cancel"], ["artifacts"]])
def test_a_broken_plugin_never_affects_a_vertex_job(site: Path, vertex_job: tuple[Any, str],
                                                    command: list[str]) -> None:
    emulator, job_id = vertex_job
    done = _tfcloud(site, *command, job_id, env=dict(emulator.settings.env))
    assert "broken" not in done.stderr and "tfcloud-" not in done.stderr and "Traceback" not in done.stderr
    if command == ["status"]:
        assert done.returncode == 0, done.stderr
        assert "succeeded" in done.stdout.lower()
    if command == ["logs"]:
        assert done.returncode == 0, done.stderr
        assert "trained on vertex" in done.stdout
