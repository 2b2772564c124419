"""The one error tree of tfcloud.

Every error a user can cause is a :class:`TfcloudError`; the CLI turns it into a message and an exit code
without a traceback (set ``TFCLOUD_DEBUG=1`` to see one)::

    TfcloudError                      exit 2 unless noted
    ├── ValidationError               a bad argument: names the field, the expectation and what was received
    │   └── UnsupportedOptionError    an option the chosen target does not act on (names the targets that do)
    ├── NotebookError                 a notebook cell that cannot be converted (cell number, line, magic)
    ├── ConfigurationError            settings, credentials, a missing optional extra
    │   └── MissingExtraError         names the ``pip install "tfcloud[...]"`` that fixes it
    ├── BuildError                    exit 1: an image build or push failed (names the step, shows its log)
    ├── SubmitError                   exit 1: the backend refused or could not create the job
    ├── JobNotFoundError              exit 2: ``tfcloud status JOB`` for a job that does not exist
    ├── JobFailedError                exit 1 (or the job's own code): the job ran and failed; made by
    │                                 view.outcome.failure(), raised by run(stream_logs=True)
    └── OutcomeUnknownError           exit 3: Google Cloud stopped answering; the job (or build) may still be
                                      running, and the message says the command that follows it

Google and Docker exceptions are translated into these at the boundary (``raise ... from exc``).
"""

from __future__ import annotations

__all__ = [
    "BuildError",
    "ConfigurationError",
    "JobFailedError",
    "JobNotFoundError",
    "MissingExtraError",
    "NotebookError",
    "OutcomeUnknownError",
    "SubmitError",
    "TfcloudError",
    "UnsupportedOptionError",
    "ValidationError",
]


class TfcloudError(Exception):
    """Base of every error tfcloud raises on purpose. ``exit_code`` is what the CLI exits with."""

    exit_code: int = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n{self.hint}"
        return self.message


class ValidationError(TfcloudError):
    """An argument has the wrong type or value. Raised before anything is uploaded, built or submitted."""

    def __init__(self, field: str, expected: str, received: object, *, hint: str | None = None) -> None:
        self.field = field
        self.expected = expected
        self.received = received
        shown = received if isinstance(received, str) and received.startswith("<") else repr(received)
        super().__init__(f"Invalid `{field}`: expected {expected}, received {shown}.", hint=hint)


class UnsupportedOptionError(ValidationError):
    """An option was given to a target that does not act on it: refused, never silently ignored."""

    def __init__(self, option: str, value: object, *, target: str, takers: list[str], how: str = "") -> None:
        where = f" (it is an option of: {', '.join(takers)})" if takers else ""
        hint = "Remove it" + (f", or run where it applies ({how})" if how else "") + "."
        super().__init__(option, f"to be left unset for the {target} target{where}",
                         "<set>" if value is True else value, hint=hint)
        self.target = target
        self.takers = takers


class NotebookError(TfcloudError):
    """A notebook cannot be converted to a script; the message names the cell (as Jupyter numbers it)."""

    def __init__(self, message: str, *, cell: int | None = None, line: int | None = None) -> None:
        self.cell = cell
        self.line = line
        super().__init__(message)


class ConfigurationError(TfcloudError):
    """The environment or settings do not allow the operation (missing credentials, project, engine...)."""


class MissingExtraError(ConfigurationError):
    """An optional dependency is not installed. ``more``: further (feature, extra, module) that are missing
    too; the hint then installs every extra at once (``pip install "tfcloud[cloud,docker]"``)."""

    def __init__(self, feature: str, extra: str, module: str,
                 *, more: tuple[tuple[str, str, str], ...] = ()) -> None:
        self.extra = extra
        self.extras = tuple(dict.fromkeys([extra, *(e for _, e, _ in more)]))
        if more:
            message = "Optional packages are not installed:" + "".join(
                f"\n  {f} needs `{m}` (tfcloud[{e}])" for f, e, m in ((feature, extra, module), *more))
        else:
            message = f"{feature} needs the `{module}` package, which is not installed."
        super().__init__(
            message,
            hint=f'Install {"them" if more else "it"} with: pip install "tfcloud[{",".join(self.extras)}]"',
        )


class BuildError(TfcloudError):
    """Building or pushing the container image failed."""

    exit_code = 1

    def __init__(self, message: str, *, step: str | None = None, log_tail: str = "") -> None:
        self.step = step
        self.log_tail = log_tail
        text = message
        if log_tail:
            text += "\n" + log_tail.rstrip()
        super().__init__(text)


class SubmitError(TfcloudError):
    """The backend could not create the job."""

    exit_code = 1


class JobNotFoundError(TfcloudError):
    """No job with that id exists for this backend."""


class JobFailedError(TfcloudError):
    """The job ran and did not succeed. ``exit_code`` is 1, or the chief's own code when known."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int = 1, log_tail: str = "") -> None:
        self.exit_code = exit_code if exit_code not in (0, 2) else 1
        self.summary = message  # the first line: why, without the log tail
        self.log_tail = log_tail
        super().__init__(f"{message}\n{log_tail.rstrip()}" if log_tail else message)


class OutcomeUnknownError(TfcloudError):
    """tfcloud cannot tell what happened: Google Cloud kept failing (transiently) past the retry deadline. The job
    or build may still be running (or, after a create, may exist); never reported as failed. The hint names the
    command that finds out (``tfcloud logs JOB -f``)."""

    exit_code = 3


def require(module: str, *, feature: str, extra: str) -> None:
    """Raise :class:`MissingExtraError` unless ``module`` can be imported (without importing it)."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise MissingExtraError(feature, extra, module)
