"""Printing the end of a run when the reader of the output has gone away.

`genesis trace train.py | head -5` or `genesis gradcheck ops.py | true` closes the pipe
before the report is printed. Writing to it raises BrokenPipeError, and without care the
command then ends with a traceback and status 1, which says "problems found" about a clean
run. While `readers_may_leave()` is active, a write or flush that finds its pipe closed
points that stream's file descriptor at /dev/null and drops the rest of the text: the report
is lost (nobody is reading it), the files are written, and the exit status says what the
run found.

>>> import io
>>> class Closed(io.StringIO):
...     def write(self, text):
...         raise BrokenPipeError(32, "Broken pipe")
>>> stream = ReaderSafeStream(Closed())
>>> stream.write("report"), stream.reader_gone
(0, True)
"""
from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["ReaderSafeStream", "readers_may_leave"]


class ReaderSafeStream:
    """`stream`, with writes and flushes that stop quietly once its reader is gone."""

    def __init__(self, stream):
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if self.reader_gone:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._discard()
            return 0

    def flush(self) -> None:
        if self.reader_gone:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._discard()

    def _discard(self) -> None:
        """From now on, nothing more reaches the closed pipe: what is still buffered goes
        to /dev/null when the stream is flushed (at exit too), without a new error."""
        self.reader_gone = True
        try:
            descriptor = self._stream.fileno()
        except (AttributeError, OSError, ValueError):  # no descriptor: an in-memory stream
            return
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, descriptor)
        finally:
            os.close(null)

    def __getattr__(self, name: str):  # isatty, encoding, fileno...: the stream's own
        return getattr(self._stream, name)


@contextlib.contextmanager
def readers_may_leave():
    """Within: sys.stdout and sys.stderr (those that are open) are ReaderSafeStreams."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (ReaderSafeStream(stream) if stream is not None else None
                              for stream in saved)
    try:
        yield
    finally:  # what is still buffered goes now, while a closed pipe is still taken quietly
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, ReaderSafeStream):
                stream.flush()
        sys.stdout, sys.stderr = saved
