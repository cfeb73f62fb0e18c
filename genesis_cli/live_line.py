"""The live line of `genesis trace`: while the script runs, one line under its output says
where the run stands (step, loss, time elapsed, findings so far), read from the per-step
records the script's process appends to metrics.jsonl (`LatestRecord`).

The script's standard output and error go to a pseudo-terminal that this process reads and
copies to the real terminal, byte for byte: the script still sees a terminal (line-buffered
output, colours, progress bars, the terminal's size). The live line is wiped before each
piece of the script's output and drawn again once that output has ended a line; while a line
is unfinished (a tqdm bar, a prompt) it waits. It is redrawn at most 1 / REFRESH_S times a
second, shown from SHOW_AFTER_S into the run (a short run never shows it), and wiped when
the script's process has ended, before the report is printed. (A process the script started
and left running shares that pseudo-terminal: once the script's process has ended, its
output is copied for DRAIN_S more, then no longer.)

It is used only when standard output and error are the same terminal (`wanted`): with output
piped or redirected, `--quiet` or `--json`, the script writes where it always does and
nothing extra is printed.

>>> line_text({"step": 1204, "loss": 0.03125, "findings": 2}, 134.0).plain
'genesis trace  step 1,204  loss 0.03125  2m 14s  2 findings'
>>> line_text(None, 3.2).plain
'genesis trace  waiting for the first step  3s'
"""
from __future__ import annotations

import io
import json
import math
import os
import select
import struct
import sys
import threading
import time

from rich.console import Console
from rich.text import Text


try:  # POSIX only: without pseudo-terminals there is no live line
    import fcntl
    import termios
except ImportError:
    fcntl = termios = None

__all__ = ["LiveLine", "LatestRecord", "wanted", "line_text", "SHOW_AFTER_S", "REFRESH_S"]

SHOW_AFTER_S = 1.0     # a run shorter than this never shows the line
REFRESH_S = 0.25       # the line is redrawn at most this often
DRAIN_S = 1.0          # how long the copying goes on once the script's process has ended
TAIL_BYTES = 1 << 20   # read at most this much of the records file per refresh (its end)
ERASE = b"\r\x1b[K"


def wanted(*, quiet: bool, as_json: bool) -> bool:
    """Whether `genesis trace` shows the live line: not `--quiet` nor `--json`, and standard
    output and error are one terminal."""
    if quiet or as_json or termios is None:
        return False
    try:
        out, err = sys.stdout.fileno(), sys.stderr.fileno()
        return os.isatty(out) and os.isatty(err) and os.path.samestat(os.fstat(out), os.fstat(err))
    except (AttributeError, OSError, ValueError):  # streams replaced by ones without a descriptor
        return False


def line_text(record: dict | None, elapsed_s: float) -> Text:
    """The live line for the newest step record (None: no step finished yet). Nothing of
    genesis is imported here: this runs on the live line's thread while the main thread may
    be importing genesis, and two threads importing the same modules can deadlock."""
    text = Text()
    text.append("genesis trace", style="bold")
    if record is None:
        text.append("  waiting for the first step", style="dim")
    else:
        text.append("  step ")
        text.append(f"{record.get('step', 0):,}", style="bold")
        loss = record.get("loss")  # strict JSON: a non-finite one is "NaN", "Infinity" or "-Infinity"
        if isinstance(loss, float) and not math.isfinite(loss):
            loss = json.dumps(loss)  # the same names
        text.append("  loss ")
        if loss is None:
            text.append("-", style="dim")
        elif isinstance(loss, str):
            text.append(loss, style="bold red")
        else:
            text.append(f"{loss:.4g}", style="bold")
    text.append(f"  {_duration(elapsed_s)}")
    if record is not None:
        found = record.get("findings") or 0
        text.append(f"  {found} finding{'' if found == 1 else 's'}",
                    style="yellow" if found else "green")
    return text


def _duration(seconds: float) -> str:
    """'42s', '2m 14s', '1h 05m'."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole // 60 % 60:02d}m"


class LatestRecord:
    """The newest whole line of a JSON-lines file another process appends to (read as it
    grows; a line still being written is left for the next `poll`).

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "metrics.jsonl")
    >>> latest = LatestRecord(path)
    >>> latest.poll() is None
    True
    >>> _ = open(path, "w").write('{"step": 0}\\n{"step": 1}\\n{"step"')
    >>> latest.poll()
    {'step': 1}
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self.record: dict | None = None
        self._handle = None
        self._offset = 0
        self._partial: bytes | None = b""  # None: reading resumed mid-line, skip to the next

    def poll(self) -> dict | None:
        """Read what was appended since the last call; the newest record so far."""
        if self._handle is None:
            try:
                self._handle = open(self.path, "rb")
            except OSError:
                return self.record
        size = os.fstat(self._handle.fileno()).st_size
        if size < self._offset:  # written anew
            self._offset, self._partial = 0, b""
        if size - self._offset > TAIL_BYTES:
            self._offset, self._partial = size - TAIL_BYTES, None
        self._handle.seek(self._offset)
        data = self._handle.read(size - self._offset)
        self._offset += len(data)
        if self._partial is None:
            cut = data.find(b"\n")
            if cut < 0:
                return self.record
            data, self._partial = data[cut + 1:], b""
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in reversed(lines):
            try:
                self.record = json.loads(line)
                break
            except ValueError:
                continue
        return self.record

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class _Descriptor:
    """A stream for `run_traced` that names a file descriptor: the script writes there."""

    def __init__(self, fd: int):
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def flush(self) -> None:
        pass


class LiveLine:
    """Context manager around a traced run: give `script_stream` to `run_traced` as the
    script's standard output and error; the line is drawn on this process's stderr.
    (`script_stream` stays None when no pseudo-terminal can be opened: no line then.)

    Args:
        source: the JSON-lines file of step records the script's process writes.
        no_color: no colours (also when NO_COLOR is set).
    """

    def __init__(self, source, no_color: bool = False):
        self.latest = LatestRecord(source)
        plain = no_color or bool(os.environ.get("NO_COLOR"))
        self._console = Console(file=io.StringIO(), force_terminal=True, highlight=False,
                                width=1000, color_system=None if plain else "standard")
        self._terminal = sys.stderr.fileno()
        self._master = self._slave = None
        self.script_stream = None
        self._stop = threading.Event()
        self._thread = None
        self._started = self._last_draw = 0.0
        self._drawn = b""  # the line as drawn (empty: not drawn)
        self._line_start = True
        self._size = None
        self._writable = True

    def __enter__(self) -> "LiveLine":
        try:
            self._master, self._slave = os.openpty()
        except OSError:  # no pseudo-terminal to be had: the run goes on without the line
            return self
        try:
            termios.tcsetattr(self._slave, termios.TCSANOW, termios.tcgetattr(self._terminal))
        except termios.error:
            pass
        self._follow_size()
        self.script_stream = _Descriptor(self._slave)
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._copy, name="genesis-live-line", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._thread is None:
            return
        self._stop.set()
        os.close(self._slave)  # the script's process has ended: what it wrote is read to the end
        self._thread.join()
        os.close(self._master)
        self.latest.close()

    def _copy(self) -> None:
        """Copy the script's output to the terminal, keeping the live line under it; once
        the script's process has ended, copy what is left, then wipe the line."""
        copying = True
        while copying and not self._stop.is_set():
            if select.select([self._master], [], [], REFRESH_S)[0]:
                copying = self._copy_once()
            self._refresh()
        deadline = time.monotonic() + DRAIN_S  # a process the script started may hold it open
        while copying and time.monotonic() < deadline and \
                select.select([self._master], [], [], REFRESH_S / 5)[0]:
            copying = self._copy_once()
        self._erase()

    def _copy_once(self) -> bool:
        """Copy what the script wrote; False when nothing can be read any more."""
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: no process holds the terminal's other end any more
            return False
        if data:
            self._show(data)
        return bool(data)

    def _show(self, data: bytes) -> None:
        self._erase()
        self._write(data)
        self._line_start = data.endswith(b"\n")

    def _refresh(self) -> None:
        now = time.monotonic()
        if not self._line_start or now - self._started < SHOW_AFTER_S \
                or now - self._last_draw < REFRESH_S:
            return
        self._last_draw = now
        self._follow_size()
        text = line_text(self.latest.poll(), now - self._started)
        text.truncate(max(self._size[1] - 1, 10) if self._size else 79, overflow="ellipsis")
        with self._console.capture() as captured:
            self._console.print(text, end="", soft_wrap=True)
        line = b"\r" + captured.get().encode("utf-8", "replace") + b"\x1b[K"
        if line != self._drawn:
            self._write(line)
            self._drawn = line

    def _erase(self) -> None:
        if self._drawn:
            self._write(ERASE)
            self._drawn = b""

    def _follow_size(self) -> None:
        """Give the script's terminal the real one's size (rows, columns), when it changed."""
        try:
            size = fcntl.ioctl(self._terminal, termios.TIOCGWINSZ, b"\0" * 8)
        except OSError:
            return
        rows, columns = struct.unpack("HHHH", size)[:2]
        if (rows, columns) != self._size:
            self._size = (rows, columns)
            try:
                fcntl.ioctl(self._slave, termios.TIOCSWINSZ, size)
            except OSError:
                pass

    def _write(self, data: bytes) -> None:
        rest = memoryview(data)
        while rest and self._writable:
            try:
                rest = rest[os.write(self._terminal, rest):]
            except OSError:  # the terminal is gone: keep reading, so the script never blocks
                self._writable = False
