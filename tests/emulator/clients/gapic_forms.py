"""Google's libraries against the emulator, as docs/emulator.md shows them: no tfcloud import here.

Run with the environment ``tfcloud emulator start`` prints (``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` set before this
process starts); prints one line per form that worked.
"""

import os
import sys

from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform_v1, storage
from google.cloud import logging as cloud_logging

endpoint = os.environ["TFCLOUD_EMULATOR_API_ENDPOINT"]
project = os.environ["GOOGLE_CLOUD_PROJECT"]
location = os.environ["TFCLOUD_EMULATOR_LOCATION"]
parent = f"projects/{project}/locations/{location}"

# GAPIC: every client with client_options
jobs = aiplatform_v1.JobServiceClient(credentials=AnonymousCredentials(), client_options={"api_endpoint": endpoint})
job = jobs.create_custom_job(parent=parent, custom_job={
    "display_name": "gapic-form",
    "labels": {"équipe": "données"},  # international characters are allowed
    "job_spec": {"worker_pool_specs": [{
        "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
        "container_spec": {"image_uri": "gcr.io/p/i", "command": [sys.executable, "-c", "print('gapic')"]}}]},
})
assert job.name.startswith("projects/") and dict(job.labels) == {"équipe": "données"}
assert any(j.name == job.name for j in jobs.list_custom_jobs(request={
    "parent": parent, "filter": 'display_name="gapic-form"'}))
print("gapic job", job.name)
try:
    jobs.create_custom_job(parent=parent, custom_job={
        "display_name": "refused", "job_spec": {"worker_pool_specs": [{
            "machine_spec": {"machine_type": "e2-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
                             "accelerator_count": 1},
            "replica_count": 1, "container_spec": {"image_uri": "gcr.io/p/i"}}]}})
    raise SystemExit("a T4 on e2-standard-8 was accepted")
except exceptions.InvalidArgument as exc:
    (bad_request,) = exc.details
    print("gapic refused", bad_request.field_violations[0].field)
resources = aiplatform_v1.PersistentResourceServiceClient(credentials=AnonymousCredentials(),
                                                          client_options={"api_endpoint": endpoint})
print("gapic resources", len(list(resources.list_persistent_resources(parent=parent))))

# google.cloud.logging: the same endpoint
logging_client = cloud_logging.Client(project=project, credentials=AnonymousCredentials(),
                                      client_options={"api_endpoint": endpoint})
logging_client.logger("gapic-form").log_text("hello from google.cloud.logging")
entries = list(logging_client.list_entries(filter_=f'logName="projects/{project}/logs/gapic-form"'))
assert "hello from google.cloud.logging" in [entry.payload for entry in entries], entries
print("logging", len(entries))

# google.cloud.storage: STORAGE_EMULATOR_HOST (or client_options={"api_endpoint": ...})
gcs = storage.Client(project=project, credentials=AnonymousCredentials())
bucket = gcs.bucket("gapic-form-bucket")
if not bucket.exists():
    bucket = gcs.create_bucket("gapic-form-bucket")
bucket.blob("hello.txt").upload_from_string(b"hi")
assert bucket.blob("hello.txt").download_as_bytes() == b"hi"
print("storage", gcs.get_bucket("gapic-form-bucket").name)
explicit = storage.Client(project=project, credentials=AnonymousCredentials(),
                          client_options={"api_endpoint": os.environ["STORAGE_EMULATOR_HOST"]})
assert explicit.bucket("gapic-form-bucket").blob("hello.txt").download_as_bytes() == b"hi"
print("storage client_options")
assert not [name for name in sys.modules if name.startswith("tfcloud")], "the client imported tfcloud"
