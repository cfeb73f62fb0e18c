"""Activations: relu and its piecewise-linear relatives; with the smooth ones (from
smooth_activation.py), sigmoid/tanh and softmax.py's normalisers, this module's `__all__` is
what `genesis.nn.functional` offers.

Subgradients are PyTorch's: relu'(0) = 0 (and a nan input passes its gradient),
leaky_relu'(0) = slope, hardtanh and relu6 are flat on their edges, hardswish'(3) = 1.
Backwards are masked gradients, exactly 0 where masked. `inplace=True` overwrites
the input, as PyTorch's does.
"""
from __future__ import annotations

import numbers

from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import samples
from ._kernels import Elementwise
from .gradient_rules import array_math, run_rule
from .inplace import apply_inplace
from .smooth_activation import (celu, elu, gelu, maybe_inplace, mish, require_floating, selu, silu,
                                softplus, unary_info)
from .softmax import log_softmax, logsumexp, softmax, softmin
from .unary import sigmoid, tanh
from .where import gate, gate_off, where

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "hardtanh", "elu", "selu", "celu", "gelu",
           "silu", "mish", "softplus", "hardsigmoid", "hardswish", "sigmoid", "tanh", "softmax",
           "log_softmax", "softmin", "logsumexp"]


def _refuse_bool(op: str, a: Tensor) -> None:
    if a._data.dtype.kind == "b":
        raise RuntimeError(f"{op}: not supported for bool tensors; convert first with .int()")


class Relu(Op):
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
        return run_rule(_relu_rule, grad, out, fused=_RELU_GRAD)


def _relu_rule(m, grad, out):
    """The gradient where the output is positive; a nan input passes its gradient, as in
    PyTorch: only out <= 0 is dropped."""
    return m.gate_off(grad, out <= 0)


_RELU_GRAD = Elementwise("genesis_relu_grad", "T g, T out", "T dx", "dx = out <= T(0) ? T(0) : g",
                         lambda device, g, out: _relu_rule(array_math(device), g, out))


class Hardtanh(Op):
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
        return gate_off(grad, (a._data <= low) | (a._data >= high)), None, None


def _typed_bounds(a: Tensor, low, high) -> tuple:
    """The bounds as scalars of a's dtype (integer tensors get integer bounds, as in PyTorch)."""
    scalar = a._data.dtype.type
    return scalar(low), scalar(high)


class LeakyRelu(Op):
    """a where a > 0, else slope * a; the gradient at 0 is the slope."""

    @staticmethod
    def forward(ctx, a, slope):
        require_floating("leaky_relu", a)
        ctx.save_for_backward(a)
        ctx.slope = slope
        return _LEAKY_RELU(a._device, a._data, slope)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return run_rule(_leaky_relu_rule, grad, a, ctx.slope, fused=_LEAKY_RELU_GRAD), None


def _leaky_relu_rule(m, grad, a, slope):
    """The gradient where a > 0, `slope` times it elsewhere (at 0 and at a nan input too)."""
    rising = a > 0
    return m.gate(grad, rising) + m.gate_off(grad, rising) * slope


_LEAKY_RELU = Elementwise("genesis_leaky_relu", "T x, T slope", "T y", "y = x > T(0) ? x : x * slope",
                          lambda device, x, slope: device.xp.where(x > 0, x, x * slope))
_LEAKY_RELU_GRAD = Elementwise(
    "genesis_leaky_relu_grad", "T g, T x, T slope", "T dx", "dx = x > T(0) ? g : g * slope",
    lambda device, g, x, slope: _leaky_relu_rule(array_math(device), g, x, slope))


class Hardsigmoid(Op):
    """clip(a + 3, 0, 6) / 6; the gradient is 1/6 strictly inside (-3, 3), else 0."""

    @staticmethod
    def forward(ctx, a):
        require_floating("hardsigmoid", a)
        ctx.save_for_backward(a)
        return a._device.xp.clip(a._data + 3, 0, 6) / 6

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return gate(grad, (a._data > -3) & (a._data < 3)) / 6


class Hardswish(Op):
    """a * clip(a + 3, 0, 6) / 6; the gradient is 0 for a <= -3 and 1 for a >= 3."""

    @staticmethod
    def forward(ctx, a):
        require_floating("hardswish", a)
        ctx.save_for_backward(a)
        x = a._data
        return x * a._device.xp.clip(x + 3, 0, 6) / 6

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        middle = wrap_array(a._data < 3, a._device)
        return gate_off(where(middle, grad * (a / 3 + 0.5), grad), a._data <= -3)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0). The gradient at 0 is 0.

    >>> import genesis
    >>> genesis.tensor([-1., 0., 2.]).relu()
    tensor([0., 0., 2.])
    """
    return maybe_inplace(Relu, input, inplace)


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
    return maybe_inplace(Hardtanh, input, inplace, min_val, max_val)


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
    return maybe_inplace(LeakyRelu, input, inplace, float(negative_slope))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """clip(input / 6 + 1/2, 0, 1), a piecewise-linear sigmoid.

    >>> import genesis
    >>> genesis.nn.functional.hardsigmoid(genesis.tensor([-4., 0., 4.]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return maybe_inplace(Hardsigmoid, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """input * hardsigmoid(input).

    >>> import genesis
    >>> genesis.nn.functional.hardswish(genesis.tensor([-4., 1., 4.]))
    tensor([-0.0000,  0.6667,  4.0000])
    """
    return maybe_inplace(Hardswish, input, inplace)


METHODS = {"relu": relu, "relu_": relu_}


def _kinked(points, low=-4.0, high=4.0):
    return lambda rng, shape: samples.away_from(rng, shape, points, margin=0.1, low=low, high=high)


OPS = [
    unary_info("relu", relu, _kinked((0.0,)), lambda torch, a: torch.relu(a),
                kinks="x == 0 (the gradient there is 0)"),
    unary_info("relu6", relu6, _kinked((0.0, 6.0), high=8.0),
                lambda torch, a: torch.nn.functional.relu6(a),
                kinks="x == 0 or x == 6 (the gradient there is 0)"),
    unary_info("hardtanh", hardtanh, _kinked((-1.0, 1.0)),
                lambda torch, a: torch.nn.functional.hardtanh(a),
                kinks="x == min_val or x == max_val (the gradient there is 0)"),
    unary_info("hardtanh_bounds", lambda a: hardtanh(a, -0.5, 2.0), _kinked((-0.5, 2.0)),
                lambda torch, a: torch.nn.functional.hardtanh(a, -0.5, 2.0),
                kinks="x == min_val or x == max_val (the gradient there is 0)"),
    unary_info("leaky_relu", leaky_relu, _kinked((0.0,)),
                lambda torch, a, **kw: torch.nn.functional.leaky_relu(a, **kw),
                kinks="x == 0 (the gradient there is the slope)", negative_slope=0.2),
    # The reference is clamp(x / 6 + 1/2, 0, 1): PyTorch's own float64 hardsigmoid backward
    # uses 1/6 rounded to float32, which a 1e-10 comparison would flag.
    unary_info("hardsigmoid", hardsigmoid, _kinked((-3.0, 3.0)),
                lambda torch, a: torch.clamp(a / 6 + 0.5, 0, 1),
                kinks="x == -3 or x == 3 (the gradient there is 0)"),
    unary_info("hardswish", hardswish, _kinked((-3.0, 3.0)),
                lambda torch, a: torch.nn.functional.hardswish(a),
                kinks="x == -3 (gradient 0) or x == 3 (gradient 1)"),
]
