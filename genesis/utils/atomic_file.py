"""Write a file so that readers see the old content or the new, never a torn mix.

The data goes to a temporary file in the target's folder, is flushed to disk,
and the temporary file is renamed over the target (a rename within one
filesystem is atomic). If anything fails on the way (a full disk, an
exception while producing the data, a read-only folder), the temporary file
is removed, the previous file is left as it was, and the error names the target.

A target that is a read-only file (no write bit in its mode, as `chmod 444` leaves
it) is refused with a PermissionError before anything is written: a rename would
replace it silently, since renaming needs only the folder to be writable. The mode
bits decide, not `os.access`, so the refusal is the same for root, whom chmod does
not stop.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> target = os.path.join(folder, "report.txt")
>>> write_atomic(target, "first")
>>> with atomic_writer(target) as handle:
...     _ = handle.write(b"second")
>>> open(target).read()
'second'
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from contextlib import contextmanager

__all__ = ["atomic_writer", "write_atomic", "write_atomic_with", "describe_write_error",
           "is_read_only", "refuse_read_only"]

_UMASK = os.umask(0o022)  # read once at import (reading it means setting it), then put back
os.umask(_UMASK)


@contextmanager
def atomic_writer(path, mode: str = "wb", encoding: str | None = None, durable: bool = True):
    """Yield a file open for writing; on a clean exit it replaces `path` in one rename.

    `durable`: flush the data to the disk before the rename, so even a machine crash
    leaves the old file or the new one (skip it for files rewritten every second).
    """
    path = os.fspath(path)
    refuse_read_only(path)
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = _temporary_in(folder, path)
    try:
        with os.fdopen(descriptor, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except BaseException:
        _remove_quietly(temporary)
        raise


def write_atomic(path, data, encoding: str = "utf-8", durable: bool = True) -> None:
    """Replace `path` with `data` atomically: bytes, text (encoded with `encoding`), or a list
    of texts written one after another (a big file never held as one string)."""
    pieces = [data] if isinstance(data, (bytes, str)) else data
    with atomic_writer(path, durable=durable) as handle:
        for piece in pieces:
            handle.write(piece.encode(encoding, errors="surrogateescape") if isinstance(piece, str)
                         else piece)


def write_atomic_with(path, write_to) -> None:
    """Let `write_to(temporary)` write the file itself (for a writer that wants a path, not
    a handle: Graphviz, the HTML report), then rename it over `path`. The temporary name is
    in the same folder and keeps `path`'s suffix; it is removed if anything fails.

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "graph.dot")
    >>> write_atomic_with(target, lambda temporary: open(temporary, "w").close())
    >>> os.listdir(os.path.dirname(target))
    ['graph.dot']
    """
    path = os.fspath(path)
    refuse_read_only(path)
    folder, name = os.path.split(os.path.abspath(path))
    stem, suffix = os.path.splitext(name)
    staged = os.path.join(folder, f".{stem}.{os.getpid()}.partial{suffix}")
    try:
        write_to(staged)
        os.chmod(staged, _mode_for(path))
        os.replace(staged, path)
    finally:
        _remove_quietly(staged)


def is_read_only(path) -> bool:
    """Whether `path` is an existing file whose mode has no write bit (`chmod 444`). Decided
    from the mode bits, not `os.access`, so it is the same for root; a missing path is not
    read-only (it can be created).

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> is_read_only(target)
    False
    >>> open(target, "w").close(); os.chmod(target, 0o444)
    >>> is_read_only(target)
    True
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and mode & 0o222 == 0


def refuse_read_only(path) -> None:
    """PermissionError naming `path` when it is a read-only file (see `is_read_only`), which
    an atomic write would otherwise replace; the file is left as it was.

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "trace.json")
    >>> open(target, "w").close(); os.chmod(target, 0o444)
    >>> refuse_read_only(target)
    Traceback (most recent call last):
    ...
    PermissionError: [Errno 13] the file is read-only; chmod u+w it, or write elsewhere: '...trace.json'
    """
    if is_read_only(path):
        raise PermissionError(errno.EACCES, "the file is read-only; chmod u+w it, or write "
                              "elsewhere", os.fspath(path))


def describe_write_error(path, error: OSError) -> str:
    """One line for a user: which file could not be written and why.

    >>> describe_write_error("out/trace.json", OSError(28, "No space left on device"))
    "can't write out/trace.json: No space left on device (nothing was left half-written)"
    """
    reason = error.strerror or str(error)
    return f"can't write {os.fspath(path)}: {reason} (nothing was left half-written)"


def _mode_for(path: str) -> int:
    """The permissions a plain `open(path, "w")` would give (mkstemp makes files 0600)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


def _temporary_in(folder: str, path: str) -> tuple:
    try:
        return tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    except OSError as error:
        raise type(error)(error.errno, error.strerror, path) from None


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
