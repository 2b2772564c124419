"""A target from another package (tests/plugin_target: exactly two files, a pyproject.toml and a module),
installed with pip, runs a job from the CLI and from ``run()`` without a line of tfcloud changed; tfcloud's
start-up never reads the entry points it comes through."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parent.parent / "plugin_target"


def test_the_plugin_is_two_files() -> None:
    assert sorted(p.name for p in PLUGIN.iterdir() if p.name != "__pycache__") == ["pyproject.toml",
                                                                                  "tfcloud_echo.py"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plug-in, installed by pip (from a copy: an in-tree build leaves build/ and *.egg-info behind) into
    a directory of its own that the commands below find through PYTHONPATH."""
    pytest.importorskip("setuptools", reason="the plug-in package builds with setuptools")
    source = tmp_path_factory.mktemp("echo-src")
    for name in ("pyproject.toml", "tfcloud_echo.py"):
        shutil.copy(PLUGIN / name, source / name)
    site = tmp_path_factory.mktemp("echo-site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(site), str(source)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert (site / "tfcloud_echo.py").is_file()
    return site


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("import sys\nprint('trained with', sys.argv[1:])\n")
    return path


def test_a_job_runs_on_the_plugin_target_from_the_cli(installed: Path, script: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tfcloud.cli", "submit", str(script), "--target", "echo",
                           "-o", "greeting=hi from echo", "-o", "repeat=2", "--strategy", "none", "--", "--epochs",
                           "1"], capture_output=True, text=True, env=_env(installed), check=False)
    assert done.returncode == 0, done.stderr
    lines = [line.split("| ", 1)[-1] for line in done.stdout.splitlines()]
    assert lines[:3] == ["hi from echo", "hi from echo", "trained with ['--epochs', '1']"]
    assert "Submitted job echo-" in done.stderr and "succeeded" in done.stderr


def test_the_plugin_target_refuses_what_it_does_not_take(installed: Path, script: Path) -> None:
    for flags, named in ((["--target", "echo", "--spot"], "`spot`"), (["--target", "echo", "-o", "color=red"],
                                                                      "`color`"),
                         (["--target", "echo", "-o", "repeat=twice"], "`repeat`")):
        done = subprocess.run([sys.executable, "-m", "tfcloud.cli", "submit", str(script), *flags, "--dry-run"],
                              capture_output=True, text=True, env=_env(installed), check=False)
        assert done.returncode == 2, (flags, done.stderr)
        assert named in done.stderr and "Traceback" not in done.stderr


def test_a_job_runs_on_the_plugin_target_from_run(installed: Path, script: Path) -> None:
    program = textwrap.dedent(f"""
        import tfcloud
        from tfcloud_echo import EchoTarget

        job = tfcloud.run({str(script)!r}, target="echo", greeting="by keyword", distribution_strategy=None)
        print(job.info().state.value, [l.text for l in job.logs()][:2])
        job = tfcloud.run({str(script)!r}, target=EchoTarget(greeting="by value"), distribution_strategy=None,
                          entry_point_args=["x"])
        print(job.info().state.value, [l.text for l in job.logs()])
        plan = tfcloud.run({str(script)!r}, target="echo", repeat=3, dry_run=True)
        print(plan.to_dict()["target_options"])
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=_env(installed),
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "succeeded ['by keyword', 'trained with []']",
        "succeeded ['by value', \"trained with ['x']\"]",
        "{'repeat': 3}",
    ]


def test_start_up_reads_no_entry_points(installed: Path) -> None:
    """`tfcloud --help` lists the built-in targets' flags without looking for plug-ins (reading entry points
    is what importlib.metadata costs at every start-up)."""
    program = ("import tfcloud.targets as t\nfrom tfcloud.cli import main\n"
               "code = main(['--help'])\nprint(code, t._PLUGINS is None)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=_env(installed),
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 True"
