"""Where a forward call came from: the user's frames, skipping frames inside genesis.

Capturing stores file names, line numbers and function names only; the code
line is read (through `linecache`) when a location is printed.

>>> location = SourceLocation.capture()
>>> location.line > 0 and location.file.endswith(".py") or location.file.startswith("<")
True
"""
from __future__ import annotations

import linecache
import os
import sys
import sysconfig

_GENESIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_SKIPPED_FILES = ("runpy.py", "<frozen runpy>")


def _library_prefixes() -> tuple:
    """Folders of the standard library and installed packages: frames there end the user chain."""
    paths = sysconfig.get_paths()
    prefixes = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    prefixes.update(site_path for site_path in sys.path if site_path.endswith("-packages"))
    return tuple(sorted(os.path.join(prefix, "") for prefix in prefixes))


_LIBRARY_PREFIXES = _library_prefixes()


def add_tool_directory(directory: str) -> None:
    """Count the frames of files under `directory` as a tool's, not the user's (a user frame
    is never found beyond one): genesis_cli registers its own folder, as it runs scripts.

    >>> import os
    >>> add_tool_directory(os.path.dirname(os.__file__))
    """
    global _LIBRARY_PREFIXES
    prefix = os.path.join(os.path.abspath(directory), "")
    if prefix not in _LIBRARY_PREFIXES:
        _LIBRARY_PREFIXES += (prefix,)
        _FILE_KINDS.clear()


class Frame:
    """One user frame: file, line, function."""

    __slots__ = ("file", "line", "function")

    def __init__(self, file: str, line: int, function: str):
        self.file, self.line, self.function = file, line, function

    @property
    def code(self) -> str:
        """The source text of the line, stripped ('' when unavailable)."""
        return linecache.getline(self.file, self.line).strip()

    def __eq__(self, other) -> bool:
        return isinstance(other, Frame) and (self.file, self.line, self.function) == (
            other.file, other.line, other.function)

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.function))

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def __repr__(self) -> str:
        return f"Frame({self.file!r}, {self.line}, {self.function!r})"


class SourceLocation:
    """The innermost user frame of a call and the user frames around it (innermost first)."""

    __slots__ = ("frames",)

    def __init__(self, frames: tuple):
        self.frames = frames

    @property
    def file(self) -> str:
        return self.frames[0].file

    @property
    def line(self) -> int:
        return self.frames[0].line

    @property
    def function(self) -> str:
        return self.frames[0].function

    @property
    def code(self) -> str:
        return self.frames[0].code

    def __eq__(self, other) -> bool:
        return isinstance(other, SourceLocation) and self.frames == other.frames

    def __hash__(self) -> int:
        return hash(self.frames)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def __repr__(self) -> str:
        return f"SourceLocation({self})"

    def describe(self) -> str:
        """`file:line in function` followed by the code line, then the outer user frames."""
        lines = []
        for depth, frame in enumerate(self.frames):
            prefix = "  " if depth == 0 else "    called from "
            lines.append(f"{prefix}{frame.file}:{frame.line} in {frame.function}")
            if depth == 0 and frame.code:
                lines.append(f"      {frame.code}")
        return "\n".join(lines)

    @classmethod
    def capture(cls, max_frames: int = 6, skip: int = 1):
        """The current call's user frames, or None if there are none.

        Frames inside genesis are skipped; the chain ends at the first frame of
        the standard library or an installed package (a test runner, say). The
        same frames give the same (shared) location: the ops of a loop cost one
        walk of the stack and a dictionary lookup each, not new objects.
        """
        frame = sys._getframe(skip)
        # The user frames, innermost first, and (id of its code, instruction offset) of each
        # as the cache's key. Neither the code object nor the line number serves: hashing a
        # code object hashes all its constants (the code of every function a module
        # defines among them), and a frame's line number is found by reading its code's line
        # table from the start; each took over 10 us for a loop at the end of a long script.
        # An id stays its code object's while the cache keeps that object (`_KEPT_CODES`).
        frames, key = [], []
        while frame is not None and len(frames) < max_frames:
            code = frame.f_code
            kind = _FILE_KINDS.get(code.co_filename)
            if kind is None:
                kind = _classify(code.co_filename)
            if kind is _SKIP:
                frame = frame.f_back
                continue
            if kind is _LIBRARY and frames:
                break
            frames.append(frame)
            key.append((id(code), frame.f_lasti))
            frame = frame.f_back
        if not frames:
            return None
        key = tuple(key)
        location = _LOCATIONS.get(key)
        if location is None:
            location = cls._first_seen(key, frames)
        return location

    @classmethod
    def _first_seen(cls, key: tuple, frames: list):
        """The location of `frames`, filed under `key`: the one already made for the same
        lines where there is one (the ops of one line share it)."""
        if len(_LOCATIONS) >= _MAX_LOCATIONS:
            _LOCATIONS.clear()
            _BY_LINES.clear()
            _KEPT_CODES.clear()
        lines = tuple(Frame(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
                      for frame in frames)
        location = _BY_LINES.get(lines)
        if location is None:
            location = _BY_LINES[lines] = cls(lines)
        _LOCATIONS[key] = location
        _KEPT_CODES.update((id(frame.f_code), frame.f_code) for frame in frames)
        return location


_SKIP, _LIBRARY, _USER = "skip", "library", "user"
_FILE_KINDS: dict = {}   # file name -> _SKIP (genesis, runpy), _LIBRARY or _USER
_LOCATIONS: dict = {}    # ((id of code, instruction offset), ...) -> the SourceLocation there
_BY_LINES: dict = {}     # (Frame, ...) -> the SourceLocation of those lines
_KEPT_CODES: dict = {}   # id -> code object, for each code object a key of _LOCATIONS names
_MAX_LOCATIONS = 65536   # distinct call sites kept (a code object kept alive is small)


def _classify(filename: str) -> str:
    if filename.startswith(_GENESIS_DIR) or filename.endswith(_SKIPPED_FILES):
        kind = _SKIP
    elif filename.startswith(_LIBRARY_PREFIXES):
        kind = _LIBRARY
    else:
        kind = _USER
    _FILE_KINDS[filename] = kind
    return kind
