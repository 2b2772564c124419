"""The command that submits a job again (tfcloud.flow.submission.rerun: the dashboard's Rerun, Plan.rerun), run: it
plans the same job as the one it was made from."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tfcloud import MachineConfig, sdk
from tfcloud.cli import main


def _plan_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    at = argv.index("--") if "--" in argv else len(argv)  # before the script's own arguments
    assert main([*argv[:at], "--dry-run", "--json", *argv[at:]]) == 0, capsys.readouterr().err
    plan: dict[str, object] = json.loads(capsys.readouterr().out)
    return plan


def _rerun_argv(words: list[str]) -> list[str]:
    assert words[:2] == ["tfcloud", "submit"]
    return words[1:]


@pytest.fixture
def fold(tmp_path: Path) -> Path:
    script = tmp_path / "fold.py"
    script.write_text("import sys\nprint('fold', *sys.argv[1:])\n")
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / "a.txt").write_text("a\n")
    (tmp_path / "requirements.txt").write_text("")
    return script


CASES = {
    "script's own strategy, two workers": ["--strategy", "none", "--worker-count", "2"],
    "labels, env, data, requirements, args": ["--label", "team=vision", "--label", "équipe=données", "--env",
                                              "EPOCHS=3", "--env", "MODE=a b", "--data", "shards=shards", "-r",
                                              "requirements.txt", "--display-name", "my run", "--", "--epochs", "5"],
    "parameter servers, machines": ["--worker-count", "1", "--ps-count", "1", "--chief-config", "CPU",
                                    "--worker-config", "CPU", "--strategy", "parameter_server"],
    "vertex job options": ["--vertex", "--project", "proj-one", "--region", "europe-west4", "--spot", "--timeout",
                           "600",
                           "--worker-count", "1", "--chief-config", "T4_1X", "--worker-config", "T4_1X",
                           "--max-restarts", "2", "--secret", "TOKEN=projects/proj-one/secrets/tok/versions/3",
                           "--image", "europe-west4-docker.pkg.dev/proj-one/r/job:1"],
    "vertex flex-start, no build": ["--vertex", "--project", "proj-one", "--region", "us-central1", "--scheduling",
                                    "flex-start", "--max-wait", "2h", "--chief-config", "A100_1X", "--no-build",
                                    "--staging-bucket", "gs://my-staging"],
}


@pytest.mark.parametrize("flags", CASES.values(), ids=CASES.keys())
def test_the_rerun_command_plans_the_same_job(fold: Path, flags: list[str], monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(fold.parent)
    split = flags.index("--") if "--" in flags else len(flags)
    argv = ["submit", str(fold), *flags[:split], *flags[split:]]
    original = _plan_json(argv, capsys)
    options = flags[:split]
    plan = sdk.plan(fold, **_sdk_options(options), entry_point_args=flags[split + 1:] if "--" in flags else [])
    rerun = plan.rerun
    assert rerun.not_reproduced == ()
    assert list(rerun.args) == (flags[split + 1:] if "--" in flags else [])
    again = _plan_json(_rerun_argv(rerun.argv), capsys)
    for volatile in ("sources",):  # where each value came from: the rerun gives them all as flags
        original.pop(volatile), again.pop(volatile)
    assert again == original


def _sdk_options(flags: list[str]) -> dict[str, object]:
    """The SDK's keywords for the CLI flags above (what the Plan.rerun under test is made from)."""
    options: dict[str, object] = {}
    words = iter(flags)
    simple = {"--worker-count": ("worker_count", int), "--ps-count": ("ps_count", int), "--strategy": (
        "distribution_strategy", lambda v: None if v == "none" else v), "--chief-config": ("chief_config", str),
        "--worker-config": ("worker_config", str), "-r": ("requirements_txt", str), "--display-name": (
        "display_name", str), "--project": ("project", str), "--region": ("region", str), "--timeout": (
        "timeout", int), "--max-restarts": ("max_restarts", int), "--scheduling": ("scheduling", str),
        "--max-wait": ("max_wait", str), "--staging-bucket": ("staging_bucket", str)}
    for word in words:
        if word in simple:
            key, kind = simple[word]
            options[key] = kind(next(words))
        elif word in ("--label", "--env", "--secret"):
            key = {"--label": "job_labels", "--env": "env", "--secret": "secrets"}[word]
            name, _, value = next(words).partition("=")
            options.setdefault(key, {})[name] = value  # type: ignore[index]
        elif word == "--data":
            options.setdefault("data", []).append(next(words))  # type: ignore[union-attr]
        elif word == "--vertex":
            options["target"] = "vertex"
        elif word == "--spot":
            options["spot"] = True
        elif word == "--no-build":
            options["build"] = False
        elif word == "--image":
            from tfcloud import DockerConfig

            options["docker_config"] = DockerConfig(image=next(words))
        else:
            raise AssertionError(word)
    return options


def test_a_custom_machine_is_named_as_not_in_the_command(fold: Path) -> None:
    plan = sdk.plan(fold, chief_config=MachineConfig(cpu_cores=4, memory=26), distribution_strategy=None)
    assert len(plan.rerun.not_reproduced) == 1
    assert plan.rerun.not_reproduced[0].startswith("the chief machine (")
    assert "--chief-config" not in plan.rerun.head


def test_the_dashboard_reruns_a_submitted_job_with_every_option_that_shaped_it(
        fold: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("starlette", reason="the dashboard needs tfcloud[ui]")
    from tfcloud.ui.views import job_page

    monkeypatch.chdir(fold.parent)
    argv = ["submit", str(fold), "--strategy", "none", "--worker-count", "2", "--label", "team=a", "--env", "K=v",
            "--", "--epochs", "3"]
    original = _plan_json(argv, capsys)
    with sdk.submit(fold, distribution_strategy=None, worker_count=2, job_labels={"team": "a"}, env={"K": "v"},
                    entry_point_args=["--epochs", "3"]) as job:
        job.wait(120)
        job_id = job.job_id
    rerun = job_page(job_id, details=True)["rerun"]
    assert rerun["head"] == shlex.join(["tfcloud", "submit", str(fold), "--target", "local", "--chief-config",
                                        "CPU", "--worker-count", "2", "--worker-config", "CPU", "--strategy", "none",
                                        "--label", "team=a", "--env", "K=v"])
    assert rerun["args"] == "--epochs 3"
    again = _plan_json([*shlex.split(rerun["head"])[1:], "--", *shlex.split(rerun["args"])], capsys)
    original.pop("sources"), again.pop("sources")
    assert again == original
