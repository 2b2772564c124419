"""``pip install`` lines of a notebook read as requirements, without a notebook around them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfcloud.entry.pipmagic import PipLineError, install_args, parse_pip_install


def parse(command: str, folder: Path, written: dict[str, str] | None = None) -> tuple[str, ...] | None:
    found = parse_pip_install(command, shown=command, folder=folder, written=written or {})
    return None if found is None else found.requirements


@pytest.mark.parametrize(("tokens", "expected"), [
    (["pip", "install", "x"], ["x"]),
    (["sudo", "pip3.11", "install", "x"], ["x"]),
    (["uv", "pip", "install", "x"], ["x"]),
    (["python3", "-m", "pip", "install", "x"], ["x"]),
    (["{sys.executable}", "-m", "pip", "install", "x"], ["x"]),
    (["pip", "uninstall", "x"], None),
    (["ls"], None),
])
def test_install_args(tokens: list[str], expected: list[str] | None) -> None:
    assert install_args(tokens) == expected


def test_requirements_keep_specifiers_indexes_and_editables_and_drop_how_pip_runs(tmp_path: Path) -> None:
    assert parse("pip install -q --upgrade 'numpy<3' --pre -i https://idx -e ./lib --target /x pandas 2>&1 >log",
                 tmp_path) == ("numpy<3", "--pre", "--index-url https://idx", "-e ./lib", "pandas")


def test_not_a_pip_install_is_none(tmp_path: Path) -> None:
    assert parse("cd lib && pip install .", tmp_path) is None
    assert parse("echo 'unclosed", tmp_path) is None


def test_a_requirements_file_is_read_from_a_written_cell_else_beside_the_notebook(tmp_path: Path) -> None:
    (tmp_path / "more.txt").write_text("b==2  # pinned\n\n")
    found = parse_pip_install("pip install -r reqs.txt", shown="%pip install -r reqs.txt", folder=tmp_path,
                              written={"reqs.txt": "a\n-r more.txt\n"})
    assert found is not None and found.requirements == ("a", "b==2")
    assert found.files == (("more.txt", str(tmp_path / "more.txt")),
                           ("reqs.txt", "written by %%writefile reqs.txt earlier in the notebook"))


def test_what_cannot_be_known_before_the_notebook_runs_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PipLineError, match=r"depends on a Python value") as caught:
        parse("pip install $pkg", tmp_path)
    assert caught.value.hint and "requirements_txt=" in caught.value.hint
    with pytest.raises(PipLineError, match=r"no requirements file missing.txt next to the notebook"):
        parse("pip install -r missing.txt", tmp_path)
    with pytest.raises(PipLineError, match=r"--index-url expects a value"):
        parse("pip install --index-url", tmp_path)


@pytest.mark.parametrize("command", [
    "pip install -i https://alice:S3cretPw@pypi.example.com/simple mylib",
    "pip install --extra-index-url=https://alice:S3cretPw@pypi.example.com/simple mylib",
    "pip install --find-links https://S3cretPw@files.example.com/ mylib",
    "pip install --proxy http://alice:S3cretPw@proxy.example.com:3128 mylib",  # dropped, but the notebook ships
    "pip install 'mylib @ https://alice:S3cretPw@files.example.com/mylib-1.0-py3-none-any.whl'",
    "pip install -r reqs.txt",
])
def test_a_url_with_credentials_is_refused_and_never_shown(tmp_path: Path, command: str) -> None:
    written = {"reqs.txt": "mylib\n--index-url https://alice:S3cretPw@pypi.example.com/simple\n"}
    with pytest.raises(PipLineError, match="URL with credentials") as caught:
        parse_pip_install(command, shown=command, folder=tmp_path, written=written)
    assert "S3cretPw" not in caught.value.what + (caught.value.hint or "") and "://***@" in caught.value.what
    assert "keyring" in (caught.value.hint or "")
