"""The build context: ignore files, default excludes, the secret deny-list, symlinks, huge files, and a
deterministic tar stream."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import tarfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tfcloud.errors import TfcloudError, ValidationError
from tfcloud.image.context import SECRET_PATTERNS, TAR_MTIME, collect_context
from tfcloud.image.secretscan import SNIFF_SIZE as _SNIFF_SIZE

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
SA_KEY = '{\n  "type": "service_account",\n  "project_id": "p",\n  "private_key_id": "1",\n  "private_key": "x"\n}\n'


def make(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def paths(root: Path, **kwargs: object) -> list[str]:
    return [f.path for f in collect_context(root, **kwargs).files]  # type: ignore[arg-type]


def test_default_excludes(tmp_path: Path) -> None:
    make(tmp_path, {
        "train.py": "print(1)\n",
        "pkg/model.py": "",
        "pkg/__pycache__/model.cpython-311.pyc": b"\0",
        "stray.pyc": b"\0",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".venv/lib/python3.11/site-packages/big.py": "",
        "venv/bin/python": "",
        "my-env/pyvenv.cfg": "home = /usr/bin\n",  # a virtualenv under any name
        "my-env/lib/x.py": "",
        "conda/conda-meta/history": "",
        "notebooks/.ipynb_checkpoints/a-checkpoint.ipynb": "{}",
        "build/lib/x.py": "",
        "dist/x.whl": b"PK",
        "x.egg-info/PKG-INFO": "",
        "node_modules/a/index.js": "",
        ".mypy_cache/x": "",
        ".DS_Store": b"\0",
        "data/build/keep.txt": "nested build dirs are data, not build outputs",
    })
    assert paths(tmp_path) == ["data/build/keep.txt", "pkg/model.py", "train.py"]


def test_gitignore_and_dockerignore(tmp_path: Path) -> None:
    make(tmp_path, {
        "train.py": "",
        "big.ckpt": "",
        "logs/run1.txt": "",
        "data/a.csv": "",
        "data/b.csv": "",
        "sub/.gitignore": "*.tmp\n/local/\n!keep.tmp\n",
        "sub/x.tmp": "",
        "sub/keep.tmp": "",
        "sub/deeper/y.tmp": "",
        "sub/local/z.py": "",
        "local/z.py": "",  # sub/.gitignore's /local/ is relative to sub/
        ".gitignore": "*.ckpt\nlogs/\ndata/\n",
        ".dockerignore": "!data/\ndata/b.csv\nbuild.sh\n",  # the .dockerignore has the last word
        "build.sh": "",
    })
    assert paths(tmp_path) == [
        ".dockerignore", ".gitignore", "data/a.csv", "local/z.py", "sub/.gitignore", "sub/keep.tmp", "train.py",
    ]


def test_dockerignore_can_bring_back_a_default_exclude(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "", "build/gen.py": "", ".dockerignore": "!build/\n"})
    assert "build/gen.py" in paths(tmp_path)


SECRETS = {
    ".env": "TOKEN=1",
    ".env.production": "TOKEN=1",
    "server.pem": "cert",
    "tls.key": "key",
    "store.p12": b"\0",
    "store.pfx": b"\0",
    "keystore.jks": b"\0",
    "id_rsa": "k",
    "deploy/id_dsa": "k",
    "id_ecdsa": "k",
    "id_ed25519": "k",
    ".ssh/known_hosts": "h",
    ".netrc": "machine x",
    "_netrc": "machine x",
    ".pgpass": "x",
    ".pypirc": "x",
    ".boto": "x",
    ".aws/credentials": "x",
    "home/.docker/config.json": '{"auths": {}}',
    "home/.config/gcloud/configurations/config_default": "x",
    ".gcloud/x": "x",
    "cfg/gcloud/credentials.db": "x",
    "cfg/gcloud/access_tokens.db": "x",
    "cfg/gcloud/legacy_credentials/me/adc.json": "{}",
    "application_default_credentials.json": "{}",
    ".envrc": "export TOKEN=1",
    "deploy/key.ppk": "k",
    "release.keystore": b"\0",
    ".gnupg/private-keys-v1.d/x.key": "k",
    ".git-credentials": "https://me:ghp_x@github.com",
    "web/.htpasswd": "alice:$2y$05$x",
    ".vault-token": "s.x",
    "token": "x",
    "token.txt": "x",
    "token.json": "{}",
    "hf.token": "x",
    "slack_token.txt": "x",
    "github-token.txt": "x",
    "credentials.json": '{"installed": {}}',
    "client_secret_1234.apps.googleusercontent.com.json": "{}",
    "secrets.yaml": "x",
    "conf/secrets.yml": "x",
    "secrets.json": "{}",
    "secrets.toml": "x",
    "secrets.env": "x",
    "secret.yaml": "x",
    "secret.yml": "x",
    "secret.json": "{}",
    "infra/terraform.tfstate": "{}",
    "infra/terraform.tfstate.backup": "{}",
    "infra/.terraform/terraform.tfstate": "{}",
    ".kube/config": "apiVersion: v1",
    "kubeconfig": "apiVersion: v1",
    ".azure/accessTokens.json": "[]",
    "home/.config/gh/hosts.yml": "github.com:\n  oauth_token: x\n",
}


def test_every_secret_pattern_has_a_case() -> None:
    from pathspec import GitIgnoreSpec

    for pattern, _ in SECRET_PATTERNS:
        spec = GitIgnoreSpec.from_lines([pattern])
        assert any(spec.match_file(p) for p in SECRETS), f"no test case for secret pattern {pattern!r}"


@pytest.mark.parametrize("rel", sorted(SECRETS))
def test_secret_is_kept_out_and_named(tmp_path: Path, rel: str) -> None:
    make(tmp_path, {"train.py": "", rel: SECRETS[rel]})
    ctx = collect_context(tmp_path)
    assert [f.path for f in ctx.files] == ["train.py"]
    named = [s.path for s in ctx.secrets]
    assert len(named) == 1 and rel.startswith(named[0].rstrip("/")), named
    warning = ctx.warnings()[0]
    assert warning.startswith("Kept out of the image (secret deny-list): ") and named[0] in warning


NPM_TOKEN = "npm_" + "a1B2" * 9


def test_secrets_found_by_content(tmp_path: Path) -> None:
    padding = " " * (_SNIFF_SIZE + 10)
    make(tmp_path, {
        "train.py": "",
        "notes/deploy.txt": PRIVATE_KEY,
        "my-project-1a2b3c.json": SA_KEY,
        "big-sa.json": '{"padding": "' + padding + '",\n "type": "service_account", "private_key": "x"}\n',
        "adc.json": '{"type": "authorized_user", "client_id": "c", "refresh_token": "1//0g"}',
        "oauth-client.json": '{"installed": {"client_id": "c", "client_secret": "GOCSPX-abc"}}',
        "key-without-suffix": SA_KEY,
        "bom-key": "\ufeff" + SA_KEY,
        "wrapped.json": json.dumps({"outputs": {"key": SA_KEY}}),  # a key as a string inside JSON
        ".npmrc": f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={NPM_TOKEN}\n",
        "web/.yarnrc.yml": 'npmRegistryServer: "https://npm.example"\nnpmAuthToken: "abcdefgh12345678"\n',
        ".bashrc": "alias ll='ls -l'\nexport GH=ghp_" + "x" * 36 + "\n",
        # not secrets: settings without a value, a ${VAR} reference, code that mentions a key type
        "config.json": '{"type": "service_account_like", "lr": 0.1}',
        ".env.example": "TOKEN=",
        "app/.npmrc": "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n",
        "auth.py": 'INFO = {"type": "service_account", "private_key": None}\n',
        "big.json": '{"rows": [' + ", ".join(["1"] * 40000) + "]}",
        ".eslintrc": '{"rules": {"x": "' + "token" * 100000 + '"}}',  # one long line, no secret
    })
    ctx = collect_context(tmp_path)
    assert [f.path for f in ctx.files] == [
        ".env.example", ".eslintrc", "app/.npmrc", "auth.py", "big.json", "config.json", "train.py"]
    assert {(s.path, s.reason) for s in ctx.secrets} == {
        (".bashrc", "token in an rc file"),
        (".npmrc", "token in an rc file"),
        ("adc.json", "OAuth credentials"),
        ("big-sa.json", "service-account key"),
        ("bom-key", "service-account key"),
        ("wrapped.json", "service-account key"),
        ("key-without-suffix", "service-account key"),
        ("my-project-1a2b3c.json", "service-account key"),
        ("notes/deploy.txt", "private key"),
        ("oauth-client.json", "OAuth client secret"),
        ("web/.yarnrc.yml", "token in an rc file"),
    }


def test_a_dockerignore_path_line_lets_one_secret_in(tmp_path: Path) -> None:
    make(tmp_path, {
        "train.py": "", ".env": "X=1", "sub/.env": "X=2", "token.txt": "t", "sa.json": SA_KEY,
        ".aws/credentials": "[default]", ".aws/config": "[default]",
        ".dockerignore": "!/.env\n!*.json\n!*\n!.aws/config\n!to?en.txt\n",
    })
    ctx = collect_context(tmp_path)
    assert [f.path for f in ctx.files] == [".aws/config", ".dockerignore", ".env", "train.py"]
    assert [(s.path, s.reason) for s in ctx.let_in] == [(".aws/config", "AWS credentials"),
                                                         (".env", "environment file")]
    # wildcards (`!*.json`, `!*`, `!to?en.txt`) let nothing in; `/.env` is the root's only
    assert [s.path for s in ctx.secrets] == [".aws/credentials", "sa.json", "sub/.env", "token.txt"]
    warnings = ctx.warnings()
    assert warnings[0] == (
        "Kept out of the image (secret deny-list): .aws/credentials (AWS credentials), sa.json (service-account "
        "key), sub/.env (environment file), token.txt (token). To let a file in, add a line `!path` for it to "
        ".dockerignore (e.g. `!.aws/credentials`)."
    )
    assert warnings[1] == ("Let into the image by `!path` lines in .dockerignore, despite the deny-list: "
                           ".aws/config (AWS credentials), .env (environment file).")


def test_the_suggested_line_works_for_a_name_with_glob_characters(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "", "tls[1].pem": "cert"})
    warning = collect_context(tmp_path).warnings()[0]
    line = warning.split("(e.g. `")[1].split("`)")[0]
    assert line == "!tls\\[1\\].pem"
    (tmp_path / ".dockerignore").write_text(line + "\n")
    ctx = collect_context(tmp_path)
    assert ctx.get("tls[1].pem") is not None and ctx.secrets == ()


def test_a_secret_directory_is_named_once_when_nothing_inside_is_let_in(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "", ".env": "X=1", ".kube/config": "x", ".kube/cache/y": "y",
                    ".dockerignore": "!.env\n!.kube/nothing-here\n"})
    ctx = collect_context(tmp_path)
    assert [f.path for f in ctx.files] == [".dockerignore", ".env", "train.py"]
    assert [s.path for s in ctx.secrets] == [".kube/"] and [s.path for s in ctx.let_in] == [".env"]


def test_a_dockerignore_directory_line_lets_a_secret_directory_in(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "", ".kube/config": "x", ".kube/cache/y": "y", ".dockerignore": "!.kube/\n"})
    ctx = collect_context(tmp_path)
    assert [f.path for f in ctx.files] == [".dockerignore", ".kube/cache/y", ".kube/config", "train.py"]
    assert ctx.secrets == () and [s.path for s in ctx.let_in] == [".kube/"]


def test_an_ignored_secret_raises_no_warning(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "", ".env": "X=1", ".gitignore": ".env\n"})
    assert collect_context(tmp_path).secrets == ()


def test_symlinks(tmp_path: Path) -> None:
    outside = make(tmp_path / "outside", {"secret.txt": "host file", "dir/x": ""})
    root = make(tmp_path / "proj", {"train.py": "", "data/a.csv": "1,2\n"})
    (root / "alias.py").symlink_to("train.py")
    (root / "current").symlink_to("data")
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "leakdir").symlink_to(outside / "dir")
    (root / "up").symlink_to("../outside/secret.txt")
    (root / "dangling").symlink_to("nowhere")
    (root / "key-link").symlink_to(".env")  # points at a secret inside the tree
    (root / ".env").write_text("X=1")
    ctx = collect_context(root)
    links = {f.path: f.link for f in ctx.files if f.is_link}
    assert links == {"alias.py": "train.py", "current": "data"}
    assert ctx.outside_links == ("dangling", "leak.txt", "leakdir", "up")
    assert {s.path for s in ctx.secrets} == {".env", "key-link"}
    assert any("point outside the build context: dangling, leak.txt, leakdir, up" in w for w in ctx.warnings())
    buf = io.BytesIO()
    ctx.write_tar(buf)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue())) as tar:
        member = tar.getmember("alias.py")
        assert member.issym() and member.linkname == "train.py"


def test_huge_files_are_measured_without_reading_and_named(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "print(1)\n", "data/small.csv": "1\n"})
    with open(tmp_path / "data" / "huge.bin", "wb") as f:  # sparse: 300 GB on paper, nothing on disk
        f.truncate(300 * 10**9)
    with open(tmp_path / "weights.h5", "wb") as f:
        f.truncate(200 * 10**6)
    start = time.monotonic()
    ctx = collect_context(tmp_path)
    # Not read: reading 300 GB (even of holes) takes minutes; measuring four files takes milliseconds, and 30 s
    # more than covers a loaded 2-core machine running two tests at once.
    assert time.monotonic() - start < 30
    assert ctx.total_size == 300 * 10**9 + 200 * 10**6 + 11
    assert ctx.biggest(2) == (("data/", 300 * 10**9 + 2), ("weights.h5", 200 * 10**6))
    (warning,) = ctx.warnings()
    assert warning == (
        "The build context is 300.2 GB (more than 100.0 MB); biggest entries: data/ 300.0 GB, weights.h5 "
        "200.0 MB, train.py 9 B. Add what the image does not need to .dockerignore."
    )
    assert ctx.summary() == "4 files, 300.2 GB"
    assert collect_context(tmp_path).warnings(warn_size=10**12) == []


def test_generated_files_win_and_are_not_checked(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "", "tfcloud_launcher.py": "old", ".tfcloud/stale": "user's own"})
    ctx = collect_context(tmp_path, generated={"tfcloud_launcher.py": b"new", ".tfcloud/Dockerfile": b"FROM x\n",
                                               "run.sh": b"#!/bin/sh\n"}, executable=["run.sh"])
    assert [f.path for f in ctx.files] == [".tfcloud/Dockerfile", "run.sh", "tfcloud_launcher.py", "train.py"]
    launcher = ctx.get("tfcloud_launcher.py")
    assert launcher is not None and launcher.data == b"new"
    run_sh = ctx.get("run.sh")
    assert run_sh is not None and run_sh.mode == 0o755
    with pytest.raises(ValidationError, match="Invalid `generated`"):
        collect_context(tmp_path, generated={"../escape.py": b""})


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="Invalid `context`: expected an existing directory"):
        collect_context(tmp_path / "nope")


def _tar_bytes(root: Path, compress: bool = False) -> bytes:
    buf = io.BytesIO()
    collect_context(root, generated={"gen.txt": b"g"}).write_tar(buf, compress=compress)
    return buf.getvalue()


def test_tar_stream_is_deterministic(tmp_path: Path) -> None:
    a = make(tmp_path / "a", {"train.py": "print(1)\n", "pkg/m.py": "x = 1\n", "run.sh": "#!/bin/sh\n"})
    (a / "run.sh").chmod(0o700)
    (a / "pkg" / "m.py").chmod(0o600)
    b = tmp_path / "elsewhere" / "b"
    shutil.copytree(a, b)
    os.utime(b / "train.py", (1, 1))
    assert _tar_bytes(a) == _tar_bytes(b)
    assert _tar_bytes(a, compress=True) == _tar_bytes(b, compress=True)
    assert collect_context(a).digest() == collect_context(b).digest()
    with tarfile.open(fileobj=io.BytesIO(_tar_bytes(a))) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert list(members) == ["gen.txt", "pkg", "pkg/m.py", "run.sh", "train.py"]
    assert {m.mtime for m in members.values()} == {TAR_MTIME}
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members.values()} == {(0, 0, "", "")}
    assert (members["pkg"].mode, members["pkg/m.py"].mode, members["run.sh"].mode) == (0o755, 0o644, 0o755)
    assert gzip.decompress(_tar_bytes(a, compress=True)) == _tar_bytes(a)


def test_digest_follows_content_paths_and_modes(tmp_path: Path) -> None:
    root = make(tmp_path, {"train.py": "print(1)\n"})
    first = collect_context(root).digest()
    (root / "train.py").write_text("print(2)\n")
    second = collect_context(root).digest()
    (root / "train.py").chmod(0o755)
    third = collect_context(root).digest()
    (root / "train.py").rename(root / "main.py")
    fourth = collect_context(root).digest()
    assert len({first, second, third, fourth}) == 4


def test_an_invalid_dockerignore_line_is_a_validation_error(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "", ".dockerignore": "data/\n!\n"})
    with pytest.raises(ValidationError) as info:
        collect_context(tmp_path)
    assert str(info.value).startswith("Invalid `.dockerignore line 2`: expected a pattern Docker accepts, "
                                      "received '!'.")
    (tmp_path / ".dockerignore").write_text("logs/\n\\\n")
    with pytest.raises(ValidationError, match=r"Invalid `.dockerignore line 2`: .* received '\\\\'"):
        collect_context(tmp_path)


def test_invalid_gitignore_lines_are_skipped_as_git_does(tmp_path: Path) -> None:
    make(tmp_path, {
        "train.py": "", "a.log": "", "sub/b.log": "", "sub/c.tmp": "", "x\\": "",
        ".gitignore": "!\n*.log\n\\\nx\\\n", "sub/.gitignore": "\\\n!\n*.tmp\n",
    })
    assert paths(tmp_path) == [".gitignore", "sub/.gitignore", "train.py", "x\\"]


def test_directory_names_are_literal_in_nested_gitignores(tmp_path: Path) -> None:
    make(tmp_path, {"train.py": "", "[ab]*/.gitignore": "*.tmp\n", "[ab]*/x.tmp": "", "a/x.tmp": "",
                    "odd\\/.gitignore": "y\n", "odd\\/y": ""})
    assert paths(tmp_path) == ["[ab]*/.gitignore", "a/x.tmp", "odd\\/.gitignore", "train.py"]


def test_non_utf8_and_control_character_names(tmp_path: Path) -> None:
    root = os.fsencode(make(tmp_path, {"train.py": "print(1)\n"}))
    with open(root + b"/caf\xe9.txt", "wb") as f:
        f.write(b"data")
    with open(root + b"/.env.\xff", "wb") as f:  # on the deny-list (.env.*)
        f.write(b"X=1")
    os.mkdir(root + b"/d\x1b[31m")
    with open(root + b"/d\x1b[31m/.env", "wb") as f:
        f.write(b"X=1")
    os.mkdir(root + b"/\xff[x]")  # a nested .gitignore in a directory whose name is neither UTF-8 nor a glob
    with open(root + b"/\xff[x]/.gitignore", "wb") as f:
        f.write(b"*.tmp\n\xe9t\xe9.csv\n")
    for name in (b"a.tmp", b"\xe9t\xe9.csv", b"keep.py"):
        with open(root + b"/\xff[x]/" + name, "wb") as f:
            f.write(b"1")
    ctx = collect_context(tmp_path, generated={"gen.txt": b"g"})
    assert [os.fsencode(f.path) for f in ctx.files] == [
        b"caf\xe9.txt", b"gen.txt", b"train.py", b"\xff[x]/.gitignore", b"\xff[x]/keep.py"]
    assert len(ctx.digest()) == 64
    buf = io.BytesIO()
    ctx.write_tar(buf)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue()), encoding="utf-8", errors="surrogateescape") as tar:
        assert b"caf\xe9.txt" in [os.fsencode(n) for n in tar.getnames()]
    (warning,) = ctx.warnings()
    assert warning.startswith("Kept out of the image (secret deny-list): .env.\\xff (environment file), "
                              "d\\x1b[31m/.env (environment file).")
    assert warning.isprintable()


_IGNORE_ALPHABET = "!\\/*?[]#- .abenv_\n\t\r\x00é\udce9"
#: Mostly the characters that mean something to gitwildmatch, sometimes any text at all.
_IGNORE_LINES = st.one_of(st.text(alphabet=_IGNORE_ALPHABET, max_size=40), st.text(max_size=40))


@settings(max_examples=3000, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(dockerignore="!!", gitignore="[?-.]", nested=b"\\\n!\n")
@example(dockerignore="[[]\n", gitignore="!\n\\", nested=b"[z-a]\n\xff\n")
@given(
    dockerignore=_IGNORE_LINES,
    gitignore=_IGNORE_LINES,
    nested=st.binary(max_size=40),
)
def test_fuzzed_ignore_files_raise_only_tfcloud_errors(tmp_path: Path, dockerignore: str, gitignore: str,
                                                       nested: bytes) -> None:
    # one project, its three ignore files rewritten for each example
    root = make(tmp_path, {
        "train.py": "", ".env": "X=1", "data/a.csv": "1", "sub [x]/b.py": "", "sub [x]/.env": "X=1",
        ".dockerignore": dockerignore.encode("utf-8", "surrogateescape"),
        ".gitignore": gitignore.encode("utf-8", "surrogateescape"),
        "sub [x]/.gitignore": nested,
    })
    try:
        ctx = collect_context(root)
    except TfcloudError as exc:
        assert isinstance(exc, ValidationError) and ".dockerignore line" in str(exc)
        return
    assert ".env" not in [f.path for f in ctx.files] or ".env" in [s.path for s in ctx.let_in]
    for warning in ctx.warnings():
        assert warning.isprintable()



def test_a_file_that_cannot_be_read_is_a_validation_error(tmp_path: Path) -> None:
    # (root reads every file whatever its mode: a file gone after the walk takes the same path as an
    # unreadable one)
    make(tmp_path, {"train.py": "", "data/gone.csv": "1"})
    ctx = collect_context(tmp_path)
    (tmp_path / "data" / "gone.csv").unlink()
    with pytest.raises(ValidationError) as info:
        ctx.digest()
    assert str(info.value).splitlines() == [
        "Invalid `build context`: expected readable files, received <data/gone.csv: No such file or directory>.",
        "Make it readable, or keep it out of the image with a line `/data/gone.csv` in .dockerignore.",
    ]


_WALK = """
import sys
from pathlib import Path
from tfcloud.image.context import collect_context
from tfcloud.errors import ValidationError
try:
    print(len(collect_context(Path(sys.argv[1])).files))
except ValidationError as exc:
    print(exc)
"""


def _walk_as_another_user(root: Path) -> str:
    """collect_context(root) by a user who cannot read what ``root`` holds: this user when not root; as root,
    in a user namespace where the files' owner (nobody) is not mapped, so root's override does not apply."""
    import shutil
    import subprocess
    import sys

    command = [sys.executable, "-c", _WALK, str(root)]
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("root reads every directory, and unshare (util-linux) is not installed to drop that")
        for path in [root, *root.rglob("*")]:
            os.chown(path, 65534, 65534, follow_symlinks=False)
        command = ["unshare", "--user", "--map-root-user", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    if os.geteuid() == 0 and "unshare" in done.stderr:
        pytest.skip(f"user namespaces are not available here: {done.stderr.strip()}")
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(("mode", "received"), [(0o000, "<locked/: Permission denied>"),
                                                 (0o644, "<locked/a.txt: Permission denied>")])
def test_a_directory_that_cannot_be_read_is_a_validation_error(tmp_path: Path, mode: int, received: str) -> None:
    root = make(tmp_path / "project", {"train.py": "", "locked/a.txt": "x"})
    (root / "locked").chmod(mode)  # 0o644: listed, but its files cannot be reached (no x)
    try:
        shown = received[1:].split(":")[0]
        assert _walk_as_another_user(root).splitlines() == [
            f"Invalid `build context`: expected readable files and directories, received {received}.",
            f"Make it readable, or keep it out of the image with a line `/{shown}` in .dockerignore.",
        ]
        (root / ".dockerignore").write_text("/locked/\n")
        os.chown(root / ".dockerignore", *(65534, 65534) if os.geteuid() == 0 else (-1, -1))
        assert _walk_as_another_user(root) == "2"  # train.py and .dockerignore: nothing of locked/
    finally:
        (root / "locked").chmod(0o755)
