"""The picture of a job's timeline in the docs (docs/images/timeline.svg), from a real submission.

    python docs/timeline_capture.py

It starts what the tests start (Debian's dockerd and docker-registry on loopback, tfcloud.testing.dockerd; the
offline Google Cloud emulator), submits a small script with a chief and a worker to "Vertex AI" the way
``tfcloud submit --vertex`` does (the image is built on the engine and pushed to the registry), waits for it,
and saves what ``tfcloud status JOB --timeline`` prints with rich's ``Console(record=True).save_svg``. The
emulator is asked to keep the job QUEUED for 4 s and PENDING for 3 s, so that the queue shows on the chart (a
real Vertex AI job often waits a minute or more). Everything it starts is stopped, and its temporary
directories are removed, on failure and Ctrl-C too.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE = ROOT / "docs" / "images" / "timeline.svg"
WIDTH = 92
SCRIPT = """
import os, time
for step in range(4):
    print("step", step, "on", os.environ.get("CLOUD_ML_TASK", "?"), flush=True)
    time.sleep(1)
"""


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from rich.console import Console

    from tfcloud import DockerConfig, sdk
    from tfcloud.emulator import Emulator, JobTimings
    from tfcloud.testing.dockerd import docker_engine, dockerd_available, python_base_image
    from tfcloud.timeline import render_timeline

    reason = dockerd_available()
    if reason:
        print(f"cannot capture the timeline: {reason}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="tfcloud-capture-") as tmp, docker_engine() as engine, \
            Emulator(project="tfcloud-docs", storage=False, docker_host=engine.docker_host,
                     timings=JobTimings(queued=4.0, pending=3.0)) as emulator:
        client = engine.client()
        try:
            base = python_base_image(client)
        finally:
            client.close()
        os.environ.update({"TFCLOUD_HOME": str(Path(tmp) / "state"), "TFCLOUD_EMULATOR_HOST": emulator.endpoint,
                           "TFCLOUD_PROJECT": "tfcloud-docs", "DOCKER_HOST": engine.docker_host,
                           "TFCLOUD_IMAGE_REPOSITORY": f"{engine.registry.address}/tfcloud"})
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "train.py").write_text(SCRIPT, encoding="utf-8")
        with sdk.submit(project / "train.py", target="vertex", chief_config="CPU", worker_count=1,
                        worker_config="CPU", distribution_strategy=None,
                        docker_config=DockerConfig(parent_image=base)) as job:
            info = job.wait(timeout=300)
            timeline = job.timeline()
        console = Console(record=True, width=WIDTH, file=io.StringIO(), force_terminal=True, highlight=False)
        console.print(f"{info.job_id}\t{info.state.value}", markup=False)
        console.print(render_timeline(timeline))
        console.save_svg(str(IMAGE), title=f"tfcloud status {info.job_id} --timeline")
    print(f"{IMAGE.relative_to(ROOT)}: {timeline.summary()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
