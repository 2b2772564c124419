import subprocess
import sys


def test_importing_the_package_and_plugin_loads_no_grpc_google_or_docker() -> None:
    code = (
        "import sys, tfcloud.emulator, tfcloud.emulator.faults, tfcloud.pytest_plugin\n"
        "heavy = [m for m in ('grpc', 'docker', 'google.cloud.aiplatform_v1', 'google.cloud.logging_v2',"
        " 'google.cloud.devtools', 'google.protobuf', 'gcp_storage_emulator') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
