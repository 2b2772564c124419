"""Python packages for ``python_package_spec`` pools: what Vertex AI does before it runs ``python -m MODULE``.

Vertex AI downloads each of the pool's ``package_uris`` from Cloud Storage and installs it with pip on the
executor image. The emulator downloads them from its storage emulator and installs them with pip (the
emulator's Python, no index, no dependencies; a source distribution is built with that Python's own
setuptools, since build isolation would need an index) into a directory of their own, once per set of packages; the
replicas then find them on ``PYTHONPATH`` (containers get the directory mounted at the same path). A package that
cannot be fetched or installed fails the job, with pip's last lines in its error.

Cloud Storage FUSE (Vertex AI mounts the buckets at ``/gcs/`` in every replica): the emulator copies the objects a
pool names by a ``/gcs/BUCKET/OBJECT`` path in its command or args into a directory that stands for ``/gcs``
(:meth:`PackageInstaller.mirror`), which a container sees at ``/gcs`` (a local process gets the paths rewritten).
Only those objects are there: a replica that lists a bucket sees less than on Vertex AI.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfcloud.emulator.replicas import ReplicaStartError

__all__ = ["PackageInstaller", "pool_code"]


class PackageInstaller:
    """Installs packages from the storage emulator at ``storage_endpoint`` under ``root``."""

    def __init__(self, *, storage_endpoint: str | None, root: Path, python: str = sys.executable) -> None:
        self._endpoint = storage_endpoint
        self._root = root
        self._python = python
        self._lock = threading.Lock()

    def install(self, uris: Sequence[str], *, project: str) -> Path:
        """The directory where ``uris`` are installed (made on first use; raises :class:`ReplicaStartError`)."""
        key = hashlib.sha256("\n".join(uris).encode()).hexdigest()[:16]
        target = self._root / key / "site"
        with self._lock:
            if target.is_dir():
                return target
            downloads = self._root / key / "downloads"
            downloads.mkdir(parents=True, exist_ok=True)
            files = [self._download(uri, downloads, project=project) for uri in uris]
            result = subprocess.run(
                [self._python, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
                 "--disable-pip-version-check",
                 "--target", str(target.with_name("site.partial")), *map(str, files)],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                said = [line.strip() for line in (result.stderr or result.stdout).splitlines()
                        if line.strip() and not line.lstrip().startswith(("note:", "hint:", "[end of output]"))]
                tail = " ".join(said[-3:])
                raise ReplicaStartError(f"The Python package could not be installed: pip exited with "
                                        f"{result.returncode}: {tail}")
            target.with_name("site.partial").rename(target)
            return target

    def mirror(self, paths: Sequence[str], *, project: str) -> Path:
        """The directory that stands for ``/gcs`` with each ``/gcs/BUCKET/OBJECT`` of ``paths`` copied in (fetched
        again each time: an object may change; raises :class:`ReplicaStartError`)."""
        root = self._root / "gcs"
        with self._lock:
            for path in paths:
                bucket, _, name = path.removeprefix("/gcs/").partition("/")
                if not bucket or not name or ".." in name.split("/"):
                    raise ReplicaStartError(f"{path!r} names no object (/gcs/BUCKET/OBJECT).")
                directory = root / bucket / name.rpartition("/")[0]
                directory.mkdir(parents=True, exist_ok=True)
                self._download(f"gs://{bucket}/{name}", directory, project=project)
        return root

    def _download(self, uri: str, directory: Path, *, project: str) -> Path:
        if self._endpoint is None:
            raise ReplicaStartError(f"The package {uri} cannot be fetched: the emulator runs without Cloud Storage.")
        bucket, _, name = uri.removeprefix("gs://").partition("/")
        if not uri.startswith("gs://") or not bucket or not name:
            raise ReplicaStartError(f"The package URI {uri!r} is not a Cloud Storage URI (gs://BUCKET/OBJECT).")
        import google.cloud.storage as storage
        from google.api_core import exceptions as gexc
        from google.auth.credentials import AnonymousCredentials

        client = storage.Client(project=project, credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                                client_options={"api_endpoint": self._endpoint})
        path = directory / name.rsplit("/", 1)[-1]
        try:
            client.bucket(bucket).blob(name).download_to_filename(str(path))
        except gexc.GoogleAPICallError as exc:
            raise ReplicaStartError(f"The package {uri} could not be fetched: {exc.message}") from exc
        finally:
            client.close()
        return path


def pool_code(pool: Any, packages: PackageInstaller | None, *,
              project: str) -> tuple[str, tuple[str, ...], tuple[str, ...], Any, str | None, str | None]:
    """What a ``WorkerPoolSpec`` runs: (image, command, args, env, the directory its packages are installed in,
    the directory that stands for ``/gcs``). A ``python_package_spec`` pool runs ``python3 -m MODULE ARGS`` once
    its packages are installed; a ``container_spec`` that names ``/gcs/`` paths gets them copied."""
    if "python_package_spec" not in pool:
        container = pool.container_spec
        command, args = tuple(container.command), tuple(container.args)
        named = [word for word in (*command, *args) if word.startswith("/gcs/")]
        gcs = str(packages.mirror(named, project=project)) if named and packages is not None else None
        return container.image_uri, command, args, container.env, None, gcs
    package = pool.python_package_spec
    if packages is None:
        raise ReplicaStartError("This emulator cannot install Python packages (no package installer).")
    site = str(packages.install(list(package.package_uris), project=project))
    return (package.executor_image_uri, ("python3", "-m", package.python_module), tuple(package.args), package.env,
            site, None)
