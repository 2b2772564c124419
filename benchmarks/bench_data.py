"""Benchmark: shipping a ``--data`` directory to a Cloud Storage data store (the storage emulator on loopback),
by content (:func:`tfcloud.job.datasets.stage_data`) against uploading the directory whole every time.

One data set of 40 files, 2 MiB each (80 MiB), three submissions in a row:

- **new**: nothing in the store yet;
- **unchanged**: the same directory again;
- **one file changed**: one file rewritten with new bytes.

For each: the bytes uploaded, tfcloud's wall time (hashing, listing the store, uploading, the manifest), and
the same for the whole-directory upload (every file, every time). The goal: bytes uploaded within 5% of the
bytes that changed (0 for an unchanged data set).

Run: ``python benchmarks/bench_data.py [--quick]`` (needs tfcloud[cloud,emulator]; ``--quick``: 4 files of
256 KiB, one round of each, as CI runs it).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from tfcloud.image.context import format_size
from tfcloud.job.datasets import parse_data, stage_data

FILES, SIZE = 40, 2 * 1024 * 1024
GOAL = 0.05


def upload_whole(storage: Any, directory: Path, prefix: str) -> int:
    """The naive way: every file of the directory, every time."""
    bucket = storage.bucket("bench-data")
    sent = 0
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            bucket.blob(f"{prefix}/{path.relative_to(directory).as_posix()}").upload_from_filename(str(path))
            sent += path.stat().st_size
    return sent


def main() -> None:
    global FILES, SIZE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 files of 256 KiB (CI: it runs and prints)")
    if parser.parse_args().quick:
        FILES, SIZE = 4, 256 * 1024
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage as gcs

    from tfcloud.emulator.storage import StorageEmulator

    server = StorageEmulator()
    server.start()
    storage = gcs.Client(project="bench", credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                         client_options={"api_endpoint": server.endpoint})
    rows = []
    try:
        storage.create_bucket("bench-data")
        with tempfile.TemporaryDirectory(prefix="tfcloud-bench-data-") as tmp:
            data = Path(tmp) / "train"
            data.mkdir()
            for i in range(FILES):
                (data / f"shard-{i:03d}.bin").write_bytes(os.urandom(SIZE))
            data_sets = parse_data(f"train={data}")
            for round_, (label, changed) in enumerate(
                    [("new", FILES * SIZE), ("unchanged", 0), ("one file changed", SIZE)]):
                if label == "one file changed":
                    (data / f"shard-{FILES // 2:03d}.bin").write_bytes(os.urandom(SIZE))
                start = time.perf_counter()
                _, reports = stage_data(data_sets, "gs://bench-data/tfcloud-data", storage=storage,
                                        hash_cache=Path(tmp) / "data-hashes.json")
                seconds = time.perf_counter() - start
                start = time.perf_counter()
                whole = upload_whole(storage, data, f"whole/{round_}")
                whole_seconds = time.perf_counter() - start
                sent = reports[0].uploaded_bytes
                ok = sent <= changed * (1 + GOAL)
                rows.append((label, changed, sent, seconds, whole, whole_seconds, ok))
    finally:
        storage.close()
        server.stop()
    print(f"Data set: {FILES} files, {format_size(FILES * SIZE)} (storage emulator on loopback)")
    print(f"{'submission':<18} {'changed':>10} {'uploaded':>10} {'seconds':>8}   {'whole dir':>10} {'seconds':>8}"
          "  goal (uploaded <= changed + 5%)")
    for label, changed, sent, seconds, whole, whole_seconds, ok in rows:
        print(f"{label:<18} {format_size(changed):>10} {format_size(sent):>10} {seconds:>8.2f}   "
              f"{format_size(whole):>10} {whole_seconds:>8.2f}  {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
