"""Elementwise arithmetic (+, -, *, /, **, unary -). Rounded division and remainders are in
division.py.

+, -, * and / are rows of one table: the ufunc and the two partial derivatives, run on the
arrays in a plain backward and on the Tensors under create_graph (genesis.ops.gradient_rules),
like PyTorch's derivatives.yaml. Gradients may be left in the broadcast shape: the engine sums
them back to each input's shape. `**` and unary `-` are Functions with forward and backward
side by side.
"""
from __future__ import annotations

import math
import operator

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import (both_integral, device_of, float_operands, ignore_float_errors, operands,
                        reflected, zeros_of)
from .division import RoundedDiv, modulo_samples, rounding_mode_checked
from .gradient_rules import run_partials
from .inplace import apply_inplace
from .out_variants import write_out
from .registry import OpInfo, Sample
from .unary import log
from .where import where

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
           "pow", "neg", "negative"]


def _arithmetic_op(name: str, doc: str, ufunc: str, derivatives, reads, *, true_division=False,
                   refuses_bool: str | None = None):
    """A Function `name` computing the xp ufunc `ufunc` of two broadcast operands (tensors or
    numbers), with the gradient rule `derivatives` = (d/da, d/db), functions of (m, grad, a,
    b, out) that genesis.ops.gradient_rules runs on the arrays or, under create_graph, on the
    Tensors. `reads` names, for each derivative, which of "a", "b" and "out" it reads: forward
    keeps a value only while a derivative that reads it is needed. `true_division`: integer
    operands give float32 and inf/nan come without warnings. `refuses_bool`: the message for
    a bool operand, which the op does not define."""
    gradient_a, gradient_b = derivatives
    promoted = float_operands if true_division else operands
    op = name.lower()
    combine = _OPERATORS[ufunc]
    reads_nothing = not any(reads)
    passes_through = gradient_a is same_gradient and gradient_b is same_gradient
    # for each needs_input_grad: whether forward keeps a, b and out
    keeps = {needs: tuple(any(need and value in read for read, need in zip(reads, needs))
                          for value in ("a", "b", "out"))
             for needs in ((False, False), (True, False), (False, True), (True, True))}

    def forward(ctx, a, b):
        x, y = promoted(a, b, op)
        if refuses_bool is not None and (_is_bool(a) or _is_bool(b)):
            raise RuntimeError(refuses_bool)
        out = combine(x, y)
        if reads_nothing:
            return out
        keep_a, keep_b, keep_out = keeps[ctx.needs_input_grad]
        if keep_out:
            out = wrap_array(out, device_of(a, b))
        ctx.save_for_backward(a if keep_a else None, b if keep_b else None,
                              out if keep_out else None)
        return out

    def backward(ctx, grad):
        if passes_through:  # d/da = d/db = the gradient itself: nothing to compute
            return grad, grad
        saved = _NOTHING_SAVED if reads_nothing else ctx.saved_tensors
        return run_partials(gradient_a, gradient_b, ctx.needs_input_grad, grad, *saved)

    body = {"forward": staticmethod(ignore_float_errors(forward) if true_division else forward),
            "backward": staticmethod(backward), "inplace_ufunc": ufunc, "__module__": __name__,
            "__doc__": doc}
    return type(name, (Op,), body)


def same_gradient(m, grad, a, b, out):
    """The derivative that passes the gradient on as it is (d(a + b)/da)."""
    return grad


_NOTHING_SAVED = (None, None, None)
_OPERATORS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
              "true_divide": operator.truediv}


def _is_bool(value) -> bool:
    if isinstance(value, Tensor):
        return value._data.dtype.kind == "b"
    return value.__class__ is bool


# name, what it computes, ufunc, (d/da, d/db) of the math m, grad, the operands and the
# output, and which of those each derivative reads
Add = _arithmetic_op("Add", "a + b.", "add", (same_gradient, same_gradient), ((), ()))
Sub = _arithmetic_op("Sub", "a - b (not defined for bools, as in PyTorch).", "subtract",
                     (same_gradient, lambda m, g, a, b, out: -g), ((), ()),
                     refuses_bool="sub: subtraction (the `-` operator) with a bool tensor is not "
                                  "supported; use `^` or logical_xor() to combine masks, or "
                                  "convert first with .int()")
Mul = _arithmetic_op("Mul", "a * b.", "multiply",
                     (lambda m, g, a, b, out: g * b, lambda m, g, a, b, out: g * a),
                     (("b",), ("a",)))
# d/db is -g * (a / b) / b from the operands, as PyTorch's: saving the output instead would
# refuse a backward after a legal in-place write to it (`(a / b).detach().clamp_(...)`)
Div = _arithmetic_op("Div", "a / b (true division: integer inputs give float32).", "true_divide",
                     (lambda m, g, a, b, out: g / b, lambda m, g, a, b, out: -g * (a / b / b)),
                     (("b",), ("a", "b")), true_division=True)


class Pow(Op):
    """a ** b for tensor/tensor, tensor/number and number/tensor."""

    inplace_ufunc = "power"
    saved_names = ("self", "exponent", "result")  # grad_fn._saved_exponent, as in PyTorch
    autocast_policy = FLOAT32_ON_CUDA  # all three forms are in CUDA's autocast float32 list

    @staticmethod
    @ignore_float_errors
    def forward(ctx, a, b):
        x, y = operands(a, b, "pow")
        if _is_bool(a) and _is_bool(b):
            raise RuntimeError("pow: not supported for bool tensors; convert with .int() or "
                               ".float()")
        if both_integral(x, y):
            if isinstance(y, int):
                if y < 0:
                    raise RuntimeError("pow: integers to negative integer powers are not allowed; "
                                       "use a float base (t.float() ** n)")
            else:
                return _integer_power(device_of(a, b).xp, x, y)
        out = wrap_array(x ** y, device_of(a, b))
        ctx.save_for_backward(a, b, out if ctx.needs_input_grad[1] else None)  # as PyTorch: out
        return out                                                   # only for d/d(exponent)

    @staticmethod
    @ignore_float_errors  # 0 * inf and log(0) arise by design where the masks below apply
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        needs = ctx.needs_input_grad
        grad_a = grad_b = None
        if needs[0]:
            if isinstance(b, Tensor):
                grad_a = where(b == 0, 0.0, grad * b * a ** (b - 1))
            else:
                grad_a = grad * (b * a ** (b - 1)) if b != 0 else zeros_of(grad)
        if needs[1]:  # d/db a ** b = a ** b * log(a), taken as 0 where a == 0 and b >= 0
            if isinstance(a, Tensor):
                grad_b = where((a == 0) & (b >= 0), 0.0, grad * out * log(a))
            else:
                grad_b = grad * out * _log_of_number(a)
                if a == 0:
                    grad_b = where(b >= 0, 0.0, grad_b)
        return grad_a, grad_b


def _integer_power(xp, x, y):
    """x ** y for integers as PyTorch computes it: a negative power is 0 unless the base is +-1."""
    negative = y < 0
    if not bool(xp.any(negative)):
        return x ** y
    powers = x ** xp.where(negative, 0, y)
    inverses = xp.where(xp.abs(x) == 1, xp.where(y % 2 == 0, 1, x), 0)
    return xp.where(negative, inverses, powers).astype(powers.dtype, copy=False)


def _log_of_number(value) -> float:
    if value > 0:
        return math.log(value)
    return -math.inf if value == 0 else math.nan


class Neg(Op):
    """-a (not defined for bools: use `~` to invert a mask)."""

    inplace_ufunc = "negative"

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype.kind == "b":
            raise RuntimeError("neg: negation (the `-` operator) of a bool tensor is not "
                               "supported; to invert a mask use `~` or logical_not()")
        return -a._data

    @staticmethod
    def backward(ctx, grad):
        return -grad


def add(input, other, *, alpha=1, out=None) -> Tensor:
    """input + alpha * other, broadcasting (written into `out` if given: not differentiable).

    >>> import genesis
    >>> genesis.add(genesis.tensor([1., 2.]), 1, alpha=3)
    tensor([4., 5.])
    """
    if out is not None:
        return write_out("add", lambda a, b: add(a, b, alpha=alpha), out, (input, other))
    if alpha != 1:
        other = _scaled(other, alpha)
    return Add.apply(input, other)


def sub(input, other, *, alpha=1, out=None) -> Tensor:
    """input - alpha * other, broadcasting (written into `out` if given: not differentiable).

    >>> import genesis
    >>> genesis.tensor([5., 6.]) - 1
    tensor([4., 5.])
    """
    if out is not None:
        return write_out("sub", lambda a, b: sub(a, b, alpha=alpha), out, (input, other))
    if alpha != 1:
        other = _scaled(other, alpha)
    return Sub.apply(input, other)


def _scaled(other, alpha):
    return mul(other, alpha) if isinstance(other, Tensor) else other * alpha


def mul(input, other, *, out=None) -> Tensor:
    """Elementwise product, broadcasting (written into `out` if given: not differentiable).

    >>> import genesis
    >>> genesis.tensor([1., 2.]) * genesis.tensor([[3.], [4.]])
    tensor([[3., 6.],
            [4., 8.]])
    """
    if out is not None:
        return write_out("mul", mul, out, (input, other))
    return Mul.apply(input, other)


def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    """input / other. Without `rounding_mode` it is true division (integers give float32);
    "trunc" rounds toward zero and "floor" rounds down, keeping integer dtypes (zero gradient).

    >>> import genesis
    >>> x = genesis.tensor([-7, 7])
    >>> x / 2, genesis.div(x, 2, rounding_mode="trunc"), genesis.div(x, 2, rounding_mode="floor")
    (tensor([-3.5000,  3.5000]), tensor([-3,  3]), tensor([-4,  3]))
    """
    if out is not None:
        return write_out("div", lambda a, b: div(a, b, rounding_mode=rounding_mode), out,
                         (input, other))
    if rounding_mode is None:
        return Div.apply(input, other)
    return RoundedDiv.apply(input, other, rounding_mode_checked(rounding_mode))


def pow(input, exponent) -> Tensor:
    """input ** exponent; either may be a number.

    >>> import genesis
    >>> genesis.tensor([1., 2., 3.]) ** 2, 2 ** genesis.tensor([0, 3])
    (tensor([1., 4., 9.]), tensor([1, 8]))
    """
    return Pow.apply(input, exponent)


def neg(input) -> Tensor:
    """-input.

    >>> import genesis
    >>> -genesis.tensor([1., -2.])
    tensor([-1.,  2.])
    """
    return Neg.apply(input)


subtract, multiply, divide, true_divide, negative = sub, mul, div, div, neg


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


def div_(self, other, *, rounding_mode=None) -> Tensor:
    """In place: self /= other (rounded, with `rounding_mode`)."""
    if rounding_mode is None:
        return apply_inplace(Div, self, other)
    return apply_inplace(RoundedDiv, self, other, rounding_mode_checked(rounding_mode))


def pow_(self, exponent) -> Tensor:
    """In place: self **= exponent."""
    return apply_inplace(Pow, self, exponent)


def neg_(self) -> Tensor:
    """In place: self = -self."""
    return apply_inplace(Neg, self)


METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": div, "pow": pow, "neg": neg, "negative": neg,
    "add_": add_, "sub_": sub_, "subtract_": sub_, "mul_": mul_, "multiply_": mul_, "div_": div_,
    "divide_": div_, "true_divide_": div_, "pow_": pow_, "neg_": neg_, "negative_": neg_,
    "__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_, "__ipow__": pow_,
    "__add__": add, "__radd__": reflected(add), "__sub__": sub, "__rsub__": reflected(sub),
    "__mul__": mul, "__rmul__": reflected(mul), "__truediv__": div,
    "__rtruediv__": reflected(div), "__pow__": pow, "__rpow__": reflected(pow),
    "__neg__": neg, "__pos__": lambda self: self,
}


def _samples_pow(rng):
    return (samples.binary(samples.positive, samples.values, rng)
            + samples.with_scalar(samples.values, rng, 3)
            + samples.with_scalar(samples.positive, rng, 0.5)
            + samples.with_scalar(lambda r, shape: samples.away_from(r, shape, margin=0.4), rng, -2)
            + samples.scalar_first(samples.values, rng, 2.0)
            + [Sample((samples.positive(rng, (3, 4)), samples.values(rng, (3, 4))),
                      grad=(False, True), note="exponent only")])


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
    OpInfo("div_trunc", lambda a, b: div(a, b, rounding_mode="trunc"), modulo_samples,
           torch=lambda torch, a, b: torch.div(a, b, rounding_mode="trunc"),
           kinks="a / b an integer (the result jumps; the gradient is zero elsewhere)"),
    OpInfo("div_floor", lambda a, b: div(a, b, rounding_mode="floor"), modulo_samples,
           torch=lambda torch, a, b: torch.div(a, b, rounding_mode="floor"),
           kinks="a / b an integer (the result jumps; the gradient is zero elsewhere)"),
    OpInfo("pow", pow, _samples_pow, torch=lambda torch, a, b: torch.pow(a, b)),
    OpInfo("neg", neg, lambda rng: samples.unary(samples.values, rng),
           torch=lambda torch, a: torch.neg(a)),
]
