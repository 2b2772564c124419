"""`tfcloud submit --no-build` at the command line: what it refuses (exit 2, nothing made), what its plan shows
(the package, the base image and the TensorFlow it carries, the price), and `tfcloud machines --prices`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tfcloud.cli import main


def _tensorflow() -> str:
    from tfcloud.image.dockerfile import installed_tensorflow_version

    version = installed_tensorflow_version()
    if version is None:
        pytest.skip("a --no-build plan needs the job's TensorFlow installed")
    return version


@pytest.fixture
def vertex_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Enough to pass validation without Google: an emulator address (never reached) and a project."""
    monkeypatch.setenv("TFCLOUD_EMULATOR_HOST", "127.0.0.1:9")
    monkeypatch.setenv("TFCLOUD_PROJECT", "my-project")


@pytest.mark.parametrize(("flags", "named"), [
    (["--image", "us-docker.pkg.dev/p/r/train:1"], "--image"),
    (["--cache-from", "us-docker.pkg.dev/p/r/train:0"], "--cache-from"),
])
def test_no_build_refuses_image_options_naming_both(script: Path, flags: list[str], named: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", str(script), "--vertex", "--no-build", *flags, "--dry-run"]) == 2
    assert capsys.readouterr().err == (
        f"Error: Invalid `{named}`: expected to be left out with --no-build (the code is not built into an "
        "image), received "
        f"'--no-build and {named}'.\nLeave out {named}, or leave out --no-build to build an image.\n")


def test_no_build_needs_a_staging_bucket_and_vertex(script: Path, vertex_env: None,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", str(script), "--vertex", "--no-build"]) == 2
    assert capsys.readouterr().err.startswith(
        "Error: Invalid `staging_bucket`: expected a Cloud Storage bucket for the job's package (--no-build "
        "uploads it there), received None.")
    assert main(["submit", str(script), "--local", "--no-build", "--dry-run"]) == 2
    assert capsys.readouterr().err == (
        "Error: Invalid `build`: expected to be left unset for the local target (it is an option of: vertex), "
        "received False.\nRemove it, or run where it applies (--vertex / target=\"vertex\").\n")


def test_no_build_plan_shows_the_package_its_base_image_and_the_price(
        script: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    tensorflow = _tensorflow()
    (script.parent / ".env").write_text("TOKEN=x\n")
    monkeypatch.setenv("TFCLOUD_STAGING_BUCKET", "my-staging")
    assert main(["submit", str(script), "--vertex", "--no-build", "--chief-config", "T4_1X", "--worker-count", "1",
                 "--worker-config", "CPU", "--timeout", "3600", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["image"] is None
    package = plan["package"]
    assert package["uri"].startswith("gs://my-staging/tfcloud/packages/tfcloud_job-0.0.0+")
    # The part of tfcloud a replica imports, not all of it (tfcloud whole is several times this): 111,381 bytes on
    # 2026-11-29, after the data sets' deny-list (job/datasets.py) and the fallback options (google/vertex).
    assert package["module"] == "tfcloud_job.start" and package["size"] < 120_000, package["size"]
    # One base image for every pool (a GPU pool's parent: TensorFlow's -gpu image), content-addressed in the
    # repository; the TensorFlow it carries is the one the job was written against; MWMS pins tf-keras to it.
    assert re.fullmatch(r"REPOSITORY/tfcloud-base:[0-9a-f]{24}", package["base_image"])
    assert package["tensorflow"] == tensorflow
    assert package["image_reason"].startswith(
        f"TensorFlow {tensorflow} and tf-keras==2.21.0 on tensorflow/tensorflow:{tensorflow}-gpu; built and pushed "
        "once, only when the registry lacks this tag")
    assert {"path": ".env", "reason": package["kept_out"][0]["reason"]} in package["kept_out"]
    assert "train.py" in [f["path"] for f in package["files"]]
    price = plan["price"]
    assert price["per_hour_usd"] == pytest.approx(0.4369977 + 0.4025 + 0.21849885)
    assert price["ceiling_usd"] == pytest.approx(price["per_hour_usd"]) and price["table_date"]
    assert main(["submit", str(script), "--vertex", "--no-build", "--dry-run"]) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Package: gs://my-staging/tfcloud/packages/tfcloud_job-0.0.0+" in text
    assert "Price: job: $0.84/h (on demand; list price in us-central1)" in text
    assert f"Base image: TensorFlow {tensorflow} on tensorflow/tensorflow:{tensorflow}-gpu; built and pushed once" \
        in text
    assert "Package runs: python -m tfcloud_job.start (the launcher; nothing is installed at start)" in text


def test_machines_prices_lists_the_table_and_its_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["machines", "--prices"]) == 0
    out = capsys.readouterr().out
    # The last three columns: training on demand, Compute Engine on demand and Spot, in us-central1.
    rows = {line.split()[0]: line.split()[-3:] for line in out.splitlines()[1:] if line and line[0].isupper()}
    assert rows["CPU"] == ["$0.22", "$0.19", "$0.0670"] and rows["T4_1X"] == ["$0.84", "$0.73", "$0.31"]
    assert rows["H200_8X"] == ["-", "-", "-"]
    assert "from tfcloud's price table of 2026-11-26; -: no price known (never guessed)" in out
    assert "Vertex AI pricing" in out and "Cyclenerd/google-cloud-pricing-cost-calculator" in out
    assert main(["machines", "--prices", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["CPU"]["price_per_hour_usd"] == pytest.approx(0.21849885) and data["B200_8X"]["price_per_hour_usd"] \
        is None


def test_run_build_false_is_the_same_option(script: Path) -> None:
    import tfcloud

    plan = tfcloud.run(str(script), target="vertex", build=False, staging_bucket="my-staging", chief_config="CPU",
                       dry_run=True)
    assert plan.image is None and plan.package is not None  # type: ignore[union-attr]
    assert plan.package.tensorflow == _tensorflow()  # type: ignore[union-attr]
    with pytest.raises(tfcloud.ValidationError, match="`build`"):
        tfcloud.run(str(script), target="local", build=False, dry_run=True)


@pytest.mark.parametrize("build", [False, True], ids=["no-build", "image"])
def test_the_plan_warns_of_what_submitting_would(tmp_path: Path, vertex_env: None, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], build: bool) -> None:
    """A dry run says what the upload or the build would warn of: a 110 MB file, and for a build-free package
    (whose text plan lists no files) the secret kept out and the symlink that leaves the project, by name."""
    _tensorflow()
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / ".env").write_text("TOKEN=x\n")
    (tmp_path / "outside.txt").symlink_to("/etc/hostname")
    with open(tmp_path / "weights.bin", "wb") as f:
        f.truncate(110 * 1000 * 1000)  # sparse: 110 MB read as zeros
    monkeypatch.setenv("TFCLOUD_STAGING_BUCKET", "my-staging")
    monkeypatch.chdir(tmp_path)
    assert main(["submit", "train.py", "--vertex", *([] if build else ["--no-build"]), "--dry-run", "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    size = next(w for w in warnings if "(more than 100.0 MB)" in w)
    assert "weights.bin 110.0 MB" in size
    if not build:
        assert "Kept out of the package (secret deny-list): .env (environment file)." in " ".join(warnings)
        assert "Dropped symlinks that point outside the project: outside.txt." in warnings
    else:  # the image's rows name them (kept out, dropped): the warnings only add the size
        assert len(warnings) == 1
