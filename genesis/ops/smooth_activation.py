"""Smooth activations built from exp, erf and tanh: elu, selu, celu, gelu, silu, mish, softplus.

Backwards are Tensor ops, so double backward works; gelu's is a fused Function
(GeluGrad) whose own backward gives gelu''. At 0, elu'(0) = alpha * scale as in
PyTorch; a nan input passes the gradient of the linear branch, as PyTorch's does.
"""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..tensor import Tensor, wrap_array
from . import samples
from ._blockwise import in_blocks
from ._erf import erf_array
from ._kernels import Elementwise
from ._operands import ignore_float_errors
from .gradient_rules import array_math, run_rule
from .inplace import apply_inplace
from .registry import OpInfo, Sample
from .unary import sigmoid
from .where import where

__all__ = ["elu", "selu", "celu", "gelu", "silu", "mish", "softplus"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_HALF = math.sqrt(0.5)
_SQRT_TWO_OVER_PI = math.sqrt(2.0 / math.pi)
_ONE_OVER_SQRT_TWO_PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_KAPPA = 0.044715


def require_floating(op: str, a: Tensor) -> None:
    """Refuse an integer or bool tensor for an op PyTorch defines on floats only."""
    if not a.is_floating_point():  # (bfloat16 included)
        raise RuntimeError(f"{op}: needs a floating point tensor, got {a.dtype.name}; convert "
                           "first with .float()")


def maybe_inplace(cls, input: Tensor, inplace: bool, *args) -> Tensor:
    """Apply Function `cls` to input, or with `inplace=True` write the result into input."""
    return apply_inplace(cls, input, *args) if inplace else cls.apply(input, *args)


class Elu(Op):
    """scale * (a if a > 0 else alpha * (exp(a * input_scale) - 1)): elu, selu and celu."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, alpha, scale, input_scale, name):
        require_floating(name, a)
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


def _gelu_shared_part(xp, approximate: str):
    """The part of gelu its value and its derivative share, as array calls: Phi(x) (the
    standard normal CDF, via erf) when exact, the tanh of the tanh approximation otherwise."""
    if approximate == "tanh":
        def formula(x):
            return xp.tanh(_SQRT_TWO_OVER_PI * (x + _GELU_KAPPA * (x * x * x)))
    else:
        def formula(x):
            return 0.5 * (1 + erf_array(xp, x * _SQRT_HALF))
    return formula


def _gelu_value(x, shared, approximate: str):
    """gelu(x) from x and its shared part."""
    return 0.5 * x * (1 + shared) if approximate == "tanh" else x * shared


def _gelu_grad_from_shared(xp, approximate: str):
    """grad * gelu'(x) from grad, x and x's shared part, as array calls."""
    if approximate == "tanh":
        def formula(g, x, t):
            slope = _SQRT_TWO_OVER_PI * (1 + 3 * _GELU_KAPPA * (x * x))
            return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * slope)
    else:
        def formula(g, x, cdf):
            pdf = _ONE_OVER_SQRT_TWO_PI * xp.exp(-0.5 * (x * x))
            return g * (cdf + x * pdf)
    return formula


def _gelu_value_and_shared_part(xp, approximate: str):
    """(gelu(x), its shared part) as array calls, one pass over x."""
    shared = _gelu_shared_part(xp, approximate)

    def formula(x):
        part = shared(x)
        return _gelu_value(x, part, approximate), part
    return formula


def _gelu_formula(xp, approximate: str):
    """gelu as array calls: exact (erf) or the tanh approximation."""
    shared = _gelu_shared_part(xp, approximate)
    return lambda x: _gelu_value(x, shared(x), approximate)


def _gelu_grad_formula(xp, approximate: str):
    """grad * gelu'(x) as array calls."""
    shared, derivative = _gelu_shared_part(xp, approximate), _gelu_grad_from_shared(xp, approximate)
    return lambda g, x: derivative(g, x, shared(x))


def _gelu_kernels(approximate: str) -> tuple:
    """gelu and grad * gelu' as one GPU launch each (the same formulas as above, in C)."""
    if approximate == "tanh":
        inner = f"T t = tanh(T({_SQRT_TWO_OVER_PI!r}) * (x + T({_GELU_KAPPA!r}) * (x * x * x)));"
        value = "y = T(0.5) * x * (T(1) + t);"
        derivative = (f"T slope = T({_SQRT_TWO_OVER_PI!r}) * (T(1) + T({3 * _GELU_KAPPA!r}) * (x * x));"
                      " dx = g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * slope);")
    else:
        inner = f"T cdf = T(0.5) * (T(1) + erf(x * T({_SQRT_HALF!r})));"
        value = "y = x * cdf;"
        derivative = (f"T pdf = T({_ONE_OVER_SQRT_TWO_PI!r}) * exp(T(-0.5) * (x * x));"
                      " dx = g * (cdf + x * pdf);")
    forward = Elementwise(f"genesis_gelu_{approximate}", "T x", "T y", f"{inner} {value}",
                          lambda device, x: in_blocks(device.xp, _gelu_formula(device.xp, approximate), x))
    backward = Elementwise(
        f"genesis_gelu_{approximate}_grad", "T g, T x", "T dx", f"{inner} {derivative}",
        lambda device, g, x: in_blocks(device.xp, _gelu_grad_formula(device.xp, approximate), g, x))
    return forward, backward


_GELU_KERNELS = {approximate: _gelu_kernels(approximate) for approximate in ("none", "tanh")}


class Gelu(Op):
    """a * Phi(a) (Phi the standard normal CDF, via erf), or its tanh approximation.

    On the CPU, when a gradient will be needed, the forward keeps the part its value and
    derivative share (Phi(a), or the approximation's tanh: some 25 NumPy passes for erf)
    as a second saved value, so the backward does not compute it again: one activation's
    memory for about half the backward's time. The results are the same to the bit.
    """

    saved_names = ("self", None)  # grad_fn._saved_self, as in PyTorch; the shared part unnamed

    @staticmethod
    def forward(ctx, a, approximate):
        require_floating("gelu", a)
        ctx.approximate = approximate
        device = a._device
        if device.xp is np and ctx.needs_input_grad[0]:
            value, shared = in_blocks(np, _gelu_value_and_shared_part(np, approximate), a._data)
            ctx.save_for_backward(a, wrap_array(shared, device))
            return value
        ctx.save_for_backward(a)
        return _GELU_KERNELS[approximate][0](device, a._data)

    @staticmethod
    def backward(ctx, grad):
        a, *shared = ctx.saved_tensors
        if shared and not grad_state.enabled:  # (under create_graph: GeluGrad, differentiable)
            derivative = _gelu_grad_from_shared(np, ctx.approximate)
            return wrap_array(in_blocks(np, derivative, grad._data, a._data, shared[0]._data),
                              a._device), None
        return GeluGrad.apply(grad, a, ctx.approximate), None


class GeluGrad(Op):
    """grad * gelu'(a), fused; its own backward gives gelu'' for double backward."""

    @staticmethod
    def forward(ctx, grad, a, approximate):
        ctx.save_for_backward(grad, a)
        ctx.approximate = approximate
        return _GELU_KERNELS[approximate][1](a._device, grad._data, a._data)

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


class Silu(Op):
    """a * sigmoid(a)."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a):
        require_floating("silu", a)
        ctx.save_for_backward(a)
        return _SILU(a._device, a._data)

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return run_rule(_silu_rule, grad, a, fused=_SILU_GRAD)


def _silu_rule(m, grad, x):
    """d/dx x sigmoid(x) = s (1 + x (1 - s)), s = sigmoid(x)."""
    s = m.sigmoid(x)
    return grad * s * (1 + x * (1 - s))


_SILU = Elementwise("genesis_silu", "T x", "T y", "y = x / (T(1) + exp(-x))",
                    lambda device, x: x / (1 + device.xp.exp(-x)))
_SILU_GRAD = Elementwise("genesis_silu_grad", "T g, T x", "T dx",
                         "T s = T(1) / (T(1) + exp(-x)); dx = g * s * (T(1) + x * (T(1) - s))",
                         lambda device, g, x: _silu_rule(array_math(device), g, x))


class Mish(Op):
    """a * tanh(softplus(a))."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a):
        require_floating("mish", a)
        ctx.save_for_backward(a)
        xp = a._device.xp
        x = a._data
        return x * xp.tanh(xp.log1p(xp.exp(x)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        t = softplus(a).tanh()
        return grad * (t + a * sigmoid(a) * (1 - t * t))


class Softplus(Op):
    """log(1 + exp(beta * a)) / beta, or a itself where beta * a > threshold."""

    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, beta, threshold):
        require_floating("softplus", a)
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


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, else alpha * (exp(input) - 1).

    >>> import genesis
    >>> genesis.nn.functional.elu(genesis.tensor([-1., 2.]))
    tensor([-0.6321,  2.0000])
    """
    return maybe_inplace(Elu, input, inplace, float(alpha), 1.0, 1.0, "elu")


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(input, alpha) with the self-normalising constants.

    >>> import genesis
    >>> genesis.nn.functional.selu(genesis.tensor([1.]))
    tensor([1.0507])
    """
    return maybe_inplace(Elu, input, inplace, _SELU_ALPHA, _SELU_SCALE, 1.0, "selu")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, else alpha * (exp(input / alpha) - 1).

    >>> import genesis
    >>> genesis.nn.functional.celu(genesis.tensor([-2., 1.]), alpha=2.)
    tensor([-1.2642,  1.0000])
    """
    if alpha == 0:
        raise RuntimeError("celu: alpha cannot be 0 (it divides the input)")
    return maybe_inplace(Elu, input, inplace, float(alpha), 1.0, 1.0 / alpha, "celu")


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
    return maybe_inplace(Silu, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """input * tanh(softplus(input)).

    >>> import genesis
    >>> genesis.nn.functional.mish(genesis.tensor([0., 1.]))
    tensor([0.0000, 0.8651])
    """
    return maybe_inplace(Mish, input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * input)) / beta; linear where beta * input > threshold.

    >>> import genesis
    >>> genesis.nn.functional.softplus(genesis.tensor([0., 30.]))
    tensor([ 0.6931, 30.0000])
    """
    return Softplus.apply(input, beta, threshold)


METHODS: dict = {}


def _wide(rng, shape):
    return samples.values(rng, shape, -4.0, 4.0)


def unary_info(name, call, make, torch_call, kinks="", **kwargs) -> OpInfo:
    """The registry entry of a one-input activation, sampled by `make` (kwargs passed on)."""
    return OpInfo(name, call, lambda rng: samples.unary(make, rng, **kwargs),
                  torch=torch_call, kinks=kinks)


def _away_from_zero(rng, shape):
    return samples.away_from(rng, shape, (0.0,), margin=0.1, low=-4.0, high=4.0)


def _softplus_samples(rng):
    around_threshold = samples.away_from(rng, (3, 4), (10.0,), margin=0.1, low=9.0, high=12.0)
    return (samples.unary(_wide, rng)
            + [Sample((around_threshold,), {"beta": 2.0, "threshold": 20.0},
                      note="beta * x on both sides of the threshold")])


OPS = [
    unary_info("elu", elu, _away_from_zero,
                lambda torch, a, **kw: torch.nn.functional.elu(a, **kw),
                kinks="x == 0 for alpha != 1 (the gradient there is alpha)", alpha=1.5),
    unary_info("selu", selu, _away_from_zero, lambda torch, a: torch.nn.functional.selu(a),
                kinks="x == 0 (the gradient there is scale * alpha)"),
    # alpha 0.5: PyTorch's celu backward rounds 1 / alpha to float32, exact only for such alphas
    unary_info("celu", celu, _wide, lambda torch, a, **kw: torch.nn.functional.celu(a, **kw),
                alpha=0.5),
    unary_info("gelu", gelu, _wide, lambda torch, a: torch.nn.functional.gelu(a)),
    unary_info("gelu_tanh", gelu, _wide,
                lambda torch, a, **kw: torch.nn.functional.gelu(a, **kw), approximate="tanh"),
    unary_info("silu", silu, _wide, lambda torch, a: torch.nn.functional.silu(a)),
    unary_info("mish", mish, _wide, lambda torch, a: torch.nn.functional.mish(a)),
    OpInfo("softplus", softplus, _softplus_samples,
           torch=lambda torch, a, **kw: torch.nn.functional.softplus(a, **kw),
           kinks="beta * x == threshold (a jump of about exp(-threshold))"),
]
