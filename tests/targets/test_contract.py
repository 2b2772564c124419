"""The contract every target keeps, generated from the targets' own option specs: each option, on each target,
through the CLI and through ``run()``, is either honoured (its value shows in the ``--dry-run --json`` plan, and
for Vertex AI in the CustomJob request too) or refused with exit 2 naming the option. Nothing is silently
ignored. A new option or a new target is covered here without editing this file (each Option has an example).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tfcloud
import tfcloud.targets as targets
from tfcloud.cli import main
from tfcloud.errors import ValidationError

TARGETS = targets.builtin_targets()
OPTIONS = {o.name: o for cls in TARGETS for o in cls.options}
#: The options every job takes but only a target that builds an image (or ships the job's files) acts on: the
#: CLI flag, the run() keyword and value, and whether a target acts on it.
IMAGE_OPTIONS: dict[str, tuple[list[str], dict[str, Any], Any]] = {
    "image": (["--image", "registry.example.com/team/train:v1"],
              {"docker_config": tfcloud.DockerConfig(image="registry.example.com/team/train:v1")},
              lambda t: t.container),
    "parent_image": (["--parent-image", "python:3.11"],
                     {"docker_config": tfcloud.DockerConfig(parent_image="python:3.11")}, lambda t: t.container),
    "cache_from": (["--cache-from", "registry.example.com/team/train:v0"],
                   {"docker_config": tfcloud.DockerConfig(cache_from="registry.example.com/team/train:v0")},
                   lambda t: t.container),
    "image_build_bucket": (["--image-build-bucket", "my-build-bucket"],
                           {"docker_config": tfcloud.DockerConfig(image_build_bucket="my-build-bucket")},
                           lambda t: t.container),
    "image_repository": ([], {"image_repository": "registry.example.com/team"}, lambda t: t.container),
}


def _cli_value(option: Any) -> list[str]:
    return option.cli_args(option.example)


def _with(option: Any) -> tuple[list[str], dict[str, Any]]:
    """The options ``option``'s example is given with (``Option.example_with``): as flags, and as run() keywords."""
    flags: list[str] = []
    for name, value in option.example_with:
        other = OPTIONS.get(name)
        flag = other.cli_flag if other is not None else "--" + name.replace("_", "-")
        flags += [flag] if value is True else [flag, str(value)]
    return flags, dict(option.example_with)


def _chooser(cls: type[targets.Target]) -> list[str]:
    return ["--target", cls.name]


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text("print('training')\n")
    return path


def test_every_option_has_an_example_its_own_check_accepts() -> None:
    for name, option in OPTIONS.items():
        assert option.example is not None, f"{name}: give the Option an example (the contract runs it)"
        option.convert(option.example)


def _plan_cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict[str, Any] | None, str]:
    code = main(["submit", *argv, "--dry-run", "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


@pytest.mark.parametrize("cls", TARGETS, ids=lambda c: c.name)
@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_cli_option_is_honoured_or_refused(cls: type[targets.Target], name: str, entry: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    option = OPTIONS[name]
    companions = _with(option)[0] if cls.option(name) is not None else []
    code, plan, err = _plan_cli(capsys, [str(entry), *_chooser(cls), *_cli_value(option), *companions])
    if cls.option(name) is not None:
        assert code == 0, err
        assert plan is not None and plan["target"] == cls.name
        assert plan["target_options"][name] == option.shown(option.convert(option.example))
    else:
        assert code == 2
        assert "Traceback" not in err
        assert f"`{name}`" in err and f"the {cls.name} target" in err, err


@pytest.mark.parametrize("cls", TARGETS, ids=lambda c: c.name)
@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_run_option_is_honoured_or_refused(cls: type[targets.Target], name: str, entry: Path) -> None:
    option = OPTIONS[name]
    kwargs = {name: option.example}
    if cls.option(name) is not None:
        kwargs.update(_with(option)[1])
        plan = tfcloud.run(str(entry), target=cls.name, dry_run=True, **kwargs)
        assert plan.target.name == cls.name
        assert plan.to_dict()["target_options"][name] == option.shown(option.convert(option.example))
    else:
        with pytest.raises(ValidationError) as err:
            tfcloud.run(str(entry), target=cls.name, dry_run=True, **kwargs)
        assert err.value.field == name and f"the {cls.name} target" in str(err.value)
        assert err.value.exit_code == 2


@pytest.mark.parametrize("cls", TARGETS, ids=lambda c: c.name)
@pytest.mark.parametrize("name", sorted(IMAGE_OPTIONS))
def test_image_options_are_honoured_or_refused(cls: type[targets.Target], name: str, entry: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    flags, kwargs, acts = IMAGE_OPTIONS[name]
    value = cls()
    if acts(value):
        plan = tfcloud.run(str(entry), target=cls.name, dry_run=True, **kwargs)
        image = plan.to_dict()["image"]
        assert image is not None
        shown = json.dumps(image)
        wanted = next(iter(kwargs.values()))
        if isinstance(wanted, tfcloud.DockerConfig):
            given = next(v for v in (wanted.image, wanted.parent_image, wanted.cache_from, wanted.image_build_bucket)
                         if v)
            assert given.removesuffix(":v1").split(":")[0] in shown or given in shown
        else:
            assert wanted in shown
        if flags:
            code, cli_plan, err = _plan_cli(capsys, [str(entry), *_chooser(cls), *flags])
            assert code == 0, err
            assert cli_plan is not None and cli_plan["image"] == image
    else:
        with pytest.raises(ValidationError) as err:
            tfcloud.run(str(entry), target=cls.name, dry_run=True, **kwargs)
        assert err.value.exit_code == 2 and f"the {cls.name} target" in str(err.value)
        if flags:
            code, _, text = _plan_cli(capsys, [str(entry), *_chooser(cls), *flags])
            assert code == 2 and f"the {cls.name} target" in text


def test_build_logs_without_an_image_is_refused(entry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", str(entry), "--build-logs"]) == 2
    assert "Invalid `build_logs`: expected to be left unset for the local target" in capsys.readouterr().err


def test_a_vertex_option_reaches_the_customjob_request(entry: Path) -> None:
    """Honoured means acted on: each Vertex AI option that is not a setting of the connection changes the
    CustomJob request the backend sends (the pure request builder, parsed by the real aiplatform_v1 type)."""
    pytest.importorskip("google.cloud.aiplatform_v1", reason="the request is checked with tfcloud[cloud]")
    from tfcloud.google.vertex.request import custom_job_request

    vertex = targets.get("vertex")

    def base_for(companions: dict[str, Any]) -> dict[str, Any]:
        """The request with the option's companions (Option.example_with) alone: what the option must change."""
        plan = tfcloud.run(str(entry), target="vertex", dry_run=True, **companions)
        return custom_job_request(plan.spec, plan.target, image_uri="i:1", submission_id="s")

    connection = {"project", "region", "emulator_host", "staging_bucket"}  # where the request goes, not what it is
    # what the submission does when the request finds no capacity, not what it asks for: acted on by
    # tests/targets/vertex/test_vertex_fallback.py (each alternative's request, on the emulator)
    proceeding = {"fallback", "fallback_after"}
    for option in vertex.options:
        if option.name in connection | proceeding:
            continue
        if option.name == "build":  # no image: the pools run a package instead (the plan's `package`)
            plan = tfcloud.run(str(entry), target="vertex", dry_run=True, build=False, **_with(option)[1])
            assert plan.image is None and plan.package is not None  # type: ignore[attr-defined]
            continue
        companions = _with(option)[1]
        plan = tfcloud.run(str(entry), target="vertex", dry_run=True, **{option.name: option.example},
                           **companions)
        assert custom_job_request(plan.spec, plan.target, image_uri="i:1", submission_id="s") != \
            base_for(companions), \
            f"{option.name} changes nothing in the request"
