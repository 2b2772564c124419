"""`tfcloud build`: builds and pushes the job's image on a real engine and prints its reference; unchanged
code is not built again."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfcloud.cli import main

pytestmark = pytest.mark.docker


def test_build_prints_the_image_and_skips_unchanged(engine: object, python_base: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    registry = engine.registry.address  # type: ignore[attr-defined]
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # type: ignore[attr-defined]
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", f"{registry}/tfcloud")
    (tmp_path / "train.py").write_text("print('hi')\n")
    argv = ["build", str(tmp_path / "train.py"), "--chief-config", "CPU", "--parent-image", python_base]

    assert main(argv) == 0
    first = capsys.readouterr()
    uri = first.out.strip()
    assert uri.startswith(f"{registry}/tfcloud/train:")
    assert "built and pushed" in first.err

    assert main(argv) == 0
    second = capsys.readouterr()
    assert second.out.strip() == uri
    assert f"Image {uri} is up to date: nothing to build." in second.err

    (tmp_path / "train.py").write_text("print('changed')\n")
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() != uri


def test_build_without_repository_says_how_to_set_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    assert main(["build", str(tmp_path / "train.py")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "Error: No image repository: tfcloud does not know where to push the image."
    assert err[1].startswith("Pass --project (or set TFCLOUD_PROJECT), or set TFCLOUD_IMAGE_REPOSITORY")


def test_build_with_a_context_dir_runs_the_script_inside_it(engine: object, python_base: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # type: ignore[attr-defined]
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", f"{engine.registry.address}/tfcloud")  # type: ignore[attr-defined]
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helpers.py").write_text("GREETING = 'hello from lib'\n")
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "train.py").write_text("import sys\nsys.path.insert(0, '.')\n"
                                                "from lib.helpers import GREETING\nprint(GREETING, sys.argv[1:])\n")
    assert main(["build", str(tmp_path / "jobs" / "train.py"), "--context", str(tmp_path), "--strategy", "none",
                 "--chief-config", "CPU", "--parent-image", python_base, "--no-push"]) == 0
    uri = capsys.readouterr().out.strip()
    client = engine.client()  # type: ignore[attr-defined]
    try:
        output = client.containers.run(uri, ["--epochs", "1"], network_mode="none", remove=True)
    finally:
        client.close()
    assert output.decode().strip() == "hello from lib ['--epochs', '1']"


def test_build_logs_on_request(engine: object, python_base: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # type: ignore[attr-defined]
    monkeypatch.setenv("TFCLOUD_IMAGE_REPOSITORY", f"{engine.registry.address}/tfcloud")  # type: ignore[attr-defined]
    argv = ["build", str(tmp_path / "train.py"), "--chief-config", "CPU", "--parent-image", python_base, "--no-push"]
    (tmp_path / "train.py").write_text("print('quiet build')\n")
    assert main(argv) == 0
    assert "Step 1/" not in capsys.readouterr().err  # progress only
    (tmp_path / "train.py").write_text("print('loud build')\n")
    assert main([*argv, "--build-logs"]) == 0
    err = capsys.readouterr().err
    assert "Step 1/" in err and f"FROM {python_base}" in err  # the engine's own build log
