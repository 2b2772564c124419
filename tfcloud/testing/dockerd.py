"""A real Docker engine and registry on loopback, for tests and benchmarks (docs/containers.md, TESTBED §1).

:func:`docker_engine` starts Debian's ``dockerd`` (its own data and exec roots in a temp dir, no bridge, no
iptables, no ip-forward) and ``docker-registry`` on a free 127.0.0.1 port, and stops both on exit: dockerd by
the PID in its pidfile, the registry by its process; the nsfs mount dockerd leaves is unmounted and the
temp dir removed; every child is waited for (no zombies). :func:`engine_env` hands a running engine to another
process (a benchmark the suite runs) in environment variables, and :func:`handed_engine` takes it there, or
starts one of its own when none was handed over.

Docker Hub is not reachable, so base images are made here: :func:`python_base_image` (static busybox + the
host's Debian python3.11 + pip) and :func:`tensorflow_base_image` (the same + TensorFlow and tf-keras with
their dependencies from an installed site-packages). Files go into the tar stream straight from the host
(no copy), and an image is made once per engine (its tag is a key of what went in).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.metadata
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ENGINE_VARIABLES",
    "Engine",
    "Registry",
    "docker_engine",
    "dockerd_available",
    "engine_env",
    "handed_engine",
    "python_base_image",
    "registry",
    "tensorflow_base_image",
]

PYTHON = Path("/usr/bin/python3.11")
STDLIB = Path("/usr/lib/python3.11")
SITE = "usr/local/lib/python3.11/dist-packages"  # on Debian python's sys.path by default
_STDLIB_SKIP = {"test", "idlelib", "tkinter", "turtledemo", "lib2to3", "ensurepip", "config-3.11-x86_64-linux-gnu"}


def dockerd_available() -> str | None:
    """None when dockerd, docker-registry and busybox are installed, else why not (a skip reason)."""
    missing = [p for p in ("dockerd", "docker-registry", "busybox") if shutil.which(p) is None]
    if missing:
        return f"{', '.join(missing)} not installed (run .ci/install-docker)"
    if not PYTHON.exists():
        return f"{PYTHON} not found (the test base images are made from Debian's python3.11)"
    return None


@dataclass(frozen=True, kw_only=True)
class Registry:
    address: str  # "127.0.0.1:PORT"
    root: Path
    log: Path

    def requests(self) -> list[str]:
        """The HTTP requests the registry logged so far, like ``HEAD /v2/x/manifests/tag``."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        found = re.findall(r'"((?:GET|HEAD|PUT|POST|PATCH|DELETE) /v2/[^ "]*)', text)
        return found


@dataclass(frozen=True, kw_only=True)
class Engine:
    docker_host: str  # "unix:///tmp/.../docker.sock"
    registry: Registry
    root: Path

    def client(self, **kwargs: Any) -> Any:
        import docker

        kwargs.setdefault("timeout", 600)
        return docker.DockerClient(base_url=self.docker_host, **kwargs)

    def events(self, since: float, until: float | None = None) -> list[dict[str, Any]]:
        """The engine's events between ``since`` and ``until`` (default: now), decoded: ``time.time()`` values,
        to the microsecond. The Engine API takes ``<seconds>.<nanoseconds>`` and compares each event's
        ``timeNano``, and the engine logs an event before the API call that caused it answers; so nothing need
        wait for a second to pass, and an ``until`` already past returns at once (a future one would stream
        until it comes)."""
        import docker

        api = docker.APIClient(base_url=self.docker_host)
        try:
            return list(api.events(since=f"{since:.6f}", until=f"{time.time() if until is None else until:.6f}",
                                   decode=True))
        finally:
            api.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Any, what: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.05)
    raise RuntimeError(f"{what} not ready after {timeout} s:\n{log.read_text(errors='replace')[-3000:]}")


def _stop(proc: subprocess.Popen[bytes], pid: int | None = None, timeout: float = 20) -> None:
    target = pid or proc.pid
    with contextlib.suppress(ProcessLookupError):
        os.kill(target, signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(target, signal.SIGKILL)
        proc.wait(10)


def _umount_all(root: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    mnt_detach = 2
    prefix = str(root)
    with open("/proc/self/mounts") as f:
        points = [line.split()[1] for line in f]
    mine = [p for p in points if p == prefix or p.startswith(prefix + "/")]
    for point in sorted(mine, key=len, reverse=True):
        libc.umount2(point.encode(), mnt_detach)


@contextlib.contextmanager
def registry(root: Path | None = None, *, readonly: bool = False, htpasswd: Path | None = None) -> Iterator[Registry]:
    """A ``docker-registry`` on a free 127.0.0.1 port; ``readonly`` rejects pushes."""
    own = root is None
    base = Path(tempfile.mkdtemp(prefix="tfcloud-reg-", dir="/tmp")) if root is None else root
    base.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    config = [
        "version: 0.1",
        "log:",
        "  level: info",
        "  accesslog:",
        "    disabled: false",
        "storage:",
        "  filesystem:",
        f"    rootdirectory: {base / 'data'}",
        "  delete:",
        "    enabled: true",
    ]
    if readonly:
        config += ["  maintenance:", "    readonly:", "      enabled: true"]
    if htpasswd is not None:
        config += ["auth:", "  htpasswd:", "    realm: tfcloud-test", f"    path: {htpasswd}"]
    config += ["http:", f"  addr: 127.0.0.1:{port}"]
    (base / "registry.yml").write_text("\n".join(config) + "\n")
    log = base / "registry.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            ["docker-registry", "serve", str(base / "registry.yml")],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
    try:
        url = f"http://127.0.0.1:{port}/v2/"

        def ready() -> bool:
            try:
                urllib.request.urlopen(url, timeout=1).close()
            except urllib.error.HTTPError as exc:
                return exc.code == 401  # up, wants credentials
            return True

        _wait(ready, "docker-registry", proc, log)
        yield Registry(address=f"127.0.0.1:{port}", root=base, log=log)
    finally:
        _stop(proc)
        if own:
            shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def docker_engine(root: Path | None = None) -> Iterator[Engine]:
    """dockerd + docker-registry on loopback, in ``root`` (default: a new dir under /tmp), stopped on exit."""
    reason = dockerd_available()
    if reason:
        raise RuntimeError(reason)
    own = root is None
    base = Path(tempfile.mkdtemp(prefix="tfcloud-docker-", dir="/tmp")) if root is None else root
    base.mkdir(parents=True, exist_ok=True)
    sock = base / "docker.sock"
    pidfile = base / "dockerd.pid"
    (base / "daemon.json").write_text("{}\n")
    log = base / "dockerd.log"
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                "dockerd",
                "--data-root", str(base / "data"),
                "--exec-root", str(base / "exec"),
                "--pidfile", str(pidfile),
                "--config-file", str(base / "daemon.json"),
                "-H", f"unix://{sock}",
                "--storage-driver=overlay2",
                "--iptables=false",
                "--ip6tables=false",
                "--bridge=none",
                "--ip-forward=false",
                "--ip-masq=false",
            ],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True,
        )
    try:
        def ping() -> bool:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(1)
                s.connect(str(sock))
                s.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
                return b"200 OK" in s.recv(200)

        _wait(ping, "dockerd", proc, log)
        with registry(base / "registry") as reg:
            yield Engine(docker_host=f"unix://{sock}", registry=reg, root=base)
    finally:
        pid = None
        with contextlib.suppress(OSError, ValueError):
            pid = int(pidfile.read_text().strip())
        _stop(proc, pid if pid == proc.pid else None, timeout=30)
        _umount_all(base)
        if own:
            shutil.rmtree(base, ignore_errors=True)


#: The environment variables that hand a running engine to another process: the engine's address (``DOCKER_HOST``
#: form), its registry's address and the registry's root directory (where it keeps what was pushed).
ENGINE_VARIABLES = ("BENCH_DOCKER_HOST", "BENCH_REGISTRY", "BENCH_REGISTRY_ROOT")


def engine_env(engine: Engine) -> dict[str, str]:
    """The variables (:data:`ENGINE_VARIABLES`) that hand ``engine`` to a process started with them."""
    return dict(zip(ENGINE_VARIABLES, (engine.docker_host, engine.registry.address, str(engine.registry.root)),
                    strict=True))


@contextlib.contextmanager
def handed_engine(environ: Mapping[str, str]) -> Iterator[Engine]:
    """The engine that ``environ`` hands over (:func:`engine_env`: all three variables set), left running on exit;
    else a new one of this process's own (:func:`docker_engine`), stopped on exit."""
    values = [environ.get(name, "") for name in ENGINE_VARIABLES]
    if not any(values):
        with docker_engine() as engine:
            yield engine
        return
    if not all(values):
        missing = [name for name, value in zip(ENGINE_VARIABLES, values, strict=True) if not value]
        raise RuntimeError(f"an engine is handed over with all of {', '.join(ENGINE_VARIABLES)}; "
                           f"{', '.join(missing)} not set")
    docker_host, address, root = values
    registry_root = Path(root)  # docker_engine() keeps its registry in ROOT/registry
    yield Engine(docker_host=docker_host, root=registry_root.parent,
                 registry=Registry(address=address, root=registry_root, log=registry_root / "registry.log"))


# --- base images ---------------------------------------------------------------------------------------------


def _usr(path: str) -> str:
    """Debian is merged-/usr: /lib/x -> usr/lib/x in the image (where /lib is a link to usr/lib)."""
    p = path.lstrip("/")
    for top in ("lib/", "lib64/", "bin/", "sbin/"):
        if p.startswith(top):
            return "usr/" + p
    return p


_LDD_LINE = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")


def _ldd(paths: Iterable[Path]) -> set[str]:
    libs: set[str] = set()
    batch = [str(p) for p in paths]
    for i in range(0, len(batch), 200):
        out = subprocess.run(["ldd", *batch[i:i + 200]], capture_output=True, text=True, check=False).stdout
        libs.update(_LDD_LINE.findall(out))
    return libs


class _Tar:
    """Writes a rootfs tar straight from host files (dereferenced), creating parent directories once."""

    def __init__(self, fileobj: Any) -> None:
        self.tar = tarfile.open(fileobj=fileobj, mode="w|")  # noqa: SIM115 - closed by close()
        self.dirs: set[str] = set()
        self.names: set[str] = set()

    def _parents(self, name: str) -> None:
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d not in self.dirs:
                self.dirs.add(d)
                info = tarfile.TarInfo(d)
                info.type = tarfile.DIRTYPE
                info.mode = 0o1777 if d == "tmp" else 0o755
                self.tar.addfile(info)

    def dir(self, name: str) -> None:
        self._parents(name + "/x")

    def link(self, name: str, target: str) -> None:
        if name in self.names:
            return
        self.names.add(name)
        self._parents(name)
        info = tarfile.TarInfo(name)
        info.type = tarfile.SYMTYPE
        info.linkname = target
        self.tar.addfile(info)

    def data(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self.names.add(name)
        self._parents(name)
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = mode
        import io

        self.tar.addfile(info, io.BytesIO(data))

    def file(self, name: str, source: Path) -> None:
        if name in self.names:
            return
        self.names.add(name)
        self._parents(name)
        st = source.stat()
        info = tarfile.TarInfo(name)
        info.size = st.st_size
        info.mode = st.st_mode & 0o777
        with open(source, "rb") as f:
            self.tar.addfile(info, f)

    def tree(self, name: str, source: Path, skip: Any = None) -> None:
        for dirpath, dirnames, filenames in os.walk(source):
            rel = Path(dirpath).relative_to(source)
            dirnames[:] = sorted(d for d in dirnames if not (skip and skip(rel / d)))
            for fn in sorted(filenames):
                p = Path(dirpath) / fn
                if skip and skip(rel / fn):
                    continue
                arc = f"{name}/{(rel / fn).as_posix()}" if str(rel) != "." else f"{name}/{fn}"
                if p.is_symlink():
                    target = os.readlink(p)
                    if not os.path.isabs(target):
                        self.link(arc, target)
                        continue
                if p.is_file():
                    self.file(arc, p)

    def close(self) -> None:
        self.tar.close()


def _rootfs(tar: _Tar, site_files: Iterable[tuple[str, Path]], so_files: Iterable[Path]) -> None:
    for top in ("bin", "sbin", "lib", "lib64"):
        tar.link(top, f"usr/{top}")
    tar.dir("tmp")
    tar.dir("root")
    tar.data("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    tar.data("etc/group", b"root:x:0:\n")
    busybox = Path(shutil.which("busybox") or "/bin/busybox").resolve()
    tar.file("usr/bin/busybox", busybox)
    applets = subprocess.run([str(busybox), "--list"], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        if applet not in ("python", "python3"):
            tar.link(f"usr/bin/{applet}", "busybox")
    tar.file("usr/bin/python3.11", PYTHON)
    tar.link("usr/bin/python3", "python3.11")
    tar.link("usr/bin/python", "python3.11")

    def skip_stdlib(rel: Path) -> bool:
        return rel.parts[0] in _STDLIB_SKIP or rel.name == "__pycache__" or rel.parts[0] == "site-packages"

    tar.tree("usr/lib/python3.11", STDLIB, skip_stdlib)
    site = list(site_files)
    for arc, src in site:
        tar.file(f"{SITE}/{arc}", src)
    so = [PYTHON, *sorted((STDLIB / "lib-dynload").glob("*.so")), *so_files]
    for lib in sorted(_ldd(so)):
        if lib.startswith(("/usr/local/lib/python", "/root", str(Path(sys.prefix)))):
            continue
        if "site-packages" in lib or "dist-packages" in lib:
            continue
        tar.file(_usr(lib), Path(lib).resolve())


def _dist_files(names: Iterable[str], skip: Any = None) -> tuple[list[tuple[str, Path]], list[str]]:
    """The files (relative to site-packages) of the named distributions and their dependency closure."""
    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    env: dict[str, str] = {k: str(v) for k, v in default_environment().items()}
    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        seen[name] = dist
        for req_text in dist.requires or []:
            req = Requirement(req_text)
            if req.marker is not None and not req.marker.evaluate({**env, "extra": ""}):
                continue
            todo.append(req.name)
    files: list[tuple[str, Path]] = []
    versions = []
    for name, dist in sorted(seen.items()):
        if skip and skip(name, None):
            continue
        versions.append(f"{name}=={dist.version}")
        for f in dist.files or []:
            rel = f.as_posix()
            if rel.startswith("..") or "__pycache__" in rel or (skip and skip(name, rel)):
                continue
            src = Path(str(f.locate()))
            if src.is_file():
                files.append((rel, src))
    return files, versions


def _import(client: Any, tag: str, write: Any, changes: list[str]) -> None:
    """``docker import`` a tar stream produced by ``write(fileobj)`` in a thread, without a temp file."""
    read_fd, write_fd = os.pipe()
    errors: list[BaseException] = []

    def produce() -> None:
        try:
            with os.fdopen(write_fd, "wb", buffering=1 << 20) as out:
                tar = _Tar(out)
                write(tar)
                tar.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    with os.fdopen(read_fd, "rb") as src:
        chunks = iter(lambda: src.read(1 << 20), b"")
        repo, name_tag = tag.rsplit(":", 1)
        client.api.import_image(src=chunks, repository=repo, tag=name_tag, changes=changes, stream_src=True)
    thread.join()
    if errors:
        raise errors[0]


_CHANGES = ["ENV PATH=/usr/local/bin:/usr/bin:/bin", "ENV HOME=/root", 'CMD ["python3"]']


def _exists(client: Any, tag: str) -> bool:
    import docker

    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def _key(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


def python_base_image(client: Any, name: str = "tfcloud-test/python") -> str:
    """A ~65 MB image with static busybox, Debian's python3.11 and pip (no TensorFlow). Made once per engine."""
    pip_files, versions = _dist_files(["pip"])
    tag = f"{name}:{_key(PYTHON.stat().st_size, versions)}"
    if not _exists(client, tag):
        _import(client, tag, lambda tar: _rootfs(tar, pip_files, []), _CHANGES)
    return tag


def _skip_tf(dist: str, rel: str | None) -> bool:
    if dist in ("libclang",):
        return True
    if rel is None:
        return False
    return rel.startswith(("tensorflow/include/", "tensorflow/lite/testing/")) or rel.endswith(".pyc")


def tensorflow_base_image(client: Any, name: str = "tfcloud-test/tensorflow", *, also: Iterable[str] = ()) -> str:
    """An image with python3.11, pip, TensorFlow and tf-keras (with their dependencies) from this
    interpreter's site-packages (~1.3 GB, ~15-25 s once per engine). Raises when TensorFlow is missing.
    ``also``: more installed distributions to carry (with their dependencies), e.g. ``["scikit-learn"]``."""
    files, versions = _dist_files(["tensorflow", "tensorflow-cpu", "tf-keras", "pip", *also], skip=_skip_tf)
    if not any(v.startswith(("tensorflow==", "tensorflow-cpu==")) for v in versions):
        raise RuntimeError("TensorFlow is not installed in this interpreter")
    tag = f"{name}:{_key(PYTHON.stat().st_size, versions)}"
    if not _exists(client, tag):
        so_files = [src for rel, src in files if rel.endswith(".so") or ".so." in rel]
        _import(client, tag, lambda tar: _rootfs(tar, files, so_files), _CHANGES)
    return tag
