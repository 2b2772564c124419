"""Random text into every option, setting and ``-o`` key sees only tfcloud's own errors (issue 29): the gate
(:func:`tfcloud.sdk.make_spec`, what ``--dry-run`` runs) either accepts a value or refuses it with a
:class:`~tfcloud.errors.TfcloudError` of exit code 2 — never another exception, which the CLI would show as a
traceback. The text covers what careless input holds: control characters (a trailing newline), non-ASCII digits
(``²``, ``١٢٣``), path tricks, markup, and long strings. The CLI's own parsing (``-o``, ``--label``, numbers) gets
the same through ``tfcloud submit --dry-run``. Each part keeps its example count small (the whole file: under a
minute on the shared 2-core machine)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="the property tests need hypothesis (tfcloud[test])")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tfcloud.targets as targets  # noqa: E402
from tfcloud.cli import main  # noqa: E402
from tfcloud.errors import TfcloudError  # noqa: E402
from tfcloud.flow.settings import JOB_DEFAULTS, target_defaults  # noqa: E402
from tfcloud.sdk import JobOptions, make_spec  # noqa: E402

#: Pieces careless input is made of, mixed with any text.
PIECES = ["\n", "\r", "\t", "\x1b[31m", "\x00", "\u00b2", "\u0661\u0662\u0663", "../../x", "[bold]", "=", ",",
          "gs://", "projects/", "/locations/us-central1/", "spot", "flex-start", "any", "1h", "0", "-1", "99999999999",
          "A100_1X", "TPU", "us-central1", " ", "", "x" * 300, "\u200b", "\ufeff"]
TEXT = st.one_of(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
                 st.lists(st.sampled_from(PIECES), max_size=4).map("".join),
                 st.tuples(st.sampled_from(PIECES), st.text(max_size=8), st.sampled_from(PIECES))
                 .map(lambda t: "".join(t).encode("utf-8", "replace").decode("utf-8", "replace")))
VALUE = st.one_of(TEXT, st.integers(min_value=-10, max_value=10**12), st.booleans(), st.none())
TARGETS = ["local", "vertex"]
#: Every run() keyword (the job's and every built-in target's), and the settings keys.
OPTIONS = sorted(set(JobOptions.__annotations__) - {"target"})
SETTING_KEYS = sorted({*JOB_DEFAULTS, *target_defaults()})
FAST = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def entry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "train.py"
    path.write_text("print('training')\n")
    return path


def only_tfcloud_errors(call: Callable[[], object]) -> None:
    try:
        call()
    except TfcloudError as exc:
        assert exc.exit_code == 2, f"{type(exc).__name__} (exit {exc.exit_code}): {exc}"


@pytest.fixture
def clean_env() -> Iterator[None]:
    before = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(before)


@FAST
@given(key=st.sampled_from(OPTIONS), value=VALUE, target=st.sampled_from(TARGETS))
def test_every_option_takes_any_value(entry: Path, key: str, value: Any, target: str) -> None:
    only_tfcloud_errors(lambda: make_spec(entry, intent="plan", target=target, **{key: value}))


@FAST
@given(options=st.dictionaries(st.one_of(st.sampled_from(OPTIONS), TEXT), VALUE, max_size=3),
       target=st.sampled_from(TARGETS))
def test_every_o_key_takes_any_text(entry: Path, options: dict[str, Any], target: str) -> None:
    only_tfcloud_errors(lambda: make_spec(entry, intent="plan", target=target, target_options=options))


@FAST
@given(key=st.sampled_from(SETTING_KEYS), text=TEXT, target=st.sampled_from(TARGETS))
def test_every_setting_variable_takes_any_text(entry: Path, clean_env: None, key: str, text: str,
                                               target: str) -> None:
    os.environ.pop(f"TFCLOUD_{key.upper()}", None)
    try:
        os.environ[f"TFCLOUD_{key.upper()}"] = text.replace("\x00", "")  # a variable cannot hold NUL
    except ValueError:
        return
    try:
        only_tfcloud_errors(lambda: make_spec(entry, intent="plan", target=target))
    finally:
        os.environ.pop(f"TFCLOUD_{key.upper()}", None)


@FAST
@given(key=st.one_of(st.sampled_from(SETTING_KEYS), st.sampled_from(["project", "region", "staging_bucket",
                                                                     "image_repository", "target"])),
       text=TEXT, target=st.sampled_from(TARGETS))
def test_every_settings_file_key_takes_any_text(entry: Path, tmp_path: Path, key: str, text: str,
                                                target: str) -> None:
    import json

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    script = project / "train.py"
    script.write_text("print('training')\n")
    quoted = json.dumps(text)  # a TOML basic string (JSON's escapes are TOML's)
    (project / "pyproject.toml").write_text(f"[tool.tfcloud]\n{key} = {quoted}\n", encoding="utf-8")
    cwd = Path.cwd()
    os.chdir(project)
    try:
        only_tfcloud_errors(lambda: make_spec(script, intent="plan", target=target))
    finally:
        os.chdir(cwd)


CLI_FLAGS = sorted({"--display-name", "--worker-count", "--chief-config", "--label", "--env", "--strategy",
                    "--context", "-r", "-o", *(o.cli_flag.partition("/")[0] for cls in targets.builtin_targets()
                                              for o in cls.options if o.type is not bool)} - {"--ray"})


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(flag=st.sampled_from(CLI_FLAGS), text=TEXT, target=st.sampled_from(["--local", "--vertex"]))
def test_the_cli_takes_any_text_in_every_flag(entry: Path, capsys: pytest.CaptureFixture[str], flag: str,
                                              text: str, target: str) -> None:
    if text.startswith("-") or "\x00" in text:
        text = "x" + text.replace("\x00", "")  # a word starting with '-' is the next flag, as any shell passes it
    code = main(["submit", str(entry), target, flag, text, "--dry-run", "--json"])
    captured = capsys.readouterr()
    assert code in (0, 2), captured.err
    assert "Traceback" not in captured.err + captured.out
    if code == 2:
        assert "Error:" in captured.err


#: The pieces every option is sure to meet (random examples alone may never pair ``max_wait`` with ``²``).
NASTY = ["\n", "spot\n", "x\ty", "\u00b2", "\u0661\u0662\u0663", "../../x", "[bold]x", "-1", "99999999999", "",
         "x" * 300]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("text", NASTY, ids=[repr(t)[:12] for t in NASTY])
def test_every_option_meets_every_nasty_text(entry: Path, target: str, text: str) -> None:
    for key in OPTIONS:
        value: Any = {text: text} if key == "target_options" else text
        only_tfcloud_errors(lambda k=key, v=value: make_spec(entry, intent="plan", target=target, **{k: v}))
        if key in ("scheduling", "persistent_resource", "experiment", "tensorboard", "max_wait"):
            with_flex = {"scheduling": "flex-start", "chief_config": "A100_1X"} if key == "max_wait" else {}
            only_tfcloud_errors(lambda k=key, w=with_flex: make_spec(entry, intent="plan", target="vertex",
                                                                     **{**w, k: text}))


@pytest.mark.parametrize("text", NASTY, ids=[repr(t)[:12] for t in NASTY])
def test_every_flag_meets_every_nasty_text(entry: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    word = "x" + text if text.startswith("-") else text
    for flag in CLI_FLAGS:
        for target in ("--local", "--vertex"):
            code = main(["submit", str(entry), target, flag, word, "--dry-run", "--json"])
            captured = capsys.readouterr()
            assert code in (0, 2), (flag, target, captured.err)
            assert "Traceback" not in captured.err + captured.out
