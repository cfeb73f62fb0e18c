"""Elementwise arithmetic and math: each op's forward and backward side by side.

Binary ops may return gradients in the broadcast shape: the engine sums them
back to each input's shape. Gradients are built from Tensor ops, so they are
themselves differentiable (`create_graph=True`).
"""
from __future__ import annotations

from ..autograd.function import Function
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import float_operands, operands
from .inplace import apply_inplace
from .registry import OpInfo

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
           "pow", "neg", "negative", "exp", "log", "tanh", "clamp", "clip"]


class Add(Function):
    """a + b."""

    @staticmethod
    def forward(ctx, a, b):
        x, y = operands(a, b, "add")
        return x + y

    @staticmethod
    def forward_inplace(target, other):
        xp = target._device.xp
        xp.add(target._data, other._data if isinstance(other, Tensor) else other,
               out=target._data, casting="same_kind")

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Function):
    """a - b."""

    @staticmethod
    def forward(ctx, a, b):
        x, y = operands(a, b, "sub")
        return x - y

    @staticmethod
    def forward_inplace(target, other):
        xp = target._device.xp
        xp.subtract(target._data, other._data if isinstance(other, Tensor) else other,
                    out=target._data, casting="same_kind")

    @staticmethod
    def backward(ctx, grad):
        return grad, (-grad if ctx.needs_input_grad[1] else None)


class Mul(Function):
    """a * b."""

    @staticmethod
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)
        x, y = operands(a, b, "mul")
        return x * y

    @staticmethod
    def forward_inplace(target, other):
        xp = target._device.xp
        xp.multiply(target._data, other._data if isinstance(other, Tensor) else other,
                    out=target._data, casting="same_kind")

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (grad * b if needs[0] else None), (grad * a if needs[1] else None)


class Div(Function):
    """a / b (true division: integer inputs give float32)."""

    @staticmethod
    def forward(ctx, a, b):
        x, y = float_operands(a, b, "div")
        out = x / y
        if ctx.needs_input_grad[1]:
            out = wrap_array(out, _device_of(a, b))
            ctx.save_for_backward(b, out)
        else:
            ctx.save_for_backward(b, None)
        return out

    @staticmethod
    def forward_inplace(target, other):
        xp = target._device.xp
        xp.true_divide(target._data, other._data if isinstance(other, Tensor) else other,
                       out=target._data, casting="same_kind")

    @staticmethod
    def backward(ctx, grad):
        b, out = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return (grad / b if needs[0] else None), (-grad * out / b if needs[1] else None)


class Pow(Function):
    """a ** b for tensor/tensor, tensor/number and number/tensor."""

    @staticmethod
    def forward(ctx, a, b):
        x, y = operands(a, b, "pow")
        if isinstance(y, int) and y < 0 and x.dtype.kind in "iu":
            raise RuntimeError("pow: integers to negative integer powers are not allowed; "
                               "use a float base (t.float() ** n)")
        out = wrap_array(x ** y, _device_of(a, b))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        needs = ctx.needs_input_grad
        grad_a = grad_b = None
        if needs[0]:
            if isinstance(b, Tensor):
                grad_a = grad * b * a ** (b - 1)
            else:
                grad_a = grad * (b * a ** (b - 1)) if b != 0 else grad * 0
        if needs[1]:
            if isinstance(a, Tensor):
                # 0 ** b for b >= 0 has derivative 0 in b (PyTorch's convention), not 0 * -inf
                log_a = _masked_log(a, b)
                grad_b = grad * out * log_a
            else:
                grad_b = grad * out * _log_number(a)
        return grad_a, grad_b


def _masked_log(a: Tensor, b: Tensor) -> Tensor:
    """log(a), with 0 where a == 0 and b >= 0 (there the exponent's gradient is 0)."""
    xp = a._device.xp
    zero_base = xp.logical_and(a._data == 0, xp.asarray(b._data) >= 0)
    if not zero_base.any():
        return log(a)
    return log(a + wrap_array(zero_base.astype(a._data.dtype), a._device))


def _log_number(value) -> float:
    import math

    if value == 0:
        return 0.0
    return math.log(value)


class Neg(Function):
    """-a."""

    @staticmethod
    def forward(ctx, a):
        return -a._data

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Exp(Function):
    """exp(a); saves its output, since d exp(a) = exp(a)."""

    @staticmethod
    def forward(ctx, a):
        out = wrap_array(a._device.xp.exp(a._data), a._device)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


class Log(Function):
    """Natural log."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a._device.xp.log(_floating(a))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / a


class Tanh(Function):
    """tanh(a); saves its output: d tanh = 1 - tanh^2."""

    @staticmethod
    def forward(ctx, a):
        out = wrap_array(a._device.xp.tanh(_floating(a)), a._device)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return TanhGrad.apply(grad, out)


class TanhGrad(Function):
    """grad * (1 - out^2), fused; differentiable for higher-order gradients."""

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        g, y = grad._data, out._data
        return g * (1 - y * y)

    @staticmethod
    def backward(ctx, grad_grad):
        grad, out = ctx.saved_tensors
        return grad_grad * (1 - out * out), -2 * grad_grad * grad * out


class Clamp(Function):
    """min(max(a, low), high); the gradient passes where low <= a <= high (PyTorch's rule)."""

    @staticmethod
    def forward(ctx, a, low, high):
        ctx.save_for_backward(a)
        ctx.bounds = (low, high)
        return a._device.xp.clip(a._data, low, high)

    @staticmethod
    def forward_inplace(target, low, high):
        target._device.xp.clip(target._data, low, high, out=target._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        low, high = ctx.bounds
        inside = a._device.xp.ones(a.shape, bool)
        if low is not None:
            inside &= a._data >= low
        if high is not None:
            inside &= a._data <= high
        return grad * wrap_array(inside.astype(grad._data.dtype), a._device), None, None


def _floating(a: Tensor):
    """The array of `a`, integers and bools promoted to float32 (as PyTorch's unary math does)."""
    data = a._data
    return data if data.dtype.kind == "f" else data.astype("float32")


def _device_of(a, b):
    return a._device if isinstance(a, Tensor) else b._device


def add(input, other, *, alpha=1) -> Tensor:
    """input + alpha * other, broadcasting.

    >>> import genesis
    >>> genesis.add(genesis.tensor([1., 2.]), 1, alpha=3)
    tensor([4., 5.])
    """
    if alpha != 1:
        other = _scaled(other, alpha)
    return Add.apply(input, other)


def sub(input, other, *, alpha=1) -> Tensor:
    """input - alpha * other, broadcasting."""
    if alpha != 1:
        other = _scaled(other, alpha)
    return Sub.apply(input, other)


def _scaled(other, alpha):
    return mul(other, alpha) if isinstance(other, Tensor) else other * alpha


def mul(input, other) -> Tensor:
    """Elementwise product, broadcasting."""
    return Mul.apply(input, other)


def div(input, other) -> Tensor:
    """input / other (true division: integer inputs give float32)."""
    return Div.apply(input, other)


def pow(input, exponent) -> Tensor:
    """input ** exponent; either may be a number."""
    return Pow.apply(input, exponent)


def neg(input) -> Tensor:
    """-input."""
    return Neg.apply(input)


def exp(input) -> Tensor:
    """e ** input."""
    return Exp.apply(input)


def log(input) -> Tensor:
    """Natural logarithm."""
    return Log.apply(input)


def tanh(input) -> Tensor:
    """Hyperbolic tangent."""
    return Tanh.apply(input)


def clamp(input, min=None, max=None) -> Tensor:
    """Limit values to [min, max] (either bound may be None).

    >>> import genesis
    >>> genesis.tensor([-2., 0.5, 3.]).clamp(-1, 1)
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of min and max must be given")
    return Clamp.apply(input, min, max)


subtract, multiply, divide, true_divide, negative, clip = sub, mul, div, div, neg, clamp


def add_(self, other, *, alpha=1) -> Tensor:
    """In place: self += alpha * other."""
    if alpha != 1:
        other = _scaled(other, alpha)
    return apply_inplace(Add, self, other)


def sub_(self, other, *, alpha=1) -> Tensor:
    """In place: self -= alpha * other."""
    if alpha != 1:
        other = _scaled(other, alpha)
    return apply_inplace(Sub, self, other)


def mul_(self, other) -> Tensor:
    """In place: self *= other."""
    return apply_inplace(Mul, self, other)


def div_(self, other) -> Tensor:
    """In place: self /= other."""
    return apply_inplace(Div, self, other)


def clamp_(self, min=None, max=None) -> Tensor:
    """In place: clamp to [min, max]."""
    if min is None and max is None:
        raise RuntimeError("clamp_: at least one of min and max must be given")
    return apply_inplace(Clamp, self, min, max)


def exp_(self) -> Tensor:
    """In place: self = exp(self)."""
    return apply_inplace(Exp, self)


def _reflected(op):
    def reflected(self, other):
        return op(other, self)

    reflected.__name__ = f"__r{op.__name__}__"
    return reflected


METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": div, "pow": pow, "neg": neg, "negative": neg,
    "exp": exp, "log": log, "tanh": tanh, "clamp": clamp, "clip": clamp,
    "add_": add_, "sub_": sub_, "mul_": mul_, "div_": div_, "clamp_": clamp_, "clip_": clamp_,
    "exp_": exp_, "__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_,
    "__add__": add, "__radd__": _reflected(add), "__sub__": sub, "__rsub__": _reflected(sub),
    "__mul__": mul, "__rmul__": _reflected(mul), "__truediv__": div,
    "__rtruediv__": _reflected(div), "__pow__": pow, "__rpow__": _reflected(pow),
    "__neg__": neg, "__pos__": lambda self: self,
}


def _samples_pow(rng):
    return (samples.binary(samples.positive, samples.values, rng)
            + samples.with_scalar(samples.values, rng, 3)
            + samples.with_scalar(samples.positive, rng, 0.5)
            + samples.scalar_first(samples.values, rng, 2.0))


OPS = [
    OpInfo("add", add, lambda rng: samples.binary(samples.values, samples.values, rng)
           + samples.with_scalar(samples.values, rng, 2.5),
           torch=lambda torch, a, b: torch.add(a, b)),
    OpInfo("add_alpha", lambda a, b: add(a, b, alpha=3),
           lambda rng: samples.binary(samples.values, samples.values, rng)[:2],
           torch=lambda torch, a, b: torch.add(a, b, alpha=3)),
    OpInfo("sub", sub, lambda rng: samples.binary(samples.values, samples.values, rng)
           + samples.scalar_first(samples.values, rng, 1.5),
           torch=lambda torch, a, b: torch.sub(a, b)),
    OpInfo("mul", mul, lambda rng: samples.binary(samples.values, samples.values, rng)
           + samples.with_scalar(samples.values, rng, -2.0),
           torch=lambda torch, a, b: torch.mul(a, b)),
    OpInfo("div", div, lambda rng: samples.binary(samples.values, samples.positive, rng)
           + samples.scalar_first(samples.positive, rng, 3.0),
           torch=lambda torch, a, b: torch.div(a, b)),
    OpInfo("pow", pow, _samples_pow, torch=lambda torch, a, b: torch.pow(a, b)),
    OpInfo("neg", neg, lambda rng: samples.unary(samples.values, rng),
           torch=lambda torch, a: torch.neg(a)),
    OpInfo("exp", exp, lambda rng: samples.unary(samples.values, rng),
           torch=lambda torch, a: torch.exp(a)),
    OpInfo("log", log, lambda rng: samples.unary(samples.positive, rng),
           torch=lambda torch, a: torch.log(a)),
    OpInfo("tanh", tanh, lambda rng: samples.unary(samples.values, rng),
           torch=lambda torch, a: torch.tanh(a)),
    OpInfo("clamp", lambda a: clamp(a, -1.0, 1.0),
           lambda rng: samples.unary(lambda r, s: samples.away_from(r, s, (-1.0, 1.0)), rng),
           torch=lambda torch, a: torch.clamp(a, -1.0, 1.0), kinks="x == min or x == max"),
]
