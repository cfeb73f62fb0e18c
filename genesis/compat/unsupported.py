"""The errors a PyTorch script gets for a torch name genesis does not provide, and where in
the script it was used.

`UnsupportedTorchAPI` is an AttributeError, `UnsupportedTorchModule` a
ModuleNotFoundError and `UnsupportedTorchImport` (a name taken by `from torch.fft import
rfft`) an ImportError, so a script's own feature tests (`hasattr(torch, "stft")`,
`try: import torch.fx except ImportError:`) see what they would see on a
PyTorch without the feature; a script that uses the name anyway stops with one line that
names it, where it was used, and that genesis does not support it yet.
"""
from __future__ import annotations

import os
import sys

__all__ = ["UnsupportedTorchAPI", "UnsupportedTorchModule", "UnsupportedTorchImport",
           "UNSUPPORTED_ERRORS", "script_location", "UNSUPPORTED"]

_GENESIS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_IMPORT_MACHINERY = ("<frozen importlib", os.path.dirname(os.__file__) + os.sep + "importlib")

UNSUPPORTED = "is not supported by genesis yet"


def script_location(depth: int = 1) -> str | None:
    """`file:line` of the innermost frame, from `depth` frames up, that is neither genesis's
    nor Python's import machinery: where the script used the name; None when there is none.

    >>> script_location() is not None
    True
    """
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_GENESIS_DIR) and not filename.startswith(_IMPORT_MACHINERY):
            return f"{_shown(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _shown(filename: str) -> str:
    """A path as short as it stays clear: relative to the current folder when inside it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if relative.startswith("..") else relative


def _message(name: str, where: str | None) -> str:
    used = f" (used at {where})" if where else ""
    return (f"{name} {UNSUPPORTED}{used}: genesis runs the part of the PyTorch API its "
            "tests cover; `genesis compat SCRIPT` lists every torch name a script uses that "
            "genesis lacks")


class UnsupportedTorchAPI(AttributeError):
    """A torch attribute genesis does not provide (`torch.stft`, `torch.fft.rfft`).

    >>> error = UnsupportedTorchAPI("torch.stft", "train.py:3")
    >>> str(error).split(":")[0]
    'torch.stft is not supported by genesis yet (used at train.py'
    """

    def __init__(self, name: str, where: str | None = None):
        super().__init__(_message(name, where))
        self.torch_name, self.where = name, where


class UnsupportedTorchModule(ModuleNotFoundError):
    """A torch module genesis does not provide (`import torch.fx`)."""

    def __init__(self, name: str, where: str | None = None):
        super().__init__(_message(name, where), name=name)
        self.torch_name, self.where = name, where


class UnsupportedTorchImport(ImportError):
    """A torch name genesis does not provide, taken by `from torch.fft import rfft`: an
    ImportError, as Python makes any failed `from ... import`, so a script's
    `except ImportError:` fallback still runs.

    >>> error = UnsupportedTorchImport("torch.fft.rfft", "train.py:2")
    >>> isinstance(error, ImportError), error.torch_name
    (True, 'torch.fft.rfft')
    """

    def __init__(self, name: str, where: str | None = None):
        super().__init__(_message(name, where), name=name.rpartition(".")[0])
        self.torch_name, self.where = name, where


UNSUPPORTED_ERRORS = (UnsupportedTorchAPI, UnsupportedTorchModule, UnsupportedTorchImport)
