"""Conversions between dtypes and devices, and copies; all differentiable."""
from __future__ import annotations

from ..autograd.function import Op
from ..device import (Device, device as as_device, is_pinned as pinned_memory,
                      pinned_copy, transfer)
from ..dtypes import DType, get_dtype
from ..tensor import Tensor, wrap_array
from ..layouts import check_memory_format, memory_format
from . import samples
from .registry import OpInfo, Sample

__all__ = ["clone"]


class ToCopy(Op):
    """A copy with another dtype and/or device; the gradient goes back the same way."""

    @staticmethod
    def forward(ctx, a, dtype, device):
        ctx.source = (a.dtype, a._device)
        array = transfer(a._data, a._device, device)
        if dtype is not None and array.dtype != dtype.numpy_dtype:
            array = array.astype(dtype.numpy_dtype)
        elif array is a._data:
            array = array.copy()
        return wrap_array(array, device)  # a Tensor: the output lives on `device`, not a's

    @staticmethod
    def backward(ctx, grad):
        dtype, device = ctx.source
        return grad.to(device=device, dtype=dtype if dtype.is_floating_point else None), None, None


class ToDevice(Op):
    """Same values on another device (keeps the dtype)."""

    @staticmethod
    def forward(ctx, a, device):
        ctx.source = a._device
        return wrap_array(transfer(a._data, a._device, device), device)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.source), None


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    memory_format_given = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, DType):
            dtype = arg
        elif isinstance(arg, Device):
            device = arg
        elif isinstance(arg, str):  # a dtype name ("float64"), else a device ("cuda:0")
            try:
                dtype = get_dtype(arg)
            except TypeError:
                device = as_device(arg)
        elif arg is not None:
            dtype = get_dtype(arg)
    if memory_format_given is not None and not isinstance(memory_format_given, memory_format):
        check_memory_format(memory_format_given, (), "to")  # raises its TypeError
    return (get_dtype(dtype) if dtype is not None else None,
            as_device(device) if device is not None else None, copy)


def to(input: Tensor, *args, **kwargs) -> Tensor:
    """Convert dtype and/or device: `t.to(genesis.float64)`, `t.to("cuda")`,
    `t.to("cuda", genesis.float16)`, `t.to(other_tensor)`. Returns `t` itself when
    nothing changes (unless `copy=True`).

    >>> import genesis
    >>> genesis.tensor([1, 2]).to(genesis.float32)
    tensor([1., 2.])
    """
    dtype, device, copy = _parse_to(args, dict(kwargs))
    target_device = device if device is not None else input._device
    same_dtype = dtype is None or dtype.numpy_dtype == input._data.dtype
    if same_dtype and target_device == input._device and not copy:
        return input
    if same_dtype and target_device != input._device:
        return ToDevice.apply(input, target_device)
    return ToCopy.apply(input, None if same_dtype else dtype, target_device)


class Clone(Op):
    """A copy with its own storage."""

    @staticmethod
    def forward(ctx, a):
        return a._data.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy that does not share storage; gradients flow through it. `memory_format` is
    accepted (see genesis.layouts): the copy is row-major whatever it says."""
    check_memory_format(memory_format, input._data.shape, "clone")
    return Clone.apply(input)


def contiguous(input: Tensor, memory_format=None) -> Tensor:
    """`input` if already C-contiguous, else a contiguous copy. `memory_format` is accepted
    (see genesis.layouts): genesis keeps row-major order whatever it says."""
    check_memory_format(memory_format, input._data.shape, "contiguous")
    if input._data.flags.c_contiguous:
        return input
    return Clone.apply(input)


def _converter(dtype_name: str):
    def convert(self, memory_format=None):
        return to(self, dtype_name)

    convert.__name__ = dtype_name
    convert.__doc__ = f"`self.to({dtype_name})`."
    return convert


def cpu(input: Tensor) -> Tensor:
    """A copy on the CPU (the tensor itself if already there)."""
    return to(input, "cpu")


def cuda(input: Tensor, device=None, non_blocking: bool = False) -> Tensor:
    """A copy on a CUDA device (the current GPU unless `device` is given; `non_blocking` is
    accepted as in PyTorch: CuPy copies from pageable host memory synchronously)."""
    return to(input, as_device("cuda" if device is None else device if not isinstance(device, int)
                               else f"cuda:{device}"))


def type_as(input: Tensor, other: Tensor) -> Tensor:
    """`input` with `other`'s dtype and on `other`'s device (PyTorch's tensor type covers both).

    >>> import genesis
    >>> genesis.tensor([1, 2]).type_as(genesis.tensor([0.5]))
    tensor([1., 2.])
    """
    return to(input, other._device, other.dtype)


class PinMemory(Op):
    """The same values in page-locked host memory; the gradient passes through."""

    @staticmethod
    def forward(ctx, a):
        return pinned_copy(a._data)

    @staticmethod
    def backward(ctx, grad):
        return grad


def pin_memory(input: Tensor) -> Tensor:
    """A copy of a CPU tensor in page-locked memory, which a copy to the GPU can read
    asynchronously (`.to("cuda", non_blocking=True)`); itself when already pinned. Needs a
    CUDA device, as in PyTorch.

    >>> import genesis
    >>> genesis.tensor([1.0]).pin_memory()  # doctest: +SKIP
    tensor([1.])
    """
    if input._device.type != "cpu":
        raise RuntimeError(f"pin_memory: cannot pin a {input._device} tensor; only CPU tensors "
                           "can be pinned (it is in GPU memory already)")
    return input if is_pinned(input) else PinMemory.apply(input)


def is_pinned(input: Tensor) -> bool:
    """Whether the tensor is in page-locked host memory (`pin_memory`); False on a GPU."""
    return input._device.type == "cpu" and pinned_memory(input._data)


def get_device(input: Tensor) -> int:
    """The GPU number of a CUDA tensor; -1 for a CPU tensor (as in PyTorch)."""
    return -1 if input._device.type == "cpu" else input._device.index


METHODS = {
    "to": to, "clone": clone, "contiguous": contiguous, "cpu": cpu, "cuda": cuda,
    "type_as": type_as, "get_device": get_device, "pin_memory": pin_memory,
    "is_pinned": is_pinned,
    "float": _converter("float32"), "half": _converter("float16"),
    "double": _converter("float64"), "long": _converter("int64"), "int": _converter("int32"),
    "bool": _converter("bool"), "short": _converter("int16"), "byte": _converter("uint8"),
    "bfloat16": _converter("bfloat16"),
}


def _to_samples(rng) -> list:
    """Conversions that change nothing in float64, where the checks run (a move between
    devices is left out: the samples run on each device in turn)."""
    return [Sample((samples.values(rng, (3, 4)), "float64"), note="same dtype"),
            Sample((samples.values(rng, (3, 4)),), {"dtype": "float64"}, layout="transposed",
                   note="dtype keyword"),
            Sample((samples.values(rng, (2, 3)),), {"dtype": "float64", "copy": True},
                   layout="strided", note="copy=True")]


OPS = [
    OpInfo("clone", clone, lambda rng: samples.unary(samples.values, rng),
           torch=lambda torch, a: torch.clone(a)),
    OpInfo("contiguous", contiguous, lambda rng: samples.unary(samples.values, rng),
           torch=lambda torch, a: a.contiguous()),
    OpInfo("to", to, _to_samples, torch=lambda torch, a, *args, **kwargs: a.to(
        *(getattr(torch, arg) if arg == "float64" else arg for arg in args),
        **{key: getattr(torch, value) if key == "dtype" else value
           for key, value in kwargs.items()})),
]

