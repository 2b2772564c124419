"""What `tfcloud --help` lists for each command (the first paragraph of its help), generated from the
commands by `python docs/captures.py options`; do not edit (tests/test_docs.py checks it). The CLI reads
it instead of importing every command's module."""

SUMMARIES = {
    'submit': 'Submit ENTRY_POINT as a distributed job and follow its logs.',
    'build': "Build (or find) the job's image and print its reference; submit nothing.",
    'tune': "Tune ENTRY_POINT's hyperparameters: trials with --NAME=VALUE arguments, a live table, the best trial.",
    'machines': "List the machine configs Vertex AI offers today and the training machine each maps to (Google's table, on the docs site's Machines page).",
    'status': "Show a job: target, state and outcome, its replicas, times, outputs, console link, the next command (without JOB: the job this machine submitted last). A tuning study's table of trials: study-..., or --study for Vertex AI.",
    'stacks': "Print every thread's Python stack of each running replica of a local, --container or Ray job (without JOB: the job this machine submitted last): where a slow or hung replica is waiting. On Ray, a short helper job reads them on each replica's node.",
    'logs': "Print a job's logs, one prefix per replica (without JOB: the job this machine submitted last). With -f, exit with the job's outcome (0 or 1). A study's trial: tfcloud logs STUDY_ID --trial N.",
    'cancel': 'Cancel a job (without JOB: the job this machine submitted last), or a tuning study (study-..., or --study for Vertex AI) and its running trials. A job that had already ended is left as it is, and said so.',
    'artifacts': 'List (or --download) what a job wrote under its output directory: model/, checkpoints/, logs/ (without JOB: the job this machine submitted last).',
    'tensorboard': "Run TensorBoard on a job's AIP_TENSORBOARD_LOG_DIR (its output directory's logs/; without JOB: the job this machine submitted last).",
    'list': 'List jobs, newest first.',
    'cost': 'What a finished or running job cost, by how Google bills it: replicas x machine price x the time from its replicas\' start to its end, from tfcloud\'s price table ("unknown" where it has no price; local and Ray jobs are not billed by Google). Without JOB: the job this machine submitted last.',
    'ui': 'Open the dashboard: every job and study, their logs live, timelines, plots; cancel from the page.',
    'doctor': "Check this machine before a first job: installed extras, the builder (the Docker engine, or Cloud Build), the TensorFlow and parent image the job's images are built on, then each target's own checks: Google credentials, project and region (and whether gcloud's configuration gave them), the staging bucket, the image registry and one call to Vertex AI's endpoint; a Ray address. Exit 0 when the chosen target can run a job, 2 otherwise. The target and its place (--project, --region, --emulator-host; --ray; -o) are given as to every other verb.",
    'docs': 'Read the docs: the list of pages, a page, or a section of one (from its heading to the next of its level).',
}
