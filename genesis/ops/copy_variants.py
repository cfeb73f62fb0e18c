"""Other PyTorch names for ops genesis has: the `*_copy` forms of view ops (the view's
values in new storage: `genesis.transpose_copy(x, 0, 1)` is `x.transpose(0, 1).clone()`),
`unsafe_split`/`unsafe_chunk`, and the top-level `detach`, `fill`, `rsub`, `range`,
`nonzero_static`, `empty_strided`, `empty_permuted`, `chain_matmul`, `frobenius_norm`,
`get_device`, `is_inference` and `conj_physical_`.

>>> import genesis
>>> x = genesis.arange(6.).view(2, 3)
>>> y = genesis.transpose_copy(x, 0, 1)
>>> y.shape, y.is_contiguous()
(genesis.Size([3, 2]), True)
"""
from __future__ import annotations

import functools
import warnings

from .. import dtypes
from ..creation import arange, empty, full
from ..tensor import Tensor
from .convert import clone
from .linalg import matmul
from .join import cat
from .masked import nonzero
from .norm import vector_norm
from .where import where

# The view methods whose copy forms are made by `_copy_of` (alias_copy and slice_copy are
# written out below: there is no method of those names to call).
_VIEWS = ("as_strided", "detach", "diagonal", "expand", "narrow", "permute", "select", "split",
          "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze", "view")


def _copy_of(view_name: str):
    def function(input: Tensor, *args, **kwargs):
        view = getattr(input, view_name)(*args, **kwargs)
        return tuple(clone(part) for part in view) if isinstance(view, tuple) else clone(view)

    function.__name__ = function.__qualname__ = f"{view_name}_copy"
    function.__doc__ = f"`input.{view_name}(...)`'s values in new storage (PyTorch's copy form)."
    return function


_COPIES = {f"{name}_copy": _copy_of(name) for name in _VIEWS}


def alias_copy(input: Tensor) -> Tensor:
    """A copy of `input` (the copy form of an alias)."""
    return clone(input)


def slice_copy(input: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """`input[..., start:end:step, ...]` along `dim`, in new storage."""
    key = (slice(None),) * (dim % max(input.ndim, 1)) + (slice(start, end, step),)
    return clone(input[key])


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """`input.narrow(dim, start, length)` in new storage."""
    return clone(input.narrow(dim, start, length))


def _changeable(pieces: tuple) -> tuple:
    """The pieces of a split untracked as views, as PyTorch's unsafe forms return them: each
    has its own version counter and may be changed in place with a graph, with no effect on
    the input's graph (the caller takes care that this is what they mean)."""
    for piece in pieces:
        piece._view = None
        piece._version_counter = [0]
    return pieces


def unsafe_split(tensor: Tensor, split_size: int, dim: int = 0) -> tuple:
    """`split`, with pieces that may be changed in place (see `_changeable`)."""
    return _changeable(tensor.split(split_size, dim))


def unsafe_split_with_sizes(tensor: Tensor, split_sizes, dim: int = 0) -> tuple:
    """`split_with_sizes`, with pieces that may be changed in place."""
    return _changeable(tensor.split_with_sizes(split_sizes, dim))


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """`chunk`, with pieces that may be changed in place."""
    return _changeable(input.chunk(chunks, dim))


def detach(input: Tensor) -> Tensor:
    """`input.detach()`."""
    return input.detach()


def fill(input: Tensor, value) -> Tensor:
    """A tensor like `input` filled with `value` (out of place; `fill_` writes in place). As
    in PyTorch it stays in the graph: `input` gets a zero gradient, a tensor `value` the sum
    of the gradient."""
    return where(full(input.shape, True, device=input.device), value, input)


def rsub(input: Tensor, other, alpha=1) -> Tensor:
    """`other - alpha * input` (subtraction with the operands reversed).

    >>> import genesis
    >>> genesis.rsub(genesis.tensor([1., 2.]), 3, alpha=2)
    tensor([ 1., -1.])
    """
    return other - input * alpha if alpha != 1 else other - input


def range(start=0, end=None, step=1, *, dtype=None, device=None,
          requires_grad: bool = False) -> Tensor:
    """Values from `start` to `end` inclusive by `step`, in the default float dtype: PyTorch's
    deprecated `range` (use `arange`, which stops before `end`)."""
    warnings.warn("genesis.range (torch.range) is deprecated: it includes `end`; use arange, "
                  "which stops before it", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    count = int((end - start) // step) + 1
    chosen = dtypes.get_default_dtype() if dtype is None else dtype
    return arange(count, dtype=dtypes.float64, device=device).mul_(step).add_(start).to(
        chosen).requires_grad_(requires_grad)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of the nonzero elements as `nonzero` gives them, cut or padded with
    `fill_value` to exactly `size` rows (a fixed shape).

    >>> import genesis
    >>> genesis.nonzero_static(genesis.tensor([1., 0., 2.]), size=3)
    tensor([[ 0],
            [ 2],
            [-1]])
    """
    found = nonzero(input)[:size]
    missing = size - found.shape[0]
    if missing <= 0:
        return found
    padding = full((missing, found.shape[1]), fill_value, dtype=dtypes.int64, device=input.device)
    return cat([found, padding])


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """`empty(size)`: genesis lays new tensors out row-major whatever `stride` says (strides
    only place elements in memory; the values are uninitialised either way)."""
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """`empty(size)` (see `empty_strided`: the memory order asked for is not kept)."""
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the matrices, left to right (PyTorch's deprecated name for
    `linalg.multi_dot`)."""
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    return functools.reduce(matmul, matrices)


def frobenius_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False) -> Tensor:
    """The 2-norm of the elements over `dim` (PyTorch's deprecated name)."""
    return vector_norm(input, 2, dim, keepdim)


def get_device(input: Tensor) -> int:
    """`input.get_device()`: the GPU number, or -1 on the CPU."""
    return input.get_device()


def is_inference(input: Tensor) -> bool:
    """`input.is_inference()`."""
    return input.is_inference()


def conj_physical_(input: Tensor) -> Tensor:
    """Conjugate in place: nothing to do for a real tensor."""
    return input


__all__ = sorted([*_COPIES, "alias_copy", "slice_copy", "narrow_copy", "unsafe_split",
                  "unsafe_split_with_sizes", "unsafe_chunk", "detach", "fill", "rsub", "range",
                  "nonzero_static", "empty_strided", "empty_permuted", "chain_matmul",
                  "frobenius_norm", "get_device", "is_inference", "conj_physical_"])
globals().update(_COPIES)
METHODS = {"conj_physical_": conj_physical_, "narrow_copy": narrow_copy,
           "nonzero_static": nonzero_static, "unsafe_chunk": unsafe_chunk,
           "unsafe_split": unsafe_split, "unsafe_split_with_sizes": unsafe_split_with_sizes}
OPS: list = []
