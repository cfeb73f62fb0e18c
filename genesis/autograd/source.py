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
from dataclasses import dataclass

_GENESIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_SKIPPED_MODULE_FILES = ("runpy.py", "<frozen runpy>")


@dataclass(frozen=True)
class Frame:
    """One user frame: file, line, function."""

    file: str
    line: int
    function: str

    @property
    def code(self) -> str:
        """The source text of the line, stripped ('' when unavailable)."""
        return linecache.getline(self.file, self.line).strip()

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class SourceLocation:
    """The innermost user frame of a call and the user frames around it (innermost first)."""

    frames: tuple

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

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

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
        """The current call's user frames (outside genesis), or None if there are none."""
        frame = sys._getframe(skip)
        frames = []
        while frame is not None and len(frames) < max_frames:
            filename = frame.f_code.co_filename
            if not filename.startswith(_GENESIS_DIR) and not filename.endswith(_SKIPPED_MODULE_FILES):
                frames.append(Frame(filename, frame.f_lineno, frame.f_code.co_name))
            frame = frame.f_back
        return cls(tuple(frames)) if frames else None
