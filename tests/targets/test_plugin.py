"""A target from another package (tests/plugin_target: exactly two files, a pyproject.toml and a module),
installed with pip, runs a job from the CLI and from ``run()`` without a line of tfcloud changed, and every verb
works on its jobs (status, logs, cancel, list, artifacts, the dashboard's pages); tfcloud's start-up never reads
the entry points it comes through."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import urllib.request
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


def test_a_plugin_targets_tuner_runs_its_trials_through_submit_trial(installed: Path, script: Path,
                                                                      tmp_path: Path) -> None:
    """The plug-in's tuner keeps the Tuner protocol: tfcloud hands it ``submit_trial``, and each trial it submits
    is a job of the plug-in's target, with the trial's ``--NAME=VALUE`` after the script's own arguments."""
    program = textwrap.dedent(f"""
        import tfcloud

        study = tfcloud.tune({str(script)!r}, target="echo", params=["opt=categorical:adam,sgd"], metric="loss",
                             max_trials=2, distribution_strategy=None, entry_point_args=["--epochs", "1"])
        info = study.wait()
        print(info.state.value, [(t.trial_id, dict(t.params), t.job_id[:5]) for t in info.trials])
        for trial in info.trials:
            print([line.text for line in tfcloud.attach(trial.job_id, target="echo").logs()])
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env={**_env(installed), "TFCLOUD_HOME": str(tmp_path)}, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "succeeded [('1', {'opt': 'adam'}, 'echo-'), ('2', {'opt': 'sgd'}, 'echo-')]",
        "['hello', \"trained with ['--epochs', '1', '--opt=adam']\"]",
        "['hello', \"trained with ['--epochs', '1', '--opt=sgd']\"]",
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


def _cli(site: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tfcloud.cli", *args], capture_output=True, text=True,
                          env={**_env(site), "TFCLOUD_HOME": str(home)}, check=False)


@pytest.fixture(scope="module")
def echo_job(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """One echo job, submitted from the CLI with a label and an env variable; its id and the state dir."""
    home = tmp_path_factory.mktemp("echo-home")
    script = home / "train.py"
    script.write_text("import os, pathlib\nprint('color', os.environ['COLOR'])\n"
                      "pathlib.Path(os.environ['AIP_MODEL_DIR'], 'weights.txt').write_text('42')\n")
    done = _cli(installed, "submit", str(script), "--target", "echo", "--strategy", "none", "--label", "team=echo",
                "--env", "COLOR=blue", "--display-name", "echo-run", home=home)
    assert done.returncode == 0, done.stderr
    found = re.search(r"Submitted job (echo-[a-z0-9-]+)", done.stderr)
    assert found is not None, done.stderr
    return found.group(1), home


def test_every_job_command_works_on_a_plugin_targets_job(installed: Path, echo_job: tuple[str, Path]) -> None:
    job_id, home = echo_job
    done = _cli(installed, "status", job_id, home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [f"{job_id}  succeeded", "  target    echo", "  name      echo-run"]
    shown = json.loads(_cli(installed, "status", job_id, "--json", home=home).stdout)
    assert (shown["target"], shown["labels"], shown["display_name"]) == ("echo", {"team": "echo"}, "echo-run")
    done = _cli(installed, "logs", job_id, home=home)
    assert done.returncode == 0, done.stderr
    assert [line.split("| ", 1)[-1] for line in done.stdout.splitlines()] == ["hello", "color blue"]
    done = _cli(installed, "logs", job_id, "--tail", "1", home=home)
    assert [line.split("| ", 1)[-1] for line in done.stdout.splitlines()] == ["color blue"]
    done = _cli(installed, "cancel", job_id, home=home)
    assert (done.returncode, done.stdout) == (0, f"{job_id}\tsucceeded\n"), done.stderr
    done = _cli(installed, "artifacts", job_id, "--json", home=home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["artifacts"] == [{"path": "model/weights.txt", "size": 2}]
    for flags in (["--target", "echo"], ["--target", "echo", "--label", "team=echo"]):
        done = _cli(installed, "list", *flags, "--json", home=home)
        assert done.returncode == 0, done.stderr
        assert [row["job_id"] for row in json.loads(done.stdout)] == [job_id]
    done = _cli(installed, "list", "--target", "echo", "--label", "team=other", "--json", home=home)
    assert json.loads(done.stdout) == []


def test_a_plugin_job_given_another_target_is_refused(installed: Path, echo_job: tuple[str, Path]) -> None:
    job_id, home = echo_job
    done = _cli(installed, "status", job_id, "--local", home=home)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "expected a job id of the local target (local-NAME-DATE-TIME-XXXX)" in done.stderr
    assert "(echo runs such jobs)" in done.stderr
    done = _cli(installed, "list", "--target", "echo", "--spot", home=home)
    assert done.returncode == 2 and "Error: No such option: --spot" in done.stderr


def test_the_plugin_targets_place_goes_to_every_verb_and_its_job_setup_to_none(installed: Path,
                                                                              tmp_path: Path) -> None:
    """The echo target declares its place (``shelf``) and its job setup (``greeting``, ``repeat``) in its module:
    a job submitted on a shelf is found there by every verb, and the job setup is refused by each of them."""
    home = tmp_path / "home"
    script = tmp_path / "train.py"
    script.write_text("import os, pathlib\npathlib.Path(os.environ['AIP_MODEL_DIR'], 'w.txt').write_text('1')\n")
    done = _cli(installed, "submit", str(script), "--target", "echo", "-o", "shelf=spare", "-o", "greeting=hi",
                "--strategy", "none", home=home)
    assert done.returncode == 0, done.stderr
    found = re.search(r"Submitted job (echo-[a-z0-9-]+)", done.stderr)
    assert found is not None, done.stderr
    job_id = found.group(1)
    on_shelf = ["--target", "echo", "-o", "shelf=spare"]
    assert _cli(installed, "status", job_id, *on_shelf, home=home).stdout.startswith(f"{job_id}  succeeded")
    assert _cli(installed, "status", job_id, home=home).returncode != 0  # not on the target's own shelf
    done = _cli(installed, "logs", job_id, *on_shelf, home=home)
    assert [line.split("| ", 1)[-1] for line in done.stdout.splitlines()] == ["hi"], done.stderr
    done = _cli(installed, "cancel", job_id, *on_shelf, home=home)
    assert (done.returncode, done.stdout) == (0, f"{job_id}\tsucceeded\n"), done.stderr
    done = _cli(installed, "artifacts", job_id, *on_shelf, "--json", home=home)
    assert json.loads(done.stdout)["artifacts"] == [{"path": "model/w.txt", "size": 1}], done.stderr
    done = _cli(installed, "list", *on_shelf, "--json", home=home)
    assert [row["job_id"] for row in json.loads(done.stdout)] == [job_id], done.stderr
    assert json.loads(_cli(installed, "list", "--target", "echo", "--json", home=home).stdout) == []
    for verb in (["status", job_id], ["logs", job_id], ["cancel", job_id], ["artifacts", job_id], ["list"]):
        done = _cli(installed, *verb, *on_shelf, "-o", "greeting=hey", home=home)
        assert done.returncode == 2, (verb, done.stderr)
        assert done.stderr.splitlines()[0] == ("Error: Invalid `-o greeting`: expected a place option of the "
                                               "echo target (shelf), received 'greeting, a job option'."), verb


def test_the_dashboard_shows_a_plugin_targets_jobs(installed: Path, echo_job: tuple[str, Path]) -> None:
    pytest.importorskip("starlette", reason="the dashboard needs tfcloud[ui]")
    pytest.importorskip("uvicorn", reason="the dashboard needs tfcloud[ui]")
    job_id, home = echo_job
    proc = subprocess.Popen([sys.executable, "-m", "tfcloud.cli", "ui", "--port", "0", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**_env(installed), "TFCLOUD_HOME": str(home)})
    try:
        assert proc.stdout is not None
        base, _, token = proc.stdout.readline().strip().partition("/?token=")
        assert base.startswith("http://127.0.0.1:"), base

        def get(path: str, method: str = "GET") -> str:
            request = urllib.request.Request(base + path, method=method, headers={"X-Tfcloud-Token": token})
            with urllib.request.urlopen(request, timeout=60) as response:
                assert response.status == 200
                return str(response.read().decode())

        index = get("/")
        assert job_id in index and 'value="echo"' in index
        assert job_id in get("/?target=echo&label=team%3Decho")
        assert job_id not in get("/fragments/jobs?target=echo&label=team%3Dother")
        assert "echo-run" in get(f"/jobs/{job_id}")
        assert "weights.txt" in get(f"/fragments/jobs/{job_id}/artifacts")
        assert json.loads(get(f"/api/jobs/{job_id}/cancel", method="POST")) == {"job_id": job_id,
                                                                                "state": "succeeded"}
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err


def test_the_plugin_target_honours_or_refuses_every_job_option(installed: Path, tmp_path: Path) -> None:
    """The job-option contract (tests/targets/test_contract_jobs.py) holds for a plug-in target too: the echo
    target runs the chief alone in this Python, so it refuses workers and requirements, and shows the rest."""
    root = Path(__file__).resolve().parents[2]
    program = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(root)!r})
        import tfcloud
        from tfcloud.errors import ValidationError
        from pathlib import Path
        from tests.targets.test_contract_jobs import JOB_OPTIONS, _fill

        entry = Path({str(tmp_path)!r}) / "train.py"
        entry.write_text("print('ok')\\n")
        (entry.parent / "requirements.txt").write_text("six\\n")
        (entry.parent / "data").mkdir()
        (entry.parent / "data" / "part-0.csv").write_text("1,2\\n")
        for name, (_, kwargs, shown) in sorted(JOB_OPTIONS.items()):
            kwargs = {{k: _fill(v, entry) for k, v in kwargs.items()}}
            try:
                plan = tfcloud.run(str(entry), target="echo", dry_run=True, **kwargs)
            except ValidationError as exc:
                print(name, "refused" if exc.exit_code == 2 and "the echo target" in str(exc)
                      else str(exc).replace("\\n", " "))
                continue
            print(name, "honoured" if shown(plan.to_dict()) else "IGNORED")
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=_env(installed),
                          check=False)
    assert done.returncode == 0, done.stderr
    outcome = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    # --data: the echo target neither reads directories in place nor has a store to ship them to (a dry run
    # refuses that as the submission does)
    assert {k for k, v in outcome.items() if v == "refused"} == {"data", "evaluator_count", "ps_count",
                                                                 "requirements_txt", "worker_count"}, outcome
    assert {v for k, v in outcome.items() if v != "refused"} == {"honoured"}, outcome
