"""One local replica as a container: what the supervisor runs for each replica of a ``--container`` job.

Run by path (``python -I _container.py JOB_DIR``), like the supervisor, with the docker SDK as its only
dependency. The replica's name, ``TF_CONFIG`` and attempt come from its own environment (the supervisor sets
them); ``JOB_DIR/job.json``'s ``container`` says the image, the engine, the environment every replica gets
and the directories to mount (the job's output directory, at the same path, so ``AIP_*`` work unchanged). The
replica's heartbeat file (``TFCLOUD_HEARTBEAT_FILE``, set by the supervisor) is mounted too, at the same path:
the launcher inside the container beats there, so a paused or frozen container fails the liveness rule. Its
stacks file's directory (``TFCLOUD_STACKS_FILE``) is mounted the same way, and SIGUSR1 to this process is passed
on to the container (``tfcloud stacks``: the launcher there writes every thread's stack to that file).

The container runs detached on the host network (the cluster is on 127.0.0.1), not ``--rm``; its stdout and
stderr are copied to this process's own, so the supervisor logs them as a process replica's; its exit status
becomes this process's. SIGTERM or SIGINT stops the container (``docker stop``, 3 s grace); the container is
removed in every case this process gets to run its ``finally``. Secrets never enter the container's
configuration (:func:`_secret_files`): an ``env:`` secret's value goes in a 0600 file mounted read-only, removed
with the container.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

STOP_GRACE_S = 3


def _copy(container: Any, stream: str, out: IO[bytes]) -> None:
    try:
        for chunk in container.logs(stdout=stream == "stdout", stderr=stream == "stderr", stream=True,
                                    follow=True):
            out.write(chunk)
            out.flush()
    except Exception as exc:  # the engine went away: the exit status says what happened
        sys.stderr.write(f"tfcloud: lost the {stream} of the container: {exc}\n")


def _secret_files(env: dict[str, str], read_only: list[str]) -> str | None:
    """Pass the job's ``--secret`` values (``TFCLOUD_SECRET_REFS`` in ``env``) without putting any in the
    container's configuration, which ``docker inspect`` shows: an ``env:VAR`` secret's value is written to a
    0600 file in a new temporary directory (0700) and its reference becomes ``file:PATH``; that directory, and
    each ``file:PATH`` secret, are mounted read-only at the same path (added to ``read_only``). The launcher in
    the container reads the files. Returns the directory, for the caller to remove when the container is gone;
    None when no ``env:`` secret was written."""
    refs = json.loads(env.get("TFCLOUD_SECRET_REFS") or "{}")
    secret_dir = None
    for name, ref in sorted(refs.items()):
        kind, _, source = ref.partition(":")
        if kind == "env" and source in os.environ:  # one not set here: the launcher says so in the container
            if secret_dir is None:
                secret_dir = tempfile.mkdtemp(prefix="tfcloud-secrets-")
            path = os.path.join(secret_dir, f"{len(os.listdir(secret_dir))}")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(os.environ[source])
            refs[name] = f"file:{path}"
        elif kind == "file":
            read_only.append(source)
    if secret_dir is not None:
        env["TFCLOUD_SECRET_REFS"] = json.dumps(refs, sort_keys=True, separators=(",", ":"))
        read_only.append(secret_dir)
    return secret_dir


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: _container.py JOB_DIR\n")
        return 2
    import docker

    job = json.loads((Path(argv[1]) / "job.json").read_text(encoding="utf-8"))
    config = job["container"]
    replica = os.environ["TFCLOUD_REPLICA"]
    attempt = os.environ.get("TFCLOUD_ATTEMPT", "1")
    env = dict(config["env"])
    env.update(next(r["env"] for r in job["replicas"] if r["name"] == replica))
    env.update({"TFCLOUD_REPLICA": replica, "TFCLOUD_ATTEMPT": attempt, "PYTHONUNBUFFERED": "1"})
    mounts = list(config.get("mounts", []))
    read_only = []
    secret_dir = None
    for key, value in env.items():  # --data directories, used in place: mounted read-only at the same path
        if key.startswith("TFCLOUD_DATA_") and value.startswith("/") and os.path.isdir(value):
            read_only.append(value)
    heartbeat = os.environ.get("TFCLOUD_HEARTBEAT_FILE")
    if heartbeat:
        env["TFCLOUD_HEARTBEAT_FILE"] = heartbeat
        mounts.append(heartbeat)
    stacks = os.environ.get("TFCLOUD_STACKS_FILE")
    if stacks:  # `tfcloud stacks`: the launcher in the container writes there (its directory: the file appears)
        env["TFCLOUD_STACKS_FILE"] = stacks
        mounts.append(os.path.dirname(stacks))
    client = docker.DockerClient(base_url=config["docker_host"]) if config.get("docker_host") \
        else docker.from_env()
    name = f"tfcloud-{job['job_id']}-{replica}-{attempt}"
    stopping = threading.Event()
    container = None

    def stop(signum: int, frame: object) -> None:
        if container is not None and not stopping.is_set():
            stopping.set()
            threading.Thread(target=lambda: container.stop(timeout=STOP_GRACE_S), daemon=True).start()

    def pass_on(signum: int, frame: object) -> None:  # SIGUSR1: the launcher in the container dumps its stacks
        if container is not None:
            threading.Thread(target=lambda: container.kill(signal="SIGUSR1"), daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    signal.signal(signal.SIGUSR1, pass_on)
    try:
        secret_dir = _secret_files(env, read_only)
        container = client.containers.run(
            config["image"], command=list(job["args"]) or None, environment=env, network_mode="host",
            detach=True, name=name,
            volumes={**{path: {"bind": path, "mode": "rw"} for path in mounts},
                     **{path: {"bind": path, "mode": "ro"} for path in read_only}})
        pumps = [threading.Thread(target=_copy, args=(container, "stdout", sys.stdout.buffer), daemon=True),
                 threading.Thread(target=_copy, args=(container, "stderr", sys.stderr.buffer), daemon=True)]
        for pump in pumps:
            pump.start()
        code = int(container.wait()["StatusCode"])
        for pump in pumps:
            pump.join(10)
        return code
    except docker.errors.DockerException as exc:
        sys.stderr.write(f"tfcloud: the container of {replica} could not run: {exc}\n")
        return 125
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except docker.errors.DockerException as exc:
                sys.stderr.write(f"tfcloud: could not remove container {name}: {exc}\n")
        client.close()
        if secret_dir is not None:
            shutil.rmtree(secret_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
