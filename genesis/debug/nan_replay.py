"""`NaNReplay`: when the first NaN/Inf of a run is found, keep the leaves of the step it was
born in (the parameters, and the tensors that entered that step's ops from outside the graph:
the batch, the targets), so the step can be replayed in a notebook.

While a step runs, the NaN watch hands it the arguments of each op recorded with grad
enabled (`see`); it keeps the leaf tensors among them (references only, at most
`MAX_LEAVES`, forgotten when the step's backward call ends). At the first finding it copies
those and the parameters to the host and saves them with `genesis.save` (a NumPy archive
and a JSON manifest: nothing pickled, loading never runs code) as `nan_replay.pt` in its
folder; `saved` then describes the file, and `reload_lines()` are the two lines that load it.
The parameters are as they were before the step's optimizer update when the finding came
before it (a NaN born in forward or backward), and after it otherwise (a NaN written by the
step itself); `saved["parameters_are"]` says which.

>>> import genesis, tempfile, os
>>> folder = tempfile.mkdtemp()
>>> replay = NaNReplay(folder, name_of=lambda tensor: None)
>>> batch = genesis.ones(2, 3)
>>> replay.see((batch,))
>>> finding = type("F", (), {"title": "NaN born in Log", "details": {"first_step": 7}, "message": ""})()
>>> replay.save(finding, 7, [("fc.weight", genesis.zeros(3))])
>>> saved = genesis.load(os.path.join(folder, "nan_replay.pt"))
>>> saved["step"], sorted(saved["parameters"]), sorted(saved["inputs"])
(7, ['fc.weight'], ['batch'])
"""
from __future__ import annotations

import os

import numpy as np

from ..grad_state import grad_state
from ..serialization import save
from ..tensor import Tensor, wrap_array
from ..device import cpu
from .names import Names, user_namespace

__all__ = ["NaNReplay", "MAX_LEAVES", "FILE_NAME"]

MAX_LEAVES = 256
FILE_NAME = "nan_replay.pt"


class NaNReplay:
    """The leaves of the current step, and the replay file of the first NaN/Inf's step."""

    def __init__(self, folder=None, name_of=None):
        self.folder = folder
        self.name_of = name_of or (lambda tensor: None)
        self.leaves = {}        # id -> leaf tensor that entered an op of the current step
        self.after_update = False
        self.saved = None       # what was saved: {"file", "step", "parameters", "inputs", ...}
        self.data = None        # the saved dictionary itself (kept in memory without a folder)

    def see(self, args) -> None:
        """The arguments of one op: keep the leaf tensors (while grad is enabled)."""
        self.after_update = False  # a forward runs: the last update was the previous step's
        if not grad_state.enabled or len(self.leaves) >= MAX_LEAVES:
            return
        for arg in args:
            if isinstance(arg, Tensor) and arg.grad_fn is None:
                self.leaves[id(arg)] = arg

    def stepping(self) -> None:
        """An optimizer is about to update the parameters: a finding filed before the next
        op runs (by the step itself) sees them after that update."""
        self.after_update = True

    def step_done(self) -> None:
        """The step's backward call ended: its leaves are no longer needed."""
        if self.leaves:
            self.leaves = {}
        self.after_update = False

    def save(self, finding, step: int, parameters: list) -> None:
        """Keep the leaves of `step` at the first finding (`parameters`: [(name, tensor)])."""
        if self.saved is not None:
            return
        step = finding.details.get("first_step", step)
        held = {id(tensor) for _, tensor in parameters}
        params = {name: _host_copy(tensor) for name, tensor in parameters}
        names = Names.from_namespace(user_namespace())
        inputs = {}
        for index, tensor in enumerate(tensor for key, tensor in self.leaves.items()
                                       if key not in held):
            name = self.name_of(tensor) or names.variable_name(tensor) or f"input_{index}"
            inputs[name if name not in inputs else f"{name}_{index}"] = _host_copy(tensor)
        when = "after" if self.after_update else "before"
        self.data = {"step": step, "finding": finding.title, "parameters_are": f"{when} the "
                     "step's optimizer update", "parameters": params, "inputs": inputs}
        path = None
        problem = None
        if self.folder is not None:
            path = os.path.join(self.folder, FILE_NAME)
            try:
                os.makedirs(self.folder, exist_ok=True)
                save(self.data, path)
            except OSError as error:  # a full or read-only disk: the finding still stands
                path, problem = None, f"could not write {FILE_NAME}: {error.strerror or error}"
        self.saved = {"file": path, "step": step, "parameters": sorted(params),
                      "inputs": sorted(inputs), "parameters_are": self.data["parameters_are"],
                      "problem": problem}
        finding.details["replay"] = self.saved
        if path is not None:
            finding.message += (f"\nThe leaves of step {step} (parameters {when} its update, and "
                                f"the inputs its ops took) are saved; to replay it:\n"
                                + "\n".join(f"  {line}" for line in self.reload_lines()))

    def reload_lines(self) -> list:
        """The two lines that reload the saved leaves in a notebook."""
        if self.saved is None or self.saved["file"] is None:
            return []
        return [f"leaves = genesis.load({self.saved['file']!r})",
                "model.load_state_dict(leaves['parameters'], strict=False)  "
                "# then run the step on leaves['inputs']"]


def _host_copy(tensor: Tensor) -> Tensor:
    """A detached copy of `tensor` on the CPU (the values now, whatever happens next)."""
    data = tensor._data
    array = np.array(data, copy=True) if isinstance(data, np.ndarray) else data.get()
    return wrap_array(array, cpu)
