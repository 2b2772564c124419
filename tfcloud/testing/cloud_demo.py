"""The cloud path with no Google account: ``nox -s demo_cloud`` (or ``python -m tfcloud.testing.cloud_demo``).

It starts a Docker engine and an image registry on loopback (:func:`tfcloud.testing.dockerd.docker_engine`),
makes a TensorFlow base image from this interpreter's site-packages (Docker Hub is not needed), starts the
Google Cloud emulator with its replicas on that engine, and runs the real command::

    tfcloud submit examples/digits_keras.py --vertex --worker-count 2 --parent-image BASE ...

with the emulator's settings exported: the image is built on the engine, pushed to the loopback registry, the
CustomJob is created on the emulator, which runs a chief and two workers as containers from that image, and
every replica's log streams back. It exits with the job's outcome (0 succeeded, 1 failed, 130 interrupted)
and stops everything it started, on failure and on Ctrl-C (or SIGTERM) too: the job is cancelled, the
emulator stopped, dockerd stopped by its PID, its netns mount unmounted, the registry stopped, the temp
dirs removed. The submission keeps its state (the stage timeline, the build lock) in a state dir of the demo's
own, removed with the rest: the user's ``TFCLOUD_HOME`` is left as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "private_state_dir"]


def _say(text: str) -> None:
    print(f"demo_cloud: {text}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def private_state_dir() -> Iterator[Path]:
    """A state dir of the demo's own (``TFCLOUD_HOME`` of its ``tfcloud submit``), removed afterwards: the
    stage timeline of a job that ends with the emulator, and the build lock, never reach the user's."""
    with tempfile.TemporaryDirectory(prefix="tfcloud-demo-state-") as state:
        yield Path(state)


def _check() -> str | None:
    """Why the demo cannot run here (None: it can)."""
    import tfcloud.targets as targets
    from tfcloud.config.extras import require_extras
    from tfcloud.errors import MissingExtraError, require
    from tfcloud.testing.dockerd import dockerd_available

    try:
        require_extras(target=targets.get("vertex")(), emulator=True, emulator_docker=True)
        require("tensorflow", feature="The demo's base image", extra="tensorflow")
    except MissingExtraError as exc:
        return str(exc)
    reason = dockerd_available()
    return f"no Docker engine: {reason}" if reason else None


def _submit(command: list[str], env: dict[str, str]) -> int:
    """Run ``tfcloud submit`` and wait; on Ctrl-C (or SIGTERM) pass it one SIGINT (it cancels its job) and
    return 130. It runs in its own session, so the terminal's Ctrl-C reaches it only through here, once."""
    proc = subprocess.Popen(command, env=env, start_new_session=True)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfcloud.testing.cloud_demo",
                                     description="The cloud path with no Google account (nox -s demo_cloud).")
    parser.add_argument("entry_point", nargs="?", default="examples/digits_keras.py")
    parser.add_argument("--worker-count", type=int, default=2)
    parser.add_argument("args", nargs="*", help="arguments for the script, after --")
    options = parser.parse_args(argv)
    reason = _check()
    if reason:
        _say(reason)
        return 2
    if not Path(options.entry_point).is_file():
        _say(f"no entry point at {options.entry_point}")
        return 2

    interrupted = False

    def _interrupt(*_: Any) -> None:
        # The first Ctrl-C (or SIGTERM) unwinds: every `with` stops what it started. Later ones must not cut
        # that short (dockerd would be left running), so they are only acknowledged.
        nonlocal interrupted
        if interrupted:
            _say("still stopping what it started; please wait")
            return
        interrupted = True
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    started = time.monotonic()
    try:
        return _run(options)
    except KeyboardInterrupt:
        _say("interrupted; everything it started is stopped")
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _say(f"done in {time.monotonic() - started:.0f} s")


def _run(options: argparse.Namespace) -> int:
    from tfcloud.emulator import Emulator
    from tfcloud.testing.dockerd import docker_engine, tensorflow_base_image

    t0 = time.monotonic()
    with docker_engine() as engine:
        _say(f"Docker engine at {engine.docker_host}, registry at {engine.registry.address} "
             f"({time.monotonic() - t0:.1f} s)")
        t0 = time.monotonic()
        client = engine.client()
        try:
            base = tensorflow_base_image(client, "tfcloud-demo/tensorflow")
        finally:
            client.close()
        _say(f"base image {base} (TensorFlow and tf-keras from this environment; "
             f"{time.monotonic() - t0:.0f} s)")
        with Emulator(project="tfcloud-demo", docker_host=engine.docker_host) as emulator, \
                private_state_dir() as state:
            settings = emulator.settings
            _say(f"Google Cloud emulator at {settings.endpoint} (Vertex AI, Cloud Build, Cloud Logging), "
                 "replicas as containers on that engine")
            env = {k: v for k, v in os.environ.items() if not k.startswith("TFCLOUD_")}
            env.update(settings.env)
            env["TFCLOUD_HOME"] = str(state)  # the job's timeline and the build lock: gone with the emulator
            env.update({"TFCLOUD_PROJECT": settings.project, "DOCKER_HOST": engine.docker_host,
                        "TFCLOUD_IMAGE_REPOSITORY": f"{engine.registry.address}/tfcloud"})
            for var in ("no_proxy", "NO_PROXY", "no_grpc_proxy"):
                env[var] = ",".join(filter(None, [env.get(var), "127.0.0.1", "localhost"]))
            tfcloud = shutil.which("tfcloud", path=str(Path(sys.executable).parent)) or "tfcloud"
            command = [tfcloud, "submit", options.entry_point, "--vertex", "--worker-count",
                       str(options.worker_count), "--chief-config", "CPU", "--worker-config", "CPU",
                       "--parent-image", base, "--cancel-on-interrupt", "--env", "TF_CPP_MIN_LOG_LEVEL=2",
                       *(["--", *options.args] if options.args else [])]
            shown = " ".join(f"{k}={env[k]}" for k in ("TFCLOUD_EMULATOR_HOST", "TFCLOUD_PROJECT",
                                                         "TFCLOUD_IMAGE_REPOSITORY", "DOCKER_HOST"))
            _say(f"running: {shown} tfcloud {' '.join(command[1:])}")
            code = _submit(command, env)
            _say(f"tfcloud submit exited {code}; stopping the emulator, the registry and the engine")
            return code


if __name__ == "__main__":
    sys.exit(main())
