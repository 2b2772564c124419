"""One plan, every view: the text plan (`submit --dry-run`), `--json`, the SDK's Plan (`run(dry_run=True)`) and the
notebook's HTML list the same data sets, secrets and env names (never an env value or a secret's value)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import tfcloud
from tfcloud.cli import main


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "train.py").write_text("print('training')\n")
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / "a.txt").write_text("abc\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TFCLOUD_TEST_TOKEN", "s3cr3t-value")
    return tmp_path


FLAGS = ["--env", "EPOCHS=3", "--env", "MODE=fast-value", "--secret", "TOKEN=env:TFCLOUD_TEST_TOKEN",
         "--data", "shards=shards"]
KEYWORDS = {"env": {"EPOCHS": "3", "MODE": "fast-value"}, "secrets": {"TOKEN": "env:TFCLOUD_TEST_TOKEN"},
            "data": {"shards": "shards"}}


def test_text_json_sdk_and_html_list_the_same_data_secrets_and_env(job: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "train.py", *FLAGS, "--dry-run", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert main(["submit", "train.py", *FLAGS, "--dry-run"]) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    plan = tfcloud.run("train.py", dry_run=True, **KEYWORDS)
    sdk = plan.to_dict()

    assert planned["env"] == sdk["env"] == ["EPOCHS", "MODE"]
    assert planned["secrets"] == sdk["secrets"] == {"TOKEN": "env:TFCLOUD_TEST_TOKEN"}
    assert planned["data"] == sdk["data"]
    assert [d["name"] for d in planned["data"]] == ["shards"] and planned["data"][0]["files"] == 1

    for view in (text, str(plan), plan._repr_html_()):
        assert re.search(r"Env(</th><td[^>]*><code>|: )EPOCHS, MODE \(values not shown\)", view), view
        assert re.search(r"Secret(</th><td[^>]*><code>|: )TOKEN from env:TFCLOUD_TEST_TOKEN", view), view
        assert re.search(r"Data(</th><td[^>]*><code>|: )shards = " + re.escape(str(job / "shards")) +
                         r": 1 files, 4 B \(\$TFCLOUD_DATA_SHARDS\)", view), view
        for hidden in ("fast-value", "s3cr3t-value", "TFCLOUD_SECRET_REFS"):
            assert hidden not in view
    for hidden in ("fast-value", "s3cr3t-value", "TFCLOUD_SECRET_REFS"):
        assert hidden not in json.dumps(planned)
