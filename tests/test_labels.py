"""Labels: one rule, Google's (:data:`tfcloud.google.rules.LABELS`), whoever checks them: the gate, ``tfcloud cluster
create`` and the emulator. International lowercase letters are labels Google takes; what Google refuses is refused
before anything is built, naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tfcloud.cli import main
from tfcloud.errors import ValidationError
from tfcloud.google.rules import LABELS, SOURCES, check_labels
from tfcloud.job.checks import validate_labels

INTERNATIONAL = {"équipe": "données", "チーム": "研究", "k" * 63: "v" * 63}


def test_the_rule_is_data_naming_its_source_and_date() -> None:
    source = str(SOURCES[LABELS.source])
    assert "international characters allowed" in source and "read 20" in source
    assert LABELS.allows("équipe", key=True) and LABELS.allows("données", key=False)
    assert not LABELS.allows("Équipe", key=True) and not LABELS.allows("1team", key=True)
    assert LABELS.allows("", key=False) and not LABELS.allows("", key=True)


def test_the_gate_and_the_table_agree() -> None:
    """The gate takes what the table takes and refuses what it refuses: it has no rule of its own."""
    assert dict(validate_labels(INTERNATIONAL)) == INTERNATIONAL
    assert check_labels(INTERNATIONAL) == []
    for bad in ({"Team": "ml"}, {"team": "ML"}, {"1team": "ml"}, {"team": "a b"}, {"k" * 64: "v"}):
        assert check_labels(bad)
        with pytest.raises(ValidationError):
            validate_labels(bad)


def test_an_international_label_plans(script: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["submit", str(script), "--vertex", "--label", "équipe=données", "--dry-run", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["labels"] == {"équipe": "données"}


@pytest.mark.parametrize(("label", "field", "received"), [
    ("Équipe=données", "job_labels", "'Équipe'"),
    ("équipe=Données", "job_labels['équipe']", "'Données'"),
    ("équipe=a.b", "job_labels['équipe']", "'a.b'"),
])
def test_a_label_google_refuses_is_refused_naming_the_field(script: Path, capsys: pytest.CaptureFixture[str],
                                                            label: str, field: str, received: str) -> None:
    assert main(["submit", str(script), "--vertex", "--label", label, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: Invalid `{field}`: expected ") and f"received {received}." in err


@pytest.mark.emulator
def test_the_emulator_takes_the_planned_request_through_googles_client(tfcloud_emulator: Any, script: Path) -> None:
    aiplatform_v1 = pytest.importorskip("google.cloud.aiplatform_v1", reason="needs tfcloud[cloud]")
    from tfcloud.flow.validate import build_job
    from tfcloud.google.vertex.request import custom_job_request

    spec, target = build_job(entry_point=str(script), target="vertex", chief_config="CPU",
                             job_labels={"équipe": "données", "チーム": "研究"})
    request = custom_job_request(spec, target, image_uri="us-docker.pkg.dev/p/r/train:1", submission_id="sub-labels")
    client = tfcloud_emulator.job_client()
    try:
        created = client.create_custom_job(parent=tfcloud_emulator.parent,
                                           custom_job=aiplatform_v1.CustomJob.from_json(json.dumps(request)))
        assert dict(created.labels) == {"équipe": "données", "チーム": "研究", "tfcloud-submission": "sub-labels"}
        client.cancel_custom_job(name=created.name)
    finally:
        client.transport.close()
