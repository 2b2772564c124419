"""Google's own libraries reach the emulator the way docs/emulator.md says, with no tfcloud import in the client:
the scripts in ``clients/`` run in a fresh process with the environment ``tfcloud emulator start`` prints (gRPC
reads ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` once, before its first TLS channel: it is set before the process
starts), and dial the emulator's TLS endpoint through ``api_endpoint`` as they dial Google."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.emulator

CLIENTS = Path(__file__).parent / "clients"


def _run(script: str, emulator: Any) -> list[str]:
    env = {**os.environ, **emulator.settings.env}
    result = subprocess.run([sys.executable, str(CLIENTS / script)], env=env, capture_output=True, text=True,
                            timeout=240, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout.splitlines()


def test_gapic_logging_and_storage_clients_connect_with_api_endpoint(emulator: Any) -> None:
    lines = _run("gapic_forms.py", emulator)
    assert any(line.startswith("gapic job projects/") for line in lines)
    assert "gapic refused job_spec.worker_pool_specs[0].machine_spec.accelerator_type" in lines
    assert any(line.startswith("gapic resources ") for line in lines)
    assert any(line.startswith("logging ") for line in lines)
    assert "storage gapic-form-bucket" in lines
    assert "storage client_options" in lines


def _sdk_polls_once(emulator: Any) -> None:
    """The SDK's run() reads the job's state every 5 s and has no setting for it: the emulator answers its first
    read once the job ended (docs/emulator.md, Fault injection), so it sleeps for none."""
    emulator.faults.answer_once_ended("GetCustomJob", within=120)
    emulator.faults.answer_once_ended("GetHyperparameterTuningJob", within=120)


def test_the_high_level_sdk_runs_submits_cancels_lists_tunes_and_holds_resources(emulator: Any) -> None:
    _sdk_polls_once(emulator)
    lines = _run("sdk_forms.py", emulator)
    assert "run JOB_STATE_SUCCEEDED" in lines
    assert "cancel [True]" in lines
    assert "refused job_spec.worker_pool_specs[0].machine_spec.machine_type" in lines
    assert "tuning JOB_STATE_SUCCEEDED 2" in lines
    assert "resource RUNNING ['sdk-cluster']" in lines


def test_custom_job_from_local_script_runs_offline(emulator: Any) -> None:
    _sdk_polls_once(emulator)
    lines = _run("sdk_local_script.py", emulator)
    assert "local script JOB_STATE_SUCCEEDED aiplatform_custom_trainer_script.task" in lines


def test_without_the_roots_variable_the_tls_endpoint_is_not_trusted(emulator: Any) -> None:
    """What the variable is for: a fresh process without it fails the handshake (UNAVAILABLE), as Google's
    libraries do against any server whose certificate they do not trust."""
    env = {k: v for k, v in {**os.environ, **emulator.settings.env}.items()
           if k != "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"}
    code = ("import os; from google.api_core import exceptions; from google.auth.credentials import "
            "AnonymousCredentials; from google.cloud import aiplatform_v1\n"
            "client = aiplatform_v1.JobServiceClient(credentials=AnonymousCredentials(), client_options={"
            "'api_endpoint': os.environ['TFCLOUD_EMULATOR_API_ENDPOINT']})\n"
            "try:\n"
            "    list(client.list_custom_jobs(parent='projects/p/locations/us-central1', timeout=10, retry=None))\n"
            "except exceptions.ServiceUnavailable as exc:\n"
            "    print('untrusted', 'CERTIFICATE_VERIFY_FAILED' in str(exc))\n")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                            check=False)
    assert "untrusted True" in result.stdout, result.stdout + result.stderr[-2000:]


def test_the_lines_tfcloud_emulator_start_prints_are_what_a_client_needs() -> None:
    """Paste the ``export`` lines ``tfcloud emulator start`` prints into a fresh process: Google's clients connect."""
    import signal
    import time

    env = {k: v for k, v in os.environ.items() if k != "DOCKER_HOST"}
    env["COLUMNS"] = "200"
    process = subprocess.Popen([sys.executable, "-m", "tfcloud.emulator.cli", "start", "--project", "pasted"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while not any(line.startswith("Press Ctrl-C") for line in lines) and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip("\n"))
        exports = dict(line.removeprefix("export ").split("=", 1) for line in lines if line.startswith("export "))
        tls = exports["TFCLOUD_EMULATOR_API_ENDPOINT"]
        assert f"TLS (Google's libraries' api_endpoint) on {tls}" in lines
        assert Path(exports["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"]).read_bytes().startswith(b"-----BEGIN CERTIFICATE")
        assert any(f'api_endpoint="{tls}"' in line for line in lines)  # the snippet to paste
        client_env = {k: v for k, v in os.environ.items() if not k.startswith(("GRPC_", "TFCLOUD_", "STORAGE_"))}
        result = subprocess.run([sys.executable, str(CLIENTS / "gapic_forms.py")], env={**client_env, **exports},
                                capture_output=True, text=True, timeout=240, check=False)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert "storage gapic-form-bucket" in result.stdout.splitlines()
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
