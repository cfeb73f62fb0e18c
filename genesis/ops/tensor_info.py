"""What a tensor is, and a few PyTorch spellings programs use: `is_tensor`, `numel`,
`is_floating_point`, `is_complex`; the methods `nelement`, `stride`, `view_as`, `t` and
`type`; the legacy typed constructors (`FloatTensor`, `LongTensor`, ...)."""
from __future__ import annotations

from .. import dtypes
from ..creation import empty, tensor
from ..tensor import Tensor
from .shape import transpose, view

__all__ = ["is_tensor", "numel", "is_floating_point", "is_complex", "FloatTensor", "DoubleTensor",
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
    if isinstance(dtype, str) and dtype.endswith("Tensor"):
        name = dtype.rsplit(".", 1)[-1]
        if name not in _TYPES_BY_NAME:
            raise ValueError(f"type: invalid type {dtype!r}")
        target = "cuda" if ".cuda." in dtype else input._device
        return input.to(target, dtype=_TYPES_BY_NAME[name], non_blocking=non_blocking)
    return input.to(dtype=dtype, non_blocking=non_blocking)


class _TypedTensorType(type):
    """The metaclass of the legacy constructors: `isinstance(x, LongTensor)` asks whether x
    is a CPU tensor of that dtype, as in PyTorch."""

    def __instancecheck__(cls, value) -> bool:
        return isinstance(value, Tensor) and value._device.type == "cpu" and \
            value.dtype.name == cls.dtype_name


class _TypedTensor(metaclass=_TypedTensorType):
    """A legacy typed constructor: `LongTensor([1, 2])` (from data), `FloatTensor(2, 3)` (an
    uninitialised tensor of that shape), `FloatTensor()` (empty)."""

    dtype_name = "float32"

    def __new__(cls, *args):
        dtype = dtypes.get_dtype(cls.dtype_name)
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            return data.to(dtype=dtype) if isinstance(data, Tensor) else tensor(data, dtype=dtype)
        return empty(*args, dtype=dtype) if args else empty(0, dtype=dtype)


def _typed(name: str, dtype_name: str):
    return _TypedTensorType(name, (_TypedTensor,), {"dtype_name": dtype_name, "__module__": __name__,
                                                    "__doc__": f"A {dtype_name} tensor (legacy constructor)."})


FloatTensor, DoubleTensor, HalfTensor = (_typed(n, d) for n, d in (
    ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16")))
BFloat16Tensor = _typed("BFloat16Tensor", "bfloat16")
LongTensor, IntTensor, ShortTensor = (_typed(n, d) for n, d in (
    ("LongTensor", "int64"), ("IntTensor", "int32"), ("ShortTensor", "int16")))
CharTensor, ByteTensor, BoolTensor = (_typed(n, d) for n, d in (
    ("CharTensor", "int8"), ("ByteTensor", "uint8"), ("BoolTensor", "bool")))

METHODS = {"nelement": numel, "stride": stride, "view_as": view_as, "t": t, "type": type_of,
           "is_complex": is_complex}
OPS: list = []
