"""The gate: Google's documented rules (tfcloud.google.rules) refused through the CLI's --dry-run with exit 2, naming
the option, the rule and its source, before anything is built; the accepted requests pass; the docs' tables of
the rules are what the table says now."""

from __future__ import annotations

import datetime
import re
from dataclasses import replace
from pathlib import Path

import pytest

from tfcloud.cli import main
from tfcloud.errors import ValidationError
from tfcloud.flow.validate import build_job, build_spec
from tfcloud.google.vertex.gate import check_google_rules, option_for, violations

ROOT = Path(__file__).resolve().parents[3]
SA = "trainer@my-project.iam.gserviceaccount.com"

REFUSED = [
    # (flags, the option named, the rule)
    (["--worker-count", "1", "--worker-config", "TPU_V5E_4X", "--region", "europe-west4"], "worker_config",
     "accelerator-region"),
    (["--chief-config", "T4_1X", "--region", "me-central2"], "chief_config", "accelerator-region"),
    (["--chief-config", "A100_1X", "--region", "europe-west2"], "chief_config", "accelerator-region"),
    (["--worker-count", "1", "--worker-config", "TPU_V6E_8X", "--region", "us-east5"], "worker_config",
     "tpu-framework"),
    (["--chief-config", "CPU", "--worker-count", "1", "--worker-config", "TPU"], "worker_config",
     "tpu-one-pool-one-replica"),
    (["--worker-count", "1", "--worker-config", "TPU_V5E_4X", "--evaluator"], "evaluator_config",
     "tpu-one-pool-one-replica"),
    (["--worker-count", "1", "--worker-config", "TPU_V5E_16X", "--spot"], "worker_config", "spot-multi-host-tpu"),
    (["--chief-config", "P100_1X"], "chief_config", "accelerator-end-of-support"),
    # GB200_4X (Arm) is refused before Google's rules, as `tfcloud machines` marks it: tests/test_machines.py
    (["--experiment", "exp", "--tensorboard", "42", "--service-account", SA, "--output-dir", "gs://bkt/out"],
     "tensorboard", "experiment-with-tensorboard"),
    (["--experiment", "exp"], "service_account", "experiment-service-account"),
]


@pytest.mark.parametrize(("flags", "option", "rule"), REFUSED, ids=[r[2] + "-" + r[1] for r in REFUSED])
def test_the_cli_refuses_what_google_refuses_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         flags: list[str], option: str, rule: str) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    assert main(["submit", str(script), "--vertex", "--dry-run", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: Invalid `{option}`: expected "), err
    from tfcloud.google.rules import SOURCES
    from tfcloud.google.rules.rules import RULES

    # The error names the rule and its source's own read date.
    assert f"Google's rule {rule}" in err and f"read {SOURCES[RULES[rule].source].read.isoformat()}" in err
    assert "Traceback" not in err


ACCEPTED = [
    ["--worker-count", "1", "--worker-config", "TPU_V5E_4X", "--region", "us-west4"],
    ["--worker-count", "1", "--worker-config", "TPU_V5E_16X", "--region", "us-west4"],
    ["--worker-count", "1", "--worker-config", "TPU"],
    ["--worker-count", "1", "--worker-config", "TPU_V6E_8X", "--strategy", "none", "--region", "us-east5"],
    ["--chief-config", "CPU", "--region", "asia-south2"],
    ["--chief-config", "T4_1X", "--region", "europe-west4"],
    ["--chief-config", "H200_8X"],
    ["--chief-config", "A100_1X", "--reservation", "any"],  # no service account needed
    ["--experiment", "exp", "--service-account", SA],
]


@pytest.mark.parametrize("flags", ACCEPTED, ids=[" ".join(f) for f in ACCEPTED])
def test_the_cli_accepts_what_google_accepts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             flags: list[str]) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    assert main(["submit", str(script), "--vertex", "--dry-run", *flags]) == 0, capsys.readouterr().err


def test_a_dated_rule_is_judged_on_the_day_of_the_run(script: Path) -> None:
    from tfcloud.google.catalog.machines import COMMON_MACHINE_CONFIGS

    with pytest.raises(ValidationError, match="support ended 2026-09-15"):  # today is past it
        build_spec(entry_point=str(script), target="vertex", chief_config="P100_1X")
    t4, target = build_job(entry_point=str(script), target="vertex", chief_config="T4_1X")
    p100 = replace(t4, pools=(replace(t4.pools[0], machine=COMMON_MACHINE_CONFIGS["P100_1X"]),))
    check_google_rules(p100, target, region="us-central1", today=datetime.date(2026, 9, 14))  # still in support
    with pytest.raises(ValidationError) as err:
        check_google_rules(p100, target, region="us-central1", today=datetime.date(2026, 9, 15))
    assert "accelerator-end-of-support" in str(err.value)


def test_every_golden_pool_shape_passes_the_gate(script: Path) -> None:
    spec, target = build_job(entry_point=str(script), target="vertex", chief_config="A100_1X", worker_count=2,
                             worker_config="A100_1X", ps_count=0)
    assert violations(spec, target, region="us-central1") == []


@pytest.mark.parametrize(("field", "tpu_first", "option"), [
    ("job_spec.worker_pool_specs[0].machine_spec.accelerator_type", False, "chief_config"),
    ("job_spec.worker_pool_specs[0].machine_spec.tpu_topology", True, "worker_config"),
    ("job_spec.worker_pool_specs[1]", False, "worker_config"),
    ("job_spec.worker_pool_specs[3].machine_spec", False, "evaluator_config"),
    ("job_spec.worker_pool_specs[0].machine_spec.reservation_affinity", False, "reservation"),
    ("location", False, "region"),
    ("labels['Team']", False, "job_labels"),
    ("job_spec.scheduling.timeout", False, "timeout"),
])
def test_googles_fields_are_named_as_tfclouds_options(field: str, tpu_first: bool, option: str) -> None:
    assert option_for(field, tpu_first=tpu_first) == option


# -- the table is the one source -------------------------------------------------------------------------------
def test_every_rule_the_checks_apply_is_listed_and_tested() -> None:
    from tfcloud.google.rules.rules import RULES

    checks = (ROOT / "tfcloud" / "google" / "rules" / "apply.py").read_text(encoding="utf-8")
    used = set(re.findall(r'"([a-z0-9]+(?:-[a-z0-9]+)+)", (?:"[a-z0-9-]+"|info\.source|"accelerator-family")',
                          checks))
    used |= {"boot-disk-type", "accelerator-no-longer-offered", "accelerator-end-of-support"}
    assert used <= set(RULES), used - set(RULES)
    tests = (ROOT / "tests" / "vertexrules" / "test_checks.py").read_text(encoding="utf-8")
    untested = [rule for rule in RULES if f'"{rule}"' not in tests]
    assert untested == [], "each rule needs a refused case and Google's accepted example in tests/vertexrules"


@pytest.mark.parametrize(("page", "kind"), [("machines.md", "machines"), ("vertex.md", "rules")])
def test_the_docs_tables_are_generated_from_the_rules(page: str, kind: str) -> None:
    from tests.docgen import generator

    rulesdoc = generator("gen_rules")

    start, end = ((rulesdoc.MACHINES_START, rulesdoc.MACHINES_END) if kind == "machines"
                  else (rulesdoc.RULES_START, rulesdoc.RULES_END))
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    block = text.partition(start + "\n")[2].partition(end)[0]
    made = rulesdoc.machines_tables() if kind == "machines" else rulesdoc.rules_table()
    assert block == made, f"run `python docs/captures.py options` and commit docs/{page}"


def test_the_machines_command_lists_only_what_google_offers(capsys: pytest.CaptureFixture[str]) -> None:
    from tfcloud.google.catalog.machines import offered_configs

    assert main(["machines"]) == 0
    out = capsys.readouterr().out
    for gone in ("K80", "TPU_V5P", "ct5p-", "n1-highcpu-8"):
        assert gone not in out
    assert "P100_1X" not in out  # past its end of support on the day of the run (2026-09-15)
    assert "P100_1X" in offered_configs(datetime.date(2026, 9, 14))
    assert "P100_1X" not in offered_configs(datetime.date(2026, 9, 15))


def test_a_cluster_request_is_checked_as_a_jobs_pools_are() -> None:
    from tfcloud.google.vertex.gate import check_persistent_resource_request

    pool = {"machine_spec": {"machine_type": "a2-highgpu-1g", "accelerator_type": "NVIDIA_TESLA_A100",
                             "accelerator_count": 1}, "replica_count": 1,
            "disk_spec": {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 100}}
    check_persistent_resource_request({"resource_pools": [pool]}, region="us-central1")
    with pytest.raises(ValidationError) as err:
        check_persistent_resource_request({"resource_pools": [pool]}, region="europe-west2")
    assert str(err.value).startswith("Invalid `machine`: expected an accelerator Vertex AI serves for training in "
                                     "europe-west2")
