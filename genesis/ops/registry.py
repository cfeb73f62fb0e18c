"""The op registry: one `OpInfo` per public op, read by the tests, by
`genesis gradcheck --ops` and by the docs.

Each family module lists its entries in `OPS`, and its package registers the family
(`register_family`): genesis.ops for the op families, genesis.nn for nn's Functions. Adding
an op means writing its Function and function in the family file and appending one
`OpInfo` there. The registry holds what has been imported: `import genesis` registers all.

>>> import genesis
>>> from genesis.ops.registry import all_ops
>>> any(info.name == "mul" for info in all_ops())
True
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..creation import from_numpy
from ..dtypes import float64

__all__ = ["OpInfo", "Sample", "all_ops", "find_op", "register_family"]


@dataclass(frozen=True)
class Sample:
    """One set of inputs for an op.

    `args` holds NumPy arrays (become float64 tensors) and constants (passed
    as they are); `grad` says which array arguments require grad; `layout`
    "transposed" or "strided" makes the array arguments non-contiguous.
    """

    args: tuple
    kwargs: dict = field(default_factory=dict)
    grad: tuple | None = None
    layout: str = "contiguous"
    note: str = ""

    def tensors(self, dtype=None, device=None):
        """The sample's arguments as genesis tensors (leaves; non-contiguous if asked)."""
        dtype = dtype or float64
        arrays = [i for i, arg in enumerate(self.args) if isinstance(arg, np.ndarray)]
        wants = self.grad if self.grad is not None else tuple(True for _ in arrays)
        built = list(self.args)
        for position, index in enumerate(arrays):
            array = self.args[index]
            floating = array.dtype.kind == "f"
            tensor = from_numpy(_with_layout(
                array.astype(dtype.numpy_dtype) if floating else array, self.layout))
            if device is not None:
                tensor = tensor.to(device)
            if floating and wants[position]:
                tensor.requires_grad_()
            built[index] = tensor
        return tuple(built), dict(self.kwargs)


def _with_layout(array: np.ndarray, layout: str) -> np.ndarray:
    if layout == "contiguous" or array.ndim == 0:
        return array
    if layout == "transposed":
        return np.ascontiguousarray(array.T).T  # same values, transposed strides
    if layout == "strided":
        spread = np.zeros(array.shape[:-1] + (array.shape[-1] * 2,), array.dtype)
        spread[..., ::2] = array
        return spread[..., ::2]
    raise ValueError(f"unknown layout {layout!r}")


@dataclass(frozen=True)
class OpInfo:
    """What the tests and tools need to know about an op.

    `call(*args, **kwargs)` runs it; `samples(rng)` gives float64-friendly
    `Sample`s; `torch(torch_module, *args, **kwargs)` runs the same math in
    PyTorch for differential tests (None when there is no direct equivalent);
    `kinks` names the points where it is not differentiable (tests avoid
    them; trace checks report "not differentiable here" there).
    """

    name: str
    call: Callable
    samples: Callable[[np.random.Generator], list]
    differentiable: bool = True
    torch: Callable | None = None
    kinks: str = ""
    family: str = ""


_families: dict[str, list] = {}


def register_family(family: str, ops: list) -> None:
    """Add a family's `OpInfo`s under the name `family` (an entry that names its own
    family keeps it). Registering a family again replaces its entries.

    >>> register_family("doc_example", [])
    >>> del _families["doc_example"]
    """
    _families[family] = [info if info.family else replace(info, family=family) for info in ops]


def all_ops() -> list:
    """Every registered op, family by family, in the order the families registered."""
    return [info for ops in _families.values() for info in ops]


def find_op(name: str) -> OpInfo:
    """The OpInfo called `name`, or KeyError listing the known names."""
    for info in all_ops():
        if info.name == name:
            return info
    raise KeyError(f"no op named {name!r} in the registry")
