"""What a job's page charts besides its log: its training curves and its replicas' resources over time.

- :meth:`JobData.curves`: what a trial's job reported with ``tfcloud.report()`` (its study's metrics file), and
  the scalars in the job's TensorBoard log directory (``AIP_TENSORBOARD_LOG_DIR``, the
  ``logs/`` under its output directory; :mod:`tfcloud.ui.curves`), for a job whose outputs are on this machine
  (local jobs; a Ray job's when the cluster is this machine). A Vertex AI job's are in Cloud Storage:
  ``tfcloud tensorboard JOB`` shows them.
- :meth:`JobData.resources`: CPU (percent of one core) and resident memory of each replica of a local job, its
  processes and their children together, sampled every :data:`SAMPLE_S` seconds (psutil) while a page watches
  the job (and for :data:`WATCH_S` seconds after its last look); the last :data:`KEEP` samples per replica.
  Another target's replicas are not on this machine: the page says where to look.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from tfcloud.ui.curves import Curves

__all__ = ["KEEP", "SAMPLE_S", "WATCH_S", "JobData", "read_reports"]

#: Seconds between two samples of a watched job's replicas.
SAMPLE_S = 1.0
#: Seconds a job is sampled after a page last asked for its resources.
WATCH_S = 30.0
#: Samples kept per replica (15 minutes at one a second).
KEEP = 900


class _Watch:
    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.seen = time.monotonic()
        self.samples: dict[str, deque[tuple[float, float, int]]] = {name: deque(maxlen=KEEP) for name in pids}
        self.processes: dict[int, Any] = {}  # psutil.Process by pid: cpu_percent needs the same object each time
        self.final = False


#: The keys of a metrics file's line that are not metrics (cloudml-hypertune's format).
_NOT_METRICS = {"timestamp", "trial", "global_step", "checkpoint_path"}


def read_reports(path: Path) -> dict[str, list[list[float]]]:
    """The measurements in a trial's metrics file (``tfcloud.report()``, cloudml-hypertune's JSON lines): per
    metric, [step, value, time] each."""
    import json

    series: dict[str, list[list[float]]] = {}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return series
    for line in lines:
        try:
            data = json.loads(line)
            step, when = int(data.get("global_step") or 0), float(data.get("timestamp") or 0.0)
        except (ValueError, TypeError, AttributeError):
            continue
        for name, value in data.items():
            if name in _NOT_METRICS:
                continue
            try:
                series.setdefault(name, []).append([step, float(value), when])
            except (TypeError, ValueError):
                continue
    return series


class JobData:
    """Curves and resources per job, shared by every page of one dashboard."""

    def __init__(self) -> None:
        self._curves: dict[str, Curves] = {}
        self._watches: dict[str, _Watch] = {}
        self._lock = threading.Lock()
        self._sampler: threading.Thread | None = None
        self._stop = threading.Event()

    # -- curves ---------------------------------------------------------------------------------------------
    def curves(self, job_id: str, output_dir: str | None, reports: Path | None = None) -> dict[str, Any]:
        """``{"series": {name: [[step, value, time], ...]}, "note": why none}``: the TensorBoard scalars, and
        the measurements ``tfcloud.report()`` wrote to ``reports`` (a trial's metrics file) as ``report/NAME``."""
        found = {f"report/{name}": points for name, points in read_reports(reports).items()} if reports else {}
        if not output_dir or "://" in output_dir:
            return {"series": found, "note": None if found else "This job's TensorBoard logs are not on this "
                                                                f"machine: tfcloud tensorboard {job_id} shows them."}
        with self._lock:
            reader = self._curves.setdefault(job_id, Curves(Path(output_dir) / "logs"))
        series = {name: [list(p) for p in points] for name, points in reader.read().items()}
        series.update(found)
        return {"series": series,
                "note": None if series else f"No scalars yet in {reader.log_dir} (AIP_TENSORBOARD_LOG_DIR): "
                                            "Keras's TensorBoard callback or tf.summary.scalar writes them, "
                                            "tfcloud.report() in a study's trial."}

    # -- resources ------------------------------------------------------------------------------------------
    def resources(self, job_id: str, pids: dict[str, int] | None, final: bool) -> dict[str, Any]:
        """``{"replicas": {name: [[time, cpu %, rss bytes], ...]}, "note": ...}``; starts sampling the job."""
        if pids is None:
            return {"replicas": {}, "note": "This job's replicas do not run on this machine: the target's own "
                                            "console shows their CPU and memory."}
        try:
            import psutil  # noqa: F401
        except ImportError:
            return {"replicas": {}, "note": 'No resources: psutil is not installed (pip install "tfcloud[ui]").'}
        with self._lock:
            watch = self._watches.get(job_id)
            if watch is None:
                watch = self._watches[job_id] = _Watch(pids)
            watch.seen = time.monotonic()
            watch.final = final
            for name, pid in pids.items():
                watch.pids.setdefault(name, pid)
                watch.samples.setdefault(name, deque(maxlen=KEEP))
            if self._sampler is None:
                self._sampler = threading.Thread(target=self._sample_loop, name="tfcloud-ui-resources", daemon=True)
                self._sampler.start()
            replicas = {name: [list(s) for s in samples] for name, samples in watch.samples.items()}
        return {"replicas": replicas, "note": None}

    def stop(self) -> None:
        self._stop.set()

    def _sample_loop(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            now = time.monotonic()
            with self._lock:
                for job_id in [j for j, w in self._watches.items() if now - w.seen > WATCH_S]:
                    del self._watches[job_id]
                watches = list(self._watches.values())
                if not watches:
                    self._sampler = None
                    return
            for watch in watches:
                if not watch.final:
                    self._sample(watch)

    @staticmethod
    def _sample(watch: _Watch) -> None:
        import psutil

        at = time.time()
        for name, pid in list(watch.pids.items()):
            cpu, rss = 0.0, 0
            try:
                root = watch.processes.get(pid) or watch.processes.setdefault(pid, psutil.Process(pid))
                family = [root, *root.children(recursive=True)]
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            for process in family:
                known = watch.processes.setdefault(process.pid, process)
                try:
                    cpu += known.cpu_percent(None)
                    rss += known.memory_info().rss
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
            watch.samples[name].append((round(at, 3), round(cpu, 1), rss))
