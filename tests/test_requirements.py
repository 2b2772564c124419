"""The requirements check of local runs: exact problems, never an install."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from tfcloud.entry.requirements import check_requirements, ensure_requirements, parse_requirements_file
from tfcloud.errors import ConfigurationError

PYTEST = importlib.metadata.version("pytest")


def test_parse_follows_includes_and_skips_options(tmp_path: Path) -> None:
    (tmp_path / "base.txt").write_text("rich>=13  # the console\n")
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(
        "# comment\n"
        "--index-url https://example.invalid/simple\n"
        "-r base.txt\n"
        "\n"
        "pytest \\\n"
        "  >=1\n"
        "jinja2==3.* --hash=sha256:abc\n"
        "-e ./local-package\n"
    )
    assert parse_requirements_file(reqs) == [
        ("rich>=13", "base.txt:1"),
        ("pytest >=1", "requirements.txt:5"),
        ("jinja2==3.*", "requirements.txt:7"),
        ("-e ./local-package", "requirements.txt:8"),
    ]


def test_satisfied_requirements_pass(tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(f"pytest=={PYTEST}\nPyTest>=1\nRich\nno-such-package ; python_version < '3'\n")
    assert check_requirements(reqs, ["jinja2"]) == []
    ensure_requirements(reqs, ["jinja2"])


def test_every_problem_is_listed_with_the_fix(tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("pytest<1\nno-such-package-tfcloud\n")
    with pytest.raises(ConfigurationError) as info:
        ensure_requirements(reqs, ["another-missing-one>=2"])
    error = info.value
    assert error.message == (
        f"The current Python environment ({sys.executable}) does not satisfy the job's requirements "
        "(3 problems):\n"
        f"  - pytest<1 (requirements.txt:1): {PYTEST} is installed, <1 is required\n"
        "  - no-such-package-tfcloud (requirements.txt:2): not installed\n"
        "  - another-missing-one>=2 (extra requirement): not installed\n"
        "A local run uses this environment as it is and installs nothing into it."
    )
    assert error.hint == (f"Install them with: {sys.executable} -m pip install -r {reqs} && "
                          f"{sys.executable} -m pip install 'another-missing-one>=2'")


def test_unreadable_requirements_are_reported(tmp_path: Path) -> None:
    problems = check_requirements(None, ["not a requirement !!"])
    assert len(problems) == 1 and problems[0].reason.startswith("cannot be checked (not a valid requirement")
    with pytest.raises(ConfigurationError, match="does not exist"):
        check_requirements(tmp_path / "missing.txt")


def test_bundle_copies_every_include_beside_the_top_file(tmp_path: Path) -> None:
    from tfcloud.entry.requirements import bundle_requirements

    (tmp_path / "deps").mkdir()
    (tmp_path / "deps" / "base.txt").write_text("-c ../constraints.txt\nnumpy\n--requirement=more/base.txt\n")
    (tmp_path / "deps" / "more").mkdir()
    (tmp_path / "deps" / "more" / "base.txt").write_text("rich\n-r ../base.txt\n")  # a cycle, and a second base.txt
    (tmp_path / "constraints.txt").write_text("numpy<3\n")
    top = tmp_path / "requirements.txt"
    top.write_text("-r deps/base.txt\n-rdeps/more/base.txt  # again\n-r https://example.invalid/r.txt\npandas\n")
    files = bundle_requirements(top, ["scipy"])
    assert files == {
        "requirements.txt": b"-r base.txt\n-r2-base.txt  # again\n-r https://example.invalid/r.txt\npandas\n"
                            b"# found in the entry point (e.g. a notebook's %pip install lines)\nscipy\n",
        "2-base.txt": b"rich\n-r base.txt\n",
        "base.txt": b"-c constraints.txt\nnumpy\n--requirement=2-base.txt\n",
        "constraints.txt": b"numpy<3\n",
    }
    assert bundle_requirements(None) == {}
    assert bundle_requirements(None, ["x"]) == {
        "requirements.txt": b"# found in the entry point (e.g. a notebook's %pip install lines)\nx\n"}


def test_a_missing_constraints_file_is_a_validation_error(tmp_path: Path) -> None:
    from tfcloud.entry.requirements import validate_requirements_file
    from tfcloud.errors import ValidationError

    top = tmp_path / "requirements.txt"
    top.write_text("numpy\n-c constraints.txt\n")
    with pytest.raises(ValidationError) as info:
        validate_requirements_file(top)
    assert str(info.value).splitlines()[0] == (
        "Invalid `requirements_txt`: expected includes (-r FILE, -c FILE) of existing files, received "
        "<requirements.txt:2: '-c constraints.txt'>.")
    (tmp_path / "constraints.txt").write_text("numpy<3\n")
    validate_requirements_file(top)
