"""What the dashboard's pages show, gathered through the SDK (:mod:`tfcloud.sdk`) only: plain values for the
templates, no web framework here. Every call blocks; the app runs them in its thread pool.

- :class:`Sources`: which targets the dashboard lists (local, vertex, ray) and the Ray cluster's address; each
  target's jobs are cached for a moment so that several open pages refreshing cost one listing.
- :func:`job_page`: a job's state, replicas, failure, stage timeline (as bars), plan, artifacts.
- :func:`study_page`: a study's trials (best starred, stopped marked) and the command that reruns the best.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tfcloud.errors import ConfigurationError, JobNotFoundError, TfcloudError, ValidationError
from tfcloud.job.states import JobState
from tfcloud.targets import BUILTIN
from tfcloud.ui.sources import DEADLINE_S, PATIENCE_S, Answer, Fetcher

if TYPE_CHECKING:
    from pathlib import Path

    from tfcloud import JobInfo
    from tfcloud.job.study import StudyInfo
    from tfcloud.records.timeline import Timeline

__all__ = ["INTERNAL_LABELS", "PAGE", "TARGETS", "Sources", "artifact_file", "artifacts", "bucket_console",
           "check_options", "job_page", "job_rows", "killed_replicas", "listed_targets", "page_number", "parse_label",
           "replica_class",
           "rerun_parts", "shown_labels", "study_page", "study_plot", "study_rows", "study_view", "timeline_bars",
           "trial_metrics_file"]

#: Every built-in target the dashboard can list, in the order its filter shows them (the registry's order).
TARGETS = tuple(BUILTIN)
#: The label tfcloud puts on a job to find its submission again: internal, never shown.
INTERNAL_LABELS = ("tfcloud-submission",)


def listed_targets() -> tuple[str, ...]:
    """Every target the dashboard lists by default: the built-in ones, then those installed packages add (read
    from the registry when the dashboard starts)."""
    import tfcloud.targets as targets

    return tuple(targets.names())


def parse_label(text: str | None) -> dict[str, str]:
    """``KEY=VALUE`` (the label filter) as a mapping; empty text, none."""
    if not text or not text.strip():
        return {}
    key, sep, value = text.strip().partition("=")
    if not sep or not key:
        raise ValidationError("label", "KEY=VALUE", text)
    return {key.strip(): value.strip()}


#: Rows per page of the jobs list.
PAGE = 50


def page_number(text: str | None) -> int:
    """``?page=N`` (1 when missing or not a number of 1 or more)."""
    try:
        return max(1, int(text or 1))
    except ValueError:
        return 1


def job_rows(jobs: Sequence[JobInfo], studies: Sequence[StudyInfo]) -> list[dict[str, Any]]:
    """The jobs list's rows, newest first: a job, or one row per study in place of its trials' jobs (where the
    newest of them is), saying how many there are and in which states."""
    study_of = {t.job_id: info for info in studies for t in info.trials if t.job_id}
    rows: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for info in jobs:
        study = study_of.get(info.job_id)
        if study is None:
            rows.append({"kind": "job", "job": info})
            continue
        group = groups.get(study.study_id)
        if group is None:
            group = groups[study.study_id] = {"kind": "study", "study_id": study.study_id, "target": info.target,
                                              "state": study.state.value, "count": 0, "states": {},
                                              "created": info.created}
            rows.append(group)
        group["count"] += 1
        group["states"][info.state.value] = group["states"].get(info.state.value, 0) + 1
    for group in groups.values():
        group["summary"] = ", ".join(f"{n} {state}" for state, n in sorted(group["states"].items()))
    return rows


def shown_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """A job's labels as the pages show them: without tfcloud's internal ones (:data:`INTERNAL_LABELS`)."""
    return {k: v for k, v in labels.items() if not k.startswith(INTERNAL_LABELS)}


def _classify(exc: BaseException) -> tuple[str, bool]:
    """A listing's failure as the note the page shows, and whether the target is just not configured here."""
    if isinstance(exc, ConfigurationError):
        return exc.message, True
    if isinstance(exc, TfcloudError):
        return exc.message, False
    return f"{type(exc).__name__}: {exc}", False


def check_options(names: Sequence[str], options: Mapping[str, Any]) -> None:
    """Each target option given to the dashboard is one a listed target (``names``) takes (refused otherwise, as
    on every verb); ``target_options`` (``-o``) needs one target, whose options its keys must be."""
    import tfcloud.targets as targets
    from tfcloud.targets._given import FIELD, target_options

    classes = [targets.get(name) for name in names]
    for name, value in options.items():
        if name == "target_options":
            if len(classes) != 1:
                raise ValidationError(FIELD, "one --target with -o KEY=VALUE (-o sets that target's options)",
                                      "<-o with " + (", ".join(names)) + ">",
                                      hint="Add --target NAME (one), or leave out -o.")
            target_options(classes[0], value, options)
        elif name != "given_as" and value is not None and not any(cls.option(name) is not None for cls in classes):
            takers = [c.name for c in targets.builtin_targets() if c.option(name) is not None]
            raise ValidationError(name, "an option of a listed target (" + ", ".join(names) + ")", value,
                                  hint="Leave it out" + (f", or list {' or '.join(takers)} (--target "
                                                         f"{takers[0]})" if takers else "") + ".")


class Sources:
    """The targets the dashboard lists: ``targets`` (default: :func:`listed_targets`; one that is not
    configured, such as Ray without a cluster address, is shown as a note) and the target options given to the
    dashboard as to any verb (``options``: ``ray_address``, ``project``, ``emulator_host``..., each passed to the
    targets that take it; ``target_options``, ``-o``, to the one target listed; ``ray_address``: a shorthand). Each
    listing runs on its own thread (:class:`~tfcloud.ui.sources.Fetcher`): a page waits at most ``deadline``
    seconds for them together, and says which target is still answering or unreachable, and why."""

    def __init__(self, targets: Sequence[str] | None = None, *, options: Mapping[str, Any] | None = None,
                 ray_address: str | None = None, limit: int = 100, deadline: float = DEADLINE_S) -> None:
        self.targets = tuple(targets or listed_targets())
        given = {k: v for k, v in (options or {}).items() if k != "given_as" and v is not None}
        self.options = {**given, **({"ray_address": ray_address} if ray_address else {})}
        check_options(self.targets, self.options)
        self.limit = limit
        self.deadline = deadline
        self._fetcher = Fetcher()

    def _start_listing(self, target: str, state: str | None, labels: Mapping[str, str]) -> tuple[Any, ...]:
        from tfcloud import sdk

        key = ("jobs", target, state, tuple(sorted(labels.items())))
        self._fetcher.start(key, lambda: sdk.list_jobs(target=target, state=state, labels=labels, limit=self.limit,
                                                       **self._options_for(target)), _classify)
        return key

    @staticmethod
    def _note(answer: Answer, now: float) -> str | None:
        if answer.pending and answer.at == 0.0:
            return f"still answering (asked {now - answer.asked:.1f} s ago); its jobs are shown once it answers"
        if answer.pending and not answer.ok:
            return f"still answering (asked {now - answer.asked:.1f} s ago); last time: {answer.note}"
        if answer.pending:
            return None
        if answer.note and not answer.unconfigured and answer.value is not None:
            return f"unreachable: {answer.note} (showing its jobs from {now - answer.at:.0f} s ago)"
        if answer.note and not answer.unconfigured:
            return f"unreachable: {answer.note}"
        return answer.note

    def warm(self) -> None:
        """Start every target's listing now (in the background), so that the first page finds them answered."""
        for name in self.targets:
            self._start_listing(name, None, {})

    def jobs(self, *, target: str | None = None, state: str | None = None,
             labels: Mapping[str, str] | None = None) -> tuple[list[JobInfo], dict[str, str]]:
        """Every job of the chosen targets (all by default), newest first, and a note per target that could not
        be listed (why) or has not answered within the deadline."""
        if target and target not in self.targets:
            raise ValidationError("target", "one of " + ", ".join(self.targets), target)
        if state:
            try:
                JobState(state)
            except ValueError:
                raise ValidationError("state", "one of " + ", ".join(s.value for s in JobState), state) from None
        names = [target] if target else list(self.targets)
        keys = [self._start_listing(name, state or None, labels or {}) for name in names]
        now = time.monotonic()
        answers = self._fetcher.wait(keys, now + self.deadline, now + PATIENCE_S)
        jobs: list[JobInfo] = []
        notes: dict[str, str] = {}
        now = time.monotonic()
        for name, key in zip(names, keys, strict=True):
            answer = answers[key]
            jobs += answer.value or []
            note = self._note(answer, now)
            if note:
                notes[name] = note
        jobs.sort(key=lambda info: info.created or 0.0, reverse=True)
        return jobs, notes

    def studies(self) -> tuple[list[StudyInfo], dict[str, str]]:
        """The local studies and, where Vertex AI is listed and configured, its tuning jobs: newest first (each
        target's within the same deadline as the jobs)."""
        import tfcloud.targets as targets
        from tfcloud import sdk

        names = [c.name for c in targets.builtin_targets() if c.tuner and c.name in self.targets]
        keys = []
        for name in names:
            key = ("studies", name)
            self._fetcher.start(key, functools.partial(sdk.list_studies, target=name, limit=self.limit), _classify)
            keys.append(key)
        answers = self._fetcher.wait(keys, time.monotonic() + self.deadline)
        found: list[StudyInfo] = []
        notes: dict[str, str] = {}
        now = time.monotonic()
        for name, key in zip(names, keys, strict=True):
            answer = answers[key]
            if answer.unconfigured:
                continue
            found += answer.value or []
            note = self._note(answer, now)
            if note:
                notes[name] = note
        return found, notes

    def options_for(self, job_id: str) -> dict[str, Any]:
        """The target options for a job of its target (the one whose ids look like ``job_id``), as
        :func:`tfcloud.sdk.attached` takes them."""
        import tfcloud.targets as targets

        return self._options_for(targets.for_job_id(job_id).name)

    def _options_for(self, target: str) -> dict[str, Any]:
        """The options given that ``target`` takes (an option of its own); ``target_options`` (``-o``) when it is
        the one target listed."""
        import tfcloud.targets as targets

        cls = targets.get(target)
        found = {k: v for k, v in self.options.items() if k != "target_options" and cls.option(k) is not None}
        if self.options.get("target_options") and self.targets == (target,):
            found["target_options"] = self.options["target_options"]
        return found

    def unreadable(self, target: str | None = None) -> list[dict[str, Any]]:
        """The jobs the listed targets (or ``target``) keep but cannot attach to (:attr:`Target.unreadable`), as
        rows: shown as unreadable, with why, rather than dropped."""
        import tfcloud.targets as targets

        rows: list[dict[str, Any]] = []
        for name in [target] if target else self.targets:
            ref = targets.get(name).unreadable if name in self.targets else None
            if ref is not None:
                rows += targets.load(ref)()
        return rows


# --- one job ---------------------------------------------------------------------------------------------------
_REPLICA_CLASSES = {"bold cyan": "c-cyan b", "green": "c-green", "magenta": "c-magenta", "blue": "c-blue",
                    "yellow": "c-yellow", "bright_green": "c-green b", "bright_magenta": "c-magenta b",
                    "bright_blue": "c-blue b", "bright_yellow": "c-yellow b", "red": "c-red",
                    "bright_red": "c-red b", "bright_cyan": "c-cyan", "white": "c-white",
                    "bright_white": "c-white b"}


def replica_class(replica: str) -> str:
    """The CSS classes of a replica's prefix: the terminal's colour for it
    (:func:`tfcloud.view.logview.replica_color`)."""
    from tfcloud.view.logview import replica_color

    return _REPLICA_CLASSES.get(replica_color(replica), "c-white")


def timeline_bars(stages: Timeline, *, now: float | None = None) -> list[dict[str, Any]]:
    """The stage timeline as bars on one axis: each stage's name, left and width (percent of the whole),
    when it started (``+1.2s``) and how long it took (``3.4s``; ``+`` while it is still on)."""
    from tfcloud.records.timeline import format_duration

    now = time.time() if now is None else now
    if not stages.stages:
        return []
    t0 = stages.stages[0].start
    total = max(stages.total(now), 1e-9)
    bars = []
    for stage in stages.stages:
        end = stage.end if stage.end is not None else now
        left = min(100.0, max(0.0, (stage.start - t0) / total * 100))
        width = min(100.0 - left, max(0.5, (end - stage.start) / total * 100))
        bars.append({"name": stage.name, "left": round(left, 2), "width": round(width, 2),
                     "at": "+" + format_duration(stage.start - t0),
                     "took": format_duration(stage.duration(now)) + ("" if stage.end is not None else "+"),
                     "open": stage.end is None})
    return bars


def _pools_from_replicas(info: JobInfo) -> list[dict[str, Any]]:
    """The pools as the job's replicas show them (role and count), when no plan was kept for the job."""
    counts: dict[str, int] = {}
    for replica in info.replicas:
        role = replica.name.rpartition("-")[0] or replica.name
        counts[role] = counts.get(role, 0) + 1
    return [{"role": role, "replicas": n, "machine_type": "-", "accelerator": "-"} for role, n in counts.items()]


def trial_metrics_file(job_id: str, sources: Sources) -> Path | None:
    """The metrics file ``tfcloud.report()`` writes to in the job of a local study's trial (its
    ``CLOUD_ML_HP_METRIC_FILE``: ``<study dir>/trials/<n>/output.metrics``), or None for another job."""
    from tfcloud.records.statedir import default_state_dir, study_dir

    for info in sources.studies()[0]:
        for trial in info.trials:
            if trial.job_id == job_id:
                found = study_dir(default_state_dir(), info.study_id) / "trials" / trial.trial_id / "output.metrics"
                return found if found.parent.is_dir() else None  # a study of this machine's
    return None


def _replicas_from_plan(plan: Mapping[str, Any] | None, info: JobInfo) -> list[dict[str, Any]]:
    """A job's replicas as its plan had them (``chief-0``, ``worker-0``...: the names its log lines carry), for a
    target that reports no replicas of its own (Vertex AI reports one state per job)."""
    names = [f"{pool['role']}-{i}" for pool in (plan or {}).get("pools") or []
             for i in range(int(pool.get("replicas") or 0))]
    return [{"name": name, "state": info.state.value, "exit_code": None, "css": replica_class(name), "own": False,
             "web_access_uri": None} for name in names]


#: Exit codes of a replica killed by SIGKILL: -9 (a process tfcloud started) or 137 (128 + 9, from a shell or a
#: container); the kernel's out-of-memory killer sends SIGKILL.
_SIGKILL_CODES = (-9, 137)


def killed_replicas(info: JobInfo) -> list[str]:
    """The replicas that were killed by SIGKILL without tfcloud stopping them (what an out-of-memory kill looks
    like from outside: the page names it as a likely one, beside their memory chart)."""
    return [r.name for r in info.replicas
            if r.exit_code in _SIGKILL_CODES and r.state is JobState.FAILED]


def job_page(job_id: str, *, options: Mapping[str, Any] | None = None, details: bool = True) -> dict[str, Any]:
    """Everything a job's page shows. ``details``: also the plan (the status fragment refreshes without it)."""
    from tfcloud import sdk

    with sdk.attached(job_id, **(options or {})) as handle:
        info = handle.info()
        error = sdk.failure(handle) if info.state.is_final and info.state is not JobState.SUCCEEDED else None
        stages = sdk.timeline(handle, info=info)
    from tfcloud.ui.records import record_problem

    problem = record_problem(info)
    plan = sdk.submitted_plan(info.job_id)
    replicas = [{"name": r.name, "state": r.state.value, "exit_code": r.exit_code, "css": replica_class(r.name),
                 "own": True, "web_access_uri": r.web_access_uri} for r in info.replicas] \
        or _replicas_from_plan(plan, info)
    page: dict[str, Any] = {
        "info": info, "job_id": info.job_id, "state": "unreadable" if problem else info.state.value,
        "final": info.state.is_final, "unreadable": problem, "replicas": replicas,
        "replica_note": None if info.replicas or not replicas else
        "each replica as the job was planned; the target reports one state for the whole job",
        "failure": None if error is None else {"message": error.message, "tail": error.log_tail or "",
                                               "killed": killed_replicas(info)},
        "bars": timeline_bars(stages), "summary": stages.summary(),
        "width": max((len(str(r["name"])) for r in replicas), default=0),
    }
    if details:
        page["plan"] = plan
        page["pools"] = plan["pools"] if plan else _pools_from_replicas(info)
        page["tensorboard"] = f"tfcloud tensorboard {info.job_id}"
        page["rerun"] = rerun_parts(plan) if plan else None
    return page


def rerun_parts(plan: Mapping[str, Any]) -> dict[str, Any] | None:
    """The command that submits a job again, from the plan this machine kept (:func:`tfcloud.sdk.submitted_plan`,
    its ``rerun``: :func:`tfcloud.flow.submission.rerun`): ``head`` (``tfcloud submit ENTRY`` and every option that
    shaped the job) and ``args`` (the script's arguments, shell-quoted), which the page lets you edit, and
    ``not_reproduced``: what the command line cannot say. A plan kept by an older tfcloud has no ``rerun``: then
    None (the page shows no command rather than one that would run a different job)."""
    import shlex

    kept = plan.get("rerun")
    if not isinstance(kept, Mapping):
        return None
    return {"head": shlex.join(str(w) for w in kept.get("head") or []),
            "args": shlex.join(str(a) for a in kept.get("args") or []),
            "not_reproduced": [str(n) for n in kept.get("not_reproduced") or []]}


def artifacts(job_id: str, *, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The files the job wrote under its output directory (:mod:`tfcloud.flow.outputs`), or why there are none."""
    from tfcloud import sdk
    from tfcloud.flow.outputs import job_output_dir, list_artifacts

    with sdk.attached(job_id, **(options or {})) as handle:
        info = handle.info()
    try:
        base = job_output_dir(info)
        found = list_artifacts(base)
    except TfcloudError as exc:
        return {"base": None, "files": [], "note": exc.message, "browse": None, "local": False, "job_id": job_id}
    return {"base": base, "files": [{"path": a.path, "size": a.size} for a in found],
            "note": None if found else "Nothing written yet.", "job_id": info.job_id,
            "local": "://" not in base, "browse": bucket_console(base)}


def bucket_console(base: str) -> str | None:
    """The Google Cloud console's page of a ``gs://`` directory (None for a local path)."""
    from urllib.parse import quote

    if not base.startswith("gs://"):
        return None
    return "https://console.cloud.google.com/storage/browser/" + quote(base[len("gs://"):].rstrip("/"), safe="/")


def artifact_file(job_id: str, path: str, *, options: Mapping[str, Any] | None = None) -> Path:
    """One file the job wrote under its output directory on this machine, for download: ``path`` relative to
    that directory, never outside it (``..``, an absolute path or a link out of it is refused)."""
    from pathlib import Path

    from tfcloud import sdk
    from tfcloud.flow.outputs import job_output_dir

    with sdk.attached(job_id, **(options or {})) as handle:
        base = job_output_dir(handle.info())
    if "://" in base:
        raise ValidationError("path", "a file of a job whose outputs are on this machine", base,
                              hint=f"Its outputs are in Cloud Storage: tfcloud artifacts {job_id} --download DIR.")
    root = Path(base).resolve()
    target = (root / path).resolve()
    if not path or not target.is_relative_to(root) or not target.is_file():
        raise JobNotFoundError(f"No file `{path}` under {root}.", hint=f"tfcloud artifacts {job_id} lists them.")
    return target


# --- one study -------------------------------------------------------------------------------------------------
def study_page(study_id: str) -> dict[str, Any]:
    """Everything a study's page shows: its trials (the best starred, those early stopping ended marked), the
    best's rerun command."""
    from tfcloud import sdk

    with sdk.attach_study(study_id) as study:
        info = study.info()
        best = info.best_trial
        rerun = study.rerun_command(best) if best is not None else None
    return study_view(info, rerun=rerun)


def study_view(info: StudyInfo, *, rerun: str | None) -> dict[str, Any]:
    """:func:`study_page` of a study's info and the best trial's rerun command."""
    from tfcloud.view.tuneview import state_text

    best = info.best_trial
    params = [p.name for p in info.study.params]
    trials = []
    for trial in info.trials:
        trials.append({
            "id": trial.trial_id, "best": best is not None and trial.trial_id == best.trial_id,
            "params": [_param_text(info, name, trial.params.get(name)) for name in params],
            "metric": "-" if trial.metric is None else f"{trial.metric:.4f}", "state": trial.state.value,
            "state_text": state_text(trial), "stopped": trial.stopped_at is not None,
            "duration": _duration(trial.duration), "job_id": trial.job_id, "message": trial.message or "",
            "raw": ["" if trial.params.get(name) is None else trial.params[name] for name in params],
            "metric_raw": "" if trial.metric is None else trial.metric,
            "seconds": "" if trial.duration is None else round(trial.duration, 3),
        })
    done = sum(1 for t in info.trials if t.state.is_final)
    return {"info": info, "study_id": info.study_id, "state": info.state.value, "final": info.state.is_final,
            "params": params, "metric": info.study.metric, "goal": info.study.goal.value, "trials": trials,
            "done": done, "max_trials": info.study.max_trials, "rerun": rerun,
            "best": None if best is None else {"id": best.trial_id, "metric": f"{best.metric:.4f}"
                                                if best.metric is not None else "-"}}


def study_plot(study_id: str) -> bytes:
    """The study's plot as PNG bytes (:func:`tfcloud.view.tuneview.plot_png`; needs tfcloud[tune])."""
    from tfcloud import sdk
    from tfcloud.view.tuneview import plot_png

    with sdk.attach_study(study_id) as study:
        return plot_png(study.info(), dpi=90)


def _param_text(info: StudyInfo, name: str, value: object) -> str:
    from tfcloud.job.study import ParamKind, format_value

    if value is None:
        return "-"
    spec = info.study.param(name)
    if spec.kind is ParamKind.DOUBLE and isinstance(value, float):
        return f"{value:.4g}"
    return format_value(spec, value)


def _duration(seconds: float | None) -> str:
    from tfcloud.records.timeline import format_duration

    return "-" if seconds is None else format_duration(max(0.0, seconds))


def study_rows(studies: Sequence[StudyInfo]) -> list[dict[str, Any]]:
    """The studies list's rows: id, target, state, trials done, metric and goal, the best value so far."""
    rows = []
    for info in studies:
        best = info.best_trial
        rows.append({"id": info.study_id, "target": info.target, "state": info.state.value,
                     "trials": f"{sum(1 for t in info.trials if t.state.is_final)}/{info.study.max_trials}",
                     "metric": f"{info.study.goal.value} {info.study.metric}",
                     "best": "-" if best is None or best.metric is None else f"{best.metric:.4f}"})
    return rows
