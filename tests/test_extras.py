"""Every command that needs an optional extra says which one, before anything happens (issue 15).

Each case runs the real ``tfcloud`` command in a child process. Where the extra is missing (the base install:
``nox -s extras``), the command exits 2 with the exact ``pip install "tfcloud[...]"``, no traceback, and
leaves no file behind (working directory, temp dir, tfcloud's state dir). Where the extra is installed (the
full test environment), the same command gets past the check: it reaches what comes next (no Docker engine,
no Google credentials, the emulator runs, the plan is printed) and the extra is not mentioned.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.extras

# What each extra installs, as the code imports it (an independent list: the test does not ask tfcloud).
MODULES = {
    "cloud": ("google.cloud.aiplatform_v1", "google.cloud.logging_v2", "google.cloud.devtools.cloudbuild_v1",
              "google.cloud.storage", "google.auth", "grpc"),
    "docker": ("docker",),
    "notebook": ("nbformat", "IPython"),
    "emulator": ("grpc", "gcp_storage_emulator", "google.cloud.aiplatform_v1"),
    "tensorflow": ("tensorflow",),
    "tune": ("optuna", "matplotlib"),
    "ui": ("starlette", "uvicorn"),
}
REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(REPO_ROOT / "examples" / "digits_keras.py")
NOTEBOOK = str(REPO_ROOT / "tests" / "notebook" / "data" / "multi_worker_lookalike.ipynb")


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _state(extra: str) -> str:
    found = [_found(m) for m in MODULES[extra]]
    return "installed" if all(found) else "missing" if not any(found) else "partial"


@dataclass(frozen=True)
class Case:
    id: str
    extras: tuple[str, ...]  # what the message must name, in order
    argv: tuple[str, ...]
    message: str  # the first line, where one extra is missing
    then: str  # with the extras installed: what the command reaches instead (in its output)
    then_code: int = 2


CASES = [
    Case("build-docker", ("docker",), ("build", SCRIPT, "--project", "my-project", "--parent-image", "python:3.11"),
         "Error: Building the image with Docker needs the `docker` package, which is not installed.",
         "Cannot reach a Docker engine"),
    Case("build-cloudbuild", ("cloud",), ("build", SCRIPT, "--project", "my-project", "--parent-image",
                                          "python:3.11", "--image-build-bucket", "my-bucket"),
         "Error: Building with Cloud Build needs the `google.cloud.devtools.cloudbuild_v1` package, which is not "
         "installed.", "credentials"),
    Case("list-vertex", ("cloud",), ("list", "--vertex"),
         "Error: The Vertex AI backend needs the `google.cloud.aiplatform_v1` package, which is not installed.",
         "No Google Cloud credentials found"),
    Case("status-vertex", ("cloud",), ("status", "1234567890"),
         "Error: The Vertex AI backend needs the `google.cloud.aiplatform_v1` package, which is not installed.",
         "No Google Cloud credentials found"),
    Case("notebook-dry-run", ("notebook",), ("submit", NOTEBOOK, "--worker-count", "1", "--dry-run"),
         "Error: Running a notebook needs the `nbformat` package, which is not installed.",
         "Plan for", then_code=0),
    Case("submit-vertex", ("cloud", "docker"), ("submit", SCRIPT, "--vertex", "--project", "my-project",
                                                "--parent-image", "python:3.11"),
         "Error: Optional packages are not installed:", "No Google Cloud credentials found"),
    Case("submit-local", ("tensorflow",), ("submit", SCRIPT),
         "Error: A local job with a TensorFlow distribution strategy needs the `tensorflow` package, which is not "
         "installed.", ""),
    Case("tune-local", ("tune",), ("tune", SCRIPT, "--param", "units=int:8:16", "--metric", "val_accuracy",
                                   "--strategy", "none"),
         "Error: Local hyperparameter tuning needs the `optuna` package, which is not installed.", ""),
    Case("ui", ("ui",), ("ui", "--no-browser", "--port", "70000"),
         "Error: The dashboard (tfcloud ui) needs the `starlette` package, which is not installed.",
         "Invalid `--port`"),
]


def _command() -> list[str]:
    script = Path(sys.executable).with_name("tfcloud")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tfcloud.cli"]


@pytest.fixture
def sandbox(tmp_path: Path) -> dict[str, Path]:
    """Empty dirs the command may touch: its working dir, TMPDIR, HOME and tfcloud's state dir."""
    dirs = {name: tmp_path / name for name in ("cwd", "tmp", "home", "state")}
    for path in dirs.values():
        path.mkdir()
    return dirs


def _env(sandbox: dict[str, Path]) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "TMPDIR": str(sandbox["tmp"]), "HOME": str(sandbox["home"]), "TFCLOUD_HOME": str(sandbox["state"]),
        "CLOUDSDK_CONFIG": str(sandbox["home"] / "gcloud"), "NO_GCE_CHECK": "True",  # no metadata server probe
        "TFCLOUD_PROJECT": "my-project", "DOCKER_HOST": f"unix://{sandbox['tmp']}/no-engine.sock",
        "COLUMNS": "200",
    })
    return env


def _left(sandbox: dict[str, Path]) -> dict[str, list[str]]:
    return {name: sorted(str(p.relative_to(path)) for p in path.rglob("*"))
            for name, path in sandbox.items() if name != "home"}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_command_names_the_missing_extra(case: Case, sandbox: dict[str, Path]) -> None:
    states = {extra: _state(extra) for extra in case.extras}
    if set(states.values()) != {"missing"}:
        pytest.skip(f"needs an environment without {', '.join(case.extras)} (nox -s extras); here: {states}")
    proc = subprocess.run([*_command(), *case.argv], capture_output=True, text=True, timeout=120,
                          cwd=sandbox["cwd"], env=_env(sandbox))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output
    assert "Traceback" not in output
    lines = proc.stderr.splitlines()
    assert lines[0] == case.message, output
    assert lines[-1] == f'Install {"them" if len(case.extras) > 1 else "it"} with: pip install ' \
                        f'"tfcloud[{",".join(case.extras)}]"', output
    for extra in case.extras if len(case.extras) > 1 else ():
        assert f"(tfcloud[{extra}])" in output  # one line per missing extra
    assert _left(sandbox) == {"cwd": [], "tmp": [], "state": []}


@pytest.mark.parametrize("case", [c for c in CASES if c.then], ids=[c.id for c in CASES if c.then])
def test_command_gets_past_the_check_when_installed(case: Case, sandbox: dict[str, Path]) -> None:
    states = {extra: _state(extra) for extra in case.extras}
    if set(states.values()) != {"installed"}:
        pytest.skip(f"needs {', '.join(case.extras)} installed; here: {states}")
    proc = subprocess.run([*_command(), *case.argv], capture_output=True, text=True, timeout=300,
                          cwd=sandbox["cwd"], env=_env(sandbox))
    output = proc.stdout + proc.stderr
    assert proc.returncode == case.then_code, output
    assert case.then in output
    assert "Traceback" not in output
    assert 'pip install "tfcloud[' not in output
    assert _left(sandbox)["cwd"] == []


def test_emulator_start_names_the_missing_extra_or_runs(sandbox: dict[str, Path]) -> None:
    state = _state("emulator")
    if state == "partial":
        pytest.skip("the emulator extra is partly installed")
    env = _env(sandbox)
    del env["DOCKER_HOST"]  # replicas as local processes
    proc = subprocess.Popen([*_command(), "emulator", "start"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=sandbox["cwd"], env=env)
    try:
        if state == "missing":
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 2, out + err
            assert err.splitlines() == [
                "Error: The Google Cloud emulator needs the `grpc` package, which is not installed.",
                'Install it with: pip install "tfcloud[emulator]"',
            ]
        else:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert first.startswith("tfcloud emulator listening on 127.0.0.1:"), first + proc.stderr.read()
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, out + err
            assert "tfcloud emulator stopped" in out
        assert "Traceback" not in out + err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert _left(sandbox) == {"cwd": [], "tmp": [], "state": []}


SDK = """
import json, tfcloud
from tfcloud.errors import MissingExtraError
try:
    tfcloud.run(entry_point={script!r}, target="vertex", project="my-project",
                docker_config=tfcloud.DockerConfig(parent_image="python:3.11"))
except MissingExtraError as exc:
    print(json.dumps({{"extras": list(exc.extras), "hint": exc.hint}}))
except tfcloud.TfcloudError as exc:
    print(json.dumps({{"error": type(exc).__name__, "message": exc.message}}))
"""


def test_sdk_run_names_every_missing_extra(sandbox: dict[str, Path]) -> None:
    """The SDK checks up front too: tfcloud.run(target="vertex") in the base install names cloud and docker."""
    states = {extra: _state(extra) for extra in ("cloud", "docker")}
    if "partial" in states.values() or len(set(states.values())) != 1:
        pytest.skip(f"cloud and docker both missing or both installed; here: {states}")
    proc = subprocess.run([sys.executable, "-c", SDK.format(script=SCRIPT)], capture_output=True, text=True,
                          timeout=300, cwd=sandbox["cwd"], env=_env(sandbox))
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    if states["cloud"] == "missing":
        assert result == {"extras": ["cloud", "docker"],
                          "hint": 'Install them with: pip install "tfcloud[cloud,docker]"'}
    else:  # past the check: validation finds no Google credentials (before any build)
        assert result["error"] == "ConfigurationError"
        assert result["message"].startswith("No Google Cloud credentials found")
    assert _left(sandbox)["cwd"] == []


def test_cloud_demo_names_what_it_needs(sandbox: dict[str, Path]) -> None:
    """`nox -s demo_cloud`'s driver checks its extras first too (its run itself is the demo: minutes)."""
    states = {extra: _state(extra) for extra in ("cloud", "docker", "emulator")}
    if set(states.values()) != {"missing"}:
        pytest.skip(f"needs an environment without cloud, docker and emulator (nox -s extras); here: {states}")
    proc = subprocess.run([sys.executable, "-m", "tfcloud.testing.cloud_demo", SCRIPT], capture_output=True,
                          text=True, timeout=120, cwd=sandbox["cwd"], env=_env(sandbox))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == 'Install them with: pip install "tfcloud[cloud,docker,emulator]"'
    assert _left(sandbox) == {"cwd": [], "tmp": [], "state": []}


def test_build_dry_run_without_tensorflow_says_what_is_missing(sandbox: dict[str, Path]) -> None:
    """`tfcloud build --dry-run` shows only the image: in a base install (no TensorFlow to take the base
    image's version from, no --parent-image) that it cannot plan one is an error naming the fix, not exit 0."""
    if _state("tensorflow") != "missing":
        pytest.skip("needs an environment without TensorFlow (nox -s extras)")
    proc = subprocess.run([*_command(), "build", SCRIPT, "--dry-run"], capture_output=True, text=True,
                          timeout=120, cwd=sandbox["cwd"], env=_env(sandbox))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "Error: No image can be planned. Cannot choose a base image: TensorFlow is not installed here, and no "
        "`parent_image` was given. Pass DockerConfig(parent_image=\"tensorflow/tensorflow:2.21.0\") (CLI: "
        "--parent-image), or install TensorFlow: pip install \"tfcloud[tensorflow]\"")
    assert _left(sandbox) == {"cwd": [], "tmp": [], "state": []}
    # With --parent-image the plan needs no TensorFlow.
    proc = subprocess.run([*_command(), "build", SCRIPT, "--dry-run", "--parent-image", "python:3.11"],
                          capture_output=True, text=True, timeout=120, cwd=sandbox["cwd"], env=_env(sandbox))
    assert proc.returncode == 0, proc.stderr
    assert "Base image: python:3.11" in proc.stdout + proc.stderr


@pytest.mark.parametrize(("argv", "received"), [
    (["submit", "nosuchfile.py"], "'nosuchfile.py'"),  # a local job would need tfcloud[tensorflow]
    (["submit", "nosuchfile.py", "--vertex"], "'nosuchfile.py'"),  # tfcloud[cloud,docker]
    (["submit", "nosuchfile.ipynb", "--dry-run"], "'nosuchfile.ipynb'"),  # tfcloud[notebook]
    (["submit", "broken.py"], "<broken.py: line 1: "),  # a syntax error: not a missing package either
])
def test_a_missing_or_broken_entry_point_is_named_before_any_extra(argv: list[str], received: str,
                                                                   sandbox: dict[str, Path]) -> None:
    """The entry point is checked first: a typo in its name is not answered with a 2 GB install."""
    (sandbox["cwd"] / "broken.py").write_text("def f(:\n")
    proc = subprocess.run([*_command(), *argv], capture_output=True, text=True, timeout=120, cwd=sandbox["cwd"],
                          env=_env(sandbox))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("Error: Invalid `entry_point`: expected ") and received in proc.stderr, proc.stderr
    assert "pip install" not in proc.stderr and "Traceback" not in proc.stderr
