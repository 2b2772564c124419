"""``CustomJob.from_local_script`` against the emulator: the SDK packages the script, uploads it to the staging
bucket (the storage emulator), and the emulator installs and runs the package. No tfcloud import here."""

import os
import pathlib
import sys
import tempfile

from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, storage

endpoint = os.environ["TFCLOUD_EMULATOR_API_ENDPOINT"]
project = os.environ["GOOGLE_CLOUD_PROJECT"]
location = os.environ["TFCLOUD_EMULATOR_LOCATION"]

gcs = storage.Client(project=project, credentials=AnonymousCredentials())
if gcs.lookup_bucket("sdk-script-staging") is None:
    gcs.create_bucket("sdk-script-staging")
aiplatform.init(project=project, location=location, api_endpoint=endpoint, credentials=AnonymousCredentials(),
                staging_bucket="gs://sdk-script-staging")
script = pathlib.Path(tempfile.mkdtemp()) / "train.py"
script.write_text("print('trained from a local script')\n")
job = aiplatform.CustomJob.from_local_script(
    display_name="sdk-local-script", script_path=str(script),
    container_uri="us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest", machine_type="n1-standard-4")
job.run(sync=True)
print("local script", job.state.name, job.job_spec.worker_pool_specs[0].python_package_spec.python_module)
assert not [name for name in sys.modules if name.startswith("tfcloud")], "the client imported tfcloud"
sys.exit(0 if job.state.name == "JOB_STATE_SUCCEEDED" else 1)
