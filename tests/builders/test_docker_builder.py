"""The Docker builder against a real dockerd and docker-registry on loopback: build, push and pull; an
unchanged rebuild that builds and pushes nothing (counted in the engine's events and the registry's log);
layer reuse on a code-only change; the failing step's log in a BuildError."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console

from tfcloud.errors import BuildError, ConfigurationError
from tfcloud.image.builders import Builder
from tfcloud.image.builders.docker import DockerBuilder
from tfcloud.image.containerize import containerize, plan_image
from tfcloud.job.artifacts import PreparedJob
from tfcloud.testing.dockerd import Engine, registry

MakeJob = Callable[..., PreparedJob]  # the make_job fixture (conftest.py)

pytestmark = pytest.mark.docker


@pytest.fixture
def builder(engine: Engine) -> Iterator[DockerBuilder]:
    with DockerBuilder(docker_host=engine.docker_host, network_mode="none") as b:
        yield b


def _writes(requests: list[str]) -> list[str]:
    return [r for r in requests if not r.startswith(("GET", "HEAD"))]


def test_builder_satisfies_the_protocol(builder: DockerBuilder) -> None:
    assert isinstance(builder, Builder)


def test_build_push_pull_and_run(engine: Engine, builder: DockerBuilder, make_job: MakeJob, repository: str) -> None:
    job = make_job({"pkg/model.py": "W = 1\n", ".env": "TOKEN=secret\n", "data/a.csv": "1,2\n"})
    out = io.StringIO()
    ref = containerize(job, builder=builder, repository=repository, console=Console(file=out, width=200))
    assert ref.built and ref.digest and ref.digest.startswith("sha256:")
    assert ref.uri.startswith(f"{repository}/train:") and len(ref.uri.rsplit(":", 1)[1]) == 16
    shown = out.getvalue()
    assert "files, " in shown and "Kept out of the image (secret deny-list): .env (environment file)." in shown

    client = engine.client()
    try:
        client.images.remove(ref.uri)
        client.images.pull(ref.uri)  # from the registry
        listing = client.containers.run(
            ref.uri, entrypoint=["python3", "-c",
                                 "import os, tfcloud; print(sorted(os.listdir('.'))); print(tfcloud.remote());"
                                 "os.environ['TFCLOUD_REMOTE'] = '1'; print(tfcloud.remote(), tfcloud.__file__)"],
            network_mode="none", remove=True,
        ).decode()
        config = client.images.get(ref.uri).attrs["Config"]
    finally:
        client.close()
    assert listing.splitlines() == [
        "['.tfcloud', 'data', 'pkg', 'tfcloud_launcher.py', 'train.py']",
        "False",
        "True /opt/tfcloud/tfcloud/__init__.py",
    ]
    assert config["Entrypoint"] == ["python3", "tfcloud_launcher.py"]
    assert config["WorkingDir"] == "/app"


def test_unchanged_rebuild_builds_and_pushes_nothing(engine: Engine, make_job: MakeJob, repository: str) -> None:
    job = make_job({"helper.py": "X = 2\n"})
    with DockerBuilder(docker_host=engine.docker_host) as first:
        ref1 = containerize(job, builder=first, repository=repository)
    assert ref1.built
    since, before = time.time(), len(engine.registry.requests())

    with DockerBuilder(docker_host=engine.docker_host) as again:
        ref2 = containerize(job, builder=again, repository=repository)
    events = engine.events(since)
    requests = engine.registry.requests()[before:]

    assert ref2.uri == ref1.uri and not ref2.built
    assert [e for e in events if e.get("Type") == "container"] == []  # no RUN step ran
    assert [e["Action"] for e in events if e.get("Type") == "image"] == []  # nothing tagged, pushed or pulled
    assert _writes(requests) == []
    # one look-up: the engine asks the registry for the tag's manifest once (then reads it: no writes)
    assert len([r for r in requests if r.startswith("HEAD") and "/manifests/" in r]) == 1, requests


def test_local_image_is_pushed_not_rebuilt(engine: Engine, builder: DockerBuilder, make_job: MakeJob,
                                           repository: str) -> None:
    job = make_job({"only-local.py": ""})
    ref = containerize(job, builder=builder, repository=repository, push=False)
    assert ref.built and not builder.exists(ref.uri, pushed=True) and builder.exists(ref.uri, pushed=False)
    since = time.time()  # the engine's events carry their nanosecond (Engine.events)
    pushed = containerize(job, builder=builder, repository=repository, push=True)
    actions = [e["Action"] for e in engine.events(since) if e.get("Type") in ("image", "container")]
    assert not pushed.built and actions == ["push"]
    assert builder.exists(ref.uri, pushed=True)


def _layers(engine: Engine, uri: str) -> list[str]:
    client = engine.client()
    try:
        return list(client.images.get(uri).attrs["RootFS"]["Layers"])
    finally:
        client.close()


def test_code_only_change_reuses_the_requirements_layer(engine: Engine, make_job: MakeJob, repository: str) -> None:
    # "pip" is already in the base image: the RUN step succeeds without a network.
    job = make_job({"requirements.txt": "pip\n"}, requirements_txt="requirements.txt")
    with DockerBuilder(docker_host=engine.docker_host, network_mode="none") as builder:
        first = containerize(job, builder=builder, repository=repository, push=False)
    (job.workdir / "train.py").write_text("print('changed')\n")
    log = io.StringIO()
    builder = DockerBuilder(docker_host=engine.docker_host, network_mode="none", stream_logs=True,
                            console=Console(file=log, width=300))
    with builder:
        second = containerize(job, builder=builder, repository=repository, push=False, console=builder.console)
    assert first.uri != second.uri
    # The context's size is said once (its files' own sizes), not again as the tar's on the next line.
    said = log.getvalue().splitlines()
    assert re.fullmatch(r"Build context \S+: \d+ files, [\d.]+ k?B", said[0]) and said[1] == f"Building {second.uri}"

    a, b = _layers(engine, first.uri), _layers(engine, second.uri)
    text = log.getvalue()
    step = text.index("RUN python3 -m pip install")
    assert "Using cache" in text[step:step + 300], text
    assert "Requirement already satisfied" not in text  # pip did not run again
    # base + requirements + tfcloud layers shared; only the code layer differs
    assert a[:-1] == b[:-1] and a[-1] != b[-1]


def test_failing_run_step_names_the_step_and_shows_its_log(engine: Engine, builder: DockerBuilder,
                                                           make_job: MakeJob, repository: str) -> None:
    # A line validation accepts (a path) that pip then fails on inside the build.
    job = make_job({"requirements.txt": "./no-such-directory\n"}, requirements_txt="requirements.txt")
    with pytest.raises(BuildError) as info:
        containerize(job, builder=builder, repository=repository)
    err = info.value
    assert err.step is not None and err.step.startswith("Step ") and "RUN python3 -m pip install" in err.step
    assert "no-such-directory" in err.log_tail
    assert "returned a non-zero code: 1" in err.log_tail
    assert err.exit_code == 1 and err.log_tail in str(err)


def test_missing_base_image_is_a_build_error(engine: Engine, builder: DockerBuilder, make_job: MakeJob,
                                             repository: str) -> None:
    job = make_job(parent_image=f"{engine.registry.address}/no/such-base:1")
    with pytest.raises(BuildError) as info:
        containerize(job, builder=builder, repository=repository)
    assert info.value.step is not None and "FROM" in info.value.step
    assert "no/such-base" in str(info.value)


def test_rejected_push_is_a_build_error(engine: Engine, builder: DockerBuilder, make_job: MakeJob,
                                        tmp_path: Path) -> None:
    with registry(tmp_path / "ro", readonly=True) as ro, pytest.raises(BuildError) as info:
        containerize(make_job(), builder=builder, repository=f"{ro.address}/tfcloud")
    err = info.value
    assert err.step == "push"
    assert str(err).startswith(f"Pushing {ro.address}/tfcloud/train:")
    assert err.log_tail  # the push stream's last lines, the registry's refusal among them
    assert "405" in err.log_tail and "Method not allowed" in err.log_tail, err.log_tail


def test_no_engine_is_a_clear_error(tmp_path: Path) -> None:
    builder = DockerBuilder(docker_host=f"unix://{tmp_path}/no-docker.sock")
    with pytest.raises(ConfigurationError) as info:
        builder.exists("localhost:5000/x:1")
    text = str(info.value)
    assert text.startswith(f"Cannot reach a Docker engine at unix://{tmp_path}/no-docker.sock: ")
    assert "Cloud Build" in text and "image_build_bucket" in text


def test_plan_is_stable_across_directories(make_job: MakeJob, repository: str, python_base: str) -> None:
    a = plan_image(make_job({"m.py": "1"}, name="a"), repository=repository)
    b = plan_image(make_job({"m.py": "1"}, name="b"), repository=repository)
    assert a.uri == b.uri and a.base_image == python_base


def _bcrypt(password: str) -> str:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt  # the stdlib's, bcrypt through libxcrypt (Debian)

        return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH))


def test_registry_credentials_come_from_the_docker_config(engine: Engine, make_job: MakeJob, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import base64
    import json

    htpasswd = tmp_path / "htpasswd"
    htpasswd.write_text(f"alice:{_bcrypt('s3cret')}\n")
    with registry(tmp_path / "auth", htpasswd=htpasswd) as reg:
        job = make_job({"auth.py": ""})
        repository = f"{reg.address}/tfcloud"
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "no-config"))
        with DockerBuilder(docker_host=engine.docker_host) as anonymous, pytest.raises(BuildError) as info:
            containerize(job, builder=anonymous, repository=repository)
        assert info.value.step == "push" and "no basic auth credentials" in str(info.value)

        config = tmp_path / "docker-config"
        config.mkdir()
        auth = base64.b64encode(b"alice:s3cret").decode()
        (config / "config.json").write_text(json.dumps({"auths": {reg.address: {"auth": auth}}}))
        monkeypatch.setenv("DOCKER_CONFIG", str(config))
        with DockerBuilder(docker_host=engine.docker_host) as builder:
            ref = containerize(job, builder=builder, repository=repository)
            assert not ref.built and ref.digest  # built by the first attempt; now pushed
            assert builder.exists(ref.uri)  # the look-up authenticates too


def test_requirement_includes_are_read_by_pip_inside_the_build(engine: Engine, make_job: MakeJob,
                                                                repository: str) -> None:
    # `-r base.txt` and `-c constraints.txt` reach pip inside the build: pip (already in the base image, no
    # network) comes from the include, and a constraint it cannot meet fails the build naming it.
    import importlib.metadata

    pip = importlib.metadata.version("pip")
    files = {"requirements.txt": "-r reqs/base.txt\n", "reqs/base.txt": "-c ../constraints.txt\npip\n",
             "constraints.txt": f"pip=={pip}\n"}
    log = io.StringIO()
    with DockerBuilder(docker_host=engine.docker_host, network_mode="none", stream_logs=True,
                       console=Console(file=log, width=300)) as builder:
        ref = containerize(make_job(files, requirements_txt="requirements.txt"), builder=builder,
                           repository=repository, push=False)
        assert "Requirement already satisfied: pip" in log.getvalue()
        client = engine.client()
        try:
            listing = client.containers.run(ref.uri, entrypoint=["python3", "-c", (
                "import os; d = '/tmp/tfcloud/requirements'; "
                "print({n: open(os.path.join(d, n)).read() for n in sorted(os.listdir(d))})")],
                network_mode="none", remove=True).decode()
        finally:
            client.close()
        assert listing.strip() == repr({"base.txt": "-c constraints.txt\npip\n",
                                        "constraints.txt": f"pip=={pip}\n", "requirements.txt": "-r base.txt\n"})
        files["constraints.txt"] = "pip==0.0.1\n"
        with pytest.raises(BuildError) as info:
            containerize(make_job(files, requirements_txt="requirements.txt", name="pinned"), builder=builder,
                         repository=repository, push=False)
    assert "pip==0.0.1" in info.value.log_tail
