"""tfcloud's public names and the module that defines each: ``tfcloud/__init__`` loads them on first use, and
the image's trimmed copy of tfcloud carries these modules (tfcloud.image.containerize.RUNTIME_ROOTS)."""

PUBLIC = {
    "remote": "tfcloud.api", "run": "tfcloud.api",
    "JobHandle": "tfcloud.backends.base", "JobInfo": "tfcloud.backends.base", "LogLine": "tfcloud.backends.base",
    "ReplicaInfo": "tfcloud.backends.base",
    "BuildError": "tfcloud.errors", "ConfigurationError": "tfcloud.errors", "JobFailedError": "tfcloud.errors",
    "OutcomeUnknownError": "tfcloud.errors", "SubmitError": "tfcloud.errors", "TfcloudError": "tfcloud.errors",
    "ValidationError": "tfcloud.errors",
    "COMMON_MACHINE_CONFIGS": "tfcloud.google.catalog.machines", "AcceleratorType": "tfcloud.google.catalog.machines",
    "MachineConfig": "tfcloud.google.catalog.machines",
    "Job": "tfcloud.sdk", "attach": "tfcloud.sdk", "build": "tfcloud.sdk", "list_jobs": "tfcloud.sdk",
    "submit": "tfcloud.sdk", "tune": "tfcloud.sdk", "report": "tfcloud.runtime.reporting",
    "DockerConfig": "tfcloud.job.spec",
    "JobState": "tfcloud.job.states",
    "LocalTarget": "tfcloud.targets.local", "VertexTarget": "tfcloud.google.vertex",
    "RayTarget": "tfcloud.targets.ray", "Target": "tfcloud.targets", "Option": "tfcloud.targets",
    "ui": "tfcloud.ui",
    "data": "tfcloud.runtime.datamount",
}
