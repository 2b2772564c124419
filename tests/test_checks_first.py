"""Every check first, and only the checks that hold (issue 33): what a local run can do is not refused for
what an image could not carry, and the limits are the system's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfcloud.cli import main
from tfcloud.validate import MAX_ENV_LENGTH


def _name_that_is_not_utf8(directory: Path) -> str:
    raw = os.path.join(os.fsencode(directory), b"tr\xffain.py")
    try:
        with open(raw, "wb") as f:
            f.write(b"import os\nprint('ran', os.path.basename(__file__).encode('utf-8', 'backslashreplace'))\n")
    except OSError as exc:  # a filesystem that takes only UTF-8 names
        pytest.skip(f"this filesystem refuses a name that is not UTF-8: {exc}")
    return os.fsdecode(raw)


def test_a_name_that_is_not_utf8_runs_locally_and_is_refused_where_files_travel(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    script = _name_that_is_not_utf8(tmp_path)
    assert main(["submit", script, "--strategy", "none"]) == 0
    out, err = capsys.readouterr()
    assert out == "chief-0 | ran b'tr\\\\udcffain.py'\n", out
    assert err.splitlines()[-1].endswith(" succeeded.")

    monkeypatch.setenv("TFCLOUD_PROJECT", "my-project")
    assert main(["submit", script, "--vertex", "--dry-run"]) == 2  # its name goes into an image: refused first
    err = capsys.readouterr().err
    assert err.startswith("Error: Invalid `entry_point`: expected a path to an existing Python file (.py) or "
                          "notebook (.ipynb) whose name is UTF-8 text, received <'")
    assert "a local run takes it as it is" in err


def test_env_values_up_to_what_linux_takes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "env.py"
    script.write_text("import os\nprint(len(os.environ['BIG']))\n")
    largest = "x" * (MAX_ENV_LENGTH - len("BIG="))  # NAME=VALUE: 131,071 bytes, exec's limit
    assert main(["submit", str(script), "--strategy", "none", "--env", f"BIG={largest}"]) == 0
    assert capsys.readouterr().out == f"chief-0 | {len(largest)}\n"
    assert MAX_ENV_LENGTH == 131_071

    assert main(["submit", str(script), "--strategy", "none", "--env", f"BIG={largest}x"]) == 2
    assert capsys.readouterr().err.startswith(
        "Error: Invalid `env['BIG']`: expected at most 131071 bytes with its name (Linux refuses a larger variable "
        "to a process), received <131068 bytes>.")
