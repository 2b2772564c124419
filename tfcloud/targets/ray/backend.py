"""The Ray backend: a job's replicas on a Ray cluster (your own servers, another cloud, KubeRay), through Ray's
Jobs API.

``submit`` stages the job's working directory (the build context's files: ignore files and the secret deny-list
apply, as for an image) with the launcher and a plan, and submits ``python -m tfcloud.targets.ray.driver`` as a
Ray job whose runtime environment carries that directory (``working_dir``), tfcloud's own package
(``py_modules``), the job's environment variables and its requirements (``pip``). The driver
(:mod:`tfcloud.targets.ray.driver`) reserves one placement-group bundle per replica, builds ``TF_CONFIG`` from
the nodes' addresses and free ports, runs the launcher in each bundle and applies the local backend's outcome
rules. Status, logs, cancel and list go through the Jobs API (the dashboard's HTTP address); the handle keeps
no state of its own, so ``attach(job_id)`` works from any machine that reaches the dashboard.

Addresses: ``http://HOST:8265`` (the dashboard; ``HOST:8265`` gets ``http://``), ``https://...``, or ``auto``
(a cluster started on this machine). Without ``--ray ADDRESS``: ``TFCLOUD_RAY_ADDRESS``, then ``RAY_ADDRESS``.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcloud.backends.base import JobInfo, LogLine, ReplicaInfo, select_lines
from tfcloud.config.docsite import page
from tfcloud.errors import ConfigurationError, JobNotFoundError, MissingExtraError, SubmitError
from tfcloud.job.artifacts import PreparedJob
from tfcloud.job.datasets import data_excludes
from tfcloud.job.spec import JobSpec, Role
from tfcloud.job.states import JobState, to_job_state
from tfcloud.targets.ray.driver import (
    DRIVER,
    PLAN_FILE,
    STACKS_PREFIX,
    STACKS_REQUEST_VAR,
    parse_status,
    parse_timed_line,
)

if TYPE_CHECKING:
    from tfcloud.config.value import Settings
    from tfcloud.targets.ray.value import RayOptions

__all__ = ["RayBackend", "RayJob", "replica_resources"]

_POLL_S = 0.5
_ENTRYPOINT = "python -m tfcloud.targets.ray.driver"
#: ``tfcloud stacks``'s helper job (:func:`tfcloud.targets.ray.driver.stacks_main`) and how long it may take.
_STACKS_ENTRYPOINT = f"{_ENTRYPOINT} stacks"
_STACKS_TIMEOUT_S = 120.0
#: What marks a Ray job as tfcloud's (in the job's metadata).
_MARK = "tfcloud"


def replica_resources(spec: JobSpec, role: Role, *, num_cpus: float | None = None) -> dict[str, float]:
    """The Ray resources of one replica in ``role``'s pool: its machine's CPU cores (or ``num_cpus``) and
    accelerator count as GPUs. Memory is not reserved (Ray's ``memory`` resource is rarely declared)."""
    pool = spec.pool(role)
    assert pool is not None
    machine = pool.machine
    cpus = float(num_cpus if num_cpus is not None else machine.cpu_cores or 1)
    resources = {"CPU": cpus}
    if machine.is_gpu:
        resources["GPU"] = float(machine.accelerator_count)
    return resources


def _client_address(address: str) -> str:
    if address == "auto" or re.match(r"^[a-z]+://", address):
        return address
    return f"http://{address}"


class RayBackend:
    """Runs jobs on a Ray cluster. Options: ``address`` (the dashboard, ``http://HEAD:8265``; default: the
    target's ``ray_address``, which ``TFCLOUD_RAY_ADDRESS``, the config files or ``RAY_ADDRESS`` fill when no
    call gives it), ``num_cpus`` (CPUs per replica instead of the machine config's cores; default the target's
    ``ray_cpus``), ``placement_strategy``
    (``SPREAD``, ``PACK``, ``STRICT_SPREAD``, ``STRICT_PACK``)."""

    def __init__(self, *, target: RayOptions | None = None, settings: Settings | None = None,
                 address: str | None = None, num_cpus: float | None = None,
                 placement_strategy: str = "SPREAD") -> None:
        address = address or (target.address if target is not None else None)
        if num_cpus is None and target is not None:
            num_cpus = target.cpus
        if not address:
            raise ConfigurationError(
                "No Ray cluster address.",
                hint="Pass --ray http://HEAD:8265 (the dashboard's address), or set TFCLOUD_RAY_ADDRESS or "
                     "RAY_ADDRESS.")
        self.address = _client_address(address)
        from tfcloud.targets.ray.value import RayOptions

        self.target = target if target is not None else RayOptions(address=address)
        self.num_cpus = num_cpus
        self.placement_strategy = placement_strategy
        self._client: Any = None

    @property
    def client(self) -> Any:
        """Ray's ``JobSubmissionClient`` for this cluster (made on first use)."""
        if self._client is None:
            try:
                from ray.job_submission import JobSubmissionClient
            except ImportError as exc:
                raise MissingExtraError("Ray jobs", "ray", "ray") from exc
            # The client's progress ("Uploading package ...", "WebSocket closed ...") is not for our users.
            for name in ("ray.dashboard.modules.dashboard_sdk", "ray.dashboard.modules.job.sdk",
                         "ray._private.runtime_env.packaging"):
                logging.getLogger(name).setLevel(logging.WARNING)
            try:
                self._client = JobSubmissionClient(self.address)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigurationError(
                    f"Cannot reach the Ray cluster at {self.address}: {exc}",
                    hint="Give the dashboard's address (http://HEAD:8265; `ray start --head` prints it), and "
                         "check that the cluster runs `ray[default]` (the Jobs API needs the dashboard).",
                ) from exc
        return self._client

    # -- submit -------------------------------------------------------------------------------------------
    def plan(self, job: PreparedJob, job_id: str) -> dict[str, Any]:
        """The plan the driver reads: replicas with their resources, the launcher's argv, the outcome rules."""
        from tfcloud.entry.launcher import LAUNCHER_NAME
        from tfcloud.replicas import spec_roles, stop_on_chief_end

        spec = job.spec
        return {
            "job_id": job_id,
            "display_name": spec.display_name,
            "strategy": spec.strategy.value,
            "cwd": ".",
            "argv": [LAUNCHER_NAME, *spec.entry_point_args],
            "replicas": [{"name": f"{role.value}-{index}", "role": role.value, "index": index,
                          "resources": replica_resources(spec, role, num_cpus=self.num_cpus)}
                         for role, index in spec_roles(spec)],
            "placement_strategy": self.placement_strategy,
            "stop_grace_s": 5.0,
            "finish_grace_s": 10.0,
            "stop_on_chief_end": stop_on_chief_end(spec),
            "liveness_timeout_s": self.target.liveness_timeout,
            "submitted_at": time.time(),
            **_recovery(self.target),
        }

    def runtime_env(self, job: PreparedJob, workdir: Path, package: Path, job_id: str) -> dict[str, Any]:
        """Ray's runtime environment for the job: its files, tfcloud, its variables and requirements. (Each
        replica also gets the cluster's hosts in ``no_proxy``: ``ray_driver.ReplicaProcess.start``.)"""
        env = {**job.spec.env, "PYTHONUNBUFFERED": "1", "TFCLOUD_JOB_ID": job_id}
        runtime_env: dict[str, Any] = {"working_dir": str(workdir), "py_modules": [str(package)], "env_vars": env}
        requirements = pip_requirements(job)
        if requirements:
            runtime_env["pip"] = requirements
        return runtime_env

    def submit(self, job: PreparedJob) -> RayJob:
        """Stage the working directory, submit the driver as a Ray job; return at once."""
        from tfcloud.job.jobids import make_job_id

        spec = job.spec
        if spec.has_tpu:
            raise ConfigurationError(
                "Ray jobs cannot use TPUs: tfcloud maps only CPUs and GPUs to Ray resources.",
                hint="Use --vertex for TPU jobs, or a CPU/GPU machine config.")
        job_id = make_job_id(spec, prefix="ray")
        client = self.client
        self.check_recovery()
        plan = self.plan(job, job_id)
        plan["autoscaler"] = self.check_capacity(plan)
        with tempfile.TemporaryDirectory(prefix="tfcloud-ray-") as tmp:
            workdir, package = _stage(job, Path(tmp), plan)
            try:
                client.submit_job(
                    entrypoint=_ENTRYPOINT, submission_id=job_id,
                    runtime_env=self.runtime_env(job, workdir, package, job_id),
                    metadata={_MARK: "1", "display_name": spec.display_name,
                              **{f"label.{k}": v for k, v in spec.job_labels.items()},
                              **({"output_dir": o} if (o := _recovery(self.target)["output_dir"]) else {})},
                )
            except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
                raise SubmitError(f"The Ray cluster at {self.address} refused job {job_id}: {exc}") from exc
        return RayJob(self, job_id)

    def check_recovery(self) -> None:
        """Restarts without ``--output-dir`` keep the checkpoints on the node a replica ran on: refused
        (ConfigurationError, before anything is submitted) unless the cluster is one node."""
        recovery = _recovery(self.target)
        if recovery["max_restarts"] == 0 or recovery["output_dir"]:
            return
        nodes = self.alive_nodes()
        if len(nodes) > 1:
            raise ConfigurationError(
                f"--max-restarts {recovery['max_restarts']} on a Ray cluster of {len(nodes)} nodes needs "
                "--output-dir: without it each replica's checkpoints stay on its node, and a restarted replica "
                "may run on another one.",
                hint="Pass --output-dir with a path every node reaches (a shared filesystem, e.g. "
                     "/mnt/shared/out) or gs://BUCKET/PATH (" + page("ray", "output-directory-and-restarts") + ").")

    def alive_nodes(self) -> builtins.list[str]:
        """The addresses of the cluster's alive nodes (Ray's state API, through the dashboard)."""
        try:
            from ray.util.state import list_nodes
        except ImportError as exc:
            raise MissingExtraError("Ray jobs", "ray", "ray") from exc
        try:
            nodes = list_nodes(address=self.address, filters=[("state", "=", "ALIVE")], raise_on_missing_output=False)
        except Exception as exc:  # Ray raises its own RayStateApiException, ConnectionError, ...
            raise SubmitError(f"Cannot read the nodes of the Ray cluster at {self.address}: {exc}") from exc
        return [str(n.node_ip) for n in nodes]

    def check_capacity(self, plan: dict[str, Any]) -> bool | None:
        """Refuse (:class:`ConfigurationError`, exit 2) a job the cluster can never hold when no autoscaler can
        add nodes (:mod:`tfcloud.targets.ray.capacity`); else return whether an autoscaler runs (None: unknown),
        for the driver. A cluster that does not say what it holds is not checked."""
        from tfcloud.targets.ray.capacity import NEVER_FITS_HINT, never_fits, read_cluster, shortfall

        try:
            data = self.client._do_request("GET", "/api/cluster_status").json().get("data") or {}
        except Exception:  # an older dashboard, a proxy: not knowing never blocks a submission
            return None
        cluster = read_cluster(data)
        if cluster is None:
            return None
        names = [str(r["name"]) for r in plan["replicas"]]
        bundles = [dict(r["resources"]) for r in plan["replicas"]]
        why = shortfall(names, bundles, cluster.totals, strategy=str(plan["placement_strategy"]))
        if why is not None and cluster.autoscaler is False:
            try:
                alive = len(self.alive_nodes())
            except SubmitError:
                alive = len(cluster.totals)
            if alive > len(cluster.totals):  # the report is older than a node that joined: nothing is certain
                return None
            raise ConfigurationError(never_fits(f"The Ray cluster at {self.address}", names, bundles, cluster, why),
                                     hint=NEVER_FITS_HINT)
        return cluster.autoscaler

    # -- other jobs ---------------------------------------------------------------------------------------
    def attach(self, job_id: str) -> RayJob:
        """The handle of an existing Ray job (any job the Jobs API knows; tfcloud's have replicas)."""
        handle = RayJob(self, job_id)
        handle.details()  # JobNotFoundError when the cluster does not know it
        return handle

    def list(self, *, state: JobState | None = None, limit: int | None = None) -> builtins.list[JobInfo]:
        """tfcloud's jobs on this cluster, newest first (from the Jobs API; replicas are not read)."""
        try:
            jobs = self.client.list_jobs()
        except (ConnectionError, RuntimeError) as exc:
            raise SubmitError(f"Cannot list the jobs of the Ray cluster at {self.address}: {exc}") from exc
        rows = [_job_info(d, None, dashboard=self.address) for d in jobs
                if (d.metadata or {}).get(_MARK) and d.submission_id]
        rows.sort(key=lambda i: i.created or 0.0, reverse=True)
        rows = [i for i in rows if state is None or i.state is state]
        return rows if limit is None else rows[:limit]

    def stacks_of(self, job_id: str, replicas: dict[str, str]) -> dict[str, str]:
        """Every thread's stack of each replica of ``job_id`` in ``replicas`` ({name: the id of the node it runs
        on}), through Ray itself: a short helper job (tfcloud's package only; not listed as a tfcloud job, deleted
        once read) runs a task pinned to each replica's node that signals the replica's launcher and reads its
        dump (:func:`tfcloud.targets.ray.driver.stacks_main`). No ssh: whatever reaches the dashboard will do."""
        client = self.client
        request = json.dumps({"job_id": job_id, "replicas": replicas})
        with tempfile.TemporaryDirectory(prefix="tfcloud-ray-") as tmp:
            try:
                helper = client.submit_job(
                    entrypoint=_STACKS_ENTRYPOINT, metadata={"tfcloud.stacks_of": job_id},
                    runtime_env={"py_modules": [str(_stage_package(Path(tmp)))],
                                 "env_vars": {STACKS_REQUEST_VAR: request}})
            except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
                raise SubmitError(f"The Ray cluster at {self.address} refused the job that reads {job_id}'s stacks: "
                                  f"{exc}") from exc
        try:
            deadline = time.monotonic() + _STACKS_TIMEOUT_S
            while not client.get_job_status(helper).is_terminal():
                if time.monotonic() > deadline:
                    with contextlib.suppress(RuntimeError):
                        client.stop_job(helper)
                    raise SubmitError(f"Reading the stacks of {job_id}'s replicas took over {_STACKS_TIMEOUT_S:g} s "
                                      f"(Ray job {helper} on {self.address}).",
                                      hint="`ray status` shows whether the cluster is starting workers; try again.")
                time.sleep(_POLL_S)
            text = str(client.get_job_logs(helper))
        finally:
            with contextlib.suppress(Exception):
                client.delete_job(helper)
        for raw in text.splitlines():
            if raw.startswith(STACKS_PREFIX):
                found: dict[str, str] = json.loads(raw[len(STACKS_PREFIX):])
                return found
        raise SubmitError(f"The job that reads the stacks of {job_id}'s replicas ended without them: "
                          f"{text.strip()[-2000:] or '(no output)'}")

    def close(self) -> None:
        """Drop the client (a handle makes a new one when needed)."""
        self._client = None


class RayJob:
    """The handle of a tfcloud job on Ray; every answer comes from the Jobs API."""

    def __init__(self, backend: RayBackend, job_id: str) -> None:
        self.backend = backend
        self.job_id = job_id  # the Jobs API's submission id

    def __repr__(self) -> str:
        return f"RayJob({self.job_id!r})"

    def details(self) -> Any:
        """Ray's ``JobDetails`` of this job."""
        try:
            return self.backend.client.get_job_info(self.job_id)
        except RuntimeError as exc:
            if "404" in str(exc) or "does not exist" in str(exc):
                raise JobNotFoundError(f"No Ray job `{self.job_id}` on {self.backend.address}.",
                                       hint="List them with: tfcloud list --ray ADDRESS") from exc
            raise SubmitError(f"Cannot read Ray job {self.job_id}: {exc}") from exc

    def _log_text(self) -> str:
        try:
            return str(self.backend.client.get_job_logs(self.job_id))
        except RuntimeError:
            return ""

    def _status(self) -> dict[str, Any] | None:
        """The driver's last status line (None before its first)."""
        for raw in reversed(self._log_text().splitlines()):
            status = parse_status(raw)
            if status is not None:
                return status
        return None

    def info(self) -> JobInfo:
        """Ray's job status, with the driver's last status line (replicas, exit code, failing replica)."""
        details = self.details()
        return _job_info(details, self._status(), dashboard=self.backend.address)

    def stacks(self, *, replica: str | None = None) -> dict[str, str]:
        """Every thread's stack of each running replica (:class:`~tfcloud.backends.base.Stacks`), read on the
        node each runs on (:meth:`RayBackend.stacks_of`); empty when none runs."""
        replicas = {name: str(r["node_id"]) for name, r in ((self._status() or {}).get("replicas") or {}).items()
                    if r.get("state") == "running" and r.get("node_id") and replica in (None, name)}
        return self.backend.stacks_of(self.job_id, replicas) if replicas else {}

    def logs(self, *, follow: bool = False, replica: str | None = None, tail: int | None = None,
             since: float | None = None) -> Iterator[LogLine]:
        """The replicas' lines (and the driver's own, as replica ``tfcloud``) so far; with ``follow``, streamed
        until the job has ended. The Jobs API serves the whole log: ``since`` and ``tail`` select here."""
        if tail is None and since is None:
            yield from self._lines(follow=follow, replica=replica)
            return
        if not follow:
            yield from select_lines(self._lines(follow=False, replica=replica), tail=tail, since=since)
            return
        # Following: the last lines so far, then the tail from where they ended (lines stamped after them).
        began = time.time()
        first = list(select_lines(self._lines(follow=False, replica=replica), tail=tail, since=since))
        yield from first
        after = max((line.timestamp for line in first if line.timestamp is not None),
                    default=began if tail is not None and since is None else since)
        shown = {(line.replica, line.text, line.timestamp) for line in first}
        for line in self._lines(follow=True, replica=replica):
            if (line.replica, line.text, line.timestamp) in shown:
                continue
            if after is None or line.timestamp is None or line.timestamp >= after:
                yield line

    def _lines(self, *, follow: bool, replica: str | None) -> Iterator[LogLine]:
        chunks = self._tail() if follow else iter([self._log_text()])
        partial = ""
        for chunk in chunks:
            lines = (partial + chunk).split("\n")
            partial = lines.pop()
            for raw in lines:
                line = _log_line(raw)
                if line is not None and (replica is None or line.replica == replica):
                    yield line
        if partial:
            line = _log_line(partial)
            if line is not None and (replica is None or line.replica == replica):
                yield line

    def _tail(self) -> Iterator[str]:
        """The job's log as it grows (Ray's websocket tail), until the job ends."""
        loop = asyncio.new_event_loop()
        stream = self.backend.client.tail_job_logs(self.job_id)
        try:
            while True:
                try:
                    chunk = loop.run_until_complete(stream.__anext__())
                except StopAsyncIteration:
                    break
                yield str(chunk)
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(stream.aclose())
            loop.close()

    def wait(self, timeout: float | None = None) -> JobInfo:
        """Block until the job is final (or ``timeout`` seconds passed); return its info then."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            state = _ray_state(self.backend.client.get_job_status(self.job_id))
            remaining = None if deadline is None else deadline - time.monotonic()
            if state.is_final or (remaining is not None and remaining <= 0):
                return self.info()
            time.sleep(_POLL_S if remaining is None else max(0.0, min(_POLL_S, remaining)))

    def cancel(self) -> None:
        """``ray job stop``: the driver gets SIGTERM and stops every replica; returns at once."""
        details = self.details()
        if _ray_state(details.status).is_final:
            return
        with contextlib.suppress(RuntimeError):
            self.backend.client.stop_job(self.job_id)


# -- helpers ----------------------------------------------------------------------------------------------
def _recovery(target: RayOptions) -> dict[str, Any]:
    """The plan's ``max_restarts`` and ``output_dir`` (None: the driver picks a directory on each node)."""
    return {"max_restarts": int(target.max_restarts or 0), "output_dir": target.output_dir}


def _ray_state(status: Any) -> JobState:
    return to_job_state("ray", str(getattr(status, "value", status)))


def _log_line(raw: str) -> LogLine | None:
    if raw.startswith("[tfcloud:status]"):
        return None
    parsed = parse_timed_line(raw)
    if parsed is None:  # Ray's own lines, a traceback of the driver
        return LogLine(replica=DRIVER, text=raw.rstrip("\r"), stream="stderr")
    replica, stream, text, at = parsed
    return LogLine(replica=replica, text=text.rstrip("\r"), stream=stream, timestamp=at)


def _replica_state(replica: dict[str, Any]) -> JobState:
    if replica.get("state") != "exited":
        return to_job_state("process", str(replica.get("state")))
    if replica.get("exit_code") == 0:
        return JobState.SUCCEEDED
    return JobState.CANCELLED if replica.get("stopped_by_tfcloud") else JobState.FAILED


def _job_info(details: Any, status: dict[str, Any] | None, *, dashboard: str) -> JobInfo:
    """One :class:`JobInfo` from Ray's ``JobDetails`` and the driver's last status line (when read); the
    console link is the job's page on the dashboard."""
    metadata = dict(details.metadata or {})
    state = _ray_state(details.status)
    status = status or {}
    exit_code: int | None = None
    if state.is_final:
        if state is JobState.CANCELLED:
            exit_code = 130
        elif status.get("exit_code") is not None and status.get("state") in ("succeeded", "failed", "cancelled"):
            exit_code = int(status["exit_code"])
        elif getattr(details, "driver_exit_code", None) is not None:
            exit_code = int(details.driver_exit_code)
        else:
            exit_code = 0 if state is JobState.SUCCEEDED else 1
        if state is JobState.FAILED and exit_code == 0:
            exit_code = 1
    message = status.get("message") or None
    if state is JobState.FAILED and not status.get("failed_replica") and status.get("state") != "failed":
        message = details.message or message  # the driver itself failed (runtime env, driver error)
    elif state is JobState.CANCELLED:
        message = "The job was cancelled."
    replicas = tuple(ReplicaInfo(name=name, state=_replica_state(r),
                                 exit_code=None if r.get("exit_code") is None else int(r["exit_code"]))
                     for name, r in (status.get("replicas") or {}).items())
    start = getattr(details, "start_time", None)
    end = getattr(details, "end_time", None)
    return JobInfo(
        job_id=str(details.submission_id), target="ray", state=state,
        display_name=metadata.get("display_name"), replicas=replicas, exit_code=exit_code,
        failed_replica=status.get("failed_replica") if state is JobState.FAILED else None,
        message=message, created=None if start is None else start / 1000.0,
        started=status.get("started_at"), ended=None if end is None or not state.is_final else end / 1000.0,
        console_url=f"{dashboard.rstrip('/')}/#/jobs/{details.submission_id}" if dashboard.startswith("http")
        else None,
        labels={k.removeprefix("label."): v for k, v in metadata.items() if k.startswith("label.")},
        output_dir=status.get("output_dir") or metadata.get("output_dir"),
    )


#: Set by Ray, while it installs a job's ``pip`` list on a node, to where the job's ``working_dir`` lies there.
WORKING_DIR_VAR = "RAY_RUNTIME_ENV_CREATE_WORKING_DIR"


def pip_requirements(job: PreparedJob) -> list[str]:
    """The job's ``pip`` list for Ray: one include of the requirements bundle that :func:`_stage` ships in the
    working directory (the image's bundle, :func:`tfcloud.image.containerize.requirements_files`, so ``-r``/``-c``
    includes resolve beside it), as pip finds it on each node (``${RAY_RUNTIME_ENV_CREATE_WORKING_DIR}``, which
    pip expands), and the bundle's digest: Ray caches a node's virtualenv by this list, so a changed file
    makes a new one. Empty when the job has no requirements."""
    import hashlib

    from tfcloud.image.containerize import requirements_files
    from tfcloud.image.dockerfile import REQUIREMENTS_PATH

    files = requirements_files(job)
    if not files:
        return []
    digest = hashlib.sha256()
    for name, data in sorted(files.items()):
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return [f"-r ${{{WORKING_DIR_VAR}}}/{REQUIREMENTS_PATH}", f"# tfcloud requirements sha256:{digest.hexdigest()}"]


def _stage(job: PreparedJob, tmp: Path, plan: dict[str, Any]) -> tuple[Path, Path]:
    """Write the job's working directory (the build context's files, the launcher, the plan) and tfcloud's
    package under ``tmp``; return both directories."""
    from tfcloud.entry.launcher import LAUNCHER_NAME
    from tfcloud.image.containerize import requirements_files
    from tfcloud.image.context import collect_context
    from tfcloud.job.artifacts import script_beside_launcher
    from tfcloud.targets.ray.workdir import check_size

    spec = job.spec
    root = Path(spec.build_root).resolve()
    generated = {LAUNCHER_NAME: Path(job.launcher).read_bytes(),
                 PLAN_FILE: json.dumps(plan, indent=1).encode()}
    if script_beside_launcher(job.script, root):  # a converted notebook
        generated[job.script.name] = Path(job.script).read_bytes()
    generated.update(requirements_files(job))  # what pip_requirements points at
    context = collect_context(root, generated=generated, exclude=data_excludes(spec.data, root))
    check_size(context, root)  # Ray refuses a big one only after the submission started, without saying what
    workdir = tmp / "workdir"
    workdir.mkdir()
    for entry in context.files:
        target = workdir / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if entry.link is not None:
            target.symlink_to(entry.link)
        elif entry.data is not None:
            target.write_bytes(entry.data)
        else:
            assert entry.source is not None
            shutil.copyfile(entry.source, target)
    return workdir, _stage_package(tmp)


def _stage_package(tmp: Path) -> Path:
    """tfcloud's own package under ``tmp`` (what ``py_modules`` ships); return its directory."""
    from tfcloud.image.containerize import tfcloud_package_files
    from tfcloud.image.dockerfile import TFCLOUD_PYTHON_DIR

    package = tmp / "python"
    for rel, data in tfcloud_package_files().items():
        path = package / Path(rel).relative_to(TFCLOUD_PYTHON_DIR)  # ".tfcloud/python/tfcloud/..."
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return package / "tfcloud"
