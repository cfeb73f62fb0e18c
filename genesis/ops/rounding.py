"""Rounding: floor, ceil, round, trunc (piecewise constant: zero gradient) and frac;
fake quantisation (round to a grid and back, with a straight-through gradient).

Integer inputs come back unchanged (a copy); bools are refused, as in PyTorch.
`round` rounds half to even, and with `decimals` rounds to that many digits.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import Op
from ..dtypes import FLOATING_NUMPY_DTYPES
from ..tensor import Tensor
from . import samples
from ._operands import zeros_of
from .inplace import apply_inplace
from .registry import OpInfo, Sample
from .where import gate

__all__ = ["floor", "ceil", "round", "trunc", "fix", "frac", "fake_quantize_per_tensor_affine",
           "fake_quantize_per_channel_affine"]


def _refuse_bool(op: str, a: Tensor) -> None:
    if a._data.dtype.kind == "b":
        raise RuntimeError(f"{op}: not supported for bool tensors; convert first with .int() "
                           "or .float()")


class _Step(Op):
    """A piecewise-constant rounding (`ufunc`: floor, ceil or trunc): integer tensors come back
    unchanged, and the gradient is zero everywhere, as in PyTorch."""

    ufunc = ""

    @staticmethod
    def forward(ctx, a):
        name = type(ctx)._forward_cls.ufunc
        _refuse_bool(name, a)
        data = a._data
        return getattr(a._device.xp, name)(data) if data.dtype in FLOATING_NUMPY_DTYPES else data.copy()

    @staticmethod
    def backward(ctx, grad):
        return zeros_of(grad)


class Floor(_Step):
    """The largest integer <= a."""

    ufunc = "floor"


class Ceil(_Step):
    """The smallest integer >= a."""

    ufunc = "ceil"


class Trunc(_Step):
    """a rounded toward zero."""

    ufunc = "trunc"


class Round(Op):
    """a rounded half to even, to `decimals` digits (negative: to tens, hundreds, ...)."""

    @staticmethod
    def forward(ctx, a, decimals):
        _refuse_bool("round", a)
        data = a._data
        if data.dtype not in FLOATING_NUMPY_DTYPES:
            if decimals != 0:
                raise RuntimeError(f"round: decimals={decimals} needs a floating point tensor, "
                                   f"got {a.dtype.name}; convert first with .float()")
            return data.copy()
        xp = a._device.xp
        if decimals == 0:
            return xp.rint(data)
        # the same steps as PyTorch, so halfway cases round the same way
        if decimals > 0:
            scale = 10.0 ** decimals
            return xp.rint(data * scale) / scale
        scale = 10.0 ** -decimals
        return xp.rint(data / scale) * scale

    @staticmethod
    def backward(ctx, grad):
        return zeros_of(grad), None


class Frac(Op):
    """a - trunc(a), the fractional part with the sign of a; its gradient is 1."""

    @staticmethod
    def forward(ctx, a):
        data = a._data
        if data.dtype not in FLOATING_NUMPY_DTYPES:
            raise RuntimeError(f"frac: needs a floating point tensor, got {a.dtype.name}; "
                               "convert first with .float()")
        return data - a._device.xp.trunc(data)

    @staticmethod
    def backward(ctx, grad):
        return grad


class FakeQuantize(Op):
    """Quantise to the grid of `scale` and `zero_point`, clamp to [quant_min, quant_max] and
    dequantise, with PyTorch's CPU arithmetic: the steps in the input's dtype (float32 at
    least), 1/scale in float32 but per channel with integer zero points, and the result in
    float32 per tensor (`float32_result`) and in that dtype per channel. `scale` and `zero_point` are arrays that broadcast against `a` (one
    per channel, or 0-d); an integer zero point is added after rounding, a floating one
    before, as in PyTorch.

    The gradient is PyTorch's straight-through estimator: the incoming gradient where the
    rounded value lay inside [quant_min, quant_max], exactly 0 where it was clamped; scale
    and zero point get none.
    """

    @staticmethod
    def forward(ctx, a, scale, zero_point, quant_min, quant_max, float32_result):
        xp = a._device.xp
        data = a._data
        compute = np.result_type(data.dtype, np.float32)
        if float32_result or zero_point.dtype.kind == "f":
            inverse = (np.float32(1.0) / scale.astype(np.float32)).astype(compute)
        else:
            inverse = np.float32(1.0) / scale.astype(compute)
        if zero_point.dtype.kind == "f":
            zero_point = zero_point.astype(np.float32)
            rounded = xp.rint(data * inverse + zero_point)
        else:
            rounded = xp.rint(data * inverse) + zero_point
        ctx.inside = (rounded >= quant_min) & (rounded <= quant_max)
        result = np.float32 if float32_result else compute
        clamped = xp.clip(rounded, quant_min, quant_max).astype(result)
        return ((clamped - zero_point.astype(result)) * scale.astype(result)).astype(data.dtype,
                                                                                     copy=False)

    @staticmethod
    def backward(ctx, grad):
        return gate(grad, ctx.inside), None, None, None, None, None


def _quantization_grid(op: str, input: Tensor, scale, zero_point, quant_min: int,
                       quant_max: int) -> tuple:
    """The arrays of `scale` and `zero_point` (numbers or tensors) on the input's device,
    checked as PyTorch checks them."""
    if input._data.dtype not in FLOATING_NUMPY_DTYPES:
        raise RuntimeError(f"{op}: needs a floating point input, got {input.dtype.name}")
    if quant_min > quant_max:
        raise RuntimeError(f"{op}: quant_min ({quant_min}) must not exceed quant_max ({quant_max})")
    xp = input._device.xp
    scale = xp.asarray(scale._data if isinstance(scale, Tensor) else scale, dtype=np.float32)
    zero_point = xp.asarray(zero_point._data if isinstance(zero_point, Tensor) else zero_point)
    if zero_point.dtype.kind == "f" and zero_point.ndim == 0:
        zero_point = zero_point.astype(np.int64)  # PyTorch's per-tensor zero point is an int
    if zero_point.dtype.kind in "iu" and bool(((zero_point < quant_min) | (zero_point > quant_max)).any()):
        raise RuntimeError(f"{op}: zero_point must be between quant_min ({quant_min}) and "
                           f"quant_max ({quant_max})")
    return scale, zero_point


def fake_quantize_per_tensor_affine(input: Tensor, scale, zero_point, quant_min: int,
                                    quant_max: int) -> Tensor:
    """`(clamp(round(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale`,
    with the straight-through gradient of quantisation-aware training (1 inside the range,
    0 where clamped). `scale` and `zero_point` are numbers or one-element tensors.

    >>> import genesis
    >>> x = genesis.tensor([0.26, -1.0, 19.0], requires_grad=True)
    >>> y = genesis.fake_quantize_per_tensor_affine(x, 0.1, 0, -128, 127)
    >>> y.sum().backward(); y.detach(), x.grad
    (tensor([ 0.3000, -1.0000, 12.7000]), tensor([1., 1., 0.]))
    """
    scale, zero_point = _quantization_grid("fake_quantize_per_tensor_affine", input, scale,
                                           zero_point, quant_min, quant_max)
    if scale.size != 1 or zero_point.size != 1:
        raise RuntimeError("fake_quantize_per_tensor_affine: scale and zero_point must hold one "
                           f"value each, got {scale.size} and {zero_point.size}")
    return FakeQuantize.apply(input, scale.reshape(()), zero_point.reshape(()), quant_min,
                              quant_max, True)


def fake_quantize_per_channel_affine(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int,
                                     quant_min: int, quant_max: int) -> Tensor:
    """Fake quantisation with one `scale` and `zero_point` per slice of `input` along `axis`
    (1-D tensors of that dimension's size); the gradient as in
    `fake_quantize_per_tensor_affine`.

    >>> import genesis
    >>> w = genesis.tensor([[0.26, -1.0], [0.26, -1.0]])
    >>> genesis.fake_quantize_per_channel_affine(w, genesis.tensor([0.1, 0.5]),
    ...                                          genesis.tensor([0, 0]), 0, -128, 127)
    tensor([[ 0.3000, -1.0000],
            [ 0.5000, -1.0000]])
    """
    op = "fake_quantize_per_channel_affine"
    scale, zero_point = _quantization_grid(op, input, scale, zero_point, quant_min, quant_max)
    if not 0 <= axis < input.ndim:  # PyTorch takes no negative axis here
        raise RuntimeError(f"{op}: axis must be between 0 and {input.ndim - 1} (the input's "
                           f"dims), got {axis}")
    channels = input.shape[axis]
    if scale.shape != (channels,) or zero_point.shape != (channels,):
        raise RuntimeError(f"{op}: scale and zero_point must be 1-D with {channels} values (the "
                           f"size of dim {axis}), got shapes {tuple(scale.shape)} and "
                           f"{tuple(zero_point.shape)}")
    along = (channels,) + (1,) * (input.ndim - axis - 1)
    return FakeQuantize.apply(input, scale.reshape(along), zero_point.reshape(along), quant_min,
                              quant_max, False)


def floor(input: Tensor) -> Tensor:
    """Round down to an integer value (zero gradient).

    >>> import genesis
    >>> genesis.tensor([-1.5, 1.5]).floor()
    tensor([-2.,  1.])
    """
    return Floor.apply(input)


def ceil(input: Tensor) -> Tensor:
    """Round up to an integer value (zero gradient).

    >>> import genesis
    >>> genesis.tensor([-1.5, 1.5]).ceil()
    tensor([-1.,  2.])
    """
    return Ceil.apply(input)


def trunc(input: Tensor) -> Tensor:
    """Round toward zero (zero gradient).

    >>> import genesis
    >>> genesis.tensor([-1.5, 1.5]).trunc()
    tensor([-1.,  1.])
    """
    return Trunc.apply(input)


def round(input: Tensor, decimals: int = 0) -> Tensor:
    """Round half to even, to `decimals` decimal digits (zero gradient).

    >>> import genesis
    >>> genesis.tensor([0.5, 1.5, 2.5]).round(), genesis.tensor([1.2345]).round(decimals=2)
    (tensor([0., 2., 2.]), tensor([1.2300]))
    """
    if not isinstance(decimals, int):
        raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__}")
    return Round.apply(input, decimals)


def frac(input: Tensor) -> Tensor:
    """The fractional part, input - trunc(input).

    >>> import genesis
    >>> genesis.tensor([-1.25, 2.5]).frac()
    tensor([-0.2500,  0.5000])
    """
    return Frac.apply(input)


fix = trunc


def floor_(self: Tensor) -> Tensor:
    """In place: round down."""
    return apply_inplace(Floor, self)


def ceil_(self: Tensor) -> Tensor:
    """In place: round up."""
    return apply_inplace(Ceil, self)


def trunc_(self: Tensor) -> Tensor:
    """In place: round toward zero."""
    return apply_inplace(Trunc, self)


def round_(self: Tensor, decimals: int = 0) -> Tensor:
    """In place: round half to even."""
    return apply_inplace(Round, self, decimals)


def frac_(self: Tensor) -> Tensor:
    """In place: keep the fractional part."""
    return apply_inplace(Frac, self)


METHODS = {"floor": floor, "ceil": ceil, "trunc": trunc, "fix": trunc, "round": round,
           "frac": frac, "floor_": floor_, "ceil_": ceil_, "trunc_": trunc_, "fix_": trunc_,
           "round_": round_, "frac_": frac_}


def _unit_samples(rng):
    """Values away from the integers and half-integers, where rounding jumps."""
    return samples.unary(lambda r, shape: samples.away_from(
        r, shape, points=tuple(x / 2 for x in range(-4, 5)), margin=0.02), rng)


def _decimal_samples(rng, decimals):
    step = 10.0 ** -decimals
    return samples.unary(lambda r, shape: np.asarray(step * samples.away_from(
        r, shape, points=tuple(x / 2 for x in range(-8, 9)), margin=0.02, low=-4.0, high=4.0)),
        rng, decimals=decimals)


def _fake_quantize_samples(rng):
    """Values away from the grids' rounding jumps (steps of the grid plus one half), some
    beyond their ranges; per-channel grids as lists (float32 / int32 tensors in the call)."""
    def steps(shape):
        return samples.away_from(rng, shape, points=tuple(x + 0.5 for x in range(-12, 12)),
                                 margin=0.05, low=-12.0, high=12.0)
    per_channel = np.array([0.5, 0.25, 0.5, 1.0])
    return [
        Sample((0.25 * steps((3, 4)), 0.25, 2, -8, 7), note="per tensor, clamped both ways"),
        Sample((0.5 * steps((2, 3)), 0.5, 0, 0, 255), layout="transposed", note="unsigned"),
        Sample((np.asarray(0.25 * steps(())), 0.25, 0, -128, 127), note="0-d"),
        Sample((per_channel * steps((3, 4)), per_channel.tolist(), [0, 1, -2, 3], 1, -8, 7),
               note="per channel"),
        Sample((per_channel[:2, None] * steps((2, 3)), per_channel[:2].tolist(), [0.0, 1.0], 0,
                -8, 7), note="per channel, float zero points"),
    ]


def _fake_quantize_call(input, scale, zero_point, *rest):
    """A sample's call: per tensor with numbers, per channel with lists."""
    if not isinstance(scale, list):
        return fake_quantize_per_tensor_affine(input, scale, zero_point, *rest)
    zero_dtype = np.float32 if isinstance(zero_point[0], float) else np.int32
    return fake_quantize_per_channel_affine(input, np.asarray(scale, np.float32),
                                            np.asarray(zero_point, zero_dtype), *rest)


def _torch_fake_quantize(torch, input, scale, zero_point, *rest):
    if not isinstance(scale, list):
        return torch.fake_quantize_per_tensor_affine(input, scale, zero_point, *rest)
    zero_dtype = torch.float32 if isinstance(zero_point[0], float) else torch.int32
    return torch.fake_quantize_per_channel_affine(
        input, torch.tensor(scale, dtype=torch.float32), torch.tensor(zero_point, dtype=zero_dtype),
        *rest)


OPS = [
    OpInfo("fake_quantize", _fake_quantize_call, _fake_quantize_samples, differentiable=False,
           torch=_torch_fake_quantize,
           kinks="the grid's rounding jumps (its gradient is a straight-through estimate)"),
    OpInfo("floor", floor, _unit_samples, torch=lambda torch, a: torch.floor(a),
           kinks="integers (a jump; the gradient is 0)"),
    OpInfo("ceil", ceil, _unit_samples, torch=lambda torch, a: torch.ceil(a),
           kinks="integers (a jump; the gradient is 0)"),
    OpInfo("trunc", trunc, _unit_samples, torch=lambda torch, a: torch.trunc(a),
           kinks="integers (a jump; the gradient is 0)"),
    OpInfo("round", round, lambda rng: _unit_samples(rng) + _decimal_samples(rng, 2)
           + _decimal_samples(rng, -1)[:2],
           torch=lambda torch, a, **kw: torch.round(a, **kw),
           kinks="halfway points (a jump; the gradient is 0)"),
    OpInfo("frac", frac, _unit_samples, torch=lambda torch, a: torch.frac(a),
           kinks="integers (a jump)"),
]
