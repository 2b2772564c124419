"""``tfcloud emulator start``: prints the endpoint and the settings, serves, and stops on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.emulator


def test_start_prints_settings_serves_and_stops_on_ctrl_c() -> None:
    import grpc
    from google.cloud.aiplatform_v1 import JobServiceClient
    from google.cloud.aiplatform_v1.services.job_service.transports.grpc import JobServiceGrpcTransport

    env = {k: v for k, v in os.environ.items() if k != "DOCKER_HOST"}
    env["COLUMNS"] = "200"
    process = subprocess.Popen(
        [sys.executable, "-m", "tfcloud.emulator.cli", "start", "--project", "cli-project"],
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
        endpoint = lines[0].removeprefix("tfcloud emulator listening on ")
        assert endpoint.startswith("127.0.0.1:")
        assert f"export TFCLOUD_EMULATOR_HOST={endpoint}" in lines
        assert "export GOOGLE_CLOUD_PROJECT=cli-project" in lines
        assert any(line.startswith("export STORAGE_EMULATOR_HOST=http://127.0.0.1:") for line in lines)
        assert "Replicas run as local processes" in lines

        client = JobServiceClient(transport=JobServiceGrpcTransport(channel=grpc.insecure_channel(endpoint)))
        try:
            response = client.list_custom_jobs(parent="projects/cli-project/locations/us-central1")
            assert list(response) == []
        finally:
            client.transport.close()

        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=30)
        assert process.returncode == 0
        assert "tfcloud emulator stopped" in out
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert not psutil.pid_exists(process.pid) or psutil.Process(process.pid).status() == psutil.STATUS_ZOMBIE


def test_the_app_has_a_start_command_with_help() -> None:
    from tfcloud.emulator.cli import app

    result = CliRunner().invoke(app, ["start", "--help"])
    assert result.exit_code == 0
    assert "--docker-host" in result.output and "Ctrl-C" in result.output
