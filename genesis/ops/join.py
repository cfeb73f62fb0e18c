"""Joining and splitting: cat/concat, stack, split, chunk, unbind.

cat and stack copy; split, chunk and unbind return views of their input, each
tracked as a view (so in-place changes through a piece reach the input's
gradient). Each gradient is the opposite operation: cat's is a split, split's
a cat, stack's an unbind, unbind's a stack.
"""
from __future__ import annotations

from ..autograd.function import mark_view, Op
from ..tensor import Tensor
from . import samples
from ._operands import common_dtype_arrays, device_mismatch, normalize_dim
from .registry import OpInfo, Sample
from .index import Select, Slice

__all__ = ["cat", "concat", "concatenate", "stack", "split", "chunk", "unbind"]


class Cat(Op):
    """Tensors joined along an existing dim."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim, ctx.sizes = dim, [t.shape[dim] for t in tensors]
        xp = tensors[0]._device.xp
        return xp.concatenate(common_dtype_arrays(tensors), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        pieces = Split.apply(grad, ctx.dim, tuple(ctx.sizes))
        return (None,) + tuple(piece if needed else None
                               for piece, needed in zip(pieces, ctx.needs_input_grad[1:]))


class Stack(Op):
    """Same-shaped tensors joined along a new dim."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        xp = tensors[0]._device.xp
        return xp.stack(common_dtype_arrays(tensors), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        pieces = Unbind.apply(grad, ctx.dim)
        return (None,) + tuple(piece if needed else None
                               for piece, needed in zip(pieces, ctx.needs_input_grad[1:]))


class Split(Op):
    """Consecutive slices along a dim (views of the input)."""

    @staticmethod
    def forward(ctx, a, dim, sizes):
        ctx.dim = dim
        return tuple(a._data[key] for key in _split_keys(dim, sizes))

    @staticmethod
    def backward(ctx, *grads):
        return cat(grads, ctx.dim), None, None


class Unbind(Op):
    """Every index along a dim, each with that dim removed (views of the input)."""

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return tuple(a._data[key] for key in _unbind_keys(dim, a.shape[dim]))

    @staticmethod
    def backward(ctx, *grads):
        return stack(grads, ctx.dim), None


def _split_keys(dim: int, sizes) -> list:
    keys, start = [], 0
    for size in sizes:
        keys.append((slice(None),) * dim + (slice(start, start + size), Ellipsis))
        start += size
    return keys


def _unbind_keys(dim: int, extent: int) -> list:
    return [(slice(None),) * dim + (index, Ellipsis) for index in range(extent)]


def _as_views(pieces: tuple, input: Tensor, keys: list, step) -> tuple:
    """Record each piece as a view of `input` made by `step` (a GetItem with its key), so
    in-place changes through any piece are tracked like changes through a slice."""
    name = "Unbind" if step is Select else "Split"
    for index, (piece, key) in enumerate(zip(pieces, keys)):
        mark_view(piece, (input, key), {}, step, creation=("multi_output", (index, name)))
    return pieces


def _check_tensors(op: str, tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, list | tuple):
        raise TypeError(f"{op}: expected a list or tuple of Tensors, got {type(tensors).__name__}")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{op}: expected a non-empty list of Tensors")
    first = tensors[0]
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{op}: element {position} is a {type(tensor).__name__}, not a Tensor")
        if tensor._device is not first._device and tensor._device != first._device:
            raise RuntimeError(device_mismatch(op, first, tensor))
    return tensors


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; all other extents must match. Mixed dtypes
    promote as in PyTorch; 1-D empty tensors are skipped (PyTorch's legacy rule).

    >>> import genesis
    >>> genesis.cat([genesis.zeros(2, 3), genesis.ones(1, 3)]).shape
    genesis.Size([3, 3])
    """
    tensors = _check_tensors("cat", tensors)
    joined = [t for t in tensors if t.shape != (0,)] or tensors[:1]
    reference = joined[0]
    if reference.ndim == 0:
        raise RuntimeError("cat: zero-dimensional tensors can't be concatenated; use stack, or "
                           "unsqueeze them first")
    dim = normalize_dim(dim, reference.ndim, "cat")
    for position, tensor in enumerate(joined):
        if tensor.ndim != reference.ndim or any(
                a != b for axis, (a, b) in enumerate(zip(tensor.shape, reference.shape))
                if axis != dim):
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise RuntimeError(f"cat: tensors must have the same shape except in dim {dim}, but "
                               f"got shapes {shapes}")
    return Cat.apply(dim, *joined)


concat = concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim `dim`.

    >>> import genesis
    >>> genesis.stack([genesis.zeros(2, 3), genesis.ones(2, 3)], dim=1).shape
    genesis.Size([2, 2, 3])
    """
    tensors = _check_tensors("stack", tensors)
    shape = tensors[0].shape
    if any(t.shape != shape for t in tensors):
        shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
        raise RuntimeError(f"stack: expects each tensor to be the same shape, got {shapes}")
    return Stack.apply(normalize_dim(dim, len(shape) + 1, "stack"), *tensors)


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Consecutive pieces along `dim`: of `split_size` each (the last may be smaller), or of
    the listed sizes (which must add up to the dim's extent). The pieces are views.

    >>> import genesis
    >>> [p.shape for p in genesis.zeros(5, 2).split(2)]
    [genesis.Size([2, 2]), genesis.Size([2, 2]), genesis.Size([1, 2])]
    >>> [p.shape for p in genesis.zeros(5, 2).split([1, 4])]
    [genesis.Size([1, 2]), genesis.Size([4, 2])]
    """
    if tensor.ndim == 0:
        raise RuntimeError("split: can't split a 0-d tensor; it needs at least one dim")
    dim = normalize_dim(dim, tensor.ndim, "split")
    extent = tensor.shape[dim]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and extent:
            raise RuntimeError(f"split: split_size must be positive, got {size}")
        sizes = [min(size, extent - start) for start in range(0, extent, size)] if extent else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != extent or any(s < 0 for s in sizes):
            raise RuntimeError(f"split: sizes {sizes} must be non-negative and add up to "
                               f"{extent}, the extent of dim {dim} (shape {tuple(tensor.shape)})")
    return _as_views(Split.apply(tensor, dim, tuple(sizes)), tensor, _split_keys(dim, sizes), Slice)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Split into `chunks` pieces of ceil(extent / chunks) (fewer if they run out).

    >>> import genesis
    >>> [p.shape for p in genesis.zeros(5).chunk(3)]
    [genesis.Size([2]), genesis.Size([2]), genesis.Size([1])]
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk: chunks must be positive, got {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk: can't chunk a 0-d tensor; it needs at least one dim")
    extent = input.shape[normalize_dim(dim, input.ndim, "chunk")]
    return split(input, max(-(-extent // chunks), 1), dim)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """The slices along `dim`, each without that dim (views).

    >>> import genesis
    >>> a, b = genesis.tensor([[1, 2], [3, 4]]).unbind(1)
    >>> a, b
    (tensor([1, 3]), tensor([2, 4]))
    """
    if input.ndim == 0:
        raise RuntimeError("unbind: can't unbind a 0-d tensor; it needs at least one dim")
    dim = normalize_dim(dim, input.ndim, "unbind")
    pieces = Unbind.apply(input, dim)
    return _as_views(pieces, input, _unbind_keys(dim, input.shape[dim]), Select)


METHODS = {"split": split, "chunk": chunk, "unbind": unbind}


def _cat_samples(rng):
    values = samples.values

    def sample(shapes, dim=0, layout="contiguous", grad=None):
        return Sample(tuple(values(rng, shape) for shape in shapes) + (dim,), grad=grad,
                      layout=layout, note=f"{shapes} dim {dim} {layout}")

    return [sample([(2, 3), (4, 3)]), sample([(2, 3), (2, 1), (2, 2)], 1),
            sample([(2, 3, 2), (2, 1, 2)], -2), sample([(3, 2), (3, 2)], 1, "transposed"),
            sample([(2, 3), (2, 3)], 0, grad=(False, True)), sample([(2, 3)], 1),
            sample([(0, 3), (2, 3)]), sample([(2, 3), (2, 3)], 0, "strided")]


def _stack_samples(rng):
    values = samples.values

    def sample(shapes, dim=0, layout="contiguous", grad=None):
        return Sample(tuple(values(rng, shape) for shape in shapes) + (dim,), grad=grad,
                      layout=layout, note=f"{shapes} dim {dim} {layout}")

    return [sample([(2, 3), (2, 3)]), sample([(2, 3)] * 3, -1),
            sample([(3, 2), (3, 2)], 1, "transposed"),
            sample([(), ()]), sample([(2, 3), (2, 3)], 2, grad=(True, False)), sample([(0, 2)] * 2, 1)]


def _split_samples(rng):
    def sample(shape, *args, layout="contiguous"):
        return Sample((samples.values(rng, shape),) + args, layout=layout,
                      note=f"{shape} {args} {layout}")

    return [sample((5, 3), 2), sample((5, 3), [1, 4]), sample((3, 6), [2, 0, 4], 1),
            sample((4, 3), 2, 1, layout="transposed"), sample((2, 6), 4, -1, layout="strided"),
            sample((0, 3), 2)]


def _multi(fn):
    return lambda torch, *args: fn(torch, [a for a in args[:-1]], args[-1])


OPS = [
    OpInfo("cat", lambda *args: cat(list(args[:-1]), args[-1]), _cat_samples,
           torch=_multi(lambda torch, tensors, dim: torch.cat(tensors, dim))),
    OpInfo("stack", lambda *args: stack(list(args[:-1]), args[-1]), _stack_samples,
           torch=_multi(lambda torch, tensors, dim: torch.stack(tensors, dim))),
    OpInfo("split", split, _split_samples,
           torch=lambda torch, a, *args: torch.split(a, *args)),
    OpInfo("chunk", chunk, lambda rng: [
        Sample((samples.values(rng, (5, 2)), 3), note="uneven"),
        Sample((samples.values(rng, (2, 6)), 4, 1), layout="transposed", note="fewer pieces"),
        Sample((samples.values(rng, (3, 4)), 1, -1), note="one chunk")],
        torch=lambda torch, a, *args: torch.chunk(a, *args)),
    OpInfo("unbind", unbind, lambda rng: [
        Sample((samples.values(rng, (3, 2)),), note="dim 0"),
        Sample((samples.values(rng, (2, 3, 4)), -1), layout="transposed", note="last dim"),
        Sample((samples.values(rng, (4,)),), note="1-D")],
        torch=lambda torch, a, *args: torch.unbind(a, *args)),
]
