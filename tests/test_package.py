"""The package stage (--no-build) without Cloud Storage: what the source distribution holds, that the same files
give the same bytes, and that pip really installs it (no index, no setuptools) and `python -m` runs the job."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from tfcloud.flow.pipeline import prepare
from tfcloud.flow.validate import build_job
from tfcloud.google.staging.package import PACKAGE_MODULE, plan_package


def _project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    (work / "util").mkdir(parents=True)
    (work / "train.py").write_text(
        "import os, sys\nfrom util.helpers import VALUE\n"
        "print('args', sys.argv[1:], VALUE, open('data.txt').read().strip(), os.environ['TFCLOUD_REMOTE'])\n")
    (work / "util" / "helpers.py").write_text("VALUE = 41 + 1\n")
    (work / "data.txt").write_text("some data\n")
    (work / ".env").write_text("TOKEN=x\n")  # a secret: kept out, as from an image
    (work / "requirements.txt").write_text("pip\n")  # already installed: pip says so and installs nothing
    return work


def _plan(tmp_path: Path, work: Path, **options: object) -> object:
    spec, target = build_job(entry_point=str(work / "train.py"), target="vertex", build=False, chief_config="CPU",
                             distribution_strategy=None, requirements_txt=str(work / "requirements.txt"), **options)
    workspace = Path(tempfile.mkdtemp(dir=tmp_path))
    job, _ = prepare(spec, target, workspace)
    return plan_package(job)


def test_the_package_holds_the_job_files_and_is_deterministic(tmp_path: Path) -> None:
    work = _project(tmp_path)
    first, second = _plan(tmp_path, work), _plan(tmp_path, work)
    assert first.data() == second.data() and first.digest == second.digest  # type: ignore[attr-defined]
    top = f"tfcloud_job-{first.version}"  # type: ignore[attr-defined]
    with tarfile.open(fileobj=io.BytesIO(first.data()), mode="r:gz") as tar:  # type: ignore[attr-defined]
        names = tar.getnames()
        assert {m.mtime for m in tar.getmembers()} == {315532800} and {m.uid for m in tar.getmembers()} == {0}
    for path in ("PKG-INFO", "pyproject.toml", "_tfcloud_build.py", "tfcloud_job/start.py",
                 "tfcloud_job/job/train.py", "tfcloud_job/job/util/helpers.py", "tfcloud_job/job/tfcloud_launcher.py",
                 "tfcloud_job/job/.tfcloud/requirements/requirements.txt",
                 "tfcloud_job/job/.tfcloud/python/tfcloud/__init__.py"):
        assert f"{top}/{path}" in names
    assert f"{top}/tfcloud_job/job/.env" not in names and not any("Dockerfile" in n for n in names)
    assert first.filename == f"tfcloud_job-0.0.0+{first.digest[:32]}.tar.gz"  # type: ignore[attr-defined]
    (work / "train.py").write_text((work / "train.py").read_text() + "# changed\n")
    assert _plan(tmp_path, work).digest != first.digest  # type: ignore[attr-defined]


def test_pip_installs_the_package_offline_and_python_m_runs_the_job(tmp_path: Path) -> None:
    work = _project(tmp_path)
    plan = _plan(tmp_path, work)
    archive = tmp_path / plan.filename  # type: ignore[attr-defined]
    archive.write_bytes(plan.data())  # type: ignore[attr-defined]
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check",
                    "--target", str(site), str(archive)], check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", PACKAGE_MODULE, "--epochs", "2"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "args ['--epochs', '2'] 42 some data 1" in done.stdout
    assert "pip" not in done.stderr  # nothing is installed at start: the requirements are the base image's
