"""Elementwise math of one input: exponentials and logs, roots, trigonometric and
hyperbolic functions, abs/sign, sigmoid, erf.

Each op is one row: its forward (an array function) and its derivative (Tensor
ops, so gradients are differentiable again), like PyTorch's derivatives.yaml.
Integer and bool inputs are promoted to float32 unless the op keeps integers
(abs, sign, square), as in PyTorch.
"""
from __future__ import annotations

import math

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..tensor import Tensor, wrap_array
from . import samples
from ._erf import erf_array
from ._kernels import Elementwise, fusing_pays
from ._operands import as_floating, ignore_float_errors, zeros_of
from .gradient_rules import TENSOR_MATH, array_math
from .inplace import apply_inplace
from .out_variants import write_out
from .registry import OpInfo

__all__ = ["exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "square",
           "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
           "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
           "arctanh", "sigmoid", "erf", "abs", "absolute", "sign"]


def _math_op(name: str, doc: str, ufunc: str | None, derivative, *, compute=None,
             saves: str = "input", keeps_integers: bool = False, quiet: bool = False,
             fused_forward: str | None = None, fused_derivative: str | None = None,
             autocast_policy=None):
    """A Function `name` computing the xp ufunc `ufunc` (or `compute(xp, array)` for composite
    ops), with gradient `derivative(m, grad, saved)`.

    The derivative is the op's one gradient rule: arithmetic on `grad` and the saved input
    or output (`saves`: "input" or "output"), and functions taken from `m`. A plain backward
    runs it on the arrays (`m` is the device's array math: no graph to build); under
    create_graph on the Tensors (`m` is genesis's ops: the gradient is differentiable). A
    ufunc also gives the in-place form. `quiet` ops return inf/nan without NumPy warnings.
    On a GPU, where each array call is a launch, `fused_forward` (a CUDA expression of `x`)
    and `fused_derivative` (of `g` and `x` or `out`) do a composite forward or a first-order
    gradient in one kernel; tests/ops/test_fused_kernels.py checks each against the rule.
    `autocast_policy` is the op's rule under autocast (genesis.autocast_rules).
    """
    floating = _same if keeps_integers else as_floating
    if compute is None:
        def compute(xp, x):
            return getattr(xp, ufunc)(x)
    run = (_fused_compute(name, compute, fused_forward) if fused_forward is not None
           else lambda device, x: compute(device.xp, x))
    gradient_kernel = None if fused_derivative is None else _gradient_kernel(
        name, derivative, saves, fused_derivative)

    def forward(ctx, a):
        out = run(a._device, floating(a._data))
        if saves == "output":
            out = wrap_array(out, a._device)
            ctx.save_for_backward(out)
        else:
            ctx.save_for_backward(a)
        return out

    def backward(ctx, grad):
        (saved,) = ctx.saved_tensors
        if grad_state.enabled:  # create_graph: the rule on Tensors, recorded
            return derivative(TENSOR_MATH, grad, saved)
        device = grad._device
        if gradient_kernel is not None and fusing_pays(device):
            return wrap_array(gradient_kernel(device, grad._data, saved._data), device)
        return wrap_array(derivative(array_math(device), grad._data, saved._data), device)

    body = {"forward": staticmethod(ignore_float_errors(forward) if quiet else forward),
            "backward": staticmethod(backward), "__module__": __name__, "__doc__": doc,
            "inplace_ufunc": ufunc, "autocast_policy": autocast_policy}
    return type(name, (Op,), body)


def _fused_compute(name: str, compute, expression: str):
    """`compute` as one kernel on a GPU: `y = expression` of `x`."""
    return Elementwise(f"genesis_{name.lower()}", "T x", "T y", f"y = {expression}",
                       lambda device, x: compute(device.xp, x))


def _gradient_kernel(name: str, derivative, saves: str, expression: str) -> Elementwise:
    """`dx = expression` of the gradient `g` and the saved `x` or `out`; its reference is the
    row's own `derivative`, run on the arrays."""
    saved = "x" if saves == "input" else "out"

    def reference(device, g, saved_array):
        return derivative(array_math(device), g, saved_array)
    return Elementwise(f"genesis_{name.lower()}_grad", f"T g, T {saved}", "T dx",
                       f"dx = {expression}", reference)


def _same(array):
    return array


def _square(xp, x):
    return xp.square(x.astype("int64") if x.dtype == bool else x)  # bool squares to int64


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# name, what it computes, ufunc, derivative (of the math m, grad and the saved input x or
# output out); the fused forms are the same math as one GPU kernel (derivatives of one call
# have none). The ops in PyTorch's CUDA autocast float32 list run in float32 there (_CUDA_FP32).
_CUDA_FP32 = {"autocast_policy": FLOAT32_ON_CUDA}
Exp = _math_op("Exp", "e ** x.", "exp", lambda m, g, out: g * out, saves="output", quiet=True,
               **_CUDA_FP32)
Exp2 = _math_op("Exp2", "2 ** x.", "exp2", lambda m, g, out: g * out * _LN2, saves="output",
                quiet=True, fused_derivative=f"g * out * T({_LN2!r})")
Expm1 = _math_op("Expm1", "e ** x - 1, accurate for small x.", "expm1",
                 lambda m, g, out: g * (out + 1), saves="output", quiet=True,
                 fused_derivative="g * (out + T(1))", **_CUDA_FP32)
Log = _math_op("Log", "The natural logarithm.", "log", lambda m, g, x: g / x, quiet=True,
               **_CUDA_FP32)
Log1p = _math_op("Log1p", "log(1 + x), accurate for small x.", "log1p",
                 lambda m, g, x: g / (x + 1), quiet=True, fused_derivative="g / (x + T(1))",
                 **_CUDA_FP32)
Log2 = _math_op("Log2", "The base-2 logarithm.", "log2", lambda m, g, x: g / (x * _LN2), quiet=True,
                fused_derivative=f"g / (x * T({_LN2!r}))", **_CUDA_FP32)
Log10 = _math_op("Log10", "The base-10 logarithm.", "log10", lambda m, g, x: g / (x * _LN10),
                 quiet=True, fused_derivative=f"g / (x * T({_LN10!r}))", **_CUDA_FP32)
Sqrt = _math_op("Sqrt", "The square root.", "sqrt", lambda m, g, out: g / (2 * out), saves="output",
                quiet=True, fused_derivative="g / (T(2) * out)")
Rsqrt = _math_op("Rsqrt", "1 / sqrt(x).", None, lambda m, g, out: -0.5 * g * out ** 3,
                 compute=lambda xp, x: 1 / xp.sqrt(x), saves="output", quiet=True,
                 fused_forward="T(1) / sqrt(x)", fused_derivative="T(-0.5) * g * (out * out * out)",
                 **_CUDA_FP32)
Square = _math_op("Square", "x * x (integers stay integers).", "square",
                  lambda m, g, x: g * (2 * x),
                  compute=_square, keeps_integers=True, fused_derivative="g * (T(2) * x)")
Reciprocal = _math_op("Reciprocal", "1 / x.", None, lambda m, g, out: -g * (out * out),
                      compute=lambda xp, x: 1 / x, saves="output", quiet=True,
                      fused_derivative="-g * (out * out)", **_CUDA_FP32)
Sin = _math_op("Sin", "The sine (radians).", "sin", lambda m, g, x: g * m.cos(x),
               fused_derivative="g * cos(x)")
Cos = _math_op("Cos", "The cosine (radians).", "cos", lambda m, g, x: g * -m.sin(x),
               fused_derivative="g * -sin(x)")
Tan = _math_op("Tan", "The tangent (radians).", "tan", lambda m, g, out: g * (1 + out * out),
               saves="output", fused_derivative="g * (T(1) + out * out)", **_CUDA_FP32)
Asin = _math_op("Asin", "The arcsine, in [-pi/2, pi/2].", "arcsin",
                lambda m, g, x: g * m.rsqrt(1 - x * x), quiet=True,
                fused_derivative="g * (T(1) / sqrt(T(1) - x * x))", **_CUDA_FP32)
Acos = _math_op("Acos", "The arccosine, in [0, pi].", "arccos",
                lambda m, g, x: -g * m.rsqrt(1 - x * x), quiet=True,
                fused_derivative="-g * (T(1) / sqrt(T(1) - x * x))", **_CUDA_FP32)
Atan = _math_op("Atan", "The arctangent, in (-pi/2, pi/2).", "arctan",
                lambda m, g, x: g / (x * x + 1), fused_derivative="g / (x * x + T(1))")
Sinh = _math_op("Sinh", "The hyperbolic sine.", "sinh", lambda m, g, x: g * m.cosh(x), quiet=True,
                fused_derivative="g * cosh(x)", **_CUDA_FP32)
Cosh = _math_op("Cosh", "The hyperbolic cosine.", "cosh", lambda m, g, x: g * m.sinh(x), quiet=True,
                fused_derivative="g * sinh(x)", **_CUDA_FP32)
Asinh = _math_op("Asinh", "The inverse hyperbolic sine.", "arcsinh",
                 lambda m, g, x: g * m.rsqrt(x * x + 1),
                 fused_derivative="g * (T(1) / sqrt(x * x + T(1)))")
Acosh = _math_op("Acosh", "The inverse hyperbolic cosine.", "arccosh",
                 lambda m, g, x: g * m.rsqrt(x * x - 1), quiet=True,
                 fused_derivative="g * (T(1) / sqrt(x * x - T(1)))")
Atanh = _math_op("Atanh", "The inverse hyperbolic tangent.", "arctanh",
                 lambda m, g, x: g / (1 - x * x), quiet=True, fused_derivative="g / (T(1) - x * x)")
Erf = _math_op("Erf", "The error function, 2/sqrt(pi) * integral of exp(-t^2) from 0 to x.",
               None, lambda m, g, x: g * (_TWO_OVER_SQRT_PI * m.exp(-(x * x))), compute=erf_array,
               fused_derivative=f"g * (T({_TWO_OVER_SQRT_PI!r}) * exp(-(x * x)))")


Tanh = _math_op("Tanh", "tanh(x); saves its output: d tanh = 1 - tanh^2.", "tanh",
                lambda m, g, out: g * (1 - out * out), saves="output",
                fused_derivative="g * (T(1) - out * out)")
Sigmoid = _math_op("Sigmoid", "1 / (1 + exp(-x)); saves its output: d sigmoid = out (1 - out).",
                   None, lambda m, g, out: g * out * (1 - out), saves="output", quiet=True,
                   compute=lambda xp, x: 1 / (1 + xp.exp(-x)),
                   fused_forward="T(1) / (T(1) + exp(-x))",
                   fused_derivative="g * out * (T(1) - out)")


class Abs(Op):
    """|a|; d|a|/da = sign(a), which is 0 at 0 (PyTorch's choice)."""

    inplace_ufunc = "abs"

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype.kind == "b":
            raise RuntimeError("abs: not supported for bool tensors (they are already "
                               "non-negative); convert with .int() if you need a number")
        ctx.save_for_backward(a)
        return a._device.xp.abs(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * sign(a)


class Sign(Op):
    """-1, 0 or 1 (0 for nan, as in PyTorch; bools stay bools); its gradient is zero."""

    @staticmethod
    def forward(ctx, a):
        data = a._data
        if data.dtype.kind == "b":
            return data.copy()
        return (data > 0).astype(data.dtype) - (data < 0).astype(data.dtype)  # sign(nan) is 0

    @staticmethod
    def backward(ctx, grad):
        return zeros_of(grad)


def _public(cls, name: str, call: str, result: str):
    """The function `genesis.<name>`, applying `cls`, with a doctest example."""
    def function(input: Tensor, *, out=None) -> Tensor:
        if out is not None:
            return write_out(name, cls.apply, out, (input,))
        return cls.apply(input)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"{cls.__doc__}\n\n    >>> import genesis\n    >>> {call}\n"
                        f"    {result}\n    ")
    return function


exp = _public(Exp, "exp", "genesis.tensor([0., 1.]).exp()", "tensor([1.0000, 2.7183])")
exp2 = _public(Exp2, "exp2", "genesis.tensor([0, 3]).exp2()", "tensor([1., 8.])")
expm1 = _public(Expm1, "expm1", "genesis.tensor([0.]).expm1()", "tensor([0.])")
log = _public(Log, "log", "genesis.tensor([1., 0.]).log()", "tensor([0., -inf])")
log1p = _public(Log1p, "log1p", "genesis.tensor([0.]).log1p()", "tensor([0.])")
log2 = _public(Log2, "log2", "genesis.tensor([8.]).log2()", "tensor([3.])")
log10 = _public(Log10, "log10", "genesis.tensor([1., 10.]).log10()", "tensor([0., 1.])")
sqrt = _public(Sqrt, "sqrt", "genesis.tensor([4, 9]).sqrt()", "tensor([2., 3.])")
rsqrt = _public(Rsqrt, "rsqrt", "genesis.tensor([4.]).rsqrt()", "tensor([0.5000])")
square = _public(Square, "square", "genesis.tensor([-3, 2]).square()", "tensor([9, 4])")
reciprocal = _public(Reciprocal, "reciprocal", "genesis.tensor([2, 0]).reciprocal()",
                     "tensor([0.5000,    inf])")
sin = _public(Sin, "sin", "genesis.tensor([0.]).sin()", "tensor([0.])")
cos = _public(Cos, "cos", "genesis.tensor([0.]).cos()", "tensor([1.])")
tan = _public(Tan, "tan", "genesis.tensor([0.]).tan()", "tensor([0.])")
asin = _public(Asin, "asin", "genesis.tensor([1.]).asin()", "tensor([1.5708])")
acos = _public(Acos, "acos", "genesis.tensor([1.]).acos()", "tensor([0.])")
atan = _public(Atan, "atan", "genesis.tensor([1.]).atan()", "tensor([0.7854])")
sinh = _public(Sinh, "sinh", "genesis.tensor([0.]).sinh()", "tensor([0.])")
cosh = _public(Cosh, "cosh", "genesis.tensor([0.]).cosh()", "tensor([1.])")
tanh = _public(Tanh, "tanh", "genesis.tensor([0., 1.]).tanh()", "tensor([0.0000, 0.7616])")
asinh = _public(Asinh, "asinh", "genesis.tensor([0.]).asinh()", "tensor([0.])")
acosh = _public(Acosh, "acosh", "genesis.tensor([1.]).acosh()", "tensor([0.])")
atanh = _public(Atanh, "atanh", "genesis.tensor([0.]).atanh()", "tensor([0.])")
sigmoid = _public(Sigmoid, "sigmoid", "genesis.tensor([0., 2.]).sigmoid()",
                  "tensor([0.5000, 0.8808])")
erf = _public(Erf, "erf", "genesis.tensor([0., 1.]).erf()", "tensor([0.0000, 0.8427])")
abs = _public(Abs, "abs", "genesis.tensor([-2, 3]).abs()", "tensor([2, 3])")
sign = _public(Sign, "sign", "genesis.tensor([-2., 0., 3.]).sign()", "tensor([-1.,  0.,  1.])")
arcsin, arccos, arctan, absolute = asin, acos, atan, abs
arcsinh, arccosh, arctanh = asinh, acosh, atanh


def _inplace(cls, name: str):
    def method(self: Tensor) -> Tensor:
        return apply_inplace(cls, self)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In place: self = {name}(self)."
    return method


_INPLACE = {name: _inplace(cls, name) for name, cls in {
    "exp": Exp, "exp2": Exp2, "expm1": Expm1, "log": Log, "log1p": Log1p, "log2": Log2,
    "log10": Log10, "sqrt": Sqrt, "rsqrt": Rsqrt, "square": Square, "reciprocal": Reciprocal,
    "sin": Sin, "cos": Cos, "tan": Tan, "asin": Asin, "acos": Acos, "atan": Atan, "sinh": Sinh,
    "cosh": Cosh, "tanh": Tanh, "asinh": Asinh, "acosh": Acosh, "atanh": Atanh,
    "sigmoid": Sigmoid, "erf": Erf, "abs": Abs, "sign": Sign}.items()}
_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
            "arccosh": "acosh", "arctanh": "atanh", "absolute": "abs"}

METHODS = {name: globals()[name] for name in __all__}
METHODS.update({f"{name}_": method for name, method in _INPLACE.items()})
METHODS.update({f"{alias}_": _INPLACE[name] for alias, name in _ALIASES.items()})
METHODS["__abs__"] = abs


def _in(low, high):
    return lambda rng, shape: samples.values(rng, shape, low, high)


_DOMAINS = {  # sample values inside each op's domain, away from its poles
    "log": samples.positive, "log1p": samples.positive, "log2": samples.positive,
    "log10": samples.positive, "sqrt": samples.positive, "rsqrt": samples.positive,
    "reciprocal": lambda rng, shape: samples.away_from(rng, shape, (0.0,), margin=0.3),
    "tan": _in(-1.2, 1.2), "asin": _in(-0.9, 0.9), "acos": _in(-0.9, 0.9),
    "acosh": _in(1.2, 3.0), "atanh": _in(-0.9, 0.9),
    "abs": lambda rng, shape: samples.away_from(rng, shape, (0.0,)),
}
_KINKS = {"abs": "x == 0 (the gradient there is 0)"}

OPS = [
    OpInfo(name, globals()[name], lambda rng, name=name: samples.unary(
        _DOMAINS.get(name, samples.values), rng),
        torch=lambda torch, a, name=name: getattr(torch, name)(a), kinks=_KINKS.get(name, ""))
    for name in ("exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
                 "square", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                 "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "erf", "abs")
] + [OpInfo("sign", sign, lambda rng: samples.unary(samples.values, rng),
            torch=lambda torch, a: torch.sign(a), kinks="x == 0 (a jump; the gradient is 0)")]
