"""The bad-input catalog: every row is a mistake a new user makes, through the CLI, ``tfcloud.run()`` or a
constructor. Each must exit 2 (a :class:`~tfcloud.errors.TfcloudError` with ``exit_code == 2``) with a message
that names the field, what was expected and what was received, never a traceback, and must leave no trace:
no job or build on the emulator, no push to the registry, no job in the local store, no temporary files.

The environment of every row points at a running emulator (and, where Docker is installed, at a real engine
and registry), so an input that slipped through validation would be counted there.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

import tfcloud
from tfcloud import COMMON_MACHINE_CONFIGS, AcceleratorType, DockerConfig, MachineConfig
from tfcloud.cli import main
from tfcloud.errors import TfcloudError
from tfcloud.pytest_plugin import tfcloud_emulator  # noqa: F401 (the fixture, also without the plugin entry point)

TPU = COMMON_MACHINE_CONFIGS["TPU"]


@dataclass(frozen=True)
class Case:
    id: str
    how: str  # "cli": argv for `tfcloud`; "run"/"tune": keywords for tfcloud.run()/tune(); "call": a function
    args: Any
    field: str  # the field the message names (between backticks)
    env: dict[str, str] = field(default_factory=dict)
    site: str = ""  # a directory put first on sys.path (installed packages: plug-ins), "{d}/..."


def cli(id: str, argv: list[str], name: str, **env: str) -> Case:
    return Case(id, "cli", argv, name, env)


def submit(id: str, extra: list[str], name: str, entry: str = "{d}/train.py", **env: str) -> Case:
    return Case(id, "cli", ["submit", entry, *extra], name, env)


def run(id: str, kwargs: dict[str, Any], name: str, **env: str) -> Case:
    return Case(id, "run", kwargs, name, env)


def call(id: str, fn: Callable[[], object], name: str) -> Case:
    return Case(id, "call", fn, name)


def tune(id: str, extra: list[str], name: str, *, metric: bool = True) -> Case:
    """`tfcloud tune {d}/train.py ...` (with `--metric acc` unless told otherwise)."""
    return Case(id, "cli", ["tune", "{d}/train.py", *(["--metric", "acc"] if metric else []), *extra], name)


def tune_sdk(id: str, kwargs: dict[str, Any], name: str) -> Case:
    """`tfcloud.tune({d}/train.py, **kwargs)`, with a valid parameter and metric unless given."""
    return Case(id, "tune", {"params": ["lr=double:1e-4:1e-1:log"], "metric": "acc", **kwargs}, name)


V = "--vertex"
CASES: list[Case] = [
    # --- cluster shape --------------------------------------------------------------------------------------
    submit("workers-negative", ["--worker-count", "-1"], "worker_count"),
    submit("workers-over-vertex-cap", ["--worker-count", "1001", V], "worker_count"),
    submit("workers-over-local-cap", ["--worker-count", "40"], "worker_count"),
    submit("ps-negative", ["--ps-count", "-1"], "ps_count"),
    submit("ps-without-workers", ["--ps-count", "1"], "worker_count"),
    submit("ps-over-cap", ["--ps-count", "1001", "--worker-count", "1", V], "ps_count"),
    submit("chief-unknown", ["--chief-config", "T5_1X"], "chief_config"),
    submit("worker-unknown", ["--worker-count", "1", "--worker-config", "big"], "worker_config"),
    submit("ps-unknown", ["--ps-config", "gpu", "--ps-count", "1", "--worker-count", "1"], "ps_config"),
    submit("chief-tpu", ["--chief-config", "TPU", V], "chief_config"),
    submit("tpu-two-workers", ["--worker-count", "2", "--worker-config", "TPU", V], "worker_count"),
    submit("tpu-local", ["--worker-count", "1", "--worker-config", "TPU"], "target"),
    submit("ps-tpu", ["--ps-config", "TPU", "--ps-count", "1", "--worker-count", "1", V], "ps_config"),
    submit("tpu-vm-two-workers", ["--worker-count", "2", "--worker-config", "TPU_V6E_4X", V], "worker_count"),
    submit("chief-tpu-v5p", ["--chief-config", "TPU_V5P_4X", V], "chief_config"),
    submit("tpu-vm-local", ["--worker-count", "1", "--worker-config", "TPU_V5E_16X"], "target"),
    submit("strategy-unknown", ["--strategy", "fastest"], "distribution_strategy"),
    submit("strategy-mirrored-workers", ["--strategy", "mirrored", "--worker-count", "1"], "distribution_strategy"),
    submit("strategy-ps-no-ps", ["--strategy", "parameter_server"], "distribution_strategy"),
    submit("strategy-tpu-no-tpu", ["--strategy", "tpu", V], "distribution_strategy"),
    submit("strategy-markup", ["--strategy", "[bold]x[/bold]"], "distribution_strategy"),
    # --- labels and environment -----------------------------------------------------------------------------
    submit("label-upper", ["--label", "Team=ml"], "job_labels"),
    submit("label-no-equals", ["--label", "team"], "--label"),
    submit("label-no-key", ["--label", "=x"], "--label"),
    submit("label-value-space", ["--label", "team=ML Ops"], "job_labels['team']"),
    submit("label-reserved", ["--label", "tfcloud-submission=x"], "job_labels"),
    submit("label-key-long", ["--label", "k" * 64 + "=v"], "job_labels"),
    submit("label-value-markup", ["--label", "team=[bold]x[/bold]"], "job_labels['team']"),
    submit("label-key-markup", ["--label", "[red]k=v"], "job_labels"),
    submit("label-value-long", ["--label", "team=" + "v" * 64, V], "job_labels['team']"),
    submit("data-name-dash", ["--data", "my-set={d}"], "data"),
    submit("data-name-dash-vertex", ["--data", "my-set={d}", V], "data"),
    submit("data-symlink-loop-plan", ["--data", "loop={d}/../bad-inputs-loop", V, "--staging-bucket",
                                      "gs://tfcloud-bad-inputs", "--dry-run"], "data"),
    submit("data-symlink-loop-vertex", ["--data", "loop={d}/../bad-inputs-loop", V, "--staging-bucket",
                                        "gs://tfcloud-bad-inputs"], "data"),
    submit("env-name-digit", ["--env", "1X=y"], "env"),
    submit("env-no-equals", ["--env", "NOVALUE"], "--env"),
    submit("env-nul", ["--env", "A=b\0c"], "env['A']"),
    submit("env-nul-vertex", ["--env", "A=b\0c", V], "env['A']"),
    submit("env-tf-config", ["--env", "TF_CONFIG={}"], "env"),
    submit("env-tfcloud", ["--env", "TFCLOUD_REPLICA=x"], "env"),
    submit("env-dash", ["--env", "A-B=c"], "env"),
    submit("args-nul", ["--", "a\0b"], "entry_point_args[0]"),
    submit("args-nul-vertex", [V, "--", "--epochs", "a\0b"], "entry_point_args[1]"),
    submit("args-huge", ["--", "x" * 200_000], "entry_point_args[0]"),
    # --- control characters: a pasted newline or tab in any text value, named at the gate ---------------------
    submit("ctl-project", ["--project", "my-project\n", V], "project"),
    submit("ctl-service-account", ["--service-account", "t@my-project.iam.gserviceaccount.com\n", V],
           "service_account"),
    submit("ctl-network", ["--network", "projects/1/global/networks/vpc\n", V], "network"),
    submit("ctl-bucket", ["--image-build-bucket", "my-bucket\n", V], "docker_config.image_build_bucket"),
    submit("ctl-output-dir-local", ["--output-dir", "{d}/out\n"], "base_output_dir"),
    submit("ctl-output-dir-vertex", ["--output-dir", "gs://my-bucket/out\n", V], "base_output_dir"),
    submit("ctl-image", ["--image", "repo/img:tag\n", V], "docker_config.image"),
    submit("ctl-parent-image", ["--parent-image", "python:3.11\r", V], "docker_config.parent_image"),
    submit("ctl-label-key", ["--label", "te\tam=ml", V], "job_labels"),
    submit("ctl-label-value", ["--label", "team=ml\n", V], "job_labels['team']"),
    submit("ctl-env-name", ["--env", "A\n=b"], "env"),
    submit("ctl-env-name-vertex", ["--env", "A\n=b", V], "env"),
    submit("ctl-display-name", ["--display-name", "run\x1b[31m", V], "display_name"),
    submit("ctl-setting-repository", [V], "image_repository", TFCLOUD_IMAGE_REPOSITORY="localhost:5000/x\n"),
    submit("ctl-setting-emulator", [V], "TFCLOUD_EMULATOR_HOST", TFCLOUD_EMULATOR_HOST="127.0.0.1:1\n"),
    submit("ctl-setting-state-dir", [], "state_dir", TFCLOUD_HOME="{d}/home\n"),
    submit("ctl-setting-bucket", [V], "TFCLOUD_STAGING_BUCKET", TFCLOUD_STAGING_BUCKET="my-bucket\n"),
    run("ctl-run-project", {"project": "my-project\n", "target": "vertex"}, "project"),
    run("ctl-run-labels", {"job_labels": {"team": "ml\n"}, "target": "vertex"}, "job_labels['team']"),
    # --- checked before the first side effect, not by Docker, pip or exec later ------------------------------
    submit("image-upper-host", ["--image", "Registry.io/team/img:tag", V], "docker_config.image"),
    submit("image-upper-first-part", ["--image", "TEAM/img:tag", V], "docker_config.image"),
    submit("setting-repository-upper-host", [V], "TFCLOUD_IMAGE_REPOSITORY",
           TFCLOUD_IMAGE_REPOSITORY="LOCALHOST:5000/tfcloud"),
    submit("env-value-huge", ["--env", "A=" + "x" * 200_000], "env['A']"),
    submit("env-value-huge-vertex", ["--env", "A=" + "x" * 200_000, V], "env['A']"),
    submit("env-total-huge", [a for i in range(12) for a in ("--env", f"V{i}=" + "x" * 90_000)], "env"),
    submit("reqs-unreachable-include", ["--requirements", "{d}/remote.txt", V], "requirements_txt"),
    submit("reqs-unreachable-include-local", ["--requirements", "{d}/remote.txt", "--container"],
           "requirements_txt"),
    submit("reqs-unreachable-nested", ["--requirements", "{d}/includesremote.txt", V], "requirements_txt"),
    submit("reqs-unreachable-include-upper-scheme", ["--requirements", "{d}/remoteupper.txt", V],
           "requirements_txt"),  # pip's schemes are case-insensitive: HTTP:// is fetched as http://
    submit("reqs-unreachable-include-upper-scheme-local", ["--requirements", "{d}/remoteupper.txt", "--container"],
           "requirements_txt"),
    # --- two installed packages that add one target name (issue 39) -----------------------------------------
    replace(submit("plugin-two-packages-one-name", ["--target", "twin"], "target"), site="{d}/plugins"),
    replace(submit("plugin-two-packages-one-name-setting", [], "target", TFCLOUD_TARGET="twin"),
            site="{d}/plugins"),
    replace(submit("plugin-two-packages-one-name-dry-run", ["--target", "twin", "--dry-run"], "target"),
            site="{d}/plugins"),
    tune("tune-plot-suffix", ["--param", "units=int:8:16", "--plot", "{d}/plot.jpg"], "--plot"),
    tune("tune-plot-under-a-file", ["--param", "units=int:8:16", "--plot", "{d}/train.py/plots/plot.png"],
         "--plot"),
    tune("tune-plot-is-dir", ["--param", "units=int:8:16", "--plot", "{d}/plots.html"], "--plot"),
    tune("tune-plot-under-missing-root-dir", ["--param", "units=int:8:16", "--plot", "/missing-tfcloud/dir/p.png"],
         "--plot"),
    tune("tune-plot-newline", ["--param", "units=int:8:16", "--plot", "{d}/plot.png\n"], "--plot"),
    # (a local run takes such a name: tests/test_checks_first.py; where the files travel it is refused)
    submit("entry-name-not-utf8-vertex-dry-run", [V, "--dry-run"], "entry_point",
           entry="{d}/" + os.fsdecode(b"tr\xe9in.py")),
    submit("entry-name-not-utf8-vertex", [V], "entry_point", entry="{d}/" + os.fsdecode(b"tr\xe9in.py")),
    submit("notebook-name-not-utf8", [], "entry_point", entry="{d}/" + os.fsdecode(b"n\xf6tebook.ipynb")),
    # --- tuning studies: the parameter syntax and the study (tfcloud tune, tfcloud.tune()) --------------------
    tune("tune-param-no-type", ["--param", "lr"], "param"),
    tune("tune-param-type-unknown", ["--param", "lr=float:1e-4:1e-1"], "param lr"),
    tune("tune-param-low-above-high", ["--param", "lr=double:0.1:0.01"], "param lr"),
    tune("tune-param-log-zero", ["--param", "lr=double:0:1:log"], "param lr"),
    tune("tune-param-not-a-number", ["--param", "lr=double:small:1"], "param lr"),
    tune("tune-param-inf", ["--param", "lr=double:0:inf"], "param lr"),
    tune("tune-param-int-fraction", ["--param", "units=int:1.5:8"], "param units"),
    tune("tune-param-scale-unknown", ["--param", "lr=double:1e-4:1:ln"], "param lr"),
    tune("tune-param-one-bound", ["--param", "units=int:32"], "param units"),
    tune("tune-param-values-empty", ["--param", "opt=categorical:"], "param opt"),
    tune("tune-param-values-blank", ["--param", "opt=categorical:adam,,sgd"], "param opt"),
    tune("tune-param-values-repeated", ["--param", "opt=categorical:adam,adam"], "param opt"),
    tune("tune-param-discrete-text", ["--param", "batch=discrete:32,big"], "param batch"),
    tune("tune-param-name-digit", ["--param", "1lr=double:0:1"], "param"),
    tune("tune-param-name-newline", ["--param", "l\nr=double:0:1"], "param"),
    tune_sdk("tune-param-name-newline-sdk", {"params": {"l\nr": "double:0:1"}}, "param"),
    tune("tune-param-name-markup", ["--param", "[bold]x=double:0:1"], "param"),
    tune("tune-param-twice", ["--param", "units=int:8:16", "--param", "units=int:1:2"], "params"),
    tune("tune-param-none", [], "params"),
    tune("tune-metric-missing", ["--param", "units=int:8:16"], "metric", metric=False),
    tune("tune-metric-space", ["--param", "units=int:8:16", "--metric", "val acc"], "metric"),
    tune("tune-goal-unknown", ["--param", "units=int:8:16", "--goal", "biggest"], "goal"),
    tune("tune-trials-zero", ["--param", "units=int:8:16", "--trials", "0"], "trials"),
    tune("tune-parallel-over-trials", ["--param", "units=int:8:16", "--trials", "2", "--parallel", "3"],
         "parallel"),
    tune("tune-algorithm-unknown", ["--param", "units=int:8:16", "--algorithm", "bayes"], "algorithm"),
    tune("tune-grid-double", ["--param", "lr=double:0.1:1", "--algorithm", "grid"], "param lr"),
    tune("tune-job-option", ["--param", "units=int:8:16", "--worker-count", "-1"], "worker_count"),
    tune("tune-vertex-region", ["--param", "units=int:8:16", "--vertex", "--region", "moon"], "region"),
    tune_sdk("tune-sdk-params-string", {"params": "lr=double:1e-4:1e-1"}, "params"),
    tune_sdk("tune-sdk-param-high-low", {"params": ["lr=double:1:0"]}, "param lr"),
    tune_sdk("tune-sdk-param-dict-scale", {"params": {"lr": "double:1e-4:1:cubic"}}, "param lr"),
    tune_sdk("tune-sdk-param-not-text", {"params": [3]}, "param"),
    tune_sdk("tune-sdk-metric-none", {"metric": None}, "metric"),
    tune_sdk("tune-sdk-trials-bool", {"max_trials": True}, "trials"),
    tune_sdk("tune-sdk-parallel-zero", {"parallel_trials": 0}, "parallel"),
    tune_sdk("tune-sdk-goal", {"goal": "up"}, "goal"),
    tune_sdk("tune-sdk-env", {"env": {"TF_CONFIG": "{}"}}, "env"),
    tune_sdk("tune-sdk-early-stopping-text", {"early_stopping": "median"}, "early_stopping"),
    call("report-not-a-number", lambda: tfcloud.report(acc="high"), "report(acc=...)"),
    call("report-nan", lambda: tfcloud.report(acc=float("nan")), "report(acc=...)"),
    call("report-nothing", lambda: tfcloud.report(), "report()"),
    # --- Google Cloud names ---------------------------------------------------------------------------------
    submit("sa-gmail", ["--service-account", "me@gmail.com", V], "service_account"),
    submit("sa-bare", ["--service-account", "trainer", V], "service_account"),
    submit("sa-local", ["--service-account", "t@p.iam.gserviceaccount.com"], "service_account"),
    submit("region-moon", ["--region", "moon"], "region"),
    submit("region-unserved", ["--region", "europe-west99", V], "region"),
    submit("region-upper", ["--region", "US-CENTRAL1", V], "region"),
    submit("region-markup", ["--region", "[bold]us[/]", V], "region"),
    submit("region-zone", ["--region", "us-central1-a", V], "region"),
    submit("project-space", ["--project", "My Project", V], "project"),
    submit("project-short", ["--project", "ab", V], "project"),
    submit("project-markup", ["--project", "[x]", V], "project"),
    submit("project-trailing-dash", ["--project", "my-project-", V], "project"),
    # --- images ---------------------------------------------------------------------------------------------
    submit("image-space", ["--image", "Bad Image", V], "docker_config.image"),
    submit("image-upper", ["--image", "registry.io/UPPER/img:tag", V], "docker_config.image"),
    submit("image-tag-space", ["--image", "img:tag with space", V], "docker_config.image"),
    submit("image-short-digest", ["--image", "repo/img@sha256:abc", V], "docker_config.image"),
    submit("image-digest", ["--image", "repo/img@sha256:" + "a" * 64, V], "docker_config.image"),
    submit("image-double-slash", ["--image", "repo//img", V], "docker_config.image"),
    submit("image-empty-tag", ["--image", "repo/img:", V], "docker_config.image"),
    submit("image-leading-dash", ["--image", "-img", V], "docker_config.image"),
    submit("image-markup", ["--image", "[bold]img[/bold]", V], "docker_config.image"),
    submit("image-long-tag", ["--image", "img:" + "t" * 129, V], "docker_config.image"),
    submit("parent-space", ["--parent-image", "python:3.11 slim", V], "docker_config.parent_image"),
    submit("parent-empty", ["--parent-image", "", V], "docker_config.parent_image"),
    submit("parent-upper", ["--parent-image", "Python:3", V], "docker_config.parent_image"),
    submit("cache-from-space", ["--cache-from", "not an image", V], "docker_config.cache_from"),
    submit("cache-from-two-tags", ["--cache-from", "x:y:z", V], "docker_config.cache_from"),
    # --- buckets --------------------------------------------------------------------------------------------
    submit("bucket-space", ["--image-build-bucket", "Bad Bucket", V], "docker_config.image_build_bucket"),
    submit("bucket-short", ["--image-build-bucket", "gs://ab", V], "docker_config.image_build_bucket"),
    submit("bucket-goog", ["--image-build-bucket", "goog-stuff", V], "docker_config.image_build_bucket"),
    submit("bucket-google", ["--image-build-bucket", "my-google-bucket", V], "docker_config.image_build_bucket"),
    submit("bucket-ip", ["--image-build-bucket", "192.168.1.1", V], "docker_config.image_build_bucket"),
    submit("bucket-dots", ["--image-build-bucket", "a..b", V], "docker_config.image_build_bucket"),
    submit("bucket-dash", ["--image-build-bucket", "-bucket", V], "docker_config.image_build_bucket"),
    submit("bucket-long", ["--image-build-bucket", "x" * 64, V], "docker_config.image_build_bucket"),
    submit("bucket-markup", ["--image-build-bucket", "[b]", V], "docker_config.image_build_bucket"),
    submit("bucket-upper", ["--image-build-bucket", "gs://MyBucket", V], "docker_config.image_build_bucket"),
    # --- Vertex AI scheduling and outputs -------------------------------------------------------------------
    submit("timeout-zero", ["--timeout", "0", V], "timeout"),
    submit("timeout-negative", ["--timeout", "-5", V], "timeout"),
    submit("timeout-15-days", ["--timeout", "1296000", V], "timeout"),
    submit("timeout-local", ["--timeout", "60"], "timeout"),
    submit("spot-local", ["--spot"], "spot"),
    submit("spot-explicit-local", ["--spot", "--local"], "spot"),
    submit("restart-local", ["--restart-on-worker-restart"], "restart_on_worker_restart"),
    submit("network-name", ["--network", "my-vpc", V], "network"),
    submit("network-local", ["--network", "projects/1/global/networks/vpc"], "network"),
    submit("output-dir-path", ["--output-dir", "/tmp/out", V], "base_output_dir"),
    submit("output-dir-upper", ["--output-dir", "gs://Bad/out", V], "base_output_dir"),
    submit("output-dir-goog", ["--output-dir", "gs://goog-x/out", V], "base_output_dir"),
    submit("output-dir-local", ["--output-dir", "gs://Bad/out"], "base_output_dir"),
    submit("display-name-empty", ["--display-name", "", V], "display_name"),
    submit("display-name-long", ["--display-name", "x" * 129, V], "display_name"),
    submit("display-name-newline", ["--display-name", "a\nb", V], "display_name"),
    submit("display-name-blank", ["--display-name", "   ", V], "display_name"),
    submit("display-name-nul", ["--display-name", "a\0b"], "display_name"),
    # --- options that do nothing where they are given --------------------------------------------------------
    submit("json-without-dry-run", ["--json"], "--json"),
    submit("json-without-dry-run-vertex", ["--json", V], "--json"),
    submit("local-and-vertex", ["--local", V], "target"),
    # --- build context --------------------------------------------------------------------------------------
    submit("context-missing", ["--context", "/nonexistent"], "context_dir"),
    submit("context-elsewhere", ["--context", "{d}/other"], "context_dir"),
    submit("context-no-user", ["--context", "~nosuchuser/x"], "context_dir"),
    submit("context-is-file", ["--context", "{d}/train.py", V], "context_dir"),
    # --- requirements ---------------------------------------------------------------------------------------
    submit("reqs-missing", ["--requirements", "{d}/missing.txt"], "requirements_txt"),
    submit("reqs-latin1", ["--requirements", "{d}/latin1.txt"], "requirements_txt"),
    submit("reqs-latin1-vertex", ["--requirements", "{d}/latin1.txt", V], "requirements_txt"),
    submit("reqs-bad-line", ["--requirements", "{d}/badline.txt"], "requirements_txt"),
    submit("reqs-bad-line-vertex", ["--requirements", "{d}/badline.txt", V], "requirements_txt"),
    submit("reqs-bad-option", ["--requirements", "{d}/badoption.txt", V], "requirements_txt"),
    submit("reqs-bad-include", ["--requirements", "{d}/badinclude.txt", V], "requirements_txt"),
    submit("reqs-include-bad-line", ["--requirements", "{d}/includesbad.txt", V], "requirements_txt"),
    submit("reqs-binary", ["--requirements", "{d}/binary.txt", V], "requirements_txt"),
    submit("reqs-bad-marker", ["--requirements", "{d}/badmarker.txt", V], "requirements_txt"),
    submit("reqs-bad-version", ["--requirements", "{d}/badversion.txt", V], "requirements_txt"),
    submit("reqs-markup", ["--requirements", "{d}/markup.txt", V], "requirements_txt"),
    submit("reqs-no-user", ["--requirements", "~nosuchuser/r.txt"], "requirements_txt"),
    submit("reqs-directory", ["--requirements", "{d}"], "requirements_txt"),
    submit("reqs-bad-hash-option", ["--requirements", "{d}/badhash.txt", V], "requirements_txt"),
    # --- entry points ---------------------------------------------------------------------------------------
    submit("script-syntax", [], "entry_point", entry="{d}/syntax.py"),
    submit("script-syntax-vertex", [V], "entry_point", entry="{d}/syntax.py"),
    submit("script-syntax-dry-run", ["--dry-run"], "entry_point", entry="{d}/syntax.py"),
    submit("script-binary", [V], "entry_point", entry="{d}/binary.py"),
    submit("script-empty", [V], "entry_point", entry="{d}/empty.py"),
    submit("script-only-comments", [], "entry_point", entry="{d}/comments.py"),
    submit("script-latin1", [V], "entry_point", entry="{d}/latin1.py"),
    submit("script-bad-coding", [V], "entry_point", entry="{d}/badcookie.py"),
    submit("script-indent", [V], "entry_point", entry="{d}/indent.py"),
    submit("script-missing", [], "entry_point", entry="{d}/missing.py"),
    submit("script-txt", [], "entry_point", entry="{d}/train.txt"),
    submit("script-directory", [V], "entry_point", entry="{d}/dir.py"),
    submit("script-no-user", [], "entry_point", entry="~nosuchuser/train.py"),
    submit("script-markup-name", [], "entry_point", entry="{d}/[bold]x[/bold].py"),
    submit("script-empty-path", [], "entry_point", entry=""),
    submit("notebook-no-code", [V], "entry_point", entry="{d}/nocode.ipynb"),
    submit("notebook-no-code-local", [], "entry_point", entry="{d}/nocode.ipynb"),
    submit("notebook-broken-json", [V], "entry_point", entry="{d}/broken.ipynb"),
    submit("notebook-json-list", [], "entry_point", entry="{d}/list.ipynb"),
    submit("notebook-nbformat-9", [V], "entry_point", entry="{d}/v9.ipynb"),
    submit("notebook-no-nbformat", [V], "entry_point", entry="{d}/nonbformat.ipynb"),
    submit("notebook-cells-dict", [V], "entry_point", entry="{d}/cells.ipynb"),
    submit("notebook-source-int", [V], "entry_point", entry="{d}/badsource.ipynb"),
    submit("notebook-blank-cells", [V], "entry_point", entry="{d}/blank.ipynb"),
    submit("notebook-all-skipped", [V], "entry_point", entry="{d}/skipped.ipynb"),
    submit("notebook-latin1", [V], "entry_point", entry="{d}/latin1.ipynb"),
    submit("notebook-tags-string", [V], "entry_point", entry="{d}/badtags.ipynb"),
    submit("notebook-cell-string", [V], "entry_point", entry="{d}/cellstring.ipynb"),
    submit("notebook-metadata-list", [V], "entry_point", entry="{d}/badmeta.ipynb"),
    submit("notebook-count-string", [V], "entry_point", entry="{d}/badcount.ipynb"),
    submit("notebook-empty-file", [V], "entry_point", entry="{d}/emptyfile.ipynb"),
    # --- tfcloud build --------------------------------------------------------------------------------------
    cli("build-syntax", ["build", "{d}/syntax.py"], "entry_point"),
    cli("build-image", ["build", "{d}/train.py", "--image", "Bad"], "docker_config.image"),
    cli("build-parent", ["build", "{d}/train.py", "--parent-image", "x y"], "docker_config.parent_image"),
    cli("build-region", ["build", "{d}/train.py", "--region", "moon"], "region"),
    cli("build-bucket", ["build", "{d}/train.py", "--image-build-bucket", "goog"], "docker_config.image_build_bucket"),
    cli("build-reqs", ["build", "{d}/train.py", "--requirements", "{d}/badline.txt"], "requirements_txt"),
    cli("build-workers", ["build", "{d}/train.py", "--worker-count", "-1"], "worker_count"),
    cli("build-notebook", ["build", "{d}/nocode.ipynb"], "entry_point"),
    cli("build-repository", ["build", "{d}/train.py"], "TFCLOUD_IMAGE_REPOSITORY", TFCLOUD_IMAGE_REPOSITORY="Bad Repo"),
    # --- job commands ---------------------------------------------------------------------------------------
    cli("list-limit-negative", ["list", "--limit", "-1"], "--limit"),
    cli("list-limit-zero", ["list", "--local", "--limit", "0"], "--limit"),
    cli("list-state", ["list", "--state", "sleeping"], "--state"),
    cli("list-both-targets", ["list", "--local", "--vertex"], "target"),
    cli("list-label", ["list", "--vertex", "--label", "x"], "--label"),
    cli("list-state-dir", ["list", "--local"], "TFCLOUD_HOME", TFCLOUD_HOME="~nosuchuser/state"),
    cli("status-path", ["status", "bad/../job"], "JOB"),
    cli("status-local-empty", ["status", "local-"], "JOB"),
    cli("logs-space", ["logs", "has space"], "JOB"),
    cli("cancel-bad-resource", ["cancel", "projects/p/locations/l/customJobs/abc"], "JOB"),
    cli("status-markup", ["status", "[bold]x[/bold]"], "JOB"),
    cli("logs-nul", ["logs", "local-x\0y"], "JOB"),
    cli("status-upper", ["status", "LOCAL-ABC"], "JOB"),
    cli("cancel-empty", ["cancel", ""], "JOB"),
    cli("logs-tail-negative", ["logs", "local-x", "--tail", "-1"], "--tail"),
    cli("logs-tail-word", ["logs", "local-x", "--tail", "ten"], "--tail"),
    cli("logs-tail-huge", ["logs", "local-x", "-f", "--tail", "99999999999"], "--tail"),
    cli("logs-since-word", ["logs", "local-x", "--since", "yesterday"], "--since"),
    cli("logs-since-unit", ["logs", "local-x", "--since", "10w"], "--since"),
    cli("logs-since-empty", ["logs", "local-x", "--since", ""], "--since"),
    cli("logs-since-bad-date", ["logs", "local-x", "--since", "2026-13-45T00:00:00Z"], "--since"),
    # --- settings from the environment (a target's own: named by the variable, as any target option's) ---------
    submit("env-region", [V], "TFCLOUD_REGION", TFCLOUD_REGION="moon"),
    submit("env-repository-space", [V], "TFCLOUD_IMAGE_REPOSITORY", TFCLOUD_IMAGE_REPOSITORY="Bad Repo"),
    submit("env-repository-tag", [V], "TFCLOUD_IMAGE_REPOSITORY", TFCLOUD_IMAGE_REPOSITORY="repo/x:tag"),
    submit("env-staging-bucket", [V], "TFCLOUD_STAGING_BUCKET", TFCLOUD_STAGING_BUCKET="goog-x"),
    submit("env-emulator-host", [V], "TFCLOUD_EMULATOR_HOST", TFCLOUD_EMULATOR_HOST="nohost"),
    submit("env-project", [V], "TFCLOUD_PROJECT", TFCLOUD_PROJECT="Bad Project"),
    submit("env-target", [], "TFCLOUD_TARGET", TFCLOUD_TARGET="aws"),
    submit("env-home-under-file", [], "TFCLOUD_HOME", TFCLOUD_HOME="{d}/train.py/state"),
    submit("env-home-is-file", [], "TFCLOUD_HOME", TFCLOUD_HOME="{d}/train.py"),
    submit("env-home-no-user", [], "TFCLOUD_HOME", TFCLOUD_HOME="~nosuchuser/state"),
    # --- tfcloud.run() --------------------------------------------------------------------------------------
    run("run-entry-int", {"entry_point": 3}, "entry_point"),
    run("run-entry-bytes", {"entry_point": b"train.py"}, "entry_point"),
    run("run-entry-syntax", {"entry_point": "{d}/syntax.py"}, "entry_point"),
    run("run-entry-syntax-vertex", {"entry_point": "{d}/syntax.py", "target": "vertex"}, "entry_point"),
    run("run-entry-notebook", {"entry_point": "{d}/nocode.ipynb", "target": "vertex"}, "entry_point"),
    run("run-entry-nul", {"entry_point": "{d}/tr\0ain.py"}, "entry_point"),
    run("run-reqs-int", {"requirements_txt": 5}, "requirements_txt"),
    run("run-reqs-latin1", {"requirements_txt": "{d}/latin1.txt", "target": "vertex"}, "requirements_txt"),
    run("run-reqs-bad-line", {"requirements_txt": "{d}/badline.txt"}, "requirements_txt"),
    run("run-workers-float", {"worker_count": 1.5}, "worker_count"),
    run("run-workers-none", {"worker_count": None}, "worker_count"),
    run("run-workers-bool", {"worker_count": True}, "worker_count"),
    run("run-workers-huge", {"worker_count": 10**9, "target": "vertex"}, "worker_count"),
    run("run-ps-str", {"ps_count": "1"}, "ps_count"),
    run("run-evaluators", {"evaluator_count": 2}, "evaluator_count"),
    run("run-labels-int-value", {"job_labels": {"a": 1}}, "job_labels['a']"),
    run("run-labels-str", {"job_labels": "team=ml"}, "job_labels"),
    run("run-labels-int-key", {"job_labels": {1: "a"}}, "job_labels"),
    run("run-args-nul", {"entry_point_args": ["a\0b"]}, "entry_point_args[0]"),
    run("run-args-huge", {"entry_point_args": ["x" * 200_000], "target": "vertex"}, "entry_point_args[0]"),
    run("run-args-mixed", {"entry_point_args": ("a", 1)}, "entry_point_args"),
    run("run-args-str", {"entry_point_args": "--epochs 3"}, "entry_point_args"),
    run("run-env-int", {"env": {"A": 1}}, "env"),
    run("run-env-nul", {"env": {"A": "b\0"}}, "env['A']"),
    run("run-env-nul-vertex", {"env": {"A": "b\0"}, "target": "vertex"}, "env['A']"),
    run("run-env-list", {"env": ["A=b"]}, "env"),
    run("run-env-tf-config", {"env": {"TF_CONFIG": "{}"}}, "env"),
    run("run-docker-dict", {"docker_config": {"image": "x"}}, "docker_config"),
    run("run-docker-image", {"docker_config": DockerConfig(image="Bad"), "target": "vertex"}, "docker_config.image"),
    run("run-docker-parent", {"docker_config": DockerConfig(parent_image="a b"), "target": "vertex"},
        "docker_config.parent_image"),
    run("run-docker-bucket", {"docker_config": DockerConfig(image_build_bucket="gs://a"), "target": "vertex"},
        "docker_config.image_build_bucket"),
    run("run-docker-image-int", {"docker_config": DockerConfig(image=5), "target": "vertex"},  # type: ignore[arg-type]
        "docker_config.image"),
    run("run-target", {"target": "aws"}, "target"),
    run("run-region", {"region": "moon", "target": "vertex"}, "region"),
    run("run-region-int", {"region": 5, "target": "vertex"}, "region"),
    run("run-project", {"project": "My Project", "target": "vertex"}, "project"),
    run("run-project-int", {"project": 123, "target": "vertex"}, "project"),
    run("run-repository", {"image_repository": "Bad Repo", "target": "vertex"}, "image_repository"),
    run("run-staging-bucket", {"staging_bucket": "goog", "target": "vertex"}, "staging_bucket"),
    run("run-emulator-host", {"emulator_host": "x", "target": "vertex"}, "emulator_host"),
    run("run-service-account", {"service_account": "x", "target": "vertex"}, "service_account"),
    run("run-display-name-int", {"display_name": 5, "target": "vertex"}, "display_name"),
    run("run-dry-run-str", {"dry_run": "yes"}, "dry_run"),
    run("run-stream-logs-str", {"stream_logs": "yes"}, "stream_logs"),
    run("run-timeout-float", {"timeout": 1.5, "target": "vertex"}, "timeout"),
    run("run-timeout-bool", {"timeout": True, "target": "vertex"}, "timeout"),
    run("run-spot-local", {"spot": True}, "spot"),
    run("run-output-dir-local", {"base_output_dir": 5}, "base_output_dir"),
    run("run-network-local", {"network": "projects/1/global/networks/vpc"}, "network"),
    run("run-context-int", {"context_dir": 5}, "context_dir"),
    run("run-context-no-user", {"context_dir": "~nosuchuser"}, "context_dir"),
    run("run-unknown-keyword", {"workers": 2}, "run() keyword argument"),
    run("run-strategy-int", {"distribution_strategy": 5}, "distribution_strategy"),
    run("run-worker-config-none", {"worker_config": None, "worker_count": 1}, "worker_config"),
    run("run-ps-tpu", {"ps_config": TPU, "ps_count": 1, "worker_count": 1, "target": "vertex"}, "ps_config"),
    run("run-restart-str", {"restart_on_worker_restart": "yes"}, "restart_on_worker_restart"),
    run("run-evaluator-config", {"evaluator_config": 5, "evaluator_count": 1}, "evaluator_config"),
    run("run-chief-config-dict", {"chief_config": {"cpu_cores": 8}}, "chief_config"),
    # --- constructors -----------------------------------------------------------------------------------------
    call("machine-memory-str", lambda: MachineConfig(memory="16"), "memory"),  # type: ignore[arg-type]
    call("machine-cpus-str", lambda: MachineConfig(cpu_cores="8"), "cpu_cores"),  # type: ignore[arg-type]
    call("machine-cpus-zero", lambda: MachineConfig(cpu_cores=0), "cpu_cores"),
    call("machine-memory-negative", lambda: MachineConfig(cpu_cores=8, memory=-1), "memory"),
    call("machine-memory-nan", lambda: MachineConfig(memory=float("nan")), "memory"),
    call("machine-memory-bool", lambda: MachineConfig(memory=True), "memory"),
    call("machine-accelerator-str", lambda: MachineConfig(accelerator_type="T4"), "accelerator_type"),  # type: ignore[arg-type]
    call("machine-accelerator-count", lambda: MachineConfig(
        accelerator_type=AcceleratorType.NVIDIA_TESLA_T4, accelerator_count=3), "accelerator_count"),
    call("machine-type-int", lambda: MachineConfig(machine_type=5), "machine_type"),  # type: ignore[arg-type]
    call("machine-no-such-shape", lambda: MachineConfig(cpu_cores=7, memory=30), "MachineConfig"),
    call("tpu-topology-mismatch", lambda: MachineConfig(  # 2x4 is the 8-chip host, not 4-chip hosts
        None, None, AcceleratorType.TPU_V5_LITEPOD, 4, tpu_topology="2x4"), "tpu_topology"),
    call("tpu-topology-on-gpu", lambda: MachineConfig(
        accelerator_type=AcceleratorType.NVIDIA_TESLA_T4, tpu_topology="2x2"), "tpu_topology"),
    call("tpu-v6e-count", lambda: MachineConfig(None, None, AcceleratorType.TPU_V6E, 2), "accelerator_count"),
    call("tpu-v5e-topology-3d", lambda: MachineConfig(None, None, AcceleratorType.TPU_V5_LITEPOD, 4,
                                                      tpu_topology="2x2x1"), "tpu_topology"),
]


# --- the files the rows name ({d}) --------------------------------------------------------------------------
def _notebook(cells: object, **top: object) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top})


def _code(source: object, **extra: object) -> dict[str, object]:
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": [], "execution_count": None,
            **extra}


FILES: dict[str, str | bytes] = {
    "train.py": "print('training')\n",
    "syntax.py": "def f(:\n    pass\n",
    "binary.py": b"\x7fELF\x02\x01\x01\x00\x00\x00",
    "empty.py": "",
    "comments.py": "# nothing to run\n\n",
    "latin1.py": "print('caf\xe9')\n".encode("latin-1"),
    "badcookie.py": "# -*- coding: nosuch -*-\nprint(1)\n",
    "indent.py": "if True:\nprint(1)\n",
    "train.txt": "print('not python')\n",
    "other/keep.txt": "x\n",
    "latin1.txt": "caf\xe9==1.0\n".encode("latin-1"),
    "badline.txt": "numpy>=1.26\nnumpy=1.0\n",
    "badoption.txt": "--no-such-option\nnumpy\n",
    "badinclude.txt": "-r nope.txt\n",
    "remote.txt": "numpy\n-r http://127.0.0.1:9/more-requirements.txt\n",  # port 9: nothing listens
    "includesremote.txt": "-r remote.txt\n",
    "remoteupper.txt": "numpy\n-r HTTP://127.0.0.1:9/more-requirements.txt\n",
    **{f"plugins/{module}.py": "from tfcloud.targets.local import LocalTarget\n\n\nclass T(LocalTarget):\n"
                               "    name = 'twin'\n" for module in ("tfb_twin_a", "tfb_twin_b")},
    **{f"plugins/tfcloud_{twin}-1.0.dist-info/{name}": text
       for twin in ("twin_a", "twin_b")
       for name, text in (("METADATA", f"Metadata-Version: 2.1\nName: tfcloud-{twin.replace('_', '-')}\n"
                                       "Version: 1.0\n"),
                          ("entry_points.txt", f"[tfcloud.targets]\ntwin = tfb_{twin}:T\n"))},
    "includesbad.txt": "-r badline.txt\n",
    "binary.txt": b"numpy\x00\n",
    "badmarker.txt": "numpy; python_version >>> '3'\n",
    "badversion.txt": "numpy>=1.0,<<2\n",
    "markup.txt": "[bold]x[/bold]\n",
    "badhash.txt": "numpy==1.26 --no-such=1\n",
    "nocode.ipynb": _notebook([{"cell_type": "markdown", "source": "# only words", "metadata": {}}]),
    "broken.ipynb": "{not json",
    "list.ipynb": "[1, 2]",
    "v9.ipynb": _notebook([_code("print(1)")], nbformat=9),
    "nonbformat.ipynb": json.dumps({"cells": [_code("print(1)")], "metadata": {}}),
    "cells.ipynb": _notebook({"a": 1}),
    "badsource.ipynb": _notebook([_code(5)]),
    "blank.ipynb": _notebook([_code("  \n"), _code([])]),
    "skipped.ipynb": _notebook([_code("print(1)", metadata={"tags": ["tfcloud-skip"]})]),
    "latin1.ipynb": _notebook([_code("print('caf\xe9')")]).encode("utf-8").replace(b"\\u00e9", b"\xe9"),
    "badtags.ipynb": _notebook([_code("print(1)", metadata={"tags": "tfcloud-skip"})]),
    "cellstring.ipynb": _notebook(["print(1)"]),
    "badmeta.ipynb": _notebook([_code("print(1)")], metadata=[]),
    "badcount.ipynb": _notebook([_code("print(1)", execution_count="3")]),
    "emptyfile.ipynb": "",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bad-inputs")
    for name, content in FILES.items():
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    (d / "dir.py").mkdir()
    (d / "plots.html").mkdir()
    loop = d.parent / "bad-inputs-loop"  # a data set whose link leads back above it (beside the project)
    (loop / "sub").mkdir(parents=True, exist_ok=True)
    (loop / "sub" / "part.txt").write_text("1\n")
    if not (loop / "sub" / "back").is_symlink():
        (loop / "sub" / "back").symlink_to("..")
    (d / os.fsdecode(b"tr\xe9in.py")).write_text("print('training')\n")  # a name that is not UTF-8
    (d / os.fsdecode(b"n\xf6tebook.ipynb")).write_text(FILES["skipped.ipynb"].replace("tfcloud-skip", "x"))
    return d


def _fill(value: Any, d: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{d}", str(d))
    if isinstance(value, list):
        return [_fill(v, d) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, d) for k, v in value.items()}
    return value


# --- where a slipped-through input would show ---------------------------------------------------------------
@dataclass
class Sinks:
    """Counts of everything a submission creates: emulator jobs and builds, registry writes, local jobs."""

    emulator: Any
    engine: Any | None  # tfcloud.testing.dockerd.Engine, with its registry

    def count(self, homes: list[Path]) -> dict[str, int]:
        jobs = self.emulator.job_client()
        builds = self.emulator.build_client()
        try:
            counts = {
                "emulator jobs": len(list(jobs.list_custom_jobs(parent=self.emulator.parent))),
                "emulator builds": len(list(builds.list_builds(project_id=self.emulator.project))),
            }
        finally:
            jobs.transport.close()
            builds.transport.close()
        if self.engine is not None:
            counts["registry writes"] = sum(1 for r in self.engine.registry.requests()
                                            if r.split(" ", 1)[0] in ("PUT", "POST", "PATCH", "DELETE"))
        counts["local jobs"] = sum(1 for home in homes if (home / "jobs").is_dir()
                                   for _ in (home / "jobs").iterdir())
        counts["local studies"] = sum(1 for home in homes if (home / "studies").is_dir()
                                      for _ in (home / "studies").iterdir())
        return counts


@pytest.fixture(scope="module")
def sinks(request: pytest.FixtureRequest) -> Sinks:
    pytest.importorskip("grpc", reason="the catalog counts jobs on the emulator: needs tfcloud[emulator]")
    emulator = request.getfixturevalue("tfcloud_emulator")
    engine = None
    from tfcloud.testing.dockerd import dockerd_available

    if dockerd_available() is None and _docker_importable():
        engine = request.getfixturevalue("engine")
    return Sinks(emulator=emulator, engine=engine)


def _docker_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("docker") is not None


@pytest.fixture
def row_env(sinks: Sinks, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The emulator's environment (and the engine's, with its registry as the image repository)."""
    env = dict(sinks.emulator.settings.env)
    if sinks.engine is not None:
        env["DOCKER_HOST"] = sinks.engine.docker_host
        env["TFCLOUD_IMAGE_REPOSITORY"] = f"{sinks.engine.registry.address}/tfcloud"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    yield env


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_exits_2_naming_the_field_and_changes_nothing(
        case: Case, files: Path, sinks: Sinks, row_env: dict[str, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    temp = tmp_path / "tmp"  # this row's own temporary directory: whatever it leaves there is seen
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    homes = [Path(os.environ["TFCLOUD_HOME"])]
    for key, value in case.env.items():
        monkeypatch.setenv(key, _fill(value, files))
    if case.site:  # packages installed there, read afresh (the registry reads the entry points once)
        import tfcloud.targets as registry

        monkeypatch.syspath_prepend(_fill(case.site, files))
        monkeypatch.setattr(registry, "_PLUGINS", None)
        monkeypatch.setattr(registry, "_SHADOWED", {})
    before = sinks.count(homes)
    cwd_before = sorted(p.name for p in Path.cwd().iterdir())

    if case.how == "cli":
        code = main(_fill(case.args, files))
        captured = capsys.readouterr()
        message = captured.err
        assert code == 2, message
        assert "Traceback" not in captured.err + captured.out
    else:
        with pytest.raises(TfcloudError) as err:
            if case.how == "run":
                tfcloud.run(**{"entry_point": str(files / "train.py"), **_fill(case.args, files)})
            elif case.how == "tune":
                tfcloud.tune(str(files / "train.py"), **_fill(case.args, files))
            else:
                case.args()
        assert err.value.exit_code == 2
        message = str(err.value)
    assert f"`{case.field}`" in message, message
    assert "expected" in message and "received" in message, message

    assert sinks.count(homes) == before
    assert sorted(p.name for p in Path.cwd().iterdir()) == cwd_before
    assert list(temp.iterdir()) == []


def test_the_catalog_is_large_and_its_ids_unique() -> None:
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES)


# --- beyond the table: credentials, and user text printed as it is ------------------------------------------
@pytest.fixture
def no_google_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Application Default Credentials anywhere google.auth looks (and no metadata server)."""
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")


def test_vertex_without_credentials_stops_before_any_build(files: Path, no_google_credentials: None,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("google.auth", reason="needs tfcloud[vertex]")
    code = main(["submit", str(files / "train.py"), "--vertex"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines()[:2] == [
        "Error: No Google Cloud credentials found (Application Default Credentials); nothing was built or submitted.",
        "Run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a service account "
        "key file. To try tfcloud without Google Cloud, start `tfcloud emulator start` and export what it prints.",
    ]
    assert "Building" not in err and "Build context" not in err
    with pytest.raises(TfcloudError, match="No Google Cloud credentials"):
        tfcloud.run(entry_point=str(files / "train.py"), target="vertex")
    # A plan needs no credentials; neither does a local Docker build.
    assert main(["submit", str(files / "train.py"), "--vertex", "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["strategy"] == "tf.distribute.OneDeviceStrategy"


def test_vertex_without_a_project_says_how_to_set_one(files: Path, no_google_credentials: None,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
    assert main(["submit", str(files / "train.py"), "--vertex"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "Error: Invalid `project`: expected a Google Cloud project id for Vertex AI, received None.",
        "Pass --project (project= in run()), or set TFCLOUD_PROJECT or GOOGLE_CLOUD_PROJECT.",
    ]


def test_user_text_is_printed_as_it_is_not_as_markup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "[bold]train[red].py"
    script.write_text("print(1)\n")
    assert main(["submit", str(script), "--dry-run", "--", "[red]x[/red]", "[/]"]) == 0
    err = capsys.readouterr().err
    assert f"Plan for {script} (target: local; nothing submitted)" in err
    assert 'Script args: ["[red]x[/red]", "[/]"]' in err
    assert "Each replica runs: python tfcloud_launcher.py '[red]x[/red]' '[/]'" in err  # shell-quoted
    assert main(["submit", str(tmp_path / "[/]missing.py")]) == 2
    assert f"received '{tmp_path}/[/]missing.py'" in capsys.readouterr().err


def test_a_bad_state_dir_names_the_setting_and_where_it_came_from(files: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TFCLOUD_HOME", str(files / "train.py" / "state"))
    assert main(["submit", str(files / "train.py")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "Error: Invalid `TFCLOUD_HOME`: expected a directory you can write to (tfcloud keeps local jobs there), "
        f"received '{files / 'train.py' / 'state'}'.",
        f"{files / 'train.py'} is not a directory. Set TFCLOUD_HOME (or state_dir in [tool.tfcloud]) to a "
        "directory you can write to."]
    monkeypatch.delenv("TFCLOUD_HOME")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(f'[tool.tfcloud]\nstate_dir = "{files / "train.py"}"\n')
    monkeypatch.chdir(project)
    assert main(["submit", str(files / "train.py")]) == 2
    err = capsys.readouterr().err
    assert "Invalid `state_dir`" in err and f"(it is set in [tool.tfcloud] in {project / 'pyproject.toml'})" in err
