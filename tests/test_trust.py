"""Issue 29 at the command line, against the emulator: credentials never leave the machine (refused first, kept
out of every context and plan), numbers and times typed by people (ASCII digits only, range-checked), and the
``--no-build`` checks that come before any upload. Every refusal exits 2 naming the field, without a traceback,
and leaves the bucket, the emulator and the state directory as they were."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tfcloud
from tfcloud.cli import main
from tfcloud.pytest_plugin import tfcloud_emulator, tfcloud_emulator_env  # noqa: F401 (the fixtures)

pytest.importorskip("google.cloud.aiplatform_v1", reason="the Vertex AI path needs tfcloud[cloud]")
pytest.importorskip("gcp_storage_emulator", reason="the storage emulator needs tfcloud[emulator]")

pytestmark = pytest.mark.emulator

BUCKET = "trust-staging"
SECRET = "S3cretPassw0rd"


@pytest.fixture
def env(tfcloud_emulator_env: Any, tfcloud_emulator: Any, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        tmp_path: Path) -> Iterator[Any]:
    """The emulator's environment, a staging bucket, no Docker engine (nothing may need one)."""
    monkeypatch.setenv("TFCLOUD_PROJECT", tfcloud_emulator.project)
    monkeypatch.setenv("TFCLOUD_STAGING_BUCKET", BUCKET)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    client = tfcloud_emulator.storage_client()
    try:
        if client.lookup_bucket(BUCKET) is None:
            client.create_bucket(BUCKET)
        for blob in client.list_blobs(BUCKET):
            blob.delete()
    finally:
        client.close()
    yield tfcloud_emulator


def _traces(emulator: Any) -> dict[str, object]:
    """What a submission would have made: objects in the bucket, jobs on the emulator, anything in the state
    directory."""
    storage = emulator.storage_client()
    jobs = emulator.job_client()
    try:
        home = Path(os.environ["TFCLOUD_HOME"])
        return {"objects": sorted(b.name for b in storage.list_blobs(BUCKET)),
                "jobs": len(list(jobs.list_custom_jobs(parent=emulator.parent))),
                "state dir": sorted(p.relative_to(home).as_posix() for p in home.rglob("*"))}
    finally:
        storage.close()
        jobs.transport.close()


def _refused(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code == 2, text[-2000:]
    assert f"Invalid `{field}`" in text and "Traceback" not in text, text[-2000:]
    return text


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("print('hello')\n")
    return project


# --- 1. credentials ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    f"--index-url https://alice:{SECRET}@pypi.example.com/simple",
    f"-i https://alice:{SECRET}@pypi.example.com/simple",
    f"--extra-index-url=https://alice:{SECRET}@pypi.example.com/simple",
    f"--find-links https://{SECRET}@files.example.com/wheels/",
    f"private-lib @ https://alice:{SECRET}@files.example.com/private_lib-1.0-py3-none-any.whl",
    f"# a comment keeps it too: https://alice:{SECRET}@pypi.example.com/simple",
])
@pytest.mark.parametrize("flags", [["--no-build"], ["--no-build", "--dry-run", "--json"], ["--dry-run", "--json"]])
def test_a_password_in_a_requirements_file_is_refused_before_anything_and_never_shown(
        env: Any, tmp_path: Path, line: str, flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    (project / "requirements.txt").write_text(f"numpy\n{line}\n")
    before = _traces(env)
    text = _refused(["submit", str(project / "train.py"), "--vertex", *flags, "--requirements",
                     str(project / "requirements.txt")], "requirements_txt", capsys)
    assert SECRET not in text and "requirements.txt:2" in text and "://***@" in text
    assert "keyring" in text and "${" in text  # the safe alternatives
    assert _traces(env) == before


def test_a_password_in_an_included_file_is_refused_naming_that_file(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    (project / "requirements.txt").write_text("numpy\n-r more.txt\n")
    (project / "more.txt").write_text(f"pandas\n--extra-index-url https://bob:{SECRET}@pkgs.example.com/simple\n")
    before = _traces(env)
    text = _refused(["submit", str(project / "train.py"), "--vertex", "--no-build", "--requirements",
                     str(project / "requirements.txt")], "requirements_txt", capsys)
    assert "more.txt:2" in text and SECRET not in text
    assert _traces(env) == before


def test_environment_references_and_ssh_users_are_not_credentials(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    (project / "requirements.txt").write_text(
        "--index-url https://${PIP_USER}:${PIP_PASSWORD}@pypi.example.com/simple\n"
        "lib @ git+ssh://git@github.com/org/lib.git\n")
    assert main(["submit", str(project / "train.py"), "--vertex", "--no-build", "--dry-run", "--requirements",
                 str(project / "requirements.txt")]) == 0, capsys.readouterr().err


def test_another_requirements_file_with_a_password_is_kept_out_and_named_in_the_plan(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    (project / "requirements-dev.txt").write_text(f"-i https://alice:{SECRET}@pypi.example.com/simple\npytest\n")
    (project / "pip.conf").write_text(f"[global]\nindex-url = https://alice:{SECRET}@pypi.example.com/simple\n")
    for flags in (["--no-build"], []):
        assert main(["submit", str(project / "train.py"), "--vertex", *flags, "--dry-run", "--json"]) == 0
        out = capsys.readouterr().out
        assert SECRET not in out
        plan = json.loads(out)
        section = plan["package"] if flags else plan["image"]["context"]
        kept = {k["path"]: k["reason"] for k in section["kept_out"]}
        assert kept["requirements-dev.txt"] == "URL with credentials, line 1: https://***@pypi.example.com"
        assert kept["pip.conf"] == "URL with credentials, line 2: https://***@pypi.example.com"
        assert not {"requirements-dev.txt", "pip.conf"} & {f["path"] for f in section["files"]}


def test_a_notebook_pip_line_with_a_password_is_refused(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "nb"
    project.mkdir()
    cells: list[dict[str, Any]] = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": [f"%pip install --index-url https://alice:{SECRET}@pypi.example.com/simple mylib\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["print(1)\n"]}]
    (project / "train.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                     "nbformat_minor": 5}))
    before = _traces(env)
    code = main(["submit", str(project / "train.ipynb"), "--vertex", "--no-build"])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code == 2 and "Traceback" not in text, text[-2000:]
    assert "credentials" in text and "https://***@pypi.example.com" in text and SECRET not in text
    assert _traces(env) == before


# --- 4. the --no-build package: checked before the upload ---------------------------------------------------------
@pytest.mark.parametrize("line", ["-e ./mylib", "./mylib", "mylib @ file:///opt/mylib", "mylib-1.0-py3-none-any.whl"])
def test_local_path_requirements_are_refused_before_the_upload(
        env: Any, tmp_path: Path, line: str, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    (project / "mylib").mkdir()
    (project / "mylib" / "setup.py").write_text("")
    (project / "requirements.txt").write_text(f"numpy\n{line}\n")
    before = _traces(env)
    text = _refused(["submit", str(project / "train.py"), "--vertex", "--no-build", "--requirements",
                     str(project / "requirements.txt")], "requirements_txt", capsys)
    assert "requirements.txt:2" in text and "paths on this machine" in text
    assert _traces(env) == before


def test_a_file_name_that_is_not_utf8_is_refused_before_the_upload(
        env: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    with open(os.path.join(os.fsencode(project), b"caf\xe9.txt"), "wb") as f:
        f.write(b"x")
    before = _traces(env)
    text = _refused(["submit", str(project / "train.py"), "--vertex", "--no-build"], "build context", capsys)
    assert "UTF-8" in text and ".dockerignore" in text
    assert _traces(env) == before


def test_the_size_warning_applies_to_the_package(env: Any, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.flow.pipeline import prepare
    from tfcloud.flow.validate import build_job
    from tfcloud.google.staging.package import plan_package

    project = _project(tmp_path)
    with open(project / "big.bin", "wb") as f:
        f.truncate(110 * 1000 * 1000)  # sparse: 110 MB of zeros
    spec, target = build_job(entry_point=str(project / "train.py"), target="vertex", build=False, chief_config="CPU")
    (tmp_path / "work").mkdir()
    job, _ = prepare(spec, target, tmp_path / "work")
    warnings = plan_package(job).warnings()
    assert any(re.search(r"The job's files are 110\.\d MB \(more than 100\.0 MB\); biggest entries: big\.bin "
                         r"110\.0 MB", w) for w in warnings), warnings


# --- 5. numbers and times ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("argv", "field", "variables"), [
    (["submit", "{d}/train.py", "--vertex", "--scheduling", "flex-start", "--max-wait", "²"], "max_wait", {}),
    (["submit", "{d}/train.py", "--vertex", "--scheduling", "flex-start", "--max-wait", "١٢٣"], "max_wait", {}),
    (["submit", "{d}/train.py", "--vertex", "--scheduling", "flex-start"], "TFCLOUD_MAX_WAIT",
     {"TFCLOUD_MAX_WAIT": "²"}),
    (["submit", "{d}/train.py", "--vertex", "--scheduling", "flex-start", "--max-wait", "9" * 5000 + "d"],
     "max_wait", {}),
    (["submit", "{d}/train.py", "--vertex"], "TFCLOUD_RETRY_DEADLINE", {"TFCLOUD_RETRY_DEADLINE": "inf"}),
    (["submit", "{d}/train.py", "--vertex"], "TFCLOUD_RETRY_DEADLINE", {"TFCLOUD_RETRY_DEADLINE": "١٢"}),
    (["logs", "123", "--tail", "²"], "--tail", {}),
    (["logs", "123", "--tail", "9" * 5000], "--tail", {}),
    (["logs", "123", "--since", "99999999999d"], "--since", {}),
    (["logs", "123", "--since", "9" * 5000 + "s"], "--since", {}),
    (["logs", "123", "--since", "0001-01-01T00:00:00"], "--since", {}),
    (["logs", "123", "--since", "²h"], "--since", {}),
    (["artifacts", "123", "--download", ""], "--download", {}),
    (["tune", "{d}/train.py", "--vertex", "--no-build", "--metric", "acc", "--param", "lr=double:0.1:1"], "build",
     {}),
])
def test_numbers_and_times_are_ascii_and_in_range(
        env: Any, tmp_path: Path, argv: list[str], field: str, variables: dict[str, str],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    before = _traces(env)
    _refused([a.replace("{d}", str(project)) for a in argv], field, capsys)
    assert _traces(env) == before


@pytest.mark.parametrize(("argv", "flag"), [
    (["submit", "{d}/train.py", "--worker-count", "١"], "--worker-count"),
    (["submit", "{d}/train.py", "--ps-count", "²"], "--ps-count"),
    (["submit", "{d}/train.py", "--vertex", "--timeout", "١٢٠٠"], "--timeout"),
    (["submit", "{d}/train.py", "--vertex", "--max-restarts", "٣"], "--max-restarts"),
    (["tune", "{d}/train.py", "--metric", "acc", "--param", "lr=double:0.1:1", "--trials", "²"], "--trials"),
    (["list", "--limit", "١٠"], "--limit"),
])
def test_integer_flags_take_ascii_digits_only(env: Any, tmp_path: Path, argv: list[str], flag: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """click's INT calls int(), which reads "١٢٠٠" as 1200 and raises on "²": every integer flag is read as ASCII."""
    project = _project(tmp_path)
    before = _traces(env)
    code = main([a.replace("{d}", str(project)) for a in argv])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code == 2 and f"Invalid value for '{flag}'" in text and "is not a valid integer" in text, text[-2000:]
    assert "Traceback" not in text and _traces(env) == before


def test_run_max_wait_in_another_script_is_a_validation_error(tmp_path: Path) -> None:
    project = _project(tmp_path)
    with pytest.raises(tfcloud.ValidationError, match="`max_wait`"):
        tfcloud.run(str(project / "train.py"), target="vertex", scheduling="flex-start", max_wait="²", dry_run=True)


def test_the_ascii_parser() -> None:
    from tfcloud.config.digits import ascii_float, ascii_int, parse_duration

    assert [ascii_int(t) for t in ("12", " 12 ", "²", "١٢", "1_0", "-1", "", "1\n", "9" * 2000)] == [
        12, 12, None, None, None, None, None, None, None]
    assert [ascii_float(t) for t in ("0.5", "2", "inf", "nan", "1e3", "١.٢", ".5")] == [
        0.5, 2.0, None, None, None, None, 0.5]
    assert [parse_duration(t) for t in ("1h30m", "90s", "1.5s", "²h", "", "h")] == [5400, 90, 1.5, None, None, None]
    assert parse_duration("9" * 400 + "d") == float("inf")


def test_a_password_through_tool_tfcloud_is_refused_and_the_pyproject_kept_out(
        env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    (project / "reqs.txt").write_text(f"--extra-index-url https://alice:{SECRET}@pypi.example.com/simple\n")
    (project / "pyproject.toml").write_text('[tool.tfcloud]\nrequirements = "reqs.txt"\n')
    monkeypatch.chdir(project)
    before = _traces(env)
    text = _refused(["submit", "train.py", "--vertex", "--no-build"], "requirements_txt", capsys)
    assert "reqs.txt:1" in text and SECRET not in text
    assert _traces(env) == before
    # an index with credentials written in pyproject.toml itself: the file stays home, named in the plan
    (project / "pyproject.toml").write_text(
        f'[[tool.uv.index]]\nname = "private"\nurl = "https://alice:{SECRET}@pypi.example.com/simple"\n')
    assert main(["submit", "train.py", "--vertex", "--no-build", "--dry-run", "--json"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out
    kept = {k["path"]: k["reason"] for k in json.loads(out)["package"]["kept_out"]}
    assert kept == {"pyproject.toml": "URL with credentials, line 3: https://***@pypi.example.com"}
