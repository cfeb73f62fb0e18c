"""The Tensor attributes PyTorch programs read that describe storage and complex parts, and a
few legacy methods, with what they mean for genesis's real, dense tensors:

- storage: `data_ptr`, `storage_offset`, `is_set_to`, `dim_order` (`is_shared` is in shared_storage);
- where a tensor lives: `is_xpu`, `is_mps`, `is_meta`, `is_sparse`, `is_quantized`, ... (all
  False: genesis tensors are dense, on the CPU or a CUDA GPU);
- complex parts of real tensors: `conj`, `resolve_conj`, `resolve_neg`, `real` return the
  tensor itself, `imag` raises, `H`/`mH`/`adjoint` are transposes, as in PyTorch;
- legacy: `new(...)`, `char()`, `apply_`, `map_`, `new_empty_strided`, `output_nr`, `name`,
  `record_stream`, `to_dense`.

>>> import genesis
>>> m = genesis.arange(6.).view(2, 3)
>>> m[:, 1:].storage_offset(), m.t().dim_order(), m.is_xpu, m.H.shape
(1, (1, 0), False, genesis.Size([3, 2]))
"""
from __future__ import annotations

from ..tensor import Tensor
from .. import dtypes
from ..creation import new_empty, tensor
from .convert import to
from .shape import transpose

__all__ = ["is_conj", "is_neg", "conj", "conj_physical", "resolve_conj", "resolve_neg", "real",
           "imag", "adjoint"]


# -- storage -----------------------------------------------------------------------------------
def _address(array) -> int:
    interface = getattr(array, "__array_interface__", None)
    return interface["data"][0] if interface is not None else array.data.ptr  # NumPy / CuPy


def _storage_root(array):
    while array.base is not None:
        base = array.base
        if not hasattr(base, "dtype"):  # NumPy's as_strided: a holder of the array it views
            base = getattr(base, "base", None)
            if base is None or not hasattr(base, "dtype"):
                return array
        array = base
    return array


def data_ptr(input: Tensor) -> int:
    """The address of the tensor's first element."""
    return _address(input._data)


def storage_offset(input: Tensor) -> int:
    """How many elements into its storage the tensor starts (0 unless it is a view).

    >>> import genesis
    >>> genesis.arange(4)[2:].storage_offset()
    2
    """
    data = input._data
    return (_address(data) - _address(_storage_root(data))) // data.itemsize


def is_set_to(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors are the same elements of the same storage (same start, shape and
    strides)."""
    mine, theirs = input._data, other._data
    return (_address(mine) == _address(theirs) and mine.shape == theirs.shape
            and mine.strides == theirs.strides and _storage_root(mine) is _storage_root(theirs))


def dim_order(input: Tensor) -> tuple:
    """The dims from outermost to innermost in memory (by decreasing stride), as PyTorch's.

    >>> import genesis
    >>> genesis.zeros(2, 3, 4).permute(2, 0, 1).dim_order()
    (1, 2, 0)
    """
    strides = input._data.strides
    return tuple(sorted(range(len(strides)), key=lambda dim: -strides[dim]))


# -- where a tensor lives ---------------------------------------------------------------------
def _never(description: str) -> property:
    return property(lambda self: False, doc=f"False: genesis tensors are never {description}.")


_PLACES = {"is_xpu": "on an Intel XPU", "is_mps": "on an Apple MPS device",
           "is_meta": "meta tensors (without data)", "is_sparse": "sparse",
           "is_sparse_csr": "sparse", "is_quantized": "quantized", "is_nested": "nested",
           "is_mkldnn": "MKL-DNN tensors", "is_vulkan": "on a Vulkan device",
           "is_ipu": "on an IPU", "is_maia": "on a MAIA device", "is_mtia": "on an MTIA device",
           "is_xla": "on an XLA device"}


# -- complex parts of real tensors ------------------------------------------------------------
def is_conj(input: Tensor) -> bool:
    """False: a real tensor is never a lazily conjugated one."""
    return False


def is_neg(input: Tensor) -> bool:
    """False: a real tensor is never a lazily negated one."""
    return False


def conj(input: Tensor) -> Tensor:
    """The complex conjugate: for a real tensor, the tensor itself (as in PyTorch)."""
    return input


conj_physical = resolve_conj = resolve_neg = real = conj


def imag(input: Tensor) -> Tensor:
    """The imaginary part: PyTorch's error for a real tensor, which has none."""
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes: "
                       f"the tensor is {input.dtype.name}, and genesis has no complex dtypes")


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (`mH`): their transpose, for real tensors."""
    if input.ndim < 2:
        raise RuntimeError(f"adjoint: needs a tensor of at least 2 dims, got {input.ndim}-D")
    return transpose(input, -2, -1)


def _conjugate_transpose(input: Tensor) -> Tensor:
    if input.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{input.ndim}-D tensor. For batches of matrices, consider using "
                           "tensor.mH")
    return transpose(input, 0, 1) if input.ndim == 2 else input


# -- legacy ---------------------------------------------------------------------------------------
def new(input: Tensor, *args, device=None) -> Tensor:
    """PyTorch's legacy constructor on a tensor: `x.new(2, 3)` (uninitialised, of x's dtype
    and device), `x.new([1, 2])` (data in x's dtype), `x.new()` (empty). Prefer `new_empty`
    and `new_tensor`.

    >>> import genesis
    >>> genesis.zeros(1, dtype=genesis.float64).new([1, 2]).dtype
    genesis.float64
    """
    device = input._device if device is None else device
    if len(args) == 1 and isinstance(args[0], Tensor):
        return to(args[0], device=device, dtype=input.dtype, copy=True)
    if len(args) == 1 and isinstance(args[0], list):
        return tensor(args[0], dtype=input.dtype, device=device)
    size = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args or (0,)
    return new_empty(input, size, device=device)


def new_empty_strided(input: Tensor, size, stride, *, dtype=None, device=None,
                      requires_grad: bool = False) -> Tensor:
    """`new_empty(size)`: genesis lays new tensors out row-major whatever `stride` says (the
    strides only place elements in memory; the values are uninitialised either way)."""
    return new_empty(input, size, dtype=dtype, device=device, requires_grad=requires_grad)


def char(input: Tensor, memory_format=None) -> Tensor:
    """`self.to(genesis.int8)`."""
    return to(input, dtypes.int8)


def _refuse_graph(op: str, input: Tensor) -> None:
    if input._requires_grad:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use "
                           f"var.detach().{op}() instead.")
    if input._device.type != "cpu":
        raise TypeError(f"{op}() is only implemented on CPU tensors; call .cpu() first")


def apply_(input: Tensor, callable) -> Tensor:
    """Replace each element x with `callable(x)`, in place, one Python call per element (CPU
    tensors that do not require grad only, as in PyTorch; slow: prefer tensor ops).

    >>> import genesis
    >>> genesis.tensor([1., 2.]).apply_(lambda v: v * 10)
    tensor([10., 20.])
    """
    _refuse_graph("apply_", input)
    values = [callable(value) for value in input._data.reshape(-1).tolist()]
    input._data[...] = input._device.xp.asarray(values, dtype=input._data.dtype).reshape(
        input._data.shape)
    input._version_counter[0] += 1
    return input


def map_(input: Tensor, other: Tensor, callable) -> Tensor:
    """Replace each element x with `callable(x, y)`, y the matching element of `other`
    (broadcast to this tensor's shape), in place; CPU tensors without grad only."""
    _refuse_graph("map_", input)
    others = input._device.xp.broadcast_to(other._data, input._data.shape).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(input._data.reshape(-1).tolist(), others)]
    input._data[...] = input._device.xp.asarray(values, dtype=input._data.dtype).reshape(
        input._data.shape)
    input._version_counter[0] += 1
    return input


def to_dense(input: Tensor, dtype=None, *, masked_grad=None) -> Tensor:
    """The tensor itself (converted to `dtype` if given): genesis tensors are dense."""
    return input if dtype is None else to(input, dtype)


def record_stream(input: Tensor, stream) -> None:
    """Nothing to do: genesis frees GPU memory only when no tensor uses it."""


METHODS = {
    "data_ptr": data_ptr, "storage_offset": storage_offset, "is_set_to": is_set_to,
    "dim_order": dim_order, "is_conj": is_conj, "is_neg": is_neg,
    "conj": conj, "conj_physical": conj_physical, "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg, "real": property(real), "imag": property(imag),
    "adjoint": adjoint, "H": property(_conjugate_transpose), "mH": property(adjoint),
    "new": new, "new_empty_strided": new_empty_strided, "char": char, "apply_": apply_,
    "map_": map_, "to_dense": to_dense, "record_stream": record_stream,
    "output_nr": property(lambda self: self._output_nr, doc="Which output of its grad_fn."),
    "name": property(lambda self: None, doc="None: genesis tensors carry no name."),
    **{name: _never(description) for name, description in _PLACES.items()},
}
OPS: list = []
