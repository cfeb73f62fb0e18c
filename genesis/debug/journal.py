"""The journal of a traced run: what was captured, written down as it is captured, so a
run that ends abruptly (`os._exit`, SIGKILL, the out-of-memory killer) still leaves it.

A journal is a folder (`genesis trace` puts it at `OUT/trace.partial/` while the script
runs, and removes it once `trace.json` is written) holding two files:

- `journal.jsonl`, append-only, one JSON object per line, each line flushed as it is
  written: a `start` record (script, arguments, options), a `graph` record each time a
  recorded backward call files its graph (a later record for the same `index` replaces
  an earlier one), a `finding` record for each NaN/Inf finding as it is made, and an
  `end` record (the finished trace, without its graphs) when the run completes;
- `progress.json`, replaced atomically (written under a temporary name, then renamed)
  at each recorded step, at the 2nd, 4th, 8th, ... backward call and at least every
  second between: backward calls seen, parameter table; and, written as the process ends
  abruptly (`os._exit`, SIGTERM), the trace's `meta` so far (the run's history and
  losses). A run that dies may have made more backward calls than its last progress says
  (SIGKILL gives no time to write): read it as "at least".

`read_journal(folder)` turns a journal back into a `Trace`; one without an `end`
record is marked unfinished (`trace.meta["finished"] is False`). Numbers are encoded
as in trace.json. Only the process that opened the journal writes to it: a process the
script forks inherits the session but never touches the files.

>>> import tempfile
>>> from genesis.debug.graph import Graph
>>> folder = tempfile.mkdtemp()
>>> journal = Journal(folder, {"script": "train.py", "args": []})
>>> journal.graph(0, Graph())
>>> journal.progress({"steps_seen": 3, "steps_recorded": 1, "parameters": []}, force=True)
>>> trace = read_journal(folder)
>>> trace.script, trace.steps_seen, len(trace.graphs), trace.meta["finished"]
('train.py', 3, 1, False)
"""
from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import replace

from ..utils.atomic_file import write_atomic
from .findings import Finding
from .graph import Graph
from .json_values import dumps
from .trace import TRACE_SCHEMA_VERSION, Trace

__all__ = ["Journal", "read_journal", "JOURNAL_FILE", "PROGRESS_FILE"]

JOURNAL_FILE = "journal.jsonl"
PROGRESS_FILE = "progress.json"
PROGRESS_EVERY_S = 1.0


class Journal:
    """Appends records to `folder/journal.jsonl` and replaces `folder/progress.json`.

    Writing never raises into the traced script: the first OSError (a full disk, a
    folder removed underneath) stops the journal, and `error` keeps it for the report.
    """

    def __init__(self, folder, header: dict):
        self.folder = os.fspath(folder)
        self.error: OSError | None = None
        self.skipped = []  # records that could not be encoded, and why
        self._pid = os.getpid()
        self._last_progress = 0.0
        self.progress_due_at = 0.0  # time.monotonic() from which `progress` writes again unforced
        self._handle = None
        try:
            os.makedirs(self.folder, exist_ok=True)
            self._handle = open(os.path.join(self.folder, JOURNAL_FILE), "w", encoding="utf-8")
        except OSError as error:
            self.error = error
        self._append({"record": "start", **header, "pid": self._pid, "time": time.time()})

    @property
    def writable(self) -> bool:
        return self._handle is not None and self.error is None and os.getpid() == self._pid

    def graph(self, index: int, graph: Graph) -> None:
        # the graph's text written in pieces: a big graph's JSON is never one string here
        self._write_line(lambda: itertools.chain([f'{{"record":"graph","index":{index},"graph":'],
                                                 graph.json_pieces(), ["}"]), "graph")

    def finding(self, finding: Finding) -> None:
        self._append({"record": "finding", "finding": finding.to_dict()})

    def progress(self, state, force: bool = False) -> None:
        """Replace progress.json with `state` (a dict, or a function that makes one: called
        only when it is written), at most every PROGRESS_EVERY_S unless `force`."""
        now = time.monotonic()
        if not self.writable or (not force and now - self._last_progress < PROGRESS_EVERY_S):
            return
        self._last_progress = now
        self.progress_due_at = now + PROGRESS_EVERY_S
        try:
            text = _dumps(state() if callable(state) else state)
        except (TypeError, ValueError) as error:
            self.skipped.append(f"progress: {error}")
            return
        try:
            write_atomic(os.path.join(self.folder, PROGRESS_FILE), text, durable=False)
        except OSError as error:
            self._stop(error)

    def end(self, trace: Trace) -> None:
        """The finished run, graphs left out (the graph records hold them)."""
        data = replace(trace, graphs=[]).to_dict()  # not every graph encoded to be dropped
        data["graphs"] = len(trace.graphs)
        self._append({"record": "end", "trace": data})
        self.close()

    def close(self) -> None:
        if self._handle is not None and os.getpid() == self._pid:
            try:
                self._handle.close()
            except OSError as error:
                self.error = self.error or error
        self._handle = None

    def _append(self, record: dict) -> None:
        self._write_line(lambda: [_dumps(record)], record.get("record"))

    def _write_line(self, encode, kind: str) -> None:
        """Write the line `encode()` gives (a list of text pieces), then flush."""
        if not self.writable:
            return
        try:
            pieces = encode()
        except (TypeError, ValueError) as error:  # a value JSON can't hold: this record only
            self.skipped.append(f"{kind} record: {error}")
            return
        try:
            for piece in pieces:
                self._handle.write(piece)
            self._handle.write("\n")
            self._handle.flush()
        except OSError as error:
            self._stop(error)

    def _stop(self, error: OSError) -> None:
        self.error = error
        handle, self._handle = self._handle, None
        try:
            handle.close()
        except (OSError, AttributeError):
            pass


def _dumps(data: dict) -> str:
    return dumps(data, separators=(",", ":"))


def read_journal(folder) -> Trace:
    """The Trace a journal holds; unfinished (meta "finished": False) without an end record.

    A line cut short by the process dying mid-write is skipped, as is anything after it.
    """
    folder = os.fspath(folder)
    path = os.path.join(folder, JOURNAL_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        raise FileNotFoundError(f"no journal at {path}: not a genesis trace run folder") from None
    header, graphs, findings, end = None, {}, [], None
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            break  # the last line, cut short when the process died
        kind = record.get("record")
        if kind == "start":
            header = record
        elif kind == "graph":
            graphs[record["index"]] = record["graph"]
        elif kind == "finding":
            findings.append(record["finding"])
        elif kind == "end":
            end = record["trace"]
    if header is None:
        raise ValueError(f"{path} is not a genesis journal (it has no start record)")
    ordered = [graphs[index] for index in sorted(graphs)]
    if end is not None:
        return Trace.from_dict({**end, "graphs": ordered[:end["graphs"]]})
    progress = _read_progress(folder)
    trace = Trace.from_dict({
        "schema": "genesis.debug.Trace", "version": header.get("version", TRACE_SCHEMA_VERSION),
        "script": header.get("script", ""), "args": header.get("args", []),
        "graphs": ordered, "findings": findings,
        "parameters": progress.get("parameters", []),
        "steps_recorded": progress.get("steps_recorded", len(ordered) and 1),
        "steps_seen": progress.get("steps_seen", 0), "exit_code": 0, "script_error": None,
        "duration_s": progress.get("duration_s", 0.0),
        "meta": {"options": header.get("options", {}), **progress.get("meta", {})}})
    trace.meta["finished"] = False
    return trace


def _read_progress(folder: str) -> dict:
    try:
        with open(os.path.join(folder, PROGRESS_FILE), encoding="utf-8") as handle:
            return json.load(handle)
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
