"""The high-level Vertex AI SDK against the emulator, as docs/emulator.md shows it: no tfcloud import here.

Run with the environment ``tfcloud emulator start`` prints (``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` set before this
process starts, ``STORAGE_EMULATOR_HOST`` for the staging bucket). The SDK polls every 5 s: the test has the
emulator answer its first poll once the job ended (``faults.answer_once_ended``).
"""

import os
import sys

from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, storage
from google.cloud.aiplatform import hyperparameter_tuning as hpt
from google.cloud.aiplatform.persistent_resource import PersistentResource

endpoint = os.environ["TFCLOUD_EMULATOR_API_ENDPOINT"]
project = os.environ["GOOGLE_CLOUD_PROJECT"]
location = os.environ["TFCLOUD_EMULATOR_LOCATION"]

gcs = storage.Client(project=project, credentials=AnonymousCredentials())
if gcs.lookup_bucket("sdk-staging") is None:
    gcs.create_bucket("sdk-staging")
aiplatform.init(project=project, location=location, api_endpoint=endpoint, credentials=AnonymousCredentials(),
                staging_bucket="gs://sdk-staging")


def pools(code: str, machine_type: str = "n1-standard-4") -> list[dict]:
    return [{"machine_spec": {"machine_type": machine_type}, "replica_count": 1,
             "container_spec": {"image_uri": "gcr.io/p/i", "command": [sys.executable, "-c", code]}}]


# CustomJob.run: waits for the end (one poll, answered once the job ended)
job = aiplatform.CustomJob(display_name="sdk-run", worker_pool_specs=pools("print('from the SDK')"))
job.run(sync=True)
print("run", job.state.name)

# CustomJob.submit, cancel, list
waiting = aiplatform.CustomJob(display_name="sdk-cancel", worker_pool_specs=pools("import time; time.sleep(600)"))
waiting.submit()
waiting.cancel()
listed = aiplatform.CustomJob.list(filter='display_name="sdk-cancel"')
print("cancel", [j.resource_name == waiting.resource_name for j in listed])

# What Google refuses is refused: an unknown machine type, through the SDK
try:
    aiplatform.CustomJob(display_name="sdk-refused", worker_pool_specs=pools("pass", "n1-fake-8")).submit()
    raise SystemExit("an unknown machine type was accepted")
except exceptions.InvalidArgument as exc:
    print("refused", exc.details[0].field_violations[0].field)

# HyperparameterTuningJob: two trials that report the metric as cloudml-hypertune writes it
report = ("import json, os, sys; lr = float(sys.argv[-1].split('=')[1]); "
          "open(os.environ['CLOUD_ML_HP_METRIC_FILE'], 'a').write(json.dumps({'loss': lr, 'global_step': 1}) + '\\n')")
trial_job = aiplatform.CustomJob(display_name="sdk-trial", worker_pool_specs=pools(report))
tuning = aiplatform.HyperparameterTuningJob(
    display_name="sdk-tuning", custom_job=trial_job, metric_spec={"loss": "minimize"},
    parameter_spec={"lr": hpt.DoubleParameterSpec(min=0.001, max=0.1, scale="log")},
    max_trial_count=2, parallel_trial_count=2)
tuning.run(sync=True)
print("tuning", tuning.state.name, len(tuning.trials))

# PersistentResource: created (waits for its operation), listed, deleted
resource = PersistentResource.create(
    persistent_resource_id="sdk-cluster",
    resource_pools=[{"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1}])
print("resource", resource.state.name, [r.name for r in PersistentResource.list()])
resource.delete()
assert not [name for name in sys.modules if name.startswith("tfcloud")], "the client imported tfcloud"
