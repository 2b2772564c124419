"""Known TensorFlow start-up and shutdown lines that say nothing about the user's job (:data:`NOISE`): the
terminal hides them by default (:mod:`tfcloud.view.logview`) and a failure's last lines leave them out
(:func:`tfcloud.view.outcome.failure`). Imports nothing of tfcloud's, so both can use it.

:class:`LineFilter` is the same, line after line of one replica: it also hides the rest of a multi-line dump
whose first line is noise (a TF1 session's ``Start master session ... with config:`` and the ``device_count {
key: "CPU" ... }`` protobuf text after it), and, inside a traceback, the frames of tfcloud's own launcher and of
``runpy`` (which every replica's traceback starts with: the user's frames are what says why)."""

from __future__ import annotations

import itertools
import operator
import re

__all__ = ["NOISE", "LineFilter", "is_noise", "without_launcher_frames"]

# An absl (``I0000 00:00:1795431374.452381    5161 port.cc:153] ``) or older TensorFlow
# (``2026-11-23 10:56:14.123456: I tensorflow/core/util/port.cc:113] ``) log line from one of these sources.
_ABSL = r"^(?:[IWEF]\d{4} \d+:\d+:\d+\.\d+\s+\d+ |\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] \S*/)"
_STARTUP_SOURCES = (
    "port", "cpu_feature_guard", "grpc_server_lib", "coordination_service", "coordination_service_agent",
    "cuda_executor", "cuda_driver", "cuda_diagnostics", "cuda_dnn", "cuda_fft", "cuda_blas", "cudart_stub",
    "cuda_platform", "computation_placer", "gpu_device", "mlir_graph_optimization_pass", "device_compiler",
)

#: Known TensorFlow start-up lines that say nothing about the user's job: hidden from the terminal by default.
NOISE: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    _ABSL + r"(?:" + "|".join(_STARTUP_SOURCES) + r")\.(?:cc|h):\d+\] ",
    _ABSL + r"generator_dataset_op\.cc:\d+\] Memory patch applied",
    _ABSL + r"dataset\.cc:\d+\] Input of GeneratorDatasetOp::Dataset will not be optimized",
    # TF1 between-graph jobs (tf.distribute.Server + a session on server.target): the master's device scan at
    # start-up, and each session's cleanup of its rendezvous at shutdown (an ABORTED status that is no error).
    _ABSL + r"master\.cc:\d+\] Scanning workers for devices: ",
    # A TF1 session's options, dumped as protobuf text over the lines after this one (LineFilter hides them).
    _ABSL + r"master_session\.cc:\d+\] Start master session \S+ with config:",
    _ABSL + r"local_rendezvous\.cc:\d+\] Local rendezvous is aborting with status: ABORTED: Cleanup \d+",
    r"^WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR$",
    r"^To enable the following instructions: .*rebuild TensorFlow with the appropriate compiler flags\.$",
    r"^/job:[a-z_]+/replica:\d+/task:\d+$",  # the coordination service's list of stragglers
    # CUDA probing on a machine without a GPU, and TensorRT's absence: each a log line of its own, from any source
    # file (TensorFlow moves them between versions). Anchored at the log prefix like the others, so that a line
    # is matched at its start only: a job's 2 kB lines are not searched through (benchmarks/bench_logs.py).
    _ABSL + r"\S*?[\w.-]+\.(?:cc|h):\d+\] TF-TRT Warning: Could not find TensorRT",
    _ABSL + r"\S*?[\w.-]+\.(?:cc|h):\d+\] Could not find cuda drivers on your machine, GPU will not be used",
    _ABSL + r"\S*?[\w.-]+\.(?:cc|h):\d+\] (?:\S+ )*?failed call to cuInit",
))


#: :data:`NOISE`'s patterns that start at the line's start, as one pattern tried there only, and the others
#: (each a literal text first, which re finds fast): a job's every line goes through them, 2 kB lines too.
_AT_START = re.compile("|".join(f"(?:{p.pattern[1:]})" for p in NOISE if p.pattern.startswith("^")))
_ANYWHERE = tuple(p for p in NOISE if not p.pattern.startswith("^"))


#: Those of the others that are plain text (all of them today), found in a batch's joined text with ``in``.
_ANYWHERE_TEXT = tuple(p.pattern for p in _ANYWHERE if not any(c in p.pattern for c in "\\.^$*+?{}[]|()"))
_ANYWHERE_RE = tuple(p for p in _ANYWHERE if p.pattern not in _ANYWHERE_TEXT)


def is_noise(text: str) -> bool:
    """Whether ``text`` (one log line) is known TensorFlow start-up noise (:data:`NOISE`)."""
    return _AT_START.match(text) is not None or any(p.search(text) for p in _ANYWHERE)


def _starts() -> str:
    """What a line that :class:`LineFilter` looks at line by line starts with: :data:`NOISE`'s patterns that start
    at the line's start (those after the absl prefix factored, so that a line that is no absl line fails at once),
    or a traceback's first line."""
    absl = [p.pattern[len(_ABSL):] for p in NOISE if p.pattern.startswith(_ABSL)]
    others = [p.pattern[1:] for p in NOISE if p.pattern.startswith("^") and not p.pattern.startswith(_ABSL)]
    return "|".join([f"{_ABSL[1:]}(?:{'|'.join(absl)})", *others, re.escape(_TRACEBACK)])


_TRACEBACK = "Traceback (most recent call last):"
#: Tried at a line's start; and after every newline of a batch's lines joined (``$`` at each line's end).
_START = re.compile(_starts())
_AFTER_NEWLINE = re.compile(f"\n(?:{_starts()})", re.MULTILINE)


def _look_closer(texts: list[str], *, noise: bool) -> bool:
    """Whether a line of ``texts`` may be a traceback's first line or, with ``noise``, noise: a few calls for a
    batch, never a line missed (a batch that may hold one goes line by line). Short lines are joined and searched
    at once; long ones (where a search of the joined text costs more than a call a line) one by one."""
    if sum(map(len, texts)) > 256 * len(texts):
        if any(map(_START.match, texts)):
            return True
        return noise and (any(any(map(operator.contains, texts, itertools.repeat(t))) for t in _ANYWHERE_TEXT)
                          or any(p.search(text) for p in _ANYWHERE_RE for text in texts))
    joined = "\n".join(texts)
    if _START.match(texts[0]) is not None or _AFTER_NEWLINE.search(joined) is not None:
        return True
    return noise and (any(t in joined for t in _ANYWHERE_TEXT) or any(p.search(joined) for p in _ANYWHERE_RE))


#: A frame of tfcloud's launcher or of runpy in a traceback (the launcher runs the user's script with
#: ``runpy.run_path``; its frames lead every replica's traceback and say nothing of the script).
_OWN_FRAME = re.compile(r'^\s*File "(?:[^"]*[/\\])?(?:tfcloud_launcher\.py|runpy\.py|<frozen runpy>)", line \d+')
_FRAME = re.compile(r'^\s*File "')
#: A line of protobuf text format (``device_count {``, ``  key: "CPU"``, ``}``): the body of a dumped config.
_PROTO_TEXT = re.compile(r'^\s*(?:[A-Za-z_][\w.]*\s*(?:\{|:\s*\S.*)|\}|[A-Za-z_][\w.]*:)\s*$')


class LineFilter:
    """Which of a job's lines people need not see, one replica's lines after the other's (it keeps state per
    replica): known start-up noise (:func:`is_noise`) and the protobuf dump that follows a noise line ending in
    ``config:`` or ``{`` (unless ``show_noise``); tfcloud's launcher and ``runpy`` frames inside a traceback,
    with the source lines under them (unless ``show_frames``)."""

    def __init__(self, *, show_noise: bool = False, show_frames: bool = False) -> None:
        self.show_noise = show_noise
        self.show_frames = show_frames
        self._dump: set[str] = set()  # replicas inside a hidden protobuf dump
        self._traceback: set[str] = set()  # replicas inside a traceback
        self._own_frame: set[str] = set()  # replicas inside one of tfcloud's frames (its source lines follow)

    def hides(self, replica: str, text: str) -> bool:
        """Whether ``text``, the next line of ``replica``, is hidden."""
        if not (self._dump or self._traceback or self.show_noise or text.startswith(_TRACEBACK)):
            return is_noise(text) and self._noise(replica, text)
        if not self.show_noise:
            if replica in self._dump:
                if _PROTO_TEXT.match(text):
                    return True
                self._dump.discard(replica)
            if is_noise(text):
                return self._noise(replica, text)
        if self.show_frames:
            return False
        if text.startswith(_TRACEBACK):
            self._traceback.add(replica)
            self._own_frame.discard(replica)
            return False
        if replica not in self._traceback:
            return False
        if _FRAME.match(text):
            if _OWN_FRAME.match(text):
                self._own_frame.add(replica)
                return True
            self._own_frame.discard(replica)
            return False
        if text.startswith("    ") or not text.strip():  # a frame's source line (and its ^^^ markers)
            return replica in self._own_frame
        self._traceback.discard(replica)  # the exception's line ends the traceback
        self._own_frame.discard(replica)
        return False


    def kept(self, replica: str, texts: list[str]) -> list[str]:
        """The lines of ``texts`` (``replica``'s next lines, in order) that are not hidden: ``texts`` itself when
        none is, found with a few calls for the whole batch (a batch with a noise line or a traceback, or met
        inside a dump or a traceback, goes line by line through :meth:`hides`)."""
        if (texts and replica not in self._dump and replica not in self._traceback
                and not _look_closer(texts, noise=not self.show_noise)):
            return texts
        return [text for text in texts if not self.hides(replica, text)]

    def _noise(self, replica: str, text: str) -> bool:
        """A noise line: hidden; one that opens a dump (``... with config:``, ``... {``) hides the dump too."""
        if text.rstrip().endswith(("config:", "{")):
            self._dump.add(replica)
        return True


def without_launcher_frames(lines: list[str]) -> list[str]:
    """``lines`` (one replica's) without tfcloud's launcher and ``runpy`` frames in a traceback."""
    kept = LineFilter(show_noise=True)
    return [line for line in lines if not kept.hides("", line)]
