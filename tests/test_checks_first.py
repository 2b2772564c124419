"""Every check first, and only the checks that hold (issue 33): what a local run can do is not refused for
what an image could not carry, and the limits are the system's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfcloud.cli import main
from tfcloud.flow.validate import MAX_ENV_LENGTH


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


def test_a_ray_working_directory_too_big_to_upload_is_refused_naming_what_is_big(tmp_path: Path) -> None:
    from tfcloud.errors import ConfigurationError
    from tfcloud.image.context import collect_context
    from tfcloud.targets.ray.workdir import RAY_MAX_UPLOAD, check_size

    assert RAY_MAX_UPLOAD == 104_857_600  # Ray's dashboard: "Maximum request body size 104857600 exceeded"
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "images.bin").write_bytes(os.urandom(300_000))  # does not compress
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.txt").write_bytes(b"step 1 loss 0.5\n" * 20_000)  # 320 kB, zips small
    with pytest.raises(ConfigurationError) as refused:
        check_size(collect_context(tmp_path), tmp_path, limit=200_000)
    assert refused.value.message.startswith(f"The job's working directory ({tmp_path}) is 620.0 kB, more than "
                                            "200.0 kB zipped: Ray's dashboard refuses")
    assert refused.value.hint is not None
    assert refused.value.hint.startswith("Its biggest entries: logs/ 320.0 kB, data/ 300.0 kB, train.py 12 B.")
    assert f"{tmp_path / '.dockerignore'} (e.g. `logs/`" in refused.value.hint

    (tmp_path / "data" / "images.bin").unlink()  # what remains is bigger than the limit, but zips under it
    check_size(collect_context(tmp_path), tmp_path, limit=200_000)
    (tmp_path / ".dockerignore").write_text("logs/\n")  # and the ignore file leaves it out altogether
    assert collect_context(tmp_path).total_size < 1000
