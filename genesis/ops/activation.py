"""Activations: relu and its piecewise-linear relatives, the smooth ones (elu, gelu, silu,
softplus, ...), and softmax.py's normalisers; all are also in `genesis.nn.functional`.

Subgradients at the kinks are PyTorch's: relu'(0) = 0, leaky_relu'(0) = slope,
hardtanh and relu6 are flat at their edges, elu'(0) = alpha. Backwards are
masked gradients or Tensor ops (so double backward works); gelu's is a fused
Function. `inplace=True` overwrites the input, as PyTorch's does.
"""
from __future__ import annotations

import math
import numbers

from ..autograd.function import Function
from ..tensor import Tensor, wrap_array
from . import samples
from ._erf import erf_array
from ._operands import ignore_float_errors
from .inplace import apply_inplace
from .registry import OpInfo, Sample
from .selection import gate, where
from .softmax import log_softmax, logsumexp, softmax, softmin
from .unary import sigmoid, tanh

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "hardtanh", "elu", "selu", "celu", "gelu",
           "silu", "mish", "softplus", "hardsigmoid", "hardswish", "sigmoid", "tanh", "softmax",
           "log_softmax", "softmin", "logsumexp"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_HALF = math.sqrt(0.5)
_SQRT_TWO_OVER_PI = math.sqrt(2.0 / math.pi)
_ONE_OVER_SQRT_TWO_PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_KAPPA = 0.044715


def _refuse_non_float(op: str, a: Tensor) -> None:
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"{op}: needs a floating point tensor, got {a.dtype.name}; convert "
                           "first with .float()")


def _refuse_bool(op: str, a: Tensor) -> None:
    if a._data.dtype.kind == "b":
        raise RuntimeError(f"{op}: not supported for bool tensors; convert first with .int()")


def _maybe_inplace(cls, input: Tensor, inplace: bool, *args) -> Tensor:
    return apply_inplace(cls, input, *args) if inplace else cls.apply(input, *args)


class Relu(Function):
    """max(a, 0); integers stay integers. The gradient is 0 at 0 (and passes at nan)."""

    @staticmethod
    def forward(ctx, a):
        _refuse_bool("relu", a)
        out = wrap_array(a._device.xp.maximum(a._data, 0), a._device)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def forward_inplace(target):
        target._device.xp.maximum(target._data, 0, out=target._data)

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return gate(grad, ~(out._data <= 0))  # a nan input passes its gradient, as in PyTorch


class Hardtanh(Function):
    """a clipped to [low, high]; the gradient is 0 outside and on the edges."""

    @staticmethod
    def forward(ctx, a, low, high):
        _refuse_bool("hardtanh", a)
        ctx.save_for_backward(a)
        ctx.bounds = _typed_bounds(a, low, high)
        return a._device.xp.clip(a._data, *ctx.bounds)

    @staticmethod
    def forward_inplace(target, low, high):
        target._device.xp.clip(target._data, *_typed_bounds(target, low, high), out=target._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        low, high = ctx.bounds
        return gate(grad, ~((a._data <= low) | (a._data >= high))), None, None


def _typed_bounds(a: Tensor, low, high) -> tuple:
    """The bounds as scalars of a's dtype (integer tensors get integer bounds, as in PyTorch)."""
    scalar = a._data.dtype.type
    return scalar(low), scalar(high)


class LeakyRelu(Function):
    """a where a > 0, else slope * a; the gradient at 0 is the slope."""

    @staticmethod
    def forward(ctx, a, slope):
        _refuse_non_float("leaky_relu", a)
        ctx.save_for_backward(a)
        ctx.slope = slope
        data = a._data
        return a._device.xp.where(data > 0, data, data * slope)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        factor = a._device.xp.where(a._data > 0, 1, ctx.slope).astype(grad._data.dtype)
        return grad * wrap_array(factor, grad._device), None


class Elu(Function):
    """scale * (a if a > 0 else alpha * (exp(a * input_scale) - 1)): elu, selu and celu."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, alpha, scale, input_scale, name):
        _refuse_non_float(name, a)
        ctx.save_for_backward(a)
        ctx.coefficients = (alpha, scale, input_scale)
        xp = a._device.xp
        data = a._data
        negative = xp.expm1(xp.minimum(data, 0) * input_scale) * (alpha * scale)
        return xp.where(data > 0, data * scale, negative)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        alpha, scale, input_scale = ctx.coefficients
        positive = wrap_array(~(a._data <= 0), a._device)
        return (where(positive, grad * scale,
                      grad * (alpha * scale * input_scale) * (a * input_scale).exp()),
                None, None, None, None)


class Gelu(Function):
    """a * Phi(a) (Phi the standard normal CDF, via erf), or its tanh approximation."""

    @staticmethod
    def forward(ctx, a, approximate):
        _refuse_non_float("gelu", a)
        ctx.save_for_backward(a)
        ctx.approximate = approximate
        xp = a._device.xp
        x = a._data
        if approximate == "tanh":
            inner = _SQRT_TWO_OVER_PI * (x + _GELU_KAPPA * (x * x * x))
            return 0.5 * x * (1 + xp.tanh(inner))
        return x * 0.5 * (1 + erf_array(xp, x * _SQRT_HALF))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return GeluGrad.apply(grad, a, ctx.approximate), None


class GeluGrad(Function):
    """grad * gelu'(a), fused; its own backward gives gelu'' for double backward."""

    @staticmethod
    def forward(ctx, grad, a, approximate):
        ctx.save_for_backward(grad, a)
        ctx.approximate = approximate
        xp = a._device.xp
        x = a._data
        if approximate == "tanh":
            t = xp.tanh(_SQRT_TWO_OVER_PI * (x + _GELU_KAPPA * (x * x * x)))
            slope = _SQRT_TWO_OVER_PI * (1 + 3 * _GELU_KAPPA * (x * x))
            return grad._data * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * slope)
        cdf = 0.5 * (1 + erf_array(xp, x * _SQRT_HALF))
        pdf = _ONE_OVER_SQRT_TWO_PI * xp.exp(-0.5 * (x * x))
        return grad._data * (cdf + x * pdf)

    @staticmethod
    def backward(ctx, grad_grad):
        grad, a = ctx.saved_tensors
        needs = ctx.needs_input_grad
        to_grad = GeluGrad.apply(grad_grad, a, ctx.approximate) if needs[0] else None
        to_a = grad_grad * grad * _gelu_second_derivative(a, ctx.approximate) if needs[1] else None
        return to_grad, to_a, None


def _gelu_second_derivative(x: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        t = (_SQRT_TWO_OVER_PI * (x + _GELU_KAPPA * x * x * x)).tanh()
        slope = _SQRT_TWO_OVER_PI * (1 + 3 * _GELU_KAPPA * x * x)
        curvature = _SQRT_TWO_OVER_PI * 6 * _GELU_KAPPA * x
        return (1 - t * t) * (slope - x * t * slope * slope + 0.5 * x * curvature)
    pdf = _ONE_OVER_SQRT_TWO_PI * (-0.5 * x * x).exp()
    return pdf * (2 - x * x)


class Silu(Function):
    """a * sigmoid(a)."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a):
        _refuse_non_float("silu", a)
        ctx.save_for_backward(a)
        x = a._data
        return x / (1 + a._device.xp.exp(-x))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        s = sigmoid(a)
        return grad * s * (1 + a * (1 - s))


class Mish(Function):
    """a * tanh(softplus(a))."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a):
        _refuse_non_float("mish", a)
        ctx.save_for_backward(a)
        xp = a._device.xp
        x = a._data
        return x * xp.tanh(xp.log1p(xp.exp(x)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        t = softplus(a).tanh()
        return grad * (t + a * sigmoid(a) * (1 - t * t))


class Softplus(Function):
    """log(1 + exp(beta * a)) / beta, or a itself where beta * a > threshold."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, beta, threshold):
        _refuse_non_float("softplus", a)
        ctx.save_for_backward(a)
        ctx.beta, ctx.threshold = beta, threshold
        xp = a._device.xp
        scaled = a._data * beta
        return xp.where(scaled > threshold, a._data, xp.log1p(xp.exp(scaled)) / beta)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        scaled = a * ctx.beta
        linear = wrap_array(scaled._data > ctx.threshold, a._device)
        return where(linear, grad, grad * sigmoid(scaled)), None, None


class Hardsigmoid(Function):
    """clip(a + 3, 0, 6) / 6; the gradient is 1/6 strictly inside (-3, 3), else 0."""

    @staticmethod
    def forward(ctx, a):
        _refuse_non_float("hardsigmoid", a)
        ctx.save_for_backward(a)
        return a._device.xp.clip(a._data + 3, 0, 6) / 6

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return gate(grad, (a._data > -3) & (a._data < 3)) / 6


class Hardswish(Function):
    """a * clip(a + 3, 0, 6) / 6; the gradient is 0 for a <= -3 and 1 for a >= 3."""

    @staticmethod
    def forward(ctx, a):
        _refuse_non_float("hardswish", a)
        ctx.save_for_backward(a)
        x = a._data
        return x * a._device.xp.clip(x + 3, 0, 6) / 6

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        middle = wrap_array(a._data < 3, a._device)
        return gate(where(middle, grad * (a / 3 + 0.5), grad), ~(a._data <= -3))


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0). The gradient at 0 is 0.

    >>> import genesis
    >>> genesis.tensor([-1., 0., 2.]).relu()
    tensor([0., 0., 2.])
    """
    return _maybe_inplace(Relu, input, inplace)


def relu_(input: Tensor) -> Tensor:
    """In place: input = max(input, 0)."""
    return apply_inplace(Relu, input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """input clipped to [min_val, max_val]; the gradient is 0 on and beyond the edges.

    >>> import genesis
    >>> genesis.nn.functional.hardtanh(genesis.tensor([-2., 0.5, 2.]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    return _maybe_inplace(Hardtanh, input, inplace, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(input, 0), 6) (hardtanh on [0, 6]).

    >>> import genesis
    >>> genesis.nn.functional.relu6(genesis.tensor([-1., 3., 7.]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """input where positive, else negative_slope * input; the gradient at 0 is the slope.

    >>> import genesis
    >>> genesis.nn.functional.leaky_relu(genesis.tensor([-2., 3.]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    if not isinstance(negative_slope, numbers.Real):
        raise TypeError(f"leaky_relu: negative_slope must be a number, got "
                        f"{type(negative_slope).__name__}")
    return _maybe_inplace(LeakyRelu, input, inplace, float(negative_slope))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, else alpha * (exp(input) - 1).

    >>> import genesis
    >>> genesis.nn.functional.elu(genesis.tensor([-1., 2.]))
    tensor([-0.6321,  2.0000])
    """
    return _maybe_inplace(Elu, input, inplace, float(alpha), 1.0, 1.0, "elu")


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(input, alpha) with the self-normalising constants.

    >>> import genesis
    >>> genesis.nn.functional.selu(genesis.tensor([1.]))
    tensor([1.0507])
    """
    return _maybe_inplace(Elu, input, inplace, _SELU_ALPHA, _SELU_SCALE, 1.0, "selu")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, else alpha * (exp(input / alpha) - 1).

    >>> import genesis
    >>> genesis.nn.functional.celu(genesis.tensor([-2., 1.]), alpha=2.)
    tensor([-1.2642,  1.0000])
    """
    if alpha == 0:
        raise RuntimeError("celu: alpha cannot be 0 (it divides the input)")
    return _maybe_inplace(Elu, input, inplace, float(alpha), 1.0, 1.0 / alpha, "celu")


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """input * Phi(input), Phi the standard normal CDF; approximate="tanh" uses the tanh
    approximation.

    >>> import genesis
    >>> genesis.nn.functional.gelu(genesis.tensor([-1., 0., 1.]))
    tensor([-0.1587,  0.0000,  0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return Gelu.apply(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """input * sigmoid(input) (also called swish).

    >>> import genesis
    >>> genesis.nn.functional.silu(genesis.tensor([0., 1.]))
    tensor([0.0000, 0.7311])
    """
    return _maybe_inplace(Silu, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """input * tanh(softplus(input)).

    >>> import genesis
    >>> genesis.nn.functional.mish(genesis.tensor([0., 1.]))
    tensor([0.0000, 0.8651])
    """
    return _maybe_inplace(Mish, input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * input)) / beta; linear where beta * input > threshold.

    >>> import genesis
    >>> genesis.nn.functional.softplus(genesis.tensor([0., 30.]))
    tensor([ 0.6931, 30.0000])
    """
    return Softplus.apply(input, beta, threshold)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """clip(input / 6 + 1/2, 0, 1), a piecewise-linear sigmoid.

    >>> import genesis
    >>> genesis.nn.functional.hardsigmoid(genesis.tensor([-4., 0., 4.]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return _maybe_inplace(Hardsigmoid, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """input * hardsigmoid(input).

    >>> import genesis
    >>> genesis.nn.functional.hardswish(genesis.tensor([-4., 1., 4.]))
    tensor([-0.0000,  0.6667,  4.0000])
    """
    return _maybe_inplace(Hardswish, input, inplace)


METHODS = {"relu": relu, "relu_": relu_}


def _kinked(points, low=-4.0, high=4.0):
    return lambda rng, shape: samples.away_from(rng, shape, points, margin=0.1, low=low, high=high)


def _wide(rng, shape):
    return samples.values(rng, shape, -4.0, 4.0)


def _activation(name, call, make, torch_call, kinks="", **kwargs):
    return OpInfo(name, call, lambda rng: samples.unary(make, rng, **kwargs),
                  torch=torch_call, kinks=kinks)


def _softplus_samples(rng):
    around_threshold = samples.away_from(rng, (3, 4), (10.0,), margin=0.1, low=9.0, high=12.0)
    return (samples.unary(_wide, rng)
            + [Sample((around_threshold,), {"beta": 2.0, "threshold": 20.0},
                      note="beta * x on both sides of the threshold")])


OPS = [
    _activation("relu", relu, _kinked((0.0,)), lambda torch, a: torch.relu(a),
                kinks="x == 0 (the gradient there is 0)"),
    _activation("relu6", relu6, _kinked((0.0, 6.0), high=8.0),
                lambda torch, a: torch.nn.functional.relu6(a),
                kinks="x == 0 or x == 6 (the gradient there is 0)"),
    _activation("hardtanh", hardtanh, _kinked((-1.0, 1.0)),
                lambda torch, a: torch.nn.functional.hardtanh(a),
                kinks="x == min_val or x == max_val (the gradient there is 0)"),
    _activation("hardtanh_bounds", lambda a: hardtanh(a, -0.5, 2.0), _kinked((-0.5, 2.0)),
                lambda torch, a: torch.nn.functional.hardtanh(a, -0.5, 2.0),
                kinks="x == min_val or x == max_val (the gradient there is 0)"),
    _activation("leaky_relu", leaky_relu, _kinked((0.0,)),
                lambda torch, a, **kw: torch.nn.functional.leaky_relu(a, **kw),
                kinks="x == 0 (the gradient there is the slope)", negative_slope=0.2),
    _activation("elu", elu, _kinked((0.0,)),
                lambda torch, a, **kw: torch.nn.functional.elu(a, **kw),
                kinks="x == 0 for alpha != 1 (the gradient there is alpha)", alpha=1.5),
    _activation("selu", selu, _kinked((0.0,)), lambda torch, a: torch.nn.functional.selu(a),
                kinks="x == 0 (the gradient there is scale * alpha)"),
    # alpha 0.5: PyTorch's celu backward rounds 1 / alpha to float32, exact only for such alphas
    _activation("celu", celu, _wide, lambda torch, a, **kw: torch.nn.functional.celu(a, **kw),
                alpha=0.5),
    _activation("gelu", gelu, _wide, lambda torch, a: torch.nn.functional.gelu(a)),
    _activation("gelu_tanh", gelu, _wide,
                lambda torch, a, **kw: torch.nn.functional.gelu(a, **kw), approximate="tanh"),
    _activation("silu", silu, _wide, lambda torch, a: torch.nn.functional.silu(a)),
    _activation("mish", mish, _wide, lambda torch, a: torch.nn.functional.mish(a)),
    OpInfo("softplus", softplus, _softplus_samples,
           torch=lambda torch, a, **kw: torch.nn.functional.softplus(a, **kw),
           kinks="beta * x == threshold (a jump of about exp(-threshold))"),
    # The reference is clamp(x / 6 + 1/2, 0, 1): PyTorch's own float64 hardsigmoid backward
    # uses 1/6 rounded to float32, which a 1e-10 comparison would flag.
    _activation("hardsigmoid", hardsigmoid, _kinked((-3.0, 3.0)),
                lambda torch, a: torch.clamp(a / 6 + 0.5, 0, 1),
                kinks="x == -3 or x == 3 (the gradient there is 0)"),
    _activation("hardswish", hardswish, _kinked((-3.0, 3.0)),
                lambda torch, a: torch.nn.functional.hardswish(a),
                kinks="x == -3 (gradient 0) or x == 3 (gradient 1)"),
]
