"""Fuzzing the stages that read user input: whatever comes in, only tfcloud's own errors come out.

Targets: notebook conversion, validation (build_spec), requirements files, and argument passing (the
script's arguments reach the launcher's command line and the Vertex AI request unchanged, or are refused).
A few thousand examples per target; ``deadline=None`` because the machine is shared.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (the test extra)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tfcloud import COMMON_MACHINE_CONFIGS, DockerConfig  # noqa: E402
from tfcloud.errors import TfcloudError, ValidationError  # noqa: E402
from tfcloud.flow.validate import build_job, build_spec  # noqa: E402


def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    d = tmp_path_factory.mktemp("fuzz")
    (d / "train.py").write_text("print('training')\n")
    (d / "reqs.txt").write_text("numpy\n")
    yield d


# --- notebook conversion ------------------------------------------------------------------------------------
_PREFIXES = st.sampled_from(["", "%", "%%", "!", "!!", "?", "x = !", "%pip install ", "%%bash\n", "%env ",
                             "%cd ", "%run ", "%%writefile ", "%%capture ", "%time ", "%matplotlib ", "  ", "\t"])
_CODE = st.one_of(
    st.text(max_size=60),
    st.builds(lambda p, t: p + t, _PREFIXES, st.text(alphabet=st.characters(blacklist_categories=["Cs"]),
                                                     max_size=40)),
    st.sampled_from(["print(1)", "def f(:", "x = $y", "{a}", "import IPython", "pip install numpy",
                     "%%script python\nprint(1)", "%pip install 'numpy>=1' -q", "%%writefile -a\n",
                     "%run -m", "%env A", "cd", "ls -la $HOME", "f(\n", "'''", "%%", "%", "!", "\\"]),
)
_SOURCE = st.one_of(_CODE, st.lists(_CODE, max_size=4), st.integers(), st.none())
_JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                        lambda children: st.lists(children, max_size=3) | st.dictionaries(
                            st.text(max_size=8), children, max_size=3), max_leaves=8)
_CELL = st.one_of(
    st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown", "raw", "other"]),
                           "source": _SOURCE},
                          optional={"metadata": st.one_of(
                              st.fixed_dictionaries({}, optional={"tags": st.one_of(
                                  st.lists(st.sampled_from(["tfcloud-skip", "x"]), max_size=2), _JSONISH)}),
                              _JSONISH),
                              "execution_count": st.one_of(st.none(), st.integers(0, 99), _JSONISH),
                              "outputs": _JSONISH}),
    _JSONISH,
)
_NOTEBOOK = st.one_of(
    st.fixed_dictionaries({"cells": st.lists(_CELL, max_size=4), "nbformat": st.sampled_from([4, 4, 4, 3, 5, "4"]),
                           "nbformat_minor": st.integers(0, 6)},
                          optional={"metadata": st.one_of(st.fixed_dictionaries({}, optional={
                              "kernelspec": st.one_of(st.fixed_dictionaries(
                                  {"language": st.sampled_from(["python", "R", "", "Python3"])}), _JSONISH),
                              "language_info": _JSONISH}), _JSONISH)}),
    _JSONISH,
)


@fuzz(1500)
@given(notebook=_NOTEBOOK, raw=st.one_of(st.none(), st.binary(max_size=40)))
def test_notebook_conversion_raises_only_tfcloud_errors(work: Path, notebook: Any, raw: bytes | None) -> None:
    from tfcloud.entry.notebook import convert_notebook

    path = work / "fuzz.ipynb"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(json.dumps(notebook), encoding="utf-8")
    try:
        converted = convert_notebook(path)
    except TfcloudError:
        return
    compile(converted.script, "converted", "exec", dont_inherit=True)
    assert all(isinstance(r, str) for r in converted.requirements)


# --- validation -----------------------------------------------------------------------------------------------
_ANY = st.one_of(st.none(), st.booleans(), st.integers(-2, 2000), st.floats(allow_nan=True), st.text(max_size=20),
                 st.binary(max_size=5), st.lists(st.text(max_size=5), max_size=3),
                 st.dictionaries(st.text(max_size=5), st.one_of(st.text(max_size=5), st.integers()), max_size=3),
                 st.sampled_from(["auto", "CPU", "T4_1X", "TPU", "vertex", "local", "us-central1", "mirrored",
                                  "gs://bucket/x", "my-project", "[bold]x[/]", "~nosuchuser/x", "a\0b"]),
                 st.sampled_from([COMMON_MACHINE_CONFIGS["CPU"], COMMON_MACHINE_CONFIGS["TPU"],
                                  DockerConfig(image="Bad Image"), DockerConfig(parent_image="python:3.11"),
                                  DockerConfig(image_build_bucket="goog")]))
_KEYWORDS = ["requirements_txt", "docker_config", "distribution_strategy", "chief_config", "worker_config",
             "worker_count", "entry_point_args", "job_labels", "service_account", "ps_config",
             "ps_count", "evaluator_config", "evaluator_count", "target", "project", "region", "display_name",
             "env", "timeout", "restart_on_worker_restart", "spot", "network", "base_output_dir",
             "context_dir"]


@fuzz(3000)
@given(kwargs=st.dictionaries(st.sampled_from(_KEYWORDS), _ANY, max_size=6),
       entry=st.one_of(st.just("train.py"), _ANY))
def test_validation_raises_only_validation_errors(work: Path, kwargs: dict[str, Any], entry: Any) -> None:
    entry_point = str(work / entry) if entry == "train.py" else entry
    try:
        spec = build_spec(entry_point=entry_point, **kwargs)
    except ValidationError as exc:
        assert exc.exit_code == 2
        assert f"`{exc.field}`" in str(exc) and "expected" in str(exc) and "received" in str(exc)
        return
    assert spec.entry_point.is_file()
    assert spec.replica_count >= 1


# --- requirements ---------------------------------------------------------------------------------------------
_REQ_LINE = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["numpy", "numpy>=1.26", "numpy==1.*", "pkg[extra]>=1; python_version>'3'", "-r other.txt",
                     "-e .", "--index-url https://x", "./local", "https://x/y.whl", "# comment", "x \\", "-c c.txt",
                     "numpy --hash=sha256:abc", "--requirement=reqs.txt", "-r", "name @ https://x/y", "==1",
                     "numpy=1.0", "-", "--", "-rreqs.txt", "~/x", "\\"]),
)


@fuzz(3000)
@given(lines=st.lists(_REQ_LINE, max_size=5), raw=st.one_of(st.none(), st.binary(max_size=30)))
def test_requirements_raise_only_tfcloud_errors(work: Path, lines: list[str], raw: bytes | None) -> None:
    from tfcloud.entry.requirements import check_requirements, validate_requirements_file

    path = work / "fuzz-requirements.txt"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass") if _encodable(lines) \
            else path.write_bytes(b"\xff")
    try:
        validate_requirements_file(path)
    except ValidationError as exc:
        assert f"`{exc.field}`" in str(exc)
        return
    try:
        problems = check_requirements(path)
    except TfcloudError:
        return
    assert all(p.describe() for p in problems)


def _encodable(lines: list[str]) -> bool:
    try:
        "\n".join(lines).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --- argument passing -----------------------------------------------------------------------------------------
_ARG = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30)


@fuzz(2000)
@given(args=st.lists(_ARG, max_size=6))
def test_script_arguments_arrive_unchanged_or_are_refused(work: Path, args: list[str]) -> None:
    from tfcloud.google.vertex.request import custom_job_request

    try:
        spec, target = build_job(entry_point=str(work / "train.py"), entry_point_args=args, target="vertex",
                                 chief_config="CPU")
    except ValidationError as exc:
        assert any("\0" in a for a in args)
        assert exc.field.startswith("entry_point_args[")
        return
    assert spec.entry_point_args == tuple(args)
    request = custom_job_request(spec, target, image_uri="localhost:5000/tfcloud/train:0", submission_id="x")
    assert request["job_spec"]["worker_pool_specs"][0]["container_spec"]["args"] == args
    if _aiplatform is not None:  # and the request message carries them as they are
        job = _aiplatform.CustomJob(request)
        assert list(job.job_spec.worker_pool_specs[0].container_spec.args) == args


try:
    from google.cloud import aiplatform_v1 as _aiplatform
except ImportError:  # pragma: no cover - the vertex extra is not installed
    _aiplatform = None


@fuzz(100)
@given(args=st.lists(_ARG.filter(lambda a: "\0" not in a), max_size=4))
def test_cli_passes_arguments_after_the_double_dash_exactly(work: Path, args: list[str],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.cli import main

    with tempfile.TemporaryDirectory():
        code = main(["submit", str(work / "train.py"), "--dry-run", "--json", "--", *args])
    out = capsys.readouterr().out
    assert code == 0
    plan = json.loads(out)
    assert plan["args"] == args
    assert plan["command"] == ["python", "tfcloud_launcher.py", *args]
