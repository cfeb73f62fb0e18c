"""Elementwise math of two inputs: atan2, hypot, logaddexp, logaddexp2 (broadcasting).

Each op is one row: its ufunc and its two partial derivatives (Tensor ops, so gradients
are differentiable again), like PyTorch's derivatives.yaml; the engine sums a gradient
back to its input's shape where the inputs were broadcast.
"""
from __future__ import annotations

from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import device_of, float_operands, ignore_float_errors, kind_of, operands
from .gradient_rules import run_partials
from .registry import OpInfo

__all__ = ["atan2", "arctan2", "hypot", "logaddexp", "logaddexp2"]


def _floating_operands(a, b, op: str):
    """Operands of an op PyTorch defines for floating point only."""
    x, y = operands(a, b, op)
    if kind_of(x) in "iub" and kind_of(y) in "iub":  # (bfloat16 is of kind "V")
        names = [value.dtype.name for value in (a, b) if isinstance(value, Tensor)]
        raise RuntimeError(f"{op}: needs floating point inputs, got {' and '.join(names)}; "
                           "convert first with .float()")
    return x, y


def _binary_op(name: str, doc: str, ufunc: str, derivatives, *,
               reads=(("a", "b"), ("a", "b")), integers: str = "promote", quiet: bool = False):
    """A Function `name` computing the xp ufunc `ufunc` of two broadcast inputs, with gradient
    `derivatives` = (d/da, d/db), each a function of (m, grad, a, b, out): the op's gradient
    rule, run by genesis.ops.gradient_rules on the arrays in a plain backward and on the
    Tensors under create_graph (so the gradient is differentiable again). `reads` names, for
    each derivative, which of "a", "b" and "out" it reads (as PyTorch's formula): forward keeps
    a value only while a derivative that reads it is needed, the others are None. `integers`:
    "promote" (integer inputs give float32) or "refuse" (PyTorch defines the op for floating
    point only). `quiet` ops return inf/nan without warnings."""
    gradient_a, gradient_b = derivatives
    floating = float_operands if integers == "promote" else _floating_operands
    # for each needs_input_grad: whether forward keeps a, b and out
    keeps = {needs: tuple(any(need and value in read for read, need in zip(reads, needs))
                          for value in ("a", "b", "out"))
             for needs in ((False, False), (True, False), (False, True), (True, True))}

    def forward(ctx, a, b):
        x, y = floating(a, b, name.lower())
        device = device_of(a, b)
        out = getattr(device.xp, ufunc)(x, y)
        keep_a, keep_b, keep_out = keeps[ctx.needs_input_grad]
        if keep_out:
            out = wrap_array(out, device)
        ctx.save_for_backward(a if keep_a else None, b if keep_b else None,
                              out if keep_out else None)
        return out

    def backward(ctx, grad):
        return run_partials(gradient_a, gradient_b, ctx.needs_input_grad, grad, *ctx.saved_tensors)

    body = {"forward": staticmethod(ignore_float_errors(forward) if quiet else forward),
            "backward": staticmethod(backward), "__module__": __name__, "__doc__": doc}
    return type(name, (Op,), body)


# name, what it computes, ufunc, (d/da, d/db) of the gradient g, the inputs a, b and the output
# atan2's gradient at the origin is 0, as PyTorch's (the denominator 0 is taken as inf there)
Atan2 = _binary_op("Atan2", "The angle of the point (b, a): atan(a / b) in the right quadrant.",
                   "arctan2", (lambda m, g, a, b, out: g * b / m.nonzero_divisor(a * a + b * b),
                               lambda m, g, a, b, out: -g * a / m.nonzero_divisor(a * a + b * b)))
Hypot = _binary_op("Hypot", "sqrt(a^2 + b^2), without overflow for large inputs.", "hypot",
                   (lambda m, g, a, b, out: g / out * a, lambda m, g, a, b, out: g / out * b),
                   reads=(("a", "out"), ("b", "out")), integers="refuse")
Logaddexp = _binary_op("Logaddexp", "log(exp(a) + exp(b)), computed without overflow.",
                       "logaddexp", (lambda m, g, a, b, out: g / (1 + m.exp(b - a)),
                                     lambda m, g, a, b, out: g / (1 + m.exp(a - b))),
                       integers="refuse", quiet=True)
Logaddexp2 = _binary_op("Logaddexp2", "log2(2^a + 2^b), computed without overflow.",
                        "logaddexp2", (lambda m, g, a, b, out: g / (1 + m.exp2(b - a)),
                                       lambda m, g, a, b, out: g / (1 + m.exp2(a - b))),
                        integers="refuse", quiet=True)


def atan2(input, other) -> Tensor:
    """The angle of (other, input) in radians, in [-pi, pi]; integers give float32.

    >>> import genesis
    >>> genesis.atan2(genesis.tensor([1., -1.]), genesis.tensor([-1., -1.]))
    tensor([ 2.3562, -2.3562])
    """
    return Atan2.apply(input, other)


def hypot(input, other) -> Tensor:
    """sqrt(input^2 + other^2), elementwise.

    >>> import genesis
    >>> genesis.hypot(genesis.tensor([3.]), genesis.tensor([4.]))
    tensor([5.])
    """
    return Hypot.apply(input, other)


def logaddexp(input, other) -> Tensor:
    """log(exp(input) + exp(other)), stable for large values.

    >>> import genesis
    >>> genesis.logaddexp(genesis.tensor([1000.]), genesis.tensor([1000.]))
    tensor([1000.6932])
    """
    return Logaddexp.apply(input, other)


def logaddexp2(input, other) -> Tensor:
    """log2(2^input + 2^other), stable for large values.

    >>> import genesis
    >>> genesis.logaddexp2(genesis.tensor([1000.]), genesis.tensor([1000.]))
    tensor([1001.])
    """
    return Logaddexp2.apply(input, other)


arctan2 = atan2

METHODS = {"atan2": atan2, "arctan2": atan2, "hypot": hypot, "logaddexp": logaddexp,
           "logaddexp2": logaddexp2}


def _nonzero(rng, shape):
    return samples.away_from(rng, shape, (0.0,), margin=0.3)


OPS = [
    OpInfo("atan2", atan2, lambda rng: samples.binary(samples.values, _nonzero, rng),
           torch=lambda torch, a, b: torch.atan2(a, b)),
    OpInfo("hypot", hypot, lambda rng: samples.binary(_nonzero, _nonzero, rng),
           torch=lambda torch, a, b: torch.hypot(a, b)),
    OpInfo("logaddexp", logaddexp, lambda rng: samples.binary(samples.values, samples.values, rng),
           torch=lambda torch, a, b: torch.logaddexp(a, b)),
    OpInfo("logaddexp2", logaddexp2,
           lambda rng: samples.binary(samples.values, samples.values, rng),
           torch=lambda torch, a, b: torch.logaddexp2(a, b)),
]
