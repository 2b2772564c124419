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
