"""What a tensor is, and a few PyTorch spellings programs use: `is_tensor`, `numel`,
`is_floating_point`, `is_complex`; the methods `nelement`, `stride`, `view_as`, `t` and
`type`; the legacy typed constructors (`FloatTensor`, `LongTensor`, ...)."""
from __future__ import annotations

import math

from .. import cuda, dtypes
from ..autograd.unbroadcast import sum_to_shape
from ..creation import empty, tensor
from ..inference_tensors import is_inference_tensor
from ..tensor import Tensor, wrap_array
from .shape import transpose, view
from .where import where

__all__ = ["is_tensor", "numel", "is_floating_point", "is_complex", "is_nonzero", "is_same_size",
           "ravel", "positive", "deg2rad", "rad2deg", "signbit", "tensor_split", "hsplit", "vsplit",
           "dsplit", "split_with_sizes", "t", "is_signed", "isreal", "angle", "FloatTensor",
           "DoubleTensor",
           "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
           "ByteTensor", "BoolTensor"]


def is_tensor(value) -> bool:
    """Whether `value` is a genesis Tensor.

    >>> import genesis
    >>> genesis.is_tensor(genesis.zeros(1)), genesis.is_tensor([1.0])
    (True, False)
    """
    return isinstance(value, Tensor)


def numel(input: Tensor) -> int:
    """The number of elements."""
    return input._data.size


def is_floating_point(input: Tensor) -> bool:
    """Whether the dtype is a floating point one."""
    return input._data.dtype.kind == "f" or input.dtype is dtypes.bfloat16


def is_complex(input: Tensor) -> bool:
    """False: genesis has no complex dtypes."""
    return False


def stride(input: Tensor, dim: int | None = None):
    """The step in elements between neighbours along each dim (one dim's with `dim`).

    >>> import genesis
    >>> genesis.zeros(2, 3).stride(), genesis.zeros(2, 3).t().stride(0)
    ((3, 1), 1)
    """
    itemsize = input._data.itemsize
    steps = tuple(step // itemsize for step in input._data.strides)
    return steps if dim is None else steps[dim]


def is_signed(input: Tensor) -> bool:
    """Whether the dtype holds negative values (everything but bool and uint8)."""
    return input._data.dtype.kind not in "bu"


def is_inference(input: Tensor) -> bool:
    """Whether the tensor was made inside `inference_mode()` (an inference tensor)."""
    return is_inference_tensor(input)


def is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor."""
    if input._data.size != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if input._data.size == 0 else 'more than one value'} is ambiguous")
    return bool(input._data.reshape(-1)[0])


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether both have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    """`input.reshape(other.shape)`."""
    return input.reshape(other.shape)


def ravel(input: Tensor) -> Tensor:
    """The tensor flattened to 1-D."""
    return input.reshape(-1)


def positive(input: Tensor) -> Tensor:
    """The tensor itself (unary +)."""
    if input._data.dtype.kind == "b":
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def isreal(input: Tensor) -> Tensor:
    """True everywhere: every genesis tensor is real (genesis has no complex dtypes)."""
    return wrap_array(input._device.xp.ones(input._data.shape, bool), input._device)


def angle(input: Tensor) -> Tensor:
    """The argument of each element as a complex number: pi for negative values, 0 for
    the others (nan stays nan), in the default float dtype for integers, as PyTorch. Its
    gradient is zero.

    >>> import genesis
    >>> genesis.angle(genesis.tensor([-2.0, 0.0, 3.0]))
    tensor([3.1416, 0.0000, 0.0000])
    """
    floating = input if input.is_floating_point() else input.to(dtypes.get_default_dtype())
    data, xp = floating._data, floating._device.xp
    values = xp.where(data < 0, math.pi, 0.0).astype(data.dtype)
    values[xp.isnan(data)] = xp.nan
    everywhere = wrap_array(xp.ones(data.shape, bool), floating._device)
    return where(everywhere, wrap_array(values, floating._device), floating)  # zero gradient


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians."""
    return input * (math.pi / 180)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees."""
    return input * (180 / math.pi)


def signbit(input: Tensor) -> Tensor:
    """Whether the sign bit is set (True for -0.0 and negative values)."""
    return wrap_array(input._device.xp.signbit(input._data), input._device)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Split into `n` nearly equal pieces (the first ones one longer), or at the given
    indices, along `dim`.

    >>> import genesis
    >>> [p.tolist() for p in tensor_split(genesis.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    extent = input.shape[dim]
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections < 1:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {sections}")
        base, extra = divmod(extent, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
    else:
        bounds = [0] + [min(max(i if i >= 0 else i + extent, 0), extent) for i in indices_or_sections] + [extent]
        sizes = [max(end - start, 0) for start, end in zip(bounds, bounds[1:])]
        starts = bounds[:-1]
        return tuple(input.narrow(dim, start, size) for start, size in zip(starts, sizes))
    pieces, start = [], 0
    for size in sizes:
        pieces.append(input.narrow(dim, start, size))
        start += size
    return tuple(pieces)


def hsplit(input: Tensor, sections) -> tuple:
    """tensor_split along dim 1 (dim 0 for 1-D)."""
    return tensor_split(input, sections, 1 if input.ndim > 1 else 0)


def vsplit(input: Tensor, sections) -> tuple:
    """tensor_split along dim 0."""
    return tensor_split(input, sections, 0)


def dsplit(input: Tensor, sections) -> tuple:
    """tensor_split along dim 2."""
    return tensor_split(input, sections, 2)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Pieces of the given sizes along `dim` (they must add up to its extent)."""
    if sum(split_sizes) != input.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {input.shape[dim]} "
                           f"(input tensor's size at dimension {dim}), but got split_sizes={list(split_sizes)}")
    return input.split(list(split_sizes), dim)


def sum_to_size(input: Tensor, *size) -> Tensor:
    """`input` summed to `size`, which it must broadcast from."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], tuple | list) else tuple(size)
    return sum_to_shape(input, shape)


def view_as(input: Tensor, other: Tensor) -> Tensor:
    """`input.view(other.shape)`."""
    return view(input, other.shape)


def t(input: Tensor) -> Tensor:
    """The transpose of a matrix (a vector or scalar as it is)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
               "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
               "bool": "BoolTensor"}
_TYPES_BY_NAME = {name: dtype for dtype, name in _TYPE_NAMES.items()}


def type_of(input: Tensor, dtype=None, non_blocking: bool = False):
    """Without `dtype`, the type's name ("genesis.FloatTensor", "genesis.cuda.LongTensor");
    with one (a dtype, or a name like "torch.LongTensor"), the tensor converted to it.

    >>> import genesis
    >>> genesis.zeros(1).type(), genesis.zeros(1).type("torch.LongTensor").dtype
    ('genesis.FloatTensor', genesis.int64)
    """
    if dtype is None:
        where = "cuda." if input._device.type == "cuda" else ""
        return f"genesis.{where}{_TYPE_NAMES[input.dtype.name]}"
    if isinstance(dtype, _TypedTensorType):  # a legacy type: genesis.DoubleTensor
        target = "cuda" if dtype.device_type == "cuda" else input._device
        return input.to(target, dtype=dtype.dtype, non_blocking=non_blocking)
    if isinstance(dtype, str) and dtype.endswith("Tensor"):
        name = dtype.rsplit(".", 1)[-1]
        if name not in _TYPES_BY_NAME:
            raise ValueError(f"type: invalid type {dtype!r}")
        target = "cuda" if ".cuda." in dtype else input._device
        return input.to(target, dtype=_TYPES_BY_NAME[name], non_blocking=non_blocking)
    return input.to(dtype=dtype, non_blocking=non_blocking)


class _TypedTensorType(type):
    """The metaclass of the legacy constructors: `isinstance(x, LongTensor)` asks whether x
    is a tensor of that dtype on the type's device (the CPU, or CUDA for `cuda.LongTensor`),
    as in PyTorch."""

    def __instancecheck__(cls, value) -> bool:
        return isinstance(value, Tensor) and value._device.type == cls.device_type and \
            value.dtype.name == cls.dtype_name

    @property
    def dtype(cls):
        """The dtype of the type's tensors: `genesis.DoubleTensor.dtype` is genesis.float64."""
        return dtypes.get_dtype(cls.dtype_name)


class _TypedTensor(metaclass=_TypedTensorType):
    """A legacy typed constructor: `LongTensor([1, 2])` (from data), `FloatTensor(2, 3)` (an
    uninitialised tensor of that shape), `FloatTensor()` (empty)."""

    dtype_name = "float32"
    device_type = "cpu"

    def __new__(cls, *args):
        dtype = dtypes.get_dtype(cls.dtype_name)
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            return data.to(dtype=dtype) if isinstance(data, Tensor) else tensor(data, dtype=dtype)
        return empty(*args, dtype=dtype) if args else empty(0, dtype=dtype)


class _CudaTypedTensor(_TypedTensor):
    """A legacy CUDA constructor (`torch.cuda.FloatTensor(2, 3)`): the tensor on the current
    GPU; without a usable GPU a TypeError, as PyTorch built without CUDA raises."""

    device_type = "cuda"

    def __new__(cls, *args):
        if not cuda.is_available():
            raise TypeError(f"type torch.cuda.{cls.__name__} not available: genesis has no usable "
                            "CUDA device here (Torch not compiled with CUDA enabled)")
        return super().__new__(cls, *args).to("cuda")


def _typed(name: str, dtype_name: str, base=_TypedTensor):
    where, module = ("a CUDA", "genesis.ops.cuda_tensor_types") if base is _CudaTypedTensor else \
        ("a", __name__)
    return _TypedTensorType(name, (base,), {"dtype_name": dtype_name, "__module__": module,
                                            "__doc__": f"{where} {dtype_name} tensor (legacy constructor)."})


FloatTensor, DoubleTensor, HalfTensor = (_typed(n, d) for n, d in (
    ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16")))
BFloat16Tensor = _typed("BFloat16Tensor", "bfloat16")
LongTensor, IntTensor, ShortTensor = (_typed(n, d) for n, d in (
    ("LongTensor", "int64"), ("IntTensor", "int32"), ("ShortTensor", "int16")))
# PyTorch's torch.cuda.FloatTensor and the others, by name (genesis.ops.cuda_tensor_types)
CUDA_TYPES = {name: _typed(name, dtype_name, _CudaTypedTensor) for dtype_name, name in _TYPE_NAMES.items()}
CharTensor, ByteTensor, BoolTensor = (_typed(n, d) for n, d in (
    ("CharTensor", "int8"), ("ByteTensor", "uint8"), ("BoolTensor", "bool")))

METHODS = {"nelement": numel, "stride": stride, "view_as": view_as, "t": t, "type": type_of,
           "is_complex": is_complex, "is_signed": is_signed, "is_inference": is_inference,
           "is_nonzero": is_nonzero, "is_same_size": is_same_size, "reshape_as": reshape_as,
           "ravel": ravel, "positive": positive, "deg2rad": deg2rad, "rad2deg": rad2deg,
           "signbit": signbit, "isreal": isreal, "angle": angle, "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit,
           "dsplit": dsplit, "split_with_sizes": split_with_sizes, "sum_to_size": sum_to_size,
           "ndimension": lambda self: self.dim(),
           "is_cpu": property(lambda self: self._device.type == "cpu"),
           "itemsize": property(lambda self: self._data.itemsize),
           "nbytes": property(lambda self: self._data.nbytes), "sgn": lambda self: self.sign()}
OPS: list = []
