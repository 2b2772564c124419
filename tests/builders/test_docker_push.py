"""Pushes that meet a failing registry, and concurrent builds of one tag, against a real dockerd and
docker-registry on loopback. The failures come from a real HTTP proxy in front of the registry
(tfcloud.testing.proxy) that answers 500 to the first manifest uploads."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from tfcloud.errors import BuildError
from tfcloud.image.builders.docker import DockerBuilder
from tfcloud.image.containerize import containerize, plan_image
from tfcloud.job.artifacts import ImageRef, PreparedJob
from tfcloud.testing.dockerd import Engine, registry
from tfcloud.testing.proxy import failing_proxy

MakeJob = Callable[..., PreparedJob]  # the make_job fixture (conftest.py)

pytestmark = pytest.mark.docker


def _tags(engine: Engine, since: float, uri: str) -> list[str]:
    return [e["Action"] for e in engine.events(since)
            if e.get("Type") == "image" and e["Action"] == "tag" and e["Actor"]["Attributes"].get("name") == uri]


def test_a_push_that_meets_registry_errors_is_tried_again(engine: Engine, make_job: MakeJob) -> None:
    out = io.StringIO()
    with failing_proxy(engine.registry.address, fail_manifest_puts=2) as proxy, \
            DockerBuilder(docker_host=engine.docker_host, network_mode="none", retry_backoff=0.05,
                          console=Console(file=out, width=300)) as builder:
        ref = containerize(make_job({"retry.py": ""}), builder=builder, repository=f"{proxy.address}/tfcloud")
        assert ref.built and ref.digest and ref.digest.startswith("sha256:")
        assert proxy.manifest_puts() == [500, 500, 201]  # the registry failed twice, the third push went in
        assert builder.exists(ref.uri)
    text = out.getvalue()
    assert text.count("; trying again in ") == 2, text
    assert "(attempt 2 of 5)" in text and "(attempt 3 of 5)" in text
    assert "500 Internal Server Error" in text


def test_a_push_gives_up_after_its_retries(engine: Engine, make_job: MakeJob) -> None:
    with failing_proxy(engine.registry.address, fail_manifest_puts=100) as proxy, \
            DockerBuilder(docker_host=engine.docker_host, network_mode="none", retry_backoff=0.01,
                          push_retries=2) as builder, pytest.raises(BuildError) as info:
        containerize(make_job({"give-up.py": ""}), builder=builder, repository=f"{proxy.address}/tfcloud")
    assert info.value.step == "push" and "500 Internal Server Error" in str(info.value)
    assert proxy.manifest_puts() == [500, 500, 500]  # 1 + push_retries attempts


def test_a_refused_push_is_not_tried_again(engine: Engine, make_job: MakeJob, tmp_path: Path) -> None:
    out = io.StringIO()
    with registry(tmp_path / "ro", readonly=True) as ro, \
            DockerBuilder(docker_host=engine.docker_host, network_mode="none", retry_backoff=0.01,
                          console=Console(file=out, width=300)) as builder, pytest.raises(BuildError) as info:
        containerize(make_job({"refused.py": ""}), builder=builder, repository=f"{ro.address}/tfcloud")
    assert "405" in str(info.value) and "trying again" not in out.getvalue()
    assert out.getvalue().count("Pushing ") == 1


def test_concurrent_builds_of_one_tag_build_once_and_all_succeed(engine: Engine, make_job: MakeJob) -> None:
    import fcntl

    job = make_job({"shared.py": "X = 1\n"})
    results: list[ImageRef] = []
    errors: list[BaseException] = []
    out = io.StringIO()
    console = Console(file=out, width=300)

    with failing_proxy(engine.registry.address, fail_manifest_puts=1) as proxy:
        repository = f"{proxy.address}/tfcloud"
        uri = plan_image(job, repository=repository).uri

        def one() -> None:
            try:
                with DockerBuilder(docker_host=engine.docker_host, network_mode="none", retry_backoff=0.05,
                                   console=console) as builder:
                    results.append(containerize(job, builder=builder, repository=repository))
            except BaseException as exc:  # reported below
                errors.append(exc)

        # Hold the tag's lock until all four wait on it, so that they all race for the build.
        lock = DockerBuilder().lock_path(uri)
        lock.parent.mkdir(parents=True, exist_ok=True)
        since = time.time()
        with open(lock, "a+b") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            threads = [threading.Thread(target=one) for _ in range(4)]
            for t in threads:
                t.start()
            deadline = time.monotonic() + 120
            while out.getvalue().count("Waiting for another build of ") < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            fcntl.flock(held, fcntl.LOCK_UN)
        for t in threads:
            t.join(300)
        assert errors == []
        assert out.getvalue().count(f"Waiting for another build of {uri} on this machine") == 4
        assert len(results) == 4 and {r.uri for r in results} == {uri}
        assert sorted(r.built for r in results) == [False, False, False, True]  # one build
        assert _tags(engine, since, uri) == ["tag"]
        assert proxy.manifest_puts() == [500, 201]  # pushed once (after one retry)
        assert len({r.digest for r in results}) == 1 and str(results[0].digest).startswith("sha256:")
        assert out.getvalue().count(f"Image {uri} was pushed by another build meanwhile.") == 3
    # the lock lives in the tfcloud state dir (TFCLOUD_HOME, set per test by the autouse fixture)
    assert lock.parent == Path(os.environ["TFCLOUD_HOME"]) / "locks"


def test_the_lock_dir_follows_the_state_dir_setting(make_job: MakeJob, tmp_path: Path) -> None:
    from tfcloud.flow.pipeline import make_builder
    from tfcloud.flow.settings import Settings
    from tfcloud.targets.local.value import LocalOptions

    spec, target = make_job().spec, LocalOptions(use_container=True)
    builder = make_builder(spec, target, Settings(state_dir=str(tmp_path / "state")))
    assert isinstance(builder, DockerBuilder) and builder.lock_dir == tmp_path / "state" / "locks"
    assert make_builder(spec, target, Settings()).lock_dir is None  # type: ignore[attr-defined]  # default: TFCLOUD_HOME


_BUILD_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from tfcloud.image.builders.docker import DockerBuilder
    from tfcloud.image.context import collect_context

    docker_host, root, tag, base = sys.argv[1:5]
    context = collect_context(Path(root), generated={".tfcloud/Dockerfile": f"FROM {base}\\nCOPY . /app/\\n".encode()})
    with DockerBuilder(docker_host=docker_host, network_mode="none", retry_backoff=0.05) as builder:
        ref = builder.build(context, tag)
    print("built" if ref.built else "reused", ref.digest)
""")


def test_concurrent_builds_in_processes_build_once(engine: Engine, python_base: str, tmp_path: Path) -> None:
    root = tmp_path / "proc"
    root.mkdir()
    (root / "train.py").write_text("print('processes')\n")
    with failing_proxy(engine.registry.address, fail_manifest_puts=1) as proxy:
        tag = f"{proxy.address}/tfcloud/processes:1"
        since = time.time()
        procs = [subprocess.Popen([sys.executable, "-c", _BUILD_SCRIPT, engine.docker_host, str(root), tag,
                                   python_base], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(3)]
        outputs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0], outputs
        lines = sorted(out.strip() for out, _ in outputs)
        assert [line.split()[0] for line in lines] == ["built", "reused", "reused"], outputs
        assert len({line.split()[1] for line in lines}) == 1  # one digest
        assert _tags(engine, since, tag) == ["tag"]
        assert proxy.manifest_puts() == [500, 201]


@pytest.mark.parametrize(("message", "retried"), [
    ("received unexpected HTTP status: 500 Internal Server Error", True),
    ("received unexpected HTTP status: 503 Service Unavailable", True),
    ("toomanyrequests: too many requests", True),
    ('Put "http://r/v2/x/blobs/uploads/1": read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer', True),
    ("net/http: TLS handshake timeout", True),
    ("denied: requested access to the resource is denied", False),
    ("unauthorized: authentication required", False),
    ("no basic auth credentials", False),
    ("unknown: Method not allowed (405)", False),
    ("name unknown: repository name not known to registry", False),
])
def test_which_push_errors_are_tried_again(message: str, retried: bool) -> None:
    from tfcloud.image.builders.docker import _retryable

    assert _retryable(message) is retried
