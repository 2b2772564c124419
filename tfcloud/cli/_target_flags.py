"""The built-in targets' CLI flags, generated from their option specs by `python docs/captures.py options`;
do not edit (tests/test_docs.py checks it). Each row: (name, flag, type, metavar, help, panel, targets, place)."""

FLAGS = (
    ('container', '--container', 'bool', None, "Run the replicas from the job's image on the local Docker engine.", 'Local', ('local',), False),
    ('max_restarts', '--max-restarts', 'int', 'N', 'Restart the cluster up to N times when a replica dies; training resumes from its checkpoint (tfcloud docs recovery).', 'Local', ('local', 'vertex', 'ray'), False),
    ('liveness_timeout', '--liveness-timeout', 'int', 'SECONDS', 'Fail the job when a replica sends no heartbeat for this long: stopped or hung (default 60; 0: off; tfcloud docs recovery).', 'Local', ('local', 'ray'), False),
    ('base_output_dir', '--output-dir', 'str', 'DIR', "Base output directory, gs://... (local jobs: also a directory; default: the job's own; Ray: a path every node reaches): sets AIP_MODEL_DIR, AIP_CHECKPOINT_DIR, AIP_TENSORBOARD_LOG_DIR.", 'Local', ('local', 'vertex', 'ray'), False),
    ('project', '--project', 'str', 'PROJECT', 'Google Cloud project.', 'Vertex AI', ('vertex',), True),
    ('region', '--region', 'str', 'REGION', 'Vertex AI region.', 'Vertex AI', ('vertex',), True),
    ('service_account', '--service-account', 'str', 'EMAIL', 'Service account the job runs as.', 'Vertex AI', ('vertex',), False),
    ('network', '--network', 'str', 'NETWORK', 'VPC network, projects/NUMBER/global/networks/NAME.', 'Vertex AI', ('vertex',), False),
    ('spot', '--spot', 'bool', None, 'Run on Spot (preemptible) capacity.', 'Vertex AI', ('vertex',), False),
    ('timeout', '--timeout', 'int', 'SECONDS', 'Stop the job after this many seconds.', 'Vertex AI', ('vertex',), False),
    ('restart_on_worker_restart', '--restart-on-worker-restart', 'bool', None, 'Restart the whole job when a worker restarts.', 'Vertex AI', ('vertex',), False),
    ('scheduling', '--scheduling', 'str', 'STRATEGY', 'standard, spot (as --spot) or flex-start (the Dynamic Workload Scheduler: waits for every VM at once).', 'Vertex AI', ('vertex',), False),
    ('max_wait', '--max-wait', 'str', 'DURATION', "flex-start: how long to wait for VMs (30m, 6h, 1d; 0: no limit; Vertex AI's default 1d).", 'Vertex AI', ('vertex',), False),
    ('reservation', '--reservation', 'str', 'any|none|NAME', 'Consume any reservation, none, or one (ZONE/NAME or projects/P/zones/Z/reservations/NAME).', 'Vertex AI', ('vertex',), False),
    ('disable_retries', '--disable-retries', 'bool', None, 'Never restart the job after an internal error.', 'Vertex AI', ('vertex',), False),
    ('persistent_resource', '--persistent-resource', 'str', 'ID', 'Run on this persistent resource (tfcloud cluster create): no wait for VMs.', 'Vertex AI', ('vertex',), False),
    ('tensorboard', '--tensorboard', 'str', 'RESOURCE', "Upload the job's TensorBoard logs to this TensorBoard instance (projects/P/locations/L/tensorboards/ID or ID).", 'Vertex AI', ('vertex',), False),
    ('experiment', '--experiment', 'str', 'NAME', 'The Vertex AI Experiment the job belongs to (needs --service-account; not with --tensorboard).', 'Vertex AI', ('vertex',), False),
    ('experiment_run', '--experiment-run', 'str', 'RUN', 'Its run in that experiment (with --experiment).', 'Vertex AI', ('vertex',), False),
    ('emulator_host', '--emulator-host', 'str', 'HOST:PORT', 'Reach the tfcloud emulator at HOST:PORT instead of Google Cloud (tfcloud docs emulator).', 'Vertex AI', ('vertex',), True),
    ('staging_bucket', '--staging-bucket', 'str', 'BUCKET', 'Cloud Storage bucket for staged files.', 'Vertex AI', ('vertex',), False),
    ('build', '--build/--no-build', 'bool', None, "--no-build (build=False): build no image of the code; ship the job's files as a package to the staging bucket and run it on the job's base image (TensorFlow and the requirements, built and pushed once; tfcloud docs vertex).", 'Vertex AI', ('vertex',), False),
    ('ray_address', '--ray', 'str', 'ADDRESS', "The Ray cluster's dashboard, http://HEAD:8265 (default: TFCLOUD_RAY_ADDRESS, then RAY_ADDRESS). See tfcloud docs ray.", 'Ray', ('ray',), True),
    ('ray_cpus', '--ray-cpus', 'float', 'CPUS', "CPUs each replica reserves (default: its machine config's cores).", 'Ray', ('ray',), False),
)
