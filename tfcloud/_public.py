"""tfcloud's public names and the module that defines each: ``tfcloud/__init__`` loads them on first use, and
the image's trimmed copy of tfcloud carries these modules (tfcloud.containerize.RUNTIME_ROOTS)."""

PUBLIC = {
    "remote": "tfcloud.api", "run": "tfcloud.api",
    "JobHandle": "tfcloud.backends.base", "JobInfo": "tfcloud.backends.base", "LogLine": "tfcloud.backends.base",
    "ReplicaInfo": "tfcloud.backends.base",
    "BuildError": "tfcloud.errors", "ConfigurationError": "tfcloud.errors", "JobFailedError": "tfcloud.errors",
    "OutcomeUnknownError": "tfcloud.errors", "SubmitError": "tfcloud.errors", "TfcloudError": "tfcloud.errors",
    "ValidationError": "tfcloud.errors",
    "COMMON_MACHINE_CONFIGS": "tfcloud.machines", "AcceleratorType": "tfcloud.machines",
    "MachineConfig": "tfcloud.machines",
    "Job": "tfcloud.sdk", "attach": "tfcloud.sdk", "build": "tfcloud.sdk", "list_jobs": "tfcloud.sdk",
    "submit": "tfcloud.sdk", "tune": "tfcloud.sdk", "report": "tfcloud.reporting",
    "DockerConfig": "tfcloud.spec",
    "JobState": "tfcloud.states",
    "LocalTarget": "tfcloud.targets.local", "VertexTarget": "tfcloud.targets.vertex",
    "RayTarget": "tfcloud.targets.ray", "Target": "tfcloud.targets", "Option": "tfcloud.targets",
    "ui": "tfcloud.ui",
    "data": "tfcloud.datamount",
}
