"""`torch`, served by genesis for one run: `serve_torch()` makes `import torch` (and the
torch modules in `torch_modules.MODULES`) give stand-in modules whose attributes are
genesis's, so an unmodified PyTorch script runs on genesis.

    >>> with serve_torch():
    ...     import torch
    ...     import genesis
    ...     torch.nn.Linear is genesis.nn.Linear, torch.zeros(2).tolist()
    (True, [0.0, 0.0])

A torch name genesis lacks raises `UnsupportedTorchAPI` (an AttributeError) where the
script uses it; a torch module it lacks raises `UnsupportedTorchModule` (a
ModuleNotFoundError) where the script imports it.
"""
from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.abc
import importlib.util
import os
import shutil
import sys
import tempfile
import types

from ..dtypes import show_dtypes_as
from ..sizes import show_sizes_as
from .torch_modules import MODULES, RENAMED
from .unsupported import (UnsupportedTorchAPI, UnsupportedTorchImport, UnsupportedTorchModule,
                          script_location)

__all__ = ["serve_torch", "serve_torch_from_now_on", "TorchModule", "is_served", "resolve"]


class TorchModule(types.ModuleType):
    """One torch module, served by genesis: its attributes are those of `target` (a genesis
    module, or None for a module that offers nothing yet), its submodules the torch modules
    below it in MODULES; any other name raises UnsupportedTorchAPI naming where the script
    used it. A name found once is kept, so a script's hot loop pays the lookup once."""

    def __init__(self, name: str, target: types.ModuleType | None):
        super().__init__(name, f"{name}, served by genesis")
        self.__dict__["_genesis_target"] = target
        self.__dict__["_missing"] = set()  # attributes looked up that genesis lacks
        self.__path__ = []  # a package: `import torch.nn.functional` works through it
        self.__file__ = getattr(target, "__file__", None)

    def __getattr__(self, attribute: str):
        if attribute == "__all__":  # `from torch.utils.data import *`: the genesis module's
            return self._public_names()
        if attribute.startswith("__") and attribute.endswith("__") and \
                f"{self.__name__}.{attribute}" not in RENAMED:
            raise AttributeError(attribute)  # copy, pickle and inspect probe these
        value = resolve(f"{self.__name__}.{attribute}", self.__dict__["_genesis_target"],
                        attribute)
        if value is _MISSING:
            self.__dict__["_missing"].add(attribute)  # (for TorchFinder: see find_spec)
            raise UnsupportedTorchAPI(f"{self.__name__}.{attribute}", script_location(2))
        self.__dict__[attribute] = value
        return value

    def __setattr__(self, attribute: str, value) -> None:
        if isinstance(value, TorchModule) and _bound_to_other(self, attribute):
            return  # `import torch.autograd.gradcheck` leaves torch.autograd.gradcheck the function
        super().__setattr__(attribute, value)

    def _public_names(self) -> list:
        """What `import *` takes: the names the genesis module exports (its `__all__`, else
        its names without a leading underscore), as torch's modules export theirs."""
        target = self.__dict__["_genesis_target"]
        if target is None:
            return []
        names = getattr(target, "__all__", None)
        if names is None:
            names = [name for name in vars(target) if not name.startswith("_")
                     and not isinstance(vars(target)[name], types.ModuleType)]
        return list(names)

    def __dir__(self) -> list:
        target = self.__dict__["_genesis_target"]
        names = set() if target is None else {name for name in dir(target) if not name.startswith("_")}
        prefix = self.__name__ + "."
        names.update(name[len(prefix):].split(".")[0] for name in MODULES if name.startswith(prefix))
        return sorted(names)


_MISSING = object()


def _bound_to_other(module: TorchModule, attribute: str) -> bool:
    """Whether the genesis module behind `module` binds `attribute` to something that is not a
    module: as in torch, where `torch.autograd.gradcheck` is the function although a module of
    that name exists, that binding is the attribute."""
    target = module.__dict__.get("_genesis_target")
    value = getattr(target, attribute, None) if target is not None else None
    return value is not None and not isinstance(value, types.ModuleType)


def resolve(torch_name: str, target: types.ModuleType | None, attribute: str):
    """What the torch name `torch_name` (`attribute` of its module, served by `target`) is
    under genesis: a served submodule, a renamed genesis object, or `target`'s attribute of
    that name; `_MISSING` when genesis has none. A submodule's name that `target` binds to
    something else (`torch.autograd.gradcheck`, the function) gives that binding."""
    if torch_name in MODULES:
        value = getattr(target, attribute, None) if target is not None else None
        if value is not None and not isinstance(value, types.ModuleType):
            return value
        return importlib.import_module(torch_name)
    renamed = RENAMED.get(torch_name)
    if renamed in MODULES:  # a torch module: its stand-in while torch is served, else genesis's
        module = sys.modules.get(renamed)
        return module if is_served(module) else importlib.import_module(MODULES[renamed])
    if renamed is not None:
        module, _, name = renamed.rpartition(".")
        return getattr(importlib.import_module(module), name)
    if target is None:
        return _MISSING
    return getattr(target, attribute, _MISSING)


class _TorchLoader(importlib.abc.Loader):
    def create_module(self, spec) -> TorchModule:
        target = MODULES[spec.name]
        return TorchModule(spec.name, None if target is None else importlib.import_module(target))

    def exec_module(self, module) -> None:
        """Nothing to run: the stand-in reads genesis's module as it is."""


class TorchFinder(importlib.abc.MetaPathFinder):
    """First on `sys.meta_path` while torch is served: finds `torch` and its modules."""

    loader = _TorchLoader()

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        if fullname not in MODULES:
            parent, _, name = fullname.rpartition(".")
            if name in getattr(sys.modules.get(parent), "_missing", ()):
                # `from torch.fft import rfft`: Python looked rfft up on the module first, then
                # tries it as a submodule, and turns a ModuleNotFoundError of that name into
                # its own "cannot import name"; this error reaches the script instead
                raise UnsupportedTorchImport(fullname, script_location(2))
            raise UnsupportedTorchModule(fullname, script_location(2))
        return importlib.util.spec_from_loader(fullname, self.loader, is_package=True)


def is_served(module) -> bool:
    """Whether `module` is a stand-in served by genesis (not the real torch)."""
    return isinstance(module, TorchModule)


@contextlib.contextmanager
def serve_torch():
    """While inside, `import torch` and its modules give genesis's stand-ins; the real
    torch (if it was imported) is put back afterwards.

    Processes started meanwhile with the spawn or forkserver method (a DataLoader's
    workers, `torch.multiprocessing.spawn`) run a fresh interpreter that imports the script
    again: the folder `_child_path()` puts on `sys.path` (after the script's folder, before
    any installed torch), which they inherit, holds a `torch` that serves genesis to them
    too (this process's finder comes before it)."""
    finder = TorchFinder()
    put_aside = {name: module for name, module in sys.modules.items()
                 if name == "torch" or name.startswith("torch.")}
    for name in put_aside:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    child_path = _child_path()
    if child_path is not None:  # after the script's folder, which a runner sets as sys.path[0]
        sys.path.insert(1, child_path)
    dtypes_shown_as, sizes_shown_as = show_dtypes_as("torch"), show_sizes_as("torch")
    try:
        yield
    finally:
        show_dtypes_as(dtypes_shown_as)
        show_sizes_as(sizes_shown_as)
        sys.meta_path.remove(finder)
        if child_path is not None and child_path in sys.path:
            sys.path.remove(child_path)
        for name in [name for name in sys.modules if name == "torch" or name.startswith("torch.")]:
            del sys.modules[name]
        sys.modules.update(put_aside)


def serve_torch_from_now_on() -> types.ModuleType:
    """Serve genesis as `torch` in this process for good (what the `torch` of `_child_path()`
    calls in a spawned child); returns the `torch` stand-in."""
    for name in [name for name in sys.modules if name == "torch" or name.startswith("torch.")]:
        del sys.modules[name]
    if not any(isinstance(entry, TorchFinder) for entry in sys.meta_path):
        sys.meta_path.insert(0, TorchFinder())
    show_dtypes_as("torch")
    show_sizes_as("torch")
    return importlib.import_module("torch")


# The `torch` package a spawned child finds first on its inherited sys.path: it replaces
# itself by genesis's stand-in (an import returns what sys.modules holds when it ends).
_CHILD_TORCH = (
    '"""torch, served by genesis to a process started from a script genesis serves it to."""\n'
    "import sys\n"
    "from genesis.compat.stand_in import serve_torch_from_now_on\n"
    "sys.modules[__name__] = serve_torch_from_now_on()\n")
_child_folder: list = []  # the folder, made once per process


def _child_path() -> str | None:
    """A folder holding the `torch` package above (made on first use, in the temp folder),
    or None where it cannot be made (a full or read-only temp folder: spawned children then
    import the installed torch, as they would without genesis)."""
    if not _child_folder:
        try:
            folder = tempfile.mkdtemp(prefix="genesis-served-torch-")
            os.mkdir(os.path.join(folder, "torch"))
            with open(os.path.join(folder, "torch", "__init__.py"), "w", encoding="utf-8") as handle:
                handle.write(_CHILD_TORCH)
        except OSError:
            return None
        made_by = os.getpid()  # (a forked copy of this process exiting leaves it in place)
        atexit.register(lambda: os.getpid() == made_by and shutil.rmtree(folder, ignore_errors=True))
        _child_folder.append(folder)
    return _child_folder[0]
