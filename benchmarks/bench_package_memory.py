"""Benchmark: peak memory of the ``--no-build`` package upload for a project with one 120 MB file (random
bytes: gzip cannot shrink them), against the storage emulator running in another process (so that its copy of the
bytes is not counted).

Measured in a fresh child process: ``ru_maxrss`` before the upload (the job planned: the interpreter, the
clients) and after it. The archive is spooled to a temporary file and uploaded in 8 MiB chunks
(:mod:`tfcloud.google.staging.package`), so the upload adds about one chunk, not the archive.

Measured 2026-11-26 on the shared 2-core machine: 300 MiB peak when the archive was built in memory (before
issue 29), 87 MiB after (73 MiB before the upload).

Run: ``python benchmarks/bench_package_memory.py`` (needs ``tfcloud[cloud,emulator]``); ``--quick``: a 12 MB file
(CI runs it: tests/test_benchmarks.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

SIZE = 120_000_000

SERVER = """
import sys, time
from tfcloud.emulator.storage import StorageEmulator
server = StorageEmulator()
server.start()
print(server.endpoint, flush=True)
sys.stdin.read()  # until the benchmark closes it
server.stop()
"""

CLIENT = """
import resource, sys, tempfile
from pathlib import Path
import google.cloud.storage as storage
from google.auth.credentials import AnonymousCredentials
from tfcloud.google.staging.package import plan_package, upload_package
from tfcloud.flow.pipeline import prepare
from tfcloud.flow.validate import build_job

endpoint, project = sys.argv[1], Path(sys.argv[2])
client = storage.Client(project="bench", credentials=AnonymousCredentials(), client_options={"api_endpoint": endpoint})
client.create_bucket("bench-memory")
spec, target = build_job(entry_point=str(project / "train.py"), target="vertex", build=False, chief_config="CPU")
job, _ = prepare(spec, target, Path(tempfile.mkdtemp()))
plan = plan_package(job)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
ref = upload_package(plan, storage=client, bucket="bench-memory")
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"uploaded {ref.uploaded / 1e6:.1f} MB: peak RSS {after:.0f} MiB ({before:.0f} MiB before the upload)")
client.close()
"""


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 12 MB file")
    size = SIZE // 10 if parser.parse_args().quick else SIZE
    with tempfile.TemporaryDirectory(prefix="tfcloud-bench-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "train.py").write_text("print('hello')\n")
        with open(project / "big.bin", "wb") as f:  # in 1 MB pieces: a child's ru_maxrss starts at its parent's
            for _ in range(size // 1_000_000):
                f.write(os.urandom(1_000_000))
        server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        try:
            assert server.stdout is not None
            endpoint = server.stdout.readline().strip()
            subprocess.run([sys.executable, "-c", CLIENT, endpoint, str(project)], check=True)
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(30)


if __name__ == "__main__":
    main()
