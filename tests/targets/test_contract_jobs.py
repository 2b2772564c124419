"""The contract for job options, as tests/targets/test_contract.py is for target options: every job option
(labels, env, display name, the script's arguments, requirements, the cluster's shape, the strategy), on every
target, through the CLI and through ``run()``, is either honoured (its value shows in the ``--dry-run --json``
plan) or refused with exit 2 naming the option. A local job keeps what its plan shows: its labels, display name,
environment and arguments reach the running job (:func:`test_a_local_job_keeps_its_job_options`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tfcloud
import tfcloud.targets as targets
from tfcloud.cli import main
from tfcloud.errors import ValidationError

TARGETS = targets.builtin_targets()


def _roles(plan: dict[str, Any]) -> dict[str, int]:
    return {row["role"]: row["replicas"] for row in plan["pools"]}


SECRET = "projects/my-project/secrets/token/versions/latest"  # a reference every target takes

#: Job option -> (its CLI words, its run() keywords, what the plan shows when it is honoured). ``{req}``: a
#: requirements file the test writes.
JOB_OPTIONS: dict[str, tuple[list[str], dict[str, Any], Callable[[dict[str, Any]], bool]]] = {
    "job_labels": (["--label", "team=ml"], {"job_labels": {"team": "ml"}}, lambda p: p["labels"] == {"team": "ml"}),
    "env": (["--env", "COLOR=blue"], {"env": {"COLOR": "blue"}}, lambda p: p["env"] == ["COLOR"]),
    "display_name": (["--display-name", "my-run"], {"display_name": "my-run"},
                     lambda p: p["display_name"] == "my-run"),
    "entry_point_args": (["--", "--epochs", "1"], {"entry_point_args": ["--epochs", "1"]},
                         lambda p: p["args"] == ["--epochs", "1"]),
    "requirements_txt": (["-r", "{req}"], {"requirements_txt": "{req}"},
                         lambda p: any("requirements.txt" in line for line in p["requirements"])),
    "worker_count": (["--worker-count", "2"], {"worker_count": 2}, lambda p: _roles(p).get("worker") == 2),
    "evaluator_count": (["--evaluator"], {"evaluator_count": 1}, lambda p: _roles(p).get("evaluator") == 1),
    "ps_count": (["--ps-count", "1", "--worker-count", "1", "--strategy", "parameter_server"],
                 {"ps_count": 1, "worker_count": 1, "distribution_strategy": "parameter_server"},
                 lambda p: _roles(p).get("ps") == 1),
    "chief_config": (["--chief-config", "CPU"], {"chief_config": "CPU"}, lambda p: _roles(p).get("chief") == 1),
    "distribution_strategy": (["--strategy", "none"], {"distribution_strategy": None},
                              lambda p: p["strategy"] == "(the script's own)"),
    "data": (["--data", "train={data}"], {"data": {"train": "{data}"}},
             lambda p: [d["variable"] for d in p["data"]] == ["TFCLOUD_DATA_TRAIN"]),
    "secrets": (["--secret", f"TOKEN={SECRET}"], {"secrets": {"TOKEN": SECRET}},
                lambda p: p["secrets"] == {"TOKEN": SECRET}),
}


@pytest.fixture
def entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Where a target ships local data sets (a dry run checks there is one, as the submission does): Vertex AI's
    # staging bucket, Ray's output directory.
    monkeypatch.setenv("TFCLOUD_STAGING_BUCKET", "my-staging-bucket")
    monkeypatch.setenv("TFCLOUD_OUTPUT_DIR", "gs://my-staging-bucket/out")
    (tmp_path / "requirements.txt").write_text("six\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "part-0.csv").write_text("1,2\n")
    path = tmp_path / "train.py"
    path.write_text("print('training')\n")
    return path


def _fill(value: Any, entry: Path) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, entry) for k, v in value.items()}
    if isinstance(value, str):
        return value.replace("{req}", str(entry.parent / "requirements.txt")).replace(
            "{data}", str(entry.parent / "data"))
    return value


def test_every_job_option_of_run_is_in_the_table() -> None:
    """A new job option is covered here: the table names each run() keyword that is a job option (not a target's
    option, nor an image option of test_contract.py, nor the target itself)."""
    from tfcloud.sdk import JobOptions

    target_options = {o.name for cls in TARGETS for o in cls.options}
    image = {"docker_config", "image_repository", "context_dir"}
    left = set(JobOptions.__annotations__) - target_options - image - {"target", "target_options"}
    assert left - set(JOB_OPTIONS) <= {"ps_config", "worker_config", "evaluator_config"}, left - set(JOB_OPTIONS)


@pytest.mark.parametrize("cls", TARGETS, ids=lambda c: c.name)
@pytest.mark.parametrize("name", sorted(JOB_OPTIONS))
def test_cli_job_option_is_honoured_or_refused(cls: type[targets.Target], name: str, entry: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    words, _, shown = JOB_OPTIONS[name]
    words = [_fill(w, entry) for w in words]
    tail = words[words.index("--"):] if "--" in words else []
    flags = words[:len(words) - len(tail)]
    code = main(["submit", str(entry), "--target", cls.name, *flags, "--dry-run", "--json", *tail])
    out, err = capsys.readouterr()
    if code == 0:
        plan = json.loads(out)
        assert plan["target"] == cls.name
        assert shown(plan), f"{name} on {cls.name}: accepted but not in the plan"
    else:
        assert code == 2 and "Traceback" not in err, err
        assert f"the {cls.name} target" in err, err


@pytest.mark.parametrize("cls", TARGETS, ids=lambda c: c.name)
@pytest.mark.parametrize("name", sorted(JOB_OPTIONS))
def test_run_job_option_is_honoured_or_refused(cls: type[targets.Target], name: str, entry: Path) -> None:
    _, kwargs, shown = JOB_OPTIONS[name]
    kwargs = {k: _fill(v, entry) for k, v in kwargs.items()}
    try:
        plan = tfcloud.run(str(entry), target=cls.name, dry_run=True, **kwargs)
    except ValidationError as err:
        assert err.exit_code == 2 and f"the {cls.name} target" in str(err)
        return
    assert shown(plan.to_dict()), f"{name} on {cls.name}: accepted but not in the plan"
