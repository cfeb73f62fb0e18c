"""Where `genesis trace` sends the record of each finished step (`TraceSession.step_listeners`):
`OUT/metrics.jsonl`, one line of strict JSON per step, and with `--tensorboard DIR`,
TensorBoard scalars and histograms. Both are written in the traced script's process, as
the run goes.

A record is {"step", "loss", "grad_norm": {param: norm}, "update_ratio": {param: ratio},
"lr": {"Adam[0]": lr}, "activations": {module: {stat: value}}, "findings", "elapsed_s"}
(update ratios and activations only at the steps the session samples).

- metrics.jsonl: each line is written whole with one system call as soon as the session
  sends it (when the next backward call starts, or the run ends), so a run that dies keeps
  every line it wrote. Non-finite numbers are the
  strings "NaN", "Infinity", "-Infinity", as in trace.json.
- TensorBoard: the record's numbers as scalars ("loss", "grad_norm/fc1.weight",
  "update_ratio/fc1.weight", "lr/Adam/group0", "activation/encoder.act/dead"), and at the
  sampled steps (`genesis.debug.sampling`) histograms of every tracked parameter and its
  gradient ("weight/fc1.weight", "grad/fc1.weight"), taken right after that step's
  backward, while its gradients are there. A tensor of more than HISTOGRAM_VALUES values
  is sampled evenly; non-finite values are left out of a histogram.

>>> import json, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "metrics.jsonl")
>>> sink = JsonLinesSink(path)
>>> sink.step_finished({"step": 0, "loss": float("nan"), "grad_norm": {"w": 1.5}})
>>> sink.close()
>>> open(path).read()
'{"step":0,"loss":"NaN","grad_norm":{"w":1.5}}\\n'
>>> scalars({"step": 3, "loss": 0.5, "grad_norm": {"w": None}, "lr": {"SGD[0]": 0.1}})
[('loss', 0.5), ('lr/SGD/group0', 0.1)]
"""
from __future__ import annotations

import json
import math
import os
import re

import numpy as np

from genesis.autograd import engine
from genesis.debug.json_values import dumps
from genesis.debug.sampling import sampled

__all__ = ["JsonLinesSink", "TensorBoardSink", "MetricsSinks", "scalars", "read_records",
           "HISTOGRAM_VALUES"]

HISTOGRAM_VALUES = 1 << 20   # values per histogram at most: larger tensors are sampled evenly
FLUSH_S = 5                  # TensorBoard events reach the disk at least this often
ACTIVATION_STATS = ("mean", "std", "zeros", "dead", "saturated")
_GROUP_INDEX = re.compile(r"\[(\d+)\]")  # "Adam[0]": TensorBoard tags hold no brackets


class JsonLinesSink:
    """Writes each step's record to `path` (made at the first) as one line of strict JSON,
    written whole at once.

    Writing never raises into the traced script: the first OSError stops the sink and is
    kept in `error`, and a line the disk took only part of is cut off again, so the file
    holds whole lines only (`problems` says what was lost). A process the script forks
    inherits the sink but never writes.
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self.error: OSError | None = None
        self.lines = 0           # whole lines written
        self.last_step = None    # the step of the last of them
        self._pid = os.getpid()
        self._handle = None
        self._closed = False
        self._size = 0           # bytes of the whole lines written

    def step_finished(self, record: dict) -> None:
        if self._closed or self.error is not None or os.getpid() != self._pid:
            return
        if self._handle is None:  # made with the first record: a run without steps has none
            try:
                self._handle = open(self.path, "wb", buffering=0)
            except OSError as error:
                self.error = error
                return
        try:
            line = (dumps(record, separators=(",", ":")) + "\n").encode("ascii")
        except (TypeError, ValueError):  # a value JSON can't hold: this record only
            return
        try:
            rest = memoryview(line)
            while rest:  # one system call unless the disk takes only part of it
                rest = rest[self._handle.write(rest):]
        except OSError as error:
            self.error = error
            try:  # a line cut short (a full disk) would break every reader of the file
                os.ftruncate(self._handle.fileno(), self._size)
            except OSError:
                pass
            self.close()
            return
        self._size += len(line)
        self.lines += 1
        self.last_step = record.get("step")

    def problems(self) -> list:
        """[(severity, message)] when writing failed: which file, why, and what it holds."""
        if self.error is None:
            return []
        reason = self.error.strerror or str(self.error)
        if not self.lines:
            return [("error", f"can't write {self.path}: {reason}")]
        return [("error", f"can't write {self.path} past step {self.last_step}: {reason}; it "
                          f"holds the {self.lines} whole line{'s' if self.lines != 1 else ''} "
                          "written before")]

    def close(self) -> None:
        if self._handle is not None and os.getpid() == self._pid:
            self._handle.close()
        self._handle, self._closed = None, True


def read_records(path) -> list:
    """The records a `JsonLinesSink` wrote to `path`, in order (non-finite numbers still the
    strings "NaN", ...); [] when there is no such file.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "metrics.jsonl")
    >>> sink = JsonLinesSink(path); sink.step_finished({"step": 0, "loss": 1.0}); sink.close()
    >>> read_records(path)
    [{'step': 0, 'loss': 1.0}]
    """
    try:
        with open(path, encoding="ascii") as handle:
            return [json.loads(line) for line in handle]
    except FileNotFoundError:
        return []


def scalars(record: dict) -> list:
    """The (tag, value) TensorBoard scalars of a step's record; missing values are left out."""
    found = [("loss", record.get("loss"))]
    for name, value in (record.get("grad_norm") or {}).items():
        found.append((f"grad_norm/{name}", value))
    for name, value in (record.get("update_ratio") or {}).items():
        found.append((f"update_ratio/{name}", value))
    for group, value in (record.get("lr") or {}).items():
        found.append(("lr/" + _GROUP_INDEX.sub(r"/group\1", group), value))
    for module, stats in (record.get("activations") or {}).items():
        for stat in ACTIVATION_STATS:
            found.append((f"activation/{module}/{stat}", stats.get(stat)))
    return [(tag, value) for tag, value in found if isinstance(value, int | float)]


class TensorBoardSink:
    """Writes each step's record as TensorBoard scalars into `log_dir`, and histograms of the
    parameters `session` tracks (and of their gradients) after each sampled backward call.

    Set `session`, then join `engine.backward_listeners` after it (see `MetricsSinks.attach`):
    the session has counted the step by the time this sink is told."""

    def __init__(self, log_dir, session=None):
        # only with --tensorboard: tensorboardX imports PyTorch itself when it is installed
        from genesis.utils.tensorboard import SummaryWriter

        self.session = session
        self.writer = SummaryWriter(os.fspath(log_dir), flush_secs=FLUSH_S)
        self._pid = os.getpid()
        self._histogram_step = -1

    def step_finished(self, record: dict) -> None:
        if os.getpid() != self._pid:
            return
        step = record["step"]
        for tag, value in scalars(record):
            self.writer.add_scalar(tag, value, step)

    def backward_started(self, run) -> None:
        pass

    def backward_finished(self, run, completed: bool = True) -> None:
        step = self.session.params.steps - 1
        if (not completed or engine.unwatched.depth or os.getpid() != self._pid
                or step <= self._histogram_step or not sampled(step)):
            return
        self._histogram_step = step
        with self.session.recorder.lock:  # another thread's backward call may track more
            entries = list(self.session.params.tracked.values())
        for entry in entries:
            if entry.tensor is None:
                continue
            for tag, tensor in ((f"weight/{entry.name}", entry.tensor),
                                (f"grad/{entry.name}", entry.tensor.grad)):
                values = None if tensor is None else histogram_values(tensor)
                if values is not None:
                    self.writer.add_histogram(tag, values, step)

    def close(self) -> None:
        if os.getpid() == self._pid:
            self.writer.close()


def histogram_values(tensor) -> np.ndarray | None:
    """The finite values of `tensor` for a histogram (at most about HISTOGRAM_VALUES of them,
    taken evenly), or None when it has none.

    >>> import genesis
    >>> histogram_values(genesis.tensor([1.0, float("nan"), 3.0])).tolist()
    [1.0, 3.0]
    """
    array = np.asarray(tensor.numpy(force=True)).reshape(-1)
    stride = math.ceil(array.size / HISTOGRAM_VALUES)
    if stride > 1:
        array = array[::stride]
    if not np.issubdtype(array.dtype, np.floating):
        array = array.astype(np.float64)
    array = array[np.isfinite(array)]
    return array if array.size else None


class MetricsSinks:
    """The sinks of one traced run, made before the script runs (an import of tensorboardX
    comes before any of the script's); `attach(session)` once the session is entered,
    `close()` once it has exited (its last record is sent as it ends).

    Args:
        metrics_path: where to write the JSON lines (None: nowhere).
        tensorboard_dir: where to write TensorBoard event files (None: nowhere).
    """

    def __init__(self, metrics_path=None, tensorboard_dir=None):
        self.sinks = []
        if metrics_path is not None:
            self.sinks.append(JsonLinesSink(metrics_path))
        self.board = TensorBoardSink(tensorboard_dir) if tensorboard_dir is not None else None
        if self.board is not None:
            self.sinks.append(self.board)
        self._session = None
        self._closed_problems = []

    def attach(self, session) -> None:
        """Start telling the sinks `session`'s records (TensorBoard: its backward calls too)."""
        self._session = session
        if self.board is not None:
            self.board.session = session
            engine.backward_listeners.add(self.board)
        for sink in self.sinks:
            session.step_listeners.add(sink)

    def problems(self) -> list:
        """[(severity, message)] for the files that could not be written in full."""
        return self._closed_problems + [problem for sink in self.sinks
                                        if isinstance(sink, JsonLinesSink)
                                        for problem in sink.problems()]

    def close(self) -> None:
        """Stop listening and close the files (what was written stays)."""
        for sink in self.sinks:
            if self._session is not None:
                self._session.step_listeners.discard(sink)
            engine.backward_listeners.discard(sink)
            sink.close()
            if isinstance(sink, JsonLinesSink):
                self._closed_problems.extend(sink.problems())
        self.sinks = []

    def __enter__(self) -> "MetricsSinks":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
