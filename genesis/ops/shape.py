"""Shape ops. Most return views that share storage (and the version counter) with their input."""
from __future__ import annotations

from ..autograd.function import Op
from ..sizes import integers, shape_of
from ..tensor import Tensor
from . import samples
from ._operands import normalize_dim
from .index import Select, Slice
from .registry import OpInfo, Sample

__all__ = ["reshape", "transpose", "permute", "squeeze", "unsqueeze", "flatten", "swapaxes",
           "swapdims", "unflatten", "movedim", "moveaxis", "narrow", "select"]


def _sizes(sizes, op: str) -> tuple:
    return shape_of(sizes, op, inferred=True)


def _resolve_shape(shape: tuple, count: int, op: str) -> tuple:
    unknown = [index for index, extent in enumerate(shape) if extent == -1]
    known = 1
    for extent in shape:
        if extent != -1:
            if extent < 0:
                raise RuntimeError(f"{op}: invalid extent {extent} in shape {shape}")
            known *= extent
    if len(unknown) > 1:
        raise RuntimeError(f"{op}: only one dimension can be -1, got shape {shape}")
    if unknown:
        if known == 0 or count % known:
            raise RuntimeError(f"{op}: shape {shape} is invalid for a tensor of {count} "
                               f"element{'s' if count != 1 else ''}")
        shape = shape[:unknown[0]] + (count // known,) + shape[unknown[0] + 1:]
    elif known != count:
        raise RuntimeError(f"{op}: shape {shape} is invalid for a tensor of {count} "
                           f"element{'s' if count != 1 else ''}")
    return shape


class Reshape(Op):
    """Same elements, new shape; a view whenever the layout allows (else a copy)."""

    is_view = True

    @staticmethod
    def forward(ctx, a, shape):
        ctx.input_shape = a.shape
        return a._data.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


def reshape(input: Tensor, *shape) -> Tensor:
    """Same elements in a new shape (one extent may be -1).

    >>> import genesis
    >>> genesis.arange(6).reshape(2, -1)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    shape = _resolve_shape(_sizes(shape, "reshape"), input._data.size, "reshape")
    return _reshaped(input, shape)


def _reshaped(input: Tensor, shape: tuple) -> Tensor:
    """`input` in `shape`: named a view (ViewBackward) where its layout makes it one, as
    PyTorch names it; a copy otherwise."""
    return (View if input._data.flags.c_contiguous else Reshape).apply(input, shape)


class View(Reshape):
    """Same elements, new shape, same storage (`Tensor.view`: ViewBackward, as in PyTorch)."""


class Squeeze(Reshape):
    """Dimensions of size 1 dropped (SqueezeBackward, as in PyTorch)."""


class Unsqueeze(Reshape):
    """A dimension of size 1 inserted (UnsqueezeBackward, as in PyTorch)."""


def view(input: Tensor, *shape) -> Tensor:
    """Like reshape, but must share storage; raises if that needs a copy."""
    shape = _resolve_shape(_sizes(shape, "view"), input._data.size, "view")
    result = View.apply(input, shape)
    if result._version_counter is not input._version_counter:
        raise RuntimeError(
            f"view: a tensor of shape {tuple(input.shape)} with strides "
            f"{input._data.strides} can't be viewed as {shape} without copying; use .reshape() "
            "(which copies when needed) or call .contiguous() first")
    return result


class Transpose(Op):
    """Swap two dimensions (a view)."""

    is_view = True

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return a._device.xp.swapaxes(a._data, dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


def transpose(input: Tensor, *dims) -> Tensor:
    """Swap dims `dim0` and `dim1` (PyTorch). With no dims: reverse (as `.T`);
    with one tuple of all dims: permute (NumPy style).

    >>> import genesis
    >>> genesis.zeros(2, 3, 4).transpose(0, 2).shape
    genesis.Size([4, 3, 2])
    """
    if not dims:
        return permute(input, tuple(reversed(range(input.ndim))))
    if len(dims) == 1 and isinstance(dims[0], tuple | list):
        return permute(input, tuple(dims[0]))
    if len(dims) != 2:
        raise TypeError(f"transpose takes two dims (dim0, dim1), got {dims}")
    dim0, dim1 = integers(dims, "dim must be an int, got", "transpose")
    dim0 = normalize_dim(dim0, input.ndim, "transpose")
    dim1 = normalize_dim(dim1, input.ndim, "transpose")
    if input.ndim < 2 or dim0 == dim1:
        return Reshape.apply(input, input.shape)
    return Transpose.apply(input, dim0, dim1)


swapaxes = swapdims = transpose


class Permute(Op):
    """Reorder dimensions (a view)."""

    is_view = True

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a._device.xp.transpose(a._data, dims)

    @staticmethod
    def backward(ctx, grad):
        inverse = [0] * len(ctx.dims)
        for position, dim in enumerate(ctx.dims):
            inverse[dim] = position
        return grad.permute(tuple(inverse)), None


def permute(input: Tensor, *dims) -> Tensor:
    """Reorder the dimensions: output dim i is input dim `dims[i]`."""
    if not dims:
        raise TypeError("permute: dims are missing; give one dim per dimension of the tensor, "
                        "e.g. x.permute(1, 0)")
    if len(dims) == 1 and isinstance(dims[0], tuple | list):
        dims = dims[0]
    dims = integers(dims, "dims must be ints, got", "permute")
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute: dims {tuple(dims)} has {len(dims)} "
                           f"entr{'y' if len(dims) == 1 else 'ies'} for a tensor "
                           f"with {input.ndim} dimension(s); name each dimension once")
    dims = tuple(normalize_dim(d, input.ndim, "permute") for d in dims)
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError(f"permute: dims {dims} must name each of the tensor's {input.ndim} "
                           "dimensions exactly once")
    return Permute.apply(input, dims)


def squeeze(input: Tensor, dim=None) -> Tensor:
    """Drop dimensions of size 1 (all of them, or only `dim` if it has size 1)."""
    if dim is None:
        dims = {index for index, extent in enumerate(input.shape) if extent == 1}
    else:
        dim_list = dim if isinstance(dim, tuple | list) else (dim,)
        dims = {normalize_dim(d, input.ndim, "squeeze") for d in dim_list}
        dims = {d for d in dims if input.ndim and input.shape[d] == 1}
    shape = tuple(extent for index, extent in enumerate(input.shape) if index not in dims)
    return Squeeze.apply(input, shape)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at `dim` (negative counts from the end of the result)."""
    dim = normalize_dim(dim, input.ndim + 1, "unsqueeze")
    shape = input.shape[:dim] + (1,) + input.shape[dim:]
    return Unsqueeze.apply(input, shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims `start_dim`..`end_dim` into one."""
    start = normalize_dim(start_dim, input.ndim, "flatten")
    end = normalize_dim(end_dim, input.ndim, "flatten")
    if input.ndim == 0:
        return _reshaped(input, (1,))
    if start > end:
        raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if start == end:  # nothing to merge: the tensor itself, as PyTorch returns it
        return input
    merged = 1
    for extent in input.shape[start:end + 1]:
        merged *= extent
    return _reshaped(input, input.shape[:start] + (merged,) + input.shape[end + 1:])


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Split dim `dim` into `sizes` (one may be -1); a view.

    >>> import genesis
    >>> genesis.zeros(2, 12).unflatten(1, (3, -1)).shape
    genesis.Size([2, 3, 4])
    """
    dim = normalize_dim(dim, input.ndim, "unflatten")
    sizes = _sizes((sizes,), "unflatten")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    sizes = _resolve_shape(sizes, input.shape[dim], "unflatten")
    return Reshape.apply(input, input.shape[:dim] + sizes + input.shape[dim + 1:])


def movedim(input: Tensor, source, destination) -> Tensor:
    """Move dims `source` to positions `destination` (ints or sequences), keeping the order
    of the others; a view.

    >>> import genesis
    >>> genesis.zeros(2, 3, 4).movedim(0, -1).shape
    genesis.Size([3, 4, 2])
    """
    sources = _dim_list(source, input.ndim, "movedim")
    destinations = _dim_list(destination, input.ndim, "movedim")
    if len(sources) != len(destinations):
        raise RuntimeError(f"movedim: source {source} and destination {destination} must name "
                           "the same number of dims")
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise RuntimeError(f"movedim: repeated dim in source {source} or destination {destination}")
    rest = iter(d for d in range(input.ndim) if d not in sources)
    placed = dict(zip(destinations, sources))
    order = tuple(placed[position] if position in placed else next(rest)
                  for position in range(input.ndim))
    return Permute.apply(input, order)


def _dim_list(dims, ndim: int, op: str) -> list:
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [normalize_dim(d, ndim, op) for d in dims]


moveaxis = movedim


def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Elements `start` to `start + length` along `dim`; a view.

    >>> import genesis
    >>> genesis.arange(6).narrow(0, 1, 3)
    tensor([1, 2, 3])
    """
    _require_dims("narrow", input)
    dim = normalize_dim(dim, input.ndim, "narrow")
    extent = input.shape[dim]
    start = int(start)
    if not -extent <= start <= extent:
        raise IndexError(f"narrow: start {start} is out of range for dim {dim} of size {extent} "
                         f"(expected a value in [{-extent}, {extent}])")
    if start < 0:
        start += extent
    if length < 0 or start + length > extent:
        raise RuntimeError(f"narrow: start {start} + length {length} exceeds dim {dim} of size "
                           f"{extent} (shape {tuple(input.shape)})")
    return Slice.apply(input, (slice(None),) * dim + (slice(start, start + length), Ellipsis))


def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, with that dim removed; a view.

    >>> import genesis
    >>> genesis.tensor([[1, 2], [3, 4]]).select(1, 0)
    tensor([1, 3])
    """
    _require_dims("select", input)
    dim = normalize_dim(dim, input.ndim, "select")
    extent = input.shape[dim]
    if not -extent <= index < extent:
        raise IndexError(f"select: index {index} is out of range for dim {dim} of size {extent} "
                         f"(expected a value in [{-extent}, {extent - 1}])")
    return Select.apply(input, (slice(None),) * dim + (int(index), Ellipsis))


def _require_dims(op: str, input: Tensor) -> None:
    if input.ndim == 0:
        raise RuntimeError(f"{op}: can't be applied to a 0-d tensor; it needs at least one dim")


def _matrix_transpose(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f".mT needs at least 2 dimensions, got shape {tuple(input.shape)}")
    return Transpose.apply(input, input.ndim - 2, input.ndim - 1)


def _reverse_dims(input: Tensor) -> Tensor:
    return permute(input, tuple(reversed(range(input.ndim))))


METHODS = {
    "reshape": reshape, "view": view, "transpose": transpose, "swapaxes": swapaxes,
    "permute": permute, "squeeze": squeeze, "unsqueeze": unsqueeze, "flatten": flatten,
    "swapdims": swapdims, "unflatten": unflatten, "movedim": movedim, "moveaxis": moveaxis,
    "narrow": narrow, "select": select,
    "T": property(_reverse_dims), "mT": property(_matrix_transpose),
}


def _shape_sample(rng, shape, *args, layout="contiguous", **kwargs):
    return Sample((samples.values(rng, shape),) + args, kwargs, layout=layout,
                  note=f"{shape} {args} {layout}")


OPS = [
    OpInfo("reshape", reshape, lambda rng: [
        _shape_sample(rng, (3, 4), (2, 6)), _shape_sample(rng, (3, 4), (-1,)),
        _shape_sample(rng, (3, 4), (4, -1), layout="transposed"),
        _shape_sample(rng, (), (1, 1))],
        torch=lambda torch, a, shape: torch.reshape(a, shape)),
    OpInfo("view", view, lambda rng: [
        _shape_sample(rng, (3, 4), (2, 6)), _shape_sample(rng, (3, 4), (-1,)),
        _shape_sample(rng, (), (1, 1))],
        torch=lambda torch, a, shape: a.view(shape)),
    OpInfo("transpose", transpose, lambda rng: [
        _shape_sample(rng, (2, 3, 4), 0, 2), _shape_sample(rng, (3, 4), -1, 0),
        _shape_sample(rng, (3, 4), 0, 1, layout="strided")],
        torch=lambda torch, a, d0, d1: torch.transpose(a, d0, d1)),
    OpInfo("permute", permute, lambda rng: [
        _shape_sample(rng, (2, 3, 4), (2, 0, 1)),
        _shape_sample(rng, (2, 3), (1, 0), layout="transposed")],
        torch=lambda torch, a, dims: torch.permute(a, dims)),
    OpInfo("squeeze", squeeze, lambda rng: [
        _shape_sample(rng, (3, 1, 4, 1)), _shape_sample(rng, (3, 1, 4), 1),
        _shape_sample(rng, (3, 2), 1)],
        torch=lambda torch, a, *dim: torch.squeeze(a, *dim)),
    OpInfo("unsqueeze", unsqueeze, lambda rng: [
        _shape_sample(rng, (3, 4), 0), _shape_sample(rng, (3, 4), -1), _shape_sample(rng, (), 0)],
        torch=lambda torch, a, dim: torch.unsqueeze(a, dim)),
    OpInfo("unflatten", unflatten, lambda rng: [
        _shape_sample(rng, (2, 12), 1, (3, -1)),
        _shape_sample(rng, (6, 2), -2, (2, 3), layout="transposed"),
        _shape_sample(rng, (4,), 0, (1, 4, 1))],
        torch=lambda torch, a, dim, sizes: torch.unflatten(a, dim, sizes)),
    OpInfo("movedim", movedim, lambda rng: [
        _shape_sample(rng, (2, 3, 4), 0, -1), _shape_sample(rng, (2, 3, 4), (0, 1), (2, 0)),
        _shape_sample(rng, (3, 4), 1, 0, layout="strided")],
        torch=lambda torch, a, source, destination: torch.movedim(a, source, destination)),
    OpInfo("narrow", narrow, lambda rng: [
        _shape_sample(rng, (4, 5), 1, 1, 3), _shape_sample(rng, (4, 5), 0, -3, 2, layout="transposed"),
        _shape_sample(rng, (4, 5), -1, 5, 0), _shape_sample(rng, (2, 6), 1, 0, 4, layout="strided")],
        torch=lambda torch, a, dim, start, length: torch.narrow(a, dim, start, length)),
    OpInfo("select", select, lambda rng: [
        _shape_sample(rng, (4, 5), 1, 3), _shape_sample(rng, (2, 3, 4), -1, -2, layout="transposed"),
        _shape_sample(rng, (4,), 0, 0)],
        torch=lambda torch, a, dim, index: torch.select(a, dim, index)),
    OpInfo("flatten", flatten, lambda rng: [
        _shape_sample(rng, (2, 3, 4)), _shape_sample(rng, (2, 3, 4), 1),
        _shape_sample(rng, (2, 3, 4), 0, 1, layout="transposed")],
        torch=lambda torch, a, *dims: torch.flatten(a, *dims)),
]
