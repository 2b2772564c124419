"""Every command's --help: `-h` works, options are grouped, and no typer artefact (`<list[str]>`, `{entry_point}`)
shows. The pinned typer range (pyproject.toml) is what these were checked with."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import typer
import typer.main
from packaging.requirements import Requirement

from tfcloud.cli import app, main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parent.parent
# typer 0.27-0.29 print `<str>`, `<list[str]>`, `{entry_point}`; click prints TEXT, INTEGER, PATH, FLOAT.
ARTEFACT = re.compile(r"<[a-z_]+(\[[^\]]*\])?>|\{[a-z_]+\}|\[default: None\]")


def _commands() -> list[list[str]]:
    """Every command path, the root's and the nested groups' (emulator ...) included."""
    found: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        found.append(path)
        if isinstance(command, typer.core.TyperGroup):  # the root makes its commands when asked for them
            for name in sorted(command.list_commands(None)):  # type: ignore[arg-type]
                walk(command.get_command(None, name), [*path, name])  # type: ignore[arg-type]

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = _commands()


def test_every_command_is_walked() -> None:
    names = {" ".join(path) for path in COMMANDS}
    assert {"submit", "build", "machines", "status", "logs", "cancel", "list", "emulator"} <= names
    assert any(path[:1] == ["emulator"] and len(path) == 2 for path in COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "tfcloud")
def test_help_has_no_artefacts_and_h_is_help(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    long = capsys.readouterr().out
    assert main([*path, "-h"]) == 0
    assert capsys.readouterr().out == long
    assert long.startswith("Usage: tfcloud")
    assert ARTEFACT.findall(long) == [], long


def _sections(text: str) -> dict[str, list[str]]:
    """Heading -> the options (first flag of each line) under it."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = sections.setdefault(line[:-1], [])
        elif current is not None and line.startswith("  ") and not line.startswith("   "):
            current.append(line.split()[0].rstrip(","))
    return sections


def test_submit_options_are_grouped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "--help"]) == 0
    sections = _sections(capsys.readouterr().out)
    assert list(sections)[:2] == ["Arguments", "Target"] and list(sections)[-1] == "Options"
    assert {"--worker-count", "--chief-config", "--strategy", "--ps-count"} <= set(sections["Cluster"])
    assert {"--image", "--parent-image", "--context"} <= set(sections["Image"])
    assert {"--project", "--region", "--spot"} <= set(sections["Vertex AI"])
    assert {"--dry-run", "--json", "-d"} <= set(sections["Output"])
    assert sections["Options"] == ["-h"]


def test_choices_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "One of: auto, one_device, mirrored, multi_worker_mirrored, parameter_server, tpu, none" in text
    assert main(["list", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--state STATE Only jobs in this state: queued, provisioning, running, succeeded, failed, " in text


def test_typer_is_in_the_pinned_range() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (pin,) = [Requirement(r) for r in pyproject["project"]["dependencies"] if Requirement(r).name == "typer"]
    assert pin.specifier.contains(typer.__version__), (
        f"typer {typer.__version__} is outside the tested range {pin.specifier} (pyproject.toml)")


def test_a_verb_on_existing_jobs_lists_only_what_it_acts_on(capsys: pytest.CaptureFixture[str]) -> None:
    """cancel takes a job and the place it is reached at (the targets' place options), none of a job's setup."""
    assert main(["cancel", "--help"]) == 0
    sections = _sections(capsys.readouterr().out)
    assert sections == {"Arguments": ["[JOB]"], "Target": ["--local", "--vertex", "--target", "-o"],
                        "Vertex AI": ["--project", "--region", "--emulator-host"], "Ray": ["--ray"],
                        "Options": ["--study", "-h"]}
    for verb in (["status"], ["logs"], ["list"], ["artifacts"], ["tensorboard"], ["ui"], ["cluster", "list"]):
        assert main([*verb, "--help"]) == 0
        flags = {flag for names in _sections(capsys.readouterr().out).values() for flag in names}
        assert not flags & {"--spot", "--max-restarts", "--staging-bucket", "--ray-cpus", "--no-build"}, verb
        assert "--project" in flags, verb


def test_the_cluster_verbs_take_only_the_vertex_ai_place(capsys: pytest.CaptureFixture[str]) -> None:
    """A cluster is a Vertex AI persistent resource: the cluster verbs list --vertex and its place, never another
    target's flags, which are then unknown options (exit 2)."""
    for verb in ("create", "list", "delete"):
        assert main(["cluster", verb, "--help"]) == 0
        sections = _sections(capsys.readouterr().out)
        assert sections["Target"] == ["--vertex", "-o"], verb
        assert sections["Vertex AI"] == ["--project", "--region", "--emulator-host"], verb
        assert "Ray" not in sections, verb
    for flags in (["--ray", "http://head:8265"], ["--local"], ["--target", "vertex"]):
        assert main(["cluster", "list", *flags]) == 2
        assert f"No such option: {flags[0]}" in capsys.readouterr().err
