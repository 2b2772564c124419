"""No credential reaches a pushed image: a real image is built from a directory holding every kind of
credential file we know of, and its whole filesystem is searched for them. A ``!path`` line in
``.dockerignore`` lets one in. Odd file names and bad ignore lines give an image or a message, not a
traceback."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from tfcloud.cli import main
from tfcloud.image.builders.docker import DockerBuilder
from tfcloud.image.containerize import containerize
from tfcloud.job.artifacts import PreparedJob
from tfcloud.testing.dockerd import Engine

MakeJob = Callable[..., PreparedJob]  # the make_job fixture (conftest.py)


MARK = "TFCLOUD-TEST-SECRET-"


def _sa_key(name: str, padding: int = 0) -> str:
    key = {"type": "service_account", "project_id": "p", "private_key_id": MARK + name,
           "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n",
           "client_email": "sa@p.iam.gserviceaccount.com", "notes": " " * padding}
    return json.dumps(key, indent=2)


#: Every kind of credential file, each holding its own marker.
CREDENTIALS = {
    ".env": f"API_KEY={MARK}env\n",
    "key.json": _sa_key("key.json"),
    "big-service-account.json": _sa_key("big-service-account.json", padding=70_000),  # over 64 kB
    "id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARK}id_rsa\n-----END OPENSSH PRIVATE KEY-----\n",
    "notes/deploy-key.txt": f"-----BEGIN RSA PRIVATE KEY-----\n{MARK}pem\n-----END RSA PRIVATE KEY-----\n",
    ".git/config": f"[remote \"origin\"]\n\turl = https://me:{MARK}git@example.com/r.git\n",
    ".aws/credentials": f"[default]\naws_secret_access_key = {MARK}aws\n",
    ".netrc": f"machine example.com login me password {MARK}netrc\n",
    ".pypirc": f"[pypi]\npassword = {MARK}pypirc\n",
    "home/.docker/config.json": json.dumps({"auths": {"r.example": {"auth": MARK + "docker"}}}),
    "home/.config/gcloud/credentials.db": MARK + "gcloud",
    "gcloud/application_default_credentials.json": json.dumps({"refresh_token": MARK + "adc"}),
    ".npmrc": f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={MARK}npmrc\n",
    "web/.yarnrc.yml": f"npmAuthToken: \"{MARK}yarnrc\"\n",
    ".git-credentials": f"https://me:{MARK}git-credentials@github.com\n",
    ".kube/config": f"users:\n- name: me\n  user:\n    token: {MARK}kube\n",
    ".envrc": f"export TOKEN={MARK}envrc\n",
    "infra/terraform.tfstate": json.dumps({"outputs": {"db_password": {"value": MARK + "tfstate"}}}),
    "credentials.json": json.dumps({"installed": {"client_id": "c", "client_secret": MARK + "oauth"}}),
    "deploy/secrets.yaml": f"db_password: {MARK}secrets-yaml\n",
    "token.txt": f"{MARK}token-txt\n",
    "web/.htpasswd": f"alice:{MARK}htpasswd\n",
}


def _image_files(engine: Engine, uri: str) -> tuple[list[str], set[str]]:
    """The files under /app, and every marker found anywhere in the image's filesystem."""
    import tarfile

    client = engine.client()
    container = client.containers.create(uri, entrypoint=["true"], network_disabled=True)
    try:
        stream = io.BytesIO(b"".join(container.export()))
    finally:
        container.remove()
        client.close()
    app: list[str] = []
    found: set[str] = set()
    with tarfile.open(fileobj=stream) as tar:
        for member in tar:
            if member.name.startswith("app/") and member.isfile():
                app.append(member.name[len("app/"):])  # non-UTF-8 bytes as surrogates
            if member.isfile():
                data = tar.extractfile(member).read()  # type: ignore[union-attr]
                start = data.find(MARK.encode())
                while start >= 0:
                    end = start + len(MARK)
                    while end < len(data) and (chr(data[end]).isalnum() or data[end] in b".-_"):
                        end += 1
                    found.add(data[start + len(MARK):end].decode())
                    start = data.find(MARK.encode(), end)
    return sorted(app), found


@pytest.mark.docker
def test_no_credential_reaches_the_image(engine: Engine, make_job: MakeJob, repository: str) -> None:
    job = make_job(CREDENTIALS)
    out = io.StringIO()
    with DockerBuilder(docker_host=engine.docker_host, network_mode="none") as builder:
        ref = containerize(job, builder=builder, repository=repository, console=Console(file=out, width=2000))
    app, found = _image_files(engine, ref.uri)
    assert found == set()
    assert [p for p in app if not p.startswith(".tfcloud/")] == ["tfcloud_launcher.py", "train.py"]
    warnings = [line for line in out.getvalue().splitlines() if line.startswith("Kept out of the image")]
    assert len(warnings) == 1  # one warning, naming every file kept out (.git/ is a default exclude)
    named = {part.rsplit(" (", 1)[0] for part in warnings[0].split(": ", 1)[1].split(". To let")[0].split(", ")}
    for rel in CREDENTIALS:
        if not rel.startswith(".git/"):  # a file, or the directory it is in (.aws/, .kube/, .config/gcloud/)
            parts = rel.split("/")
            assert {rel} | {"/".join(parts[:i]) + "/" for i in range(1, len(parts))} & named, rel
    assert warnings[0].endswith("To let a file in, add a line `!path` for it to .dockerignore (e.g. `!.env`).")


@pytest.mark.docker
def test_a_dockerignore_path_line_lets_one_credential_in(engine: Engine, make_job: MakeJob,
                                                         repository: str) -> None:
    job = make_job({**CREDENTIALS, ".dockerignore": "!token.txt\n!*.json\n"})
    out = io.StringIO()
    with DockerBuilder(docker_host=engine.docker_host, network_mode="none") as builder:
        ref = containerize(job, builder=builder, repository=repository, console=Console(file=out, width=2000))
    app, found = _image_files(engine, ref.uri)
    assert found == {"token-txt"}  # `!*.json` (a wildcard) lets nothing in
    assert "token.txt" in app
    assert ("Let into the image by `!path` lines in .dockerignore, despite the deny-list: token.txt (token)."
            in out.getvalue())


@pytest.mark.docker
def test_odd_file_names_and_a_bad_gitignore_line_still_build(engine: Engine, python_base: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", f"{engine.registry.address}/tfcloud")
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / ".gitignore").write_text("!\n*.log\n\\\n")  # git skips the lone `!` and `\\` lines
    (tmp_path / "run.log").write_text("x")
    root = os.fsencode(tmp_path)
    with open(root + b"/caf\xe9.csv", "wb") as f:  # not UTF-8 (Latin-1, from an old zip)
        f.write(b"1,2\n")
    with open(root + b"/.env.\x1b[2J", "wb") as f:  # a control character, and on the deny-list
        f.write(f"{MARK}odd".encode())
    assert main(["build", str(tmp_path / "train.py"), "--chief-config", "CPU", "--parent-image", python_base]) == 0
    out, err = capsys.readouterr()
    app, found = _image_files(engine, out.strip())
    assert found == set()
    assert [os.fsencode(p) for p in app if not p.startswith(".tfcloud/")] == [
        b".gitignore", b"caf\xe9.csv", b"tfcloud_launcher.py", b"train.py"]
    assert "Kept out of the image (secret deny-list): .env.\\x1b[2J (environment file)." in err
    assert "\x1b" not in err


def test_a_bad_dockerignore_line_is_a_message_not_a_traceback(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / ".dockerignore").write_text("data/\n!\n")
    code = main(["build", str(tmp_path / "train.py"), "--chief-config", "CPU", "--parent-image", "python:3",
                 "--image", "127.0.0.1:1/tfcloud/train"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines()[:2] == [
        "Error: Invalid `.dockerignore line 2`: expected a pattern Docker accepts, received '!'.",
        "Docker refuses a lone `!`. Remove the line, or escape a literal `!`, `[` or `\\` with a backslash "
        "(`\\!name`); see tfcloud docs containers."]
    assert "Traceback" not in err
