"""Separate test hosts on one machine: two Linux network namespaces on a veth pair (TESTBED §5), and a Ray
cluster whose head and worker node each sit in one of them.

:func:`two_hosts` (root only; :func:`netns_unavailable` says why not) makes namespaces ``tfc<pid>a`` and
``tfc<pid>b``, joined by a veth pair with ``192.168.77.1`` and ``192.168.77.2`` (addresses that exist only
inside them: no default route, nothing leaves the pair, loopback is each host's own). Every process started on
a host runs in one PID namespace of its own (``unshare --pid --fork --kill-child --mount-proc``, entered with
``nsenter``): ``ray stop`` there touches only this cluster, and ending the namespace's first process ends every
process started in it. On exit the PID namespace is ended and both network namespaces are deleted.

:class:`Hosts` starts processes on a host (:meth:`Hosts.popen`, proxy variables removed), kills everything a
host runs (:meth:`Hosts.kill_host`: a lost machine), and forwards a port of this machine's loopback to a host's
address (:meth:`Hosts.forward`: how a test process outside the namespaces reaches a Ray dashboard, as
``kubectl port-forward`` would).

:func:`ray_head` and :func:`ray_node` start Ray's own ``ray start`` on a host (``--node-ip-address`` the host's
address, a ``--temp-dir`` of its own); :func:`ray_nodes_alive` reads which nodes the head counts alive, and
:func:`wait_for_jobs_api` waits until the Jobs API takes jobs.

Run as ``python -m tfcloud.testing.netns forward FD IP PORT`` it is the forwarder itself: it accepts on the
listening socket ``FD`` (made in the outer namespace) and connects to ``IP:PORT`` from inside the host.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Host", "Hosts", "netns_unavailable", "ray_head", "ray_node", "ray_nodes_alive", "two_hosts",
           "wait_for_jobs_api"]

SUBNET = "192.168.77"
_PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "grpc_proxy",
               "no_proxy", "NO_PROXY", "no_grpc_proxy")


@dataclass(frozen=True)
class Host:
    """One test host: its network namespace and its address on the pair."""

    netns: str
    ip: str


def netns_unavailable() -> str | None:
    """None when this process can make test hosts, else why not (a skip reason)."""
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux only"
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    missing = [p for p in ("ip", "unshare", "nsenter") if shutil.which(p) is None]
    if missing:
        return f"{', '.join(missing)} not installed (iproute2, util-linux)"
    probe = f"tfcprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip() or made.returncode}"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True, check=False)
    return None


def _ip(*argv: str) -> None:
    done = subprocess.run(["ip", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(argv)}: {done.stderr.strip()}")


class Hosts:
    """Two hosts (``a``, ``b``) and the PID namespace every process on them runs in."""

    def __init__(self, a: Host, b: Host, holder: subprocess.Popen[bytes] | None, tmp: Path,
                 init_pid: int | None = None) -> None:
        self.a = a
        self.b = b
        self.holder = holder  # unshare; its child is the namespace's first process (None: another process's hosts)
        self.init_pid = init_pid if init_pid is not None else _namespace_init(holder)  # type: ignore[arg-type]
        self.tmp = tmp  # a directory for the hosts' files (Ray's temp dirs)
        self._procs: list[subprocess.Popen[bytes]] = []

    def describe(self) -> str:
        """These hosts as JSON, for another process to use them (:meth:`reuse`): a benchmark on the test suite's
        cluster."""
        return json.dumps({"a": [self.a.netns, self.a.ip], "b": [self.b.netns, self.b.ip], "init_pid": self.init_pid,
                           "tmp": str(self.tmp)})

    @classmethod
    def reuse(cls, described: str) -> Hosts:
        """The hosts another process made (:meth:`describe`); :meth:`close` ends only what this one started."""
        d = json.loads(described)
        return cls(Host(*d["a"]), Host(*d["b"]), None, Path(d["tmp"]), init_pid=int(d["init_pid"]))

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """This environment without proxy variables, with this interpreter's directory first on PATH."""
        env = {k: v for k, v in os.environ.items() if k not in _PROXY_VARS}
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")])
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        return {**env, **(extra or {})}

    def command(self, host: Host, argv: Sequence[str]) -> list[str]:
        """``argv`` as run on ``host``, inside the hosts' PID namespace."""
        return ["nsenter", "-t", str(self.init_pid), "-p", "-m", "--", "ip", "netns", "exec", host.netns,
                *argv]

    def popen(self, host: Host, argv: Sequence[str], *, env: dict[str, str] | None = None,
              **kwargs: object) -> subprocess.Popen[bytes]:
        """Start ``argv`` on ``host`` (ends with the hosts at the latest)."""
        proc = subprocess.Popen(self.command(host, argv), env=self.env(env), stdin=subprocess.DEVNULL,
                                **kwargs)  # type: ignore[call-overload]
        self._procs.append(proc)
        return proc  # type: ignore[no-any-return]

    def run(self, host: Host, argv: Sequence[str], *, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(host, argv), env=self.env(env), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def pids(self, host: Host) -> list[int]:
        """The processes running in ``host``'s network namespace (this machine's pids)."""
        done = subprocess.run(["ip", "netns", "pids", host.netns], capture_output=True, text=True, check=False)
        return [int(p) for p in done.stdout.split()]

    def kill_host(self, host: Host) -> list[int]:
        """SIGKILL every process on ``host`` (a machine lost at once); return their pids."""
        killed = []
        for _ in range(5):  # a process may fork while we kill
            pids = self.pids(host)
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.1)
        return killed

    def forward(self, host: Host, port: int) -> int:
        """A port on 127.0.0.1 of this machine whose connections reach ``host.ip:port`` (returned at once;
        connections wait until the forwarder accepts them)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        local = int(listener.getsockname()[1])
        fd = listener.fileno()
        self.popen(host, [sys.executable, "-m", "tfcloud.testing.netns", "forward", str(fd), host.ip, str(port)],
                   env={"PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                                    os.environ.get("PYTHONPATH")]))},
                   pass_fds=(fd,))
        listener.close()
        return local

    def close(self) -> None:
        """End every process started on the hosts (the PID namespace) and wait for them."""
        if self.holder is not None:
            with contextlib.suppress(ProcessLookupError):
                self.holder.send_signal(signal.SIGKILL)  # --kill-child: the namespace's init goes, and all in it
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.holder.wait(timeout=30)
        for proc in self._procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)


@contextlib.contextmanager
def two_hosts(subnet: str = SUBNET) -> Iterator[Hosts]:
    """Two network namespaces on a veth pair (``SUBNET.1`` and ``SUBNET.2``/24) and a PID namespace for their
    processes; everything is removed on exit."""
    tag = f"tfc{os.getpid()}"
    a, b = Host(f"{tag}a", f"{subnet}.1"), Host(f"{tag}b", f"{subnet}.2")
    tmp = Path(tempfile.mkdtemp(prefix="tfn-"))  # short: Ray's socket paths must fit in 107 bytes
    made: list[str] = []
    hosts: Hosts | None = None
    try:
        for host in (a, b):
            _ip("netns", "add", host.netns)
            made.append(host.netns)
        _ip("link", "add", f"{tag}va", "netns", a.netns, "type", "veth", "peer", "name", f"{tag}vb", "netns", b.netns)
        for host, dev in ((a, f"{tag}va"), (b, f"{tag}vb")):
            _ip("-n", host.netns, "link", "set", "lo", "up")
            _ip("-n", host.netns, "addr", "add", f"{host.ip}/24", "dev", dev)
            _ip("-n", host.netns, "link", "set", dev, "up")
        holder = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sleep", "infinity"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            hosts = Hosts(a, b, holder, tmp)
        finally:
            if hosts is None:
                holder.kill()
                holder.wait()
        yield hosts
    finally:
        if hosts is not None:
            hosts.close()
        for name in made:  # the veth pair goes with its namespaces
            subprocess.run(["ip", "netns", "delete", name], capture_output=True, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def _namespace_init(holder: subprocess.Popen[bytes]) -> int:
    """The pid (here) of the first process of ``unshare``'s PID namespace, once it runs: ``unshare`` itself
    stays in ours, nsenter must target its child."""
    deadline = time.monotonic() + 10
    mine = os.readlink("/proc/self/ns/pid")
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            for child in Path(f"/proc/{holder.pid}/task/{holder.pid}/children").read_text().split():
                if os.readlink(f"/proc/{child}/ns/pid") != mine:
                    return int(child)
        time.sleep(0.02)
    raise RuntimeError("unshare did not start its PID namespace")


# -- Ray on the hosts ---------------------------------------------------------------------------------------
GCS_PORT = 6379
DASHBOARD_PORT = 8265


def _ray_start(hosts: Hosts, host: Host, args: Sequence[str], name: str) -> None:
    temp = hosts.tmp / name
    temp.mkdir(exist_ok=True)
    done = hosts.run(host, ["ray", "start", "--node-ip-address", host.ip, "--num-cpus", "2",
                            "--object-store-memory", str(80 * 1024 * 1024), "--disable-usage-stats",
                            "--temp-dir", str(temp), *args], timeout=180)
    if done.returncode != 0:
        raise RuntimeError(f"ray start on {host.ip} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def ray_head(hosts: Hosts, host: Host) -> None:
    """``ray start --head`` on ``host`` (2 logical CPUs; the GCS on :data:`GCS_PORT`, the dashboard on
    :data:`DASHBOARD_PORT` of the host's address)."""
    _ray_start(hosts, host, ["--head", "--port", str(GCS_PORT), "--include-dashboard", "true",
                             "--dashboard-host", host.ip, "--dashboard-port", str(DASHBOARD_PORT)], "head")


def ray_node(hosts: Hosts, host: Host, head: Host, name: str = "node") -> None:
    """A Ray worker node on ``host`` (2 logical CPUs) that joins the head on ``head``."""
    _ray_start(hosts, host, ["--address", f"{head.ip}:{GCS_PORT}"], name)


def wait_for_jobs_api(address: str, timeout: float = 120) -> None:
    """Until the Jobs API at ``address`` runs a job: it answers "No available agent" until a node's agent has
    registered, so a no-op is submitted until one is taken, and waited for."""
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(address)
    deadline = time.monotonic() + timeout
    while True:
        try:
            job = client.submit_job(entrypoint="true", metadata={"purpose": "tfcloud test warm-up"})
            break
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
    while not client.get_job_status(job).is_terminal():
        time.sleep(0.5)


def ray_nodes_alive(hosts: Hosts, head: Host) -> list[str]:
    """The addresses of the nodes the head's GCS counts alive."""
    code = ("import json, ray\nfrom ray.util.state import list_nodes\n"
            f"print(json.dumps([n.node_ip for n in list_nodes(address='http://{head.ip}:{DASHBOARD_PORT}') "
            "if n.state == 'ALIVE']))")
    done = hosts.run(head, [sys.executable, "-c", code], timeout=60)
    if done.returncode != 0:
        return []
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


# -- the forwarder (python -m tfcloud.testing.netns forward FD IP PORT) ---------------------------------------
def _pump(src: socket.socket, dst: socket.socket, done: threading.Barrier) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
        with contextlib.suppress(threading.BrokenBarrierError):
            if done.wait(timeout=600) == 0:  # the last of both directions closes the pair
                src.close()
                dst.close()


def _serve(listener: socket.socket, ip: str, port: int) -> None:
    while True:
        client, _ = listener.accept()
        try:
            upstream = socket.create_connection((ip, port), timeout=30)
            upstream.settimeout(None)
        except OSError:
            client.close()
            continue
        done = threading.Barrier(2)
        for src, dst in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(src, dst, done), daemon=True).start()


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "forward":
        sys.exit("usage: python -m tfcloud.testing.netns forward FD IP PORT")
    _serve(socket.socket(fileno=int(sys.argv[2])), sys.argv[3], int(sys.argv[4]))
