"""Following a job in the terminal: its logs until it ends (:func:`follow`, :func:`watch`), what Ctrl-C does
(:func:`interrupted`), the "Queued for 1m20s" line while it waits, and how long each stage took
(:func:`timeline`). The SDK (:mod:`tfcloud.sdk`) re-exports these; ``run(stream_logs=True)`` and the CLI call
them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tfcloud.backends.base import BatchedLogs, JobInfo, LinesFile, LogLine
from tfcloud.errors import ValidationError
from tfcloud.view.outcome import failed_beside, failure

if TYPE_CHECKING:
    from tfcloud.backends.base import JobHandle
    from tfcloud.flow.settings import Settings
    from tfcloud.job.artifacts import ImageRef
    from tfcloud.job.spec import JobSpec
    from tfcloud.job.states import JobState
    from tfcloud.job.study import StudyInfo
    from tfcloud.records.timeline import Timeline
    from tfcloud.targets._base import Target

__all__ = ["TrialLogs", "cancels_on_interrupt", "check_replica", "debugging", "follow", "interrupted", "keep_stages",
           "keep_submission", "latest_job", "lines_file", "prefix_names", "state_dir", "submitted_plan", "target_of",
           "timeline", "trial_job", "watch"]


def follow(handle: JobHandle, *, replica: str | None = None, tail: int | None = None, since: float | None = None,
           timestamps: bool = False, json_lines: bool = False, stages: bool = False,
           all_replicas: bool = False) -> int:
    """Stream the job's logs to the terminal (stdout, one prefix per replica) until it ends and its last lines
    are in; on failure say why on stderr. While a cloud job waits for resources, a status line on a terminal
    says so ("Queued for 1m20s (waiting for resources)"); with ``stages``, one line at the end says how long
    each stage took.
    Returns 0 when the job succeeded, 1 otherwise. Ctrl-C propagates as KeyboardInterrupt to the caller, who
    decides whether to cancel or detach (:func:`interrupted`). ``tail``, ``since``: start from those lines
    (:meth:`JobHandle.logs`); ``timestamps``, ``json_lines``: how lines print (:class:`LogPrinter`);
    ``stages``: end with the line of stage durations (after a submission); ``all_replicas``: every replica's
    every line (by default identical lines of several replicas show once; ``-v`` shows them all too)."""
    from tfcloud.job.states import JobState
    from tfcloud.view.console import get_console, get_error_console, verbosity
    from tfcloud.view.logview import LogPrinter, format_tail

    first = handle.info()
    names = prefix_names(handle, first, replica)
    printer = LogPrinter(replicas=names, show_noise=verbosity() > 0, timestamps=timestamps, json_lines=json_lines,
                         all_replicas=all_replicas or verbosity() > 0, show_frames=debugging())
    waiting = _Waiting(get_console(), enabled=target_of(first).queues)  # local replicas start at once
    waiting.update(first.state, since=first.created)
    try:
        if isinstance(handle, BatchedLogs):  # a local job: as its lines are read, a batch at a time
            for batch in handle.log_batches(follow=True, replica=replica, tail=tail, since=since):
                if waiting.active:
                    for text in batch.texts:
                        waiting.said(batch.replica, text, handle.job_id)
                printer.print_batch(batch)
        else:
            for line in handle.logs(follow=True, replica=replica, tail=tail, since=since):
                if waiting.active:
                    waiting.said(line.replica, line.text, handle.job_id)
                printer.print(line)
    finally:
        printer.close()
        waiting.stop()
    info = handle.wait()
    console = get_error_console()
    if stages:
        _print_stages(handle, info)
    if info.state is JobState.SUCCEEDED:
        names, beside = failed_beside(info)
        if not names:
            get_console().print(f"Job {handle.job_id} succeeded.", style="green", markup=False)
        else:  # the chief's outcome is the job's; the last line still names what else failed
            get_console().print(f"Job {handle.job_id} succeeded: the chief ended well, but {beside}. Its lines: "
                                f"tfcloud logs {handle.job_id} --replica {names[0]}", style="yellow", markup=False)
        return 0
    error = failure(handle, show_frames=debugging())
    if error is None:
        console.print(f"Job {handle.job_id} {info.state.value}.", style="red", markup=False)
    else:
        console.print(error.summary, style="bold red", markup=False)
        # Repeat the failed replica's last lines only when they are not what was just streamed above (another
        # replica was followed, some were start-up noise left off, or they could not be read).
        failed = info.failed_replica
        shown = printer.shown_tail(failed) if failed else []
        if error.log_tail and not (failed and shown and error.log_tail == format_tail(failed, shown)):
            console.print(error.log_tail, markup=False, highlight=False)
    return 1


def lines_file(handle: object) -> Path | None:
    """The file a job's lines are in on this machine, when its handle declares one
    (:class:`~tfcloud.backends.base.LinesFile`: a local job's ``lines.jsonl``); None for another's."""
    return handle.lines_file if isinstance(handle, LinesFile) else None


def debugging() -> bool:
    """Whether ``TFCLOUD_DEBUG=1`` asks for tfcloud's own frames too (tracebacks, the launcher's frames in a
    replica's traceback)."""
    import os

    return os.environ.get("TFCLOUD_DEBUG") == "1"


def prefix_names(handle: JobHandle, info: JobInfo, replica: str | None = None) -> list[str]:
    """The names the log prefix column is aligned to, so that its width never changes mid-stream: the job's
    replicas (``replica`` alone when one is chosen), and, for a target whose replicas show up one by one
    (Vertex AI), every replica its pools can have and its pseudo-replicas (``job``, ``service``)."""
    names = [r.name for r in info.replicas if replica is None or r.name == replica]
    names += [n for n in info.log_sources if n not in names and (replica is None or n == replica or "-" not in n)]
    return names


class _Waiting:
    """The status line while a job waits for resources: a spinner and ``Queued for 1m20s (waiting for
    resources)``, redrawn as the time passes (rich re-renders :meth:`__rich__`). Only on a terminal."""

    _SAY: ClassVar[dict[str, tuple[str, str]]] = {
        "queued": ("Queued", "waiting for resources"),
        "provisioning": ("Provisioning", "starting the replicas' machines"),
    }

    def __init__(self, console: Any, *, enabled: bool = True) -> None:
        self.console = console
        self.enabled = enabled and console.is_terminal and not console.quiet
        self.state: str | None = None
        self.since = 0.0
        self._status: Any = None

    @property
    def active(self) -> bool:
        return self.state is not None

    def update(self, state: JobState, *, since: float | None = None) -> None:
        import time

        if not self.enabled or state.value not in self._SAY:
            self.stop()
            return
        if state.value != self.state:
            self.state = state.value
            self.since = since if since is not None else time.time()
        if self._status is None and self.enabled:
            self._status = self.console.status(self, spinner="dots")
            self._status.start()

    def said(self, replica: str, text: str, job_id: str) -> None:
        """A line came: a state change (Vertex AI's follower says "ID is queued" as the job's), or the first
        line of a replica (the wait is over)."""
        if replica == "job":
            said = _said_state(text, job_id)
            if said is not None:
                self.update(said)
        else:
            self.stop()

    def __rich__(self) -> Any:
        import time

        from rich.text import Text

        from tfcloud.records.timeline import format_duration

        label, reason = self._SAY.get(self.state or "", ("Waiting", "waiting"))
        return Text(f"{label} for {format_duration(max(0.0, time.time() - self.since))} ({reason})")

    def stop(self) -> None:
        self.state = None
        if self._status is not None:
            self._status.stop()
            self._status = None


def _said_state(text: str, job_id: str) -> JobState | None:
    """The state a ``job`` line announces (``ID is provisioning``), or None."""
    from tfcloud.job.states import JobState

    prefix = f"{job_id} is "
    if not text.startswith(prefix):
        return None
    try:
        return JobState(text[len(prefix):])
    except ValueError:
        return None


def _print_stages(handle: JobHandle, info: JobInfo) -> None:
    """One line with how long each stage took (on the progress console: ``-q`` hides it)."""
    from tfcloud.view.console import get_console

    stages = timeline(handle, info=info)
    if stages.stages:
        get_console().print(f"Stages: {stages.summary()}", markup=False, highlight=False, style="dim")


def state_dir(settings: Settings | None = None) -> Path:
    from tfcloud.flow.settings import resolve_settings
    from tfcloud.records.statedir import state_dir

    return state_dir(settings if settings is not None else resolve_settings({}))


def keep_stages(settings: Settings, job_id: str, recorder: Any) -> None:
    """Keep the stages the pipeline measured, for ``tfcloud status --timeline`` later (a nicety: a failure to
    write them is logged, never fatal)."""
    import logging

    from tfcloud.records.timeline import record_path, save

    try:
        save(record_path(state_dir(settings), job_id), recorder.stages)
    except (OSError, ValueError) as exc:
        logging.getLogger("tfcloud").info("the stage timings of %s could not be kept: %s", job_id, exc)


def timeline(handle: JobHandle, *, info: JobInfo | None = None) -> Timeline:
    """How long each stage of the job took: those this machine measured when it submitted the job (context,
    build, push, submit; kept in the state dir), then queued and run from the job's own times (``info``: the
    job's info, when the caller has it)."""
    from tfcloud.records.timeline import job_timeline, load, record_path

    info = info if info is not None else handle.info()
    try:
        recorded = load(record_path(state_dir(), handle.job_id))
    except (OSError, ValueError):
        recorded = ()
    return job_timeline(recorded, created=info.created, started=info.started, ended=info.ended,
                        running=not info.state.is_final)


def interrupted(handle: JobHandle, *, cancel: bool) -> None:
    """What Ctrl-C while following does: cancel the job, or detach from it and say how to follow or cancel it
    later (the default for Vertex AI jobs, which keep running and keep costing)."""
    from tfcloud.view.console import get_console

    console = get_console()
    if cancel:
        console.print(f"Interrupted: cancelling {handle.job_id}.", markup=False)
        handle.cancel()
        handle.wait(timeout=60)
    else:
        console.print(f"Detached: {handle.job_id} keeps running.\n"
                      f"  Follow it again: tfcloud logs {handle.job_id} -f\n"
                      f"  Cancel it:       tfcloud cancel {handle.job_id}", markup=False)


def cancels_on_interrupt(handle: JobHandle) -> bool:
    """Whether Ctrl-C cancels the job by default (``Target.cancel_on_interrupt``): local jobs die with the
    terminal; cloud jobs detach."""
    return bool(target_of(handle.info()).cancel_on_interrupt)


def target_of(info: JobInfo | StudyInfo) -> Any:
    """The target class of a job's or study's info (by the registry name it records)."""
    import tfcloud.targets as targets

    return targets.get(info.target)


def watch(handle: JobHandle, *, cancel_on_interrupt: bool = False, all_replicas: bool = False) -> int:
    """:func:`follow`, and on Ctrl-C :func:`interrupted` (cancel when ``cancel_on_interrupt`` or a local job):
    the exit code, 130 when interrupted. ``all_replicas``: as :func:`follow`'s."""
    try:
        return follow(handle, stages=True, all_replicas=all_replicas)
    except KeyboardInterrupt:
        interrupted(handle, cancel=cancel_on_interrupt or cancels_on_interrupt(handle))
        return 130


def check_replica(info: JobInfo, replica: str | None) -> list[str]:
    """The names of the job's replicas that ``tfcloud logs --replica`` selects (all of them for None); a name
    the job does not have is a :class:`ValidationError` naming the ones it has, not an empty success. A job
    whose replicas are not known yet (a cloud job still queued) takes any name."""
    names = [r.name for r in info.replicas]
    if replica is None:
        return names
    if names and replica not in names:
        raise ValidationError("--replica", "one of the job's replicas: " + ", ".join(names), replica,
                              hint=f"`tfcloud status {info.job_id} --json` lists them.")
    return [replica]


def keep_submission(settings: Settings, spec: JobSpec, target: Target, job_id: str, image: ImageRef | None) -> None:
    """Keep the job's plan in brief (:mod:`tfcloud.flow.submission`), for ``tfcloud ui`` later (a nicety too)."""
    import logging

    from tfcloud.errors import TfcloudError
    from tfcloud.flow.submission import record_path, save, summary

    uri = image.uri if image is not None else None
    try:
        request = target.request(spec, image_uri=uri)
    except TfcloudError:  # a --no-build job's request needs its package: the job itself holds it
        request = None
    try:
        save(record_path(state_dir(settings), job_id),
             {**summary(spec, target, settings, image=uri, request=request), "job_id": job_id})
    except (OSError, ValueError) as exc:
        logging.getLogger("tfcloud").info("the plan of %s could not be kept: %s", job_id, exc)


def submitted_plan(job_id: str) -> dict[str, Any] | None:
    """The plan in brief of a job this machine submitted (strategy, pools, image, where each setting came
    from: :func:`tfcloud.flow.submission.summary`); None for a job submitted elsewhere."""
    from tfcloud.flow.submission import load, record_path

    return load(record_path(state_dir(), job_id))


def latest_job(given: str | None) -> str:
    """``given``, or, when the command was given no job id, the job this machine submitted last (said on the
    progress console: ``Latest job: ID``). None submitted: a :class:`ValidationError` (exit 2)."""
    if given is not None:
        return given
    from tfcloud.flow.submission import latest
    from tfcloud.view.console import get_console

    found = latest(state_dir())
    if found is None:
        raise ValidationError("JOB", "a job id (none given, and this machine has submitted no job to default to)",
                              "<none>", hint="`tfcloud list` lists a target's jobs; give one's id.")
    get_console().print(f"Latest job: {found}", markup=False, highlight=False)
    return found


def trial_job(info: StudyInfo, trial: str) -> str:
    """The id of the job that ran trial ``trial`` (its number, as the study's table shows it) of the study
    ``info`` (``tfcloud logs STUDY_ID --trial N``; the job is on the study's target). A trial the study does not
    have, or one that has no job yet (not started), is a :class:`ValidationError` (exit 2)."""
    ids = [t.trial_id for t in info.trials]
    found = next((t for t in info.trials if t.trial_id == trial), None)
    if found is None:
        expected = "one of the study's trials: " + ", ".join(ids) if ids else "a trial of the study (none started)"
        raise ValidationError("--trial", expected, trial, hint=f"`tfcloud status {info.study_id}` lists them.")
    if found.job_id is None:
        raise ValidationError("--trial", "a trial that ran a job (its logs are that job's)", trial,
                              hint=f"Trial {trial} is {found.state.value} and has no job of its own yet; "
                                   f"`tfcloud status {info.study_id}` shows when it starts.")
    return found.job_id


class TrialLogs:
    """The live logs of a study's trials while ``tfcloud tune`` shows its table: one thread per trial's job
    follows its lines into a queue; :meth:`pump` prints them on ``console`` (the table's, so that they scroll
    above it), each prefixed by the trial's number and its replica (``3/chief-0 | ...``), start-up noise left
    off unless ``-vv``. ``only``: one trial's number (``--follow-trial``); None: every trial (``-v``).
    ``trials``, ``replicas``: how many trials and the replica names each has, so that the prefix column has its
    final width from the first line. ``attached``: a job's handle by id, for one block (:func:`tfcloud.sdk.attached`
    on the study's target)."""

    def __init__(self, console: Any, *, attached: Callable[[str], AbstractContextManager[JobHandle]],
                 only: str | None = None, trials: int = 0, replicas: Sequence[str] = ()) -> None:
        import queue

        from tfcloud.view.console import verbosity
        from tfcloud.view.logview import LogPrinter

        self.attached = attached
        self.only = only
        self.lines: queue.Queue[LogLine] = queue.Queue()
        self.printer = LogPrinter(console, replicas=[f"{trials}/{r}" for r in replicas], show_noise=verbosity() > 1,
                                  all_replicas=True, through_rich=True)
        self._threads: dict[str, Any] = {}

    def start(self, info: StudyInfo) -> None:
        """Follow the trials of ``info`` that have a job and are not followed yet."""
        import threading

        for trial in info.trials:
            if trial.job_id is None or trial.trial_id in self._threads or self.only not in (None, trial.trial_id):
                continue
            thread = threading.Thread(target=self._read, args=(trial.trial_id, trial.job_id), daemon=True,
                                      name=f"tfcloud-trial-{trial.trial_id}-logs")
            self._threads[trial.trial_id] = thread
            thread.start()

    def _read(self, trial: str, job_id: str) -> None:
        import dataclasses
        import logging

        try:
            with self.attached(job_id) as handle:
                for line in handle.logs(follow=True):
                    self.lines.put(dataclasses.replace(line, replica=f"{trial}/{line.replica}"))
        except Exception as exc:  # the logs are a nicety beside the table: never the study's end
            logging.getLogger("tfcloud").info("the logs of trial %s (%s) could not be followed: %s", trial,
                                              job_id, exc)

    def pump(self, seconds: float) -> None:
        """Print the lines that come in for ``seconds``."""
        import queue
        import time

        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.printer.print(self.lines.get(timeout=min(left, 0.2)))
            except queue.Empty:
                continue
        self.printer.flush()

    def finish(self, timeout: float = 10.0) -> None:
        """After the study ended: wait (a while) for the trials' last lines, and print them."""
        import time

        deadline = time.monotonic() + timeout
        for thread in self._threads.values():
            thread.join(max(0.0, deadline - time.monotonic()))
        self.pump(0.0)
        while not self.lines.empty():
            self.printer.print(self.lines.get_nowait())
        self.printer.close()

    @property
    def followed(self) -> set[str]:
        return set(self._threads)
