"""Special functions: the gamma family (lgamma, digamma, polygamma, mvlgamma, the regularized
incomplete gamma functions igamma/igammac, the Hurwitz zeta function), the complementary and
inverse error functions (erfc, erfcx, erfinv), the normal distribution's ndtri and log_ndtr,
the modified Bessel functions i0, i0e, i1, i1e, and sinc.

The series live in the private array modules _gamma, _error_functions and _bessel (NumPy or
CuPy, no SciPy); they run in float64 (float32 and float16 inputs are computed in float64 and
rounded back); integers promote to float32, as in PyTorch. Each one-input op is one row: its
array function and its derivative, written with genesis ops so that gradients are
differentiable again.
"""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..tensor import Tensor, wrap_array
from . import _bessel, _error_functions, _gamma, samples
from ._operands import (as_floating, device_of, float_operands, ignore_float_errors, kind_of,
                        operands)
from .fill import copy_
from .inplace import apply_inplace
from .registry import OpInfo, Sample
from .unary import cos, exp, log, sign, sin
from .where import where

# PyTorch's top-level names; erfcx, i0e, i1, i1e, ndtri, log_ndtr and zeta are torch.special's
# only (genesis.special)
__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "erfc", "erfinv", "i0", "sinc", "igamma",
           "igammac"]

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_LOG_PI = math.log(math.pi)


@ignore_float_errors
def _in_float64(xp, compute, array, *more):
    """`compute(xp, array, *more)` in float64, returned in `array`'s (floating) dtype."""
    if array.dtype == np.float64:
        return compute(xp, array, *more)
    wide = [value.astype(np.float64) for value in more]
    return compute(xp, array.astype(np.float64), *wide).astype(array.dtype)


def _special_op(name: str, doc: str, compute, derivative, reads=("x", "out"),
                autocast_policy=None):
    """A one-input Function `name` computing `compute(xp, x)` on float64 arrays, with
    gradient `derivative(grad, x, out)` in genesis ops. `reads` names which of the input "x"
    and the output "out" the derivative reads, as PyTorch's formula does: only those are saved
    (the other is passed as None), so an in-place write to the other one after the forward
    leaves the backward free to run, as in PyTorch. `autocast_policy`: the op's rule under
    autocast (genesis.autocast_rules)."""
    keep_x, keep_out = "x" in reads, "out" in reads

    def forward(ctx, a):
        device = a._device
        out = wrap_array(_in_float64(device.xp, compute, as_floating(a._data)), device)
        ctx.save_for_backward(a if keep_x else None, out if keep_out else None)
        return out

    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        return derivative(grad, x, out)

    body = {"forward": staticmethod(forward), "backward": staticmethod(backward),
            "__module__": __name__, "__doc__": doc, "autocast_policy": autocast_policy}
    return type(name, (Op,), body)


def _sinc_array(xp, x):
    scaled = math.pi * xp.where(x == 0, 1.0, x)
    return xp.where(x == 0, 1.0, xp.sin(scaled) / scaled)


def _not_zero(x: Tensor) -> Tensor:
    return where(x == 0, 1.0, x)


def _sinc_derivative(g: Tensor, x: Tensor) -> Tensor:
    """PyTorch's sinc_backward, from the input alone: g (πx cos πx - sin πx) / (π x²), and 0
    where π x² is 0."""
    pi_x = math.pi * x
    pi_x_squared = x * x * math.pi
    zero = pi_x_squared == 0
    return where(zero, 0.0, g * (pi_x * cos(pi_x) - sin(pi_x)) / where(zero, 1.0, pi_x_squared))


# name, what it computes, its array function, its derivative (of grad, input x and output out)
Lgamma = _special_op("Lgamma", "log |Γ(x)|; inf at the poles 0, -1, -2, ...", _gamma.lgamma,
                     lambda g, x, out: g * digamma(x), reads=("x",))
Digamma = _special_op("Digamma", "ψ(x) = Γ'(x) / Γ(x); -inf at +0, nan at the negative "
                      "integers, as PyTorch.", _gamma.digamma,
                      lambda g, x, out: g * polygamma(1, x), reads=("x",))
Erfc = _special_op("Erfc", "1 - erf(x), accurate where it is tiny.", _error_functions.erfc,
                   lambda g, x, out: g * ((-2 / _SQRT_PI) * exp(-(x * x))), reads=("x",))
Erfcx = _special_op("Erfcx", "exp(x^2) erfc(x), finite for large x.", _error_functions.erfcx,
                    lambda g, x, out: g * (2 * x * out - 2 / _SQRT_PI))
Erfinv = _special_op("Erfinv", "The inverse of erf on [-1, 1] (±inf at ±1, nan outside).",
                     _error_functions.erfinv,
                     lambda g, x, out: g * ((_SQRT_PI / 2) * exp(erfinv(x) ** 2)), reads=("x",),
                     autocast_policy=FLOAT32_ON_CUDA)  # in CUDA's autocast float32 list
Ndtri = _special_op("Ndtri", "The standard normal quantile function, the inverse of ndtr.",
                    _error_functions.ndtri,
                    lambda g, x, out: g * (_SQRT_2PI * exp(out * out / 2)), reads=("out",))
LogNdtr = _special_op("LogNdtr", "log of the standard normal distribution function.",
                      _error_functions.log_ndtr,
                      lambda g, x, out: g * (exp(-(out + x * x / 2)) / _SQRT_2PI))
I0 = _special_op("I0", "The modified Bessel function of the first kind, order 0.", _bessel.i0,
                 lambda g, x, out: g * i1(x), reads=("x",))
I0e = _special_op("I0e", "exp(-|x|) i0(x).", _bessel.i0e,
                  lambda g, x, out: g * (i1e(x) - sign(x) * out))
I1 = _special_op("I1", "The modified Bessel function of the first kind, order 1.", _bessel.i1,
                 lambda g, x, out: g * where(x == 0, 0.5, i0(x) - out / _not_zero(x)))
Sinc = _special_op("Sinc", "sin(πx) / (πx), 1 at 0; its gradient (cos(πx) - sinc(x)) / x is 0 "
                  "at 0, as PyTorch's.", lambda xp, x: _sinc_array(xp, x),
                  lambda g, x, out: _sinc_derivative(g, x), reads=("x",))
I1e = _special_op("I1e", "exp(-|x|) i1(x).", _bessel.i1e,
                  lambda g, x, out: g * where(x == 0, 0.5,
                                              i0e(x) - out * (sign(x) + 1 / _not_zero(x))))


def _entr_array(xp, x):
    """-x log x; 0 at 0, -inf below 0, nan at nan (PyTorch's)."""
    positive = xp.where(x > 0, x, 1.0)
    return xp.where(x > 0, -positive * xp.log(positive), xp.where(x == 0, 0.0, xp.where(
        x < 0, -math.inf, x)))


Entr = _special_op("Entr", "-x log x; its gradient -(1 + log x) is inf at 0 and nan below, as "
                   "PyTorch's.", _entr_array, lambda g, x, out: g * -(1 + log(x)),
                   reads=("x",))


class Polygamma(Op):
    """The n-th derivative of digamma; its gradient is polygamma(n + 1)."""

    @staticmethod
    def forward(ctx, a, n):
        ctx.n = n
        ctx.save_for_backward(a)
        return _in_float64(a._device.xp, lambda xp, x: _gamma.polygamma(xp, n, x),
                           as_floating(a._data))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * polygamma(ctx.n + 1, x), None


def _floating_pair(a, b, op: str, integers: str):
    """The two operands as arrays of one floating dtype (a number takes the tensor's).
    `integers`: "promote" (two integer operands give float32, as zeta) or "refuse" (PyTorch
    has no integer kernel: NotImplementedError, as igamma)."""
    if integers == "promote":
        x, y = float_operands(a, b, op)
    else:
        x, y = operands(a, b, op)
        if kind_of(x) in "iub" and kind_of(y) in "iub":
            raise NotImplementedError(f"{op}: not implemented for integer tensors; convert "
                                      "first with .float()")
    device = device_of(a, b)
    xp = device.xp
    dtype = x.dtype if hasattr(x, "dtype") else y.dtype
    return xp.asarray(x, dtype=dtype), xp.asarray(y, dtype=dtype), device


class IncompleteGamma(Op):
    """The regularized incomplete gamma function, lower (igamma) or upper (igammac). As in
    PyTorch, only the second argument has a gradient: ±x^(a-1) e^-x / Γ(a)."""

    @staticmethod
    def forward(ctx, a, x, upper):
        first, second, device = _floating_pair(a, x, "igammac" if upper else "igamma",
                                                "refuse")
        ctx.upper = upper
        ctx.save_for_backward(a if isinstance(a, Tensor) else wrap_array(first, device), x)
        compute = _gamma.igammac if upper else _gamma.igamma
        first, second = device.xp.broadcast_arrays(first, second)
        return _in_float64(device.xp, compute, first, second)

    @staticmethod
    def backward(ctx, grad):
        name = "igammac" if ctx.upper else "igamma"
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented "
                                      f"(PyTorch has none either); detach the first argument")
        a, x = ctx.saved_tensors
        density = exp((a - 1) * log(x) - x - lgamma(a))
        return None, (-grad if ctx.upper else grad) * density, None


class Zeta(Op):
    """The Hurwitz zeta function ζ(x, q) = Σ_k (k + q)^-x; as in PyTorch, only q has a
    gradient: -x ζ(x + 1, q)."""

    @staticmethod
    def forward(ctx, x, q):
        first, second, device = _floating_pair(x, q, "zeta", "promote")
        ctx.save_for_backward(x if isinstance(x, Tensor) else wrap_array(first, device), q)
        first, second = device.xp.broadcast_arrays(first, second)
        return _in_float64(device.xp, _gamma.zeta, first, second)

    @staticmethod
    def backward(ctx, grad):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta: self' is not implemented "
                                      "(PyTorch has none either); detach the first argument")
        x, q = ctx.saved_tensors
        return None, grad * -x * zeta(x + 1, q)


def lgamma(input: Tensor) -> Tensor:
    """log |Γ(x)|, elementwise; inf at 0, -1, -2, ...

    >>> import genesis
    >>> genesis.lgamma(genesis.tensor([1.0, 0.5, 0.0]))
    tensor([0.0000, 0.5724,    inf])
    """
    return Lgamma.apply(input)


def digamma(input: Tensor) -> Tensor:
    """ψ(x), the derivative of lgamma; -inf at 0, nan at the negative integers.

    >>> import genesis
    >>> genesis.digamma(genesis.tensor([1.0, 0.0]))
    tensor([-0.5772,    -inf])
    """
    return Digamma.apply(input)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of digamma (n >= 0), elementwise.

    >>> import genesis
    >>> genesis.polygamma(1, genesis.tensor([1.0]))
    tensor([1.6449])
    """
    return Polygamma.apply(input, _order(n))


def _order(n) -> int:
    """polygamma's n, checked."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"polygamma: n must be an int, got {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n, got n={n}")
    return int(n)


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension p: p(p-1)/4 log π +
    Σ_{j<p} lgamma(x - j/2). It is defined for x > (p - 1) / 2; like PyTorch, genesis does not
    check that (the sum is computed for any x).

    >>> import genesis
    >>> genesis.mvlgamma(genesis.tensor([2.5]), 3)
    tensor([1.8810])
    """
    if isinstance(p, bool) or not isinstance(p, int | np.integer) or p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p!r}")
    result = lgamma(input)
    for j in range(1, p):
        result = result + lgamma(input - j / 2)
    return result + p * (p - 1) / 4 * _LOG_PI


def erfc(input: Tensor) -> Tensor:
    """1 - erf(x), elementwise, accurate where it is tiny.

    >>> import genesis
    >>> genesis.erfc(genesis.tensor([0.0, 10.0], dtype=genesis.float64))
    tensor([1.0000e+00, 2.0885e-45], dtype=genesis.float64)
    """
    return Erfc.apply(input)


def entr(input: Tensor) -> Tensor:
    """The elementwise entropy -x log x: 0 at 0, -inf below 0.

    >>> import genesis
    >>> genesis.special.entr(genesis.tensor([0.0, 0.5]))
    tensor([0.0000, 0.3466])
    """
    return Entr.apply(input)


def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function exp(x^2) erfc(x).

    >>> import genesis
    >>> genesis.special.erfcx(genesis.tensor([0.0, 100.0]))
    tensor([1.0000, 0.0056])
    """
    return Erfcx.apply(input)


def erfinv(input: Tensor) -> Tensor:
    """The inverse error function: erf(erfinv(y)) = y on [-1, 1].

    >>> import genesis
    >>> genesis.erfinv(genesis.tensor([0.0, 0.5, 1.0]))
    tensor([0.0000, 0.4769,    inf])
    """
    return Erfinv.apply(input)


def ndtri(input: Tensor) -> Tensor:
    """The quantile function of the standard normal distribution.

    >>> import genesis
    >>> genesis.special.ndtri(genesis.tensor([0.5, 0.975]))
    tensor([0.0000, 1.9600])
    """
    return Ndtri.apply(input)


def log_ndtr(input: Tensor) -> Tensor:
    """log of the standard normal distribution function, accurate for very negative x.

    >>> import genesis
    >>> genesis.special.log_ndtr(genesis.tensor([0.0, -40.0]))
    tensor([-6.9315e-01, -8.0461e+02])
    """
    return LogNdtr.apply(input)


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0.

    >>> import genesis
    >>> genesis.i0(genesis.tensor([0.0, 1.0]))
    tensor([1.0000, 1.2661])
    """
    return I0.apply(input)


def i0e(input: Tensor) -> Tensor:
    """The exponentially scaled i0: exp(-|x|) i0(x).

    >>> import genesis
    >>> genesis.special.i0e(genesis.tensor([0.0, 1.0]))
    tensor([1.0000, 0.4658])
    """
    return I0e.apply(input)


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1.

    >>> import genesis
    >>> genesis.special.i1(genesis.tensor([0.0, 1.0]))
    tensor([0.0000, 0.5652])
    """
    return I1.apply(input)


def i1e(input: Tensor) -> Tensor:
    """The exponentially scaled i1: exp(-|x|) i1(x).

    >>> import genesis
    >>> genesis.special.i1e(genesis.tensor([0.0, 1.0]))
    tensor([0.0000, 0.2079])
    """
    return I1e.apply(input)


def sinc(input: Tensor) -> Tensor:
    """The normalized sinc function sin(πx) / (πx), 1 at 0 (where its gradient is 0).

    >>> import genesis
    >>> genesis.sinc(genesis.tensor([0.0, 0.5]))
    tensor([1.0000, 0.6366])
    """
    return Sinc.apply(input)


def igamma(input, other) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) = γ(a, x) / Γ(a), for a =
    `input` and x = `other`; only `other` has a gradient, as in PyTorch.

    >>> import genesis
    >>> genesis.igamma(genesis.tensor([1.0]), genesis.tensor([2.0]))
    tensor([0.8647])
    """
    return IncompleteGamma.apply(input, other, False)


def igammac(input, other) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    >>> import genesis
    >>> genesis.igammac(genesis.tensor([1.0]), genesis.tensor([2.0]))
    tensor([0.1353])
    """
    return IncompleteGamma.apply(input, other, True)


def zeta(input, other) -> Tensor:
    """The Hurwitz zeta function ζ(x, q) for x = `input` > 1, q = `other`
    (torch.special.zeta); only q has a gradient, as in PyTorch.

    >>> import genesis
    >>> genesis.special.zeta(genesis.tensor([2.0]), 1.0)
    tensor([1.6449])
    """
    return Zeta.apply(input, other)


def _in_place(cls, name: str):
    """`self.name_()`: the op written into self (genesis.ops.inplace: PyTorch's semantics)."""
    def method(self: Tensor) -> Tensor:
        return apply_inplace(cls, self)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In place: self = {name}(self)."
    return method


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """`x.polygamma(n)`: polygamma(n, x)."""
    return polygamma(n, self)


def polygamma_(self: Tensor, n: int) -> Tensor:
    """In place: self = polygamma(n, self)."""
    return apply_inplace(Polygamma, self, _order(n))


def igamma_(self: Tensor, other) -> Tensor:
    """In place: self = igamma(self, other)."""
    return apply_inplace(IncompleteGamma, self, other, False)


def igammac_(self: Tensor, other) -> Tensor:
    """In place: self = igammac(self, other)."""
    return apply_inplace(IncompleteGamma, self, other, True)


def mvlgamma_(self: Tensor, p: int) -> Tensor:
    """In place: self = mvlgamma(self, p) (computed from a copy of self, which it reads p
    times)."""
    return copy_(self, mvlgamma(self.clone(), p))


_UNARY = {"lgamma": Lgamma, "digamma": Digamma, "erfc": Erfc, "erfinv": Erfinv, "i0": I0,
          "sinc": Sinc}
METHODS = {"lgamma": lgamma, "digamma": digamma, "polygamma": _polygamma_method,
           "mvlgamma": mvlgamma, "erfc": erfc, "erfinv": erfinv, "i0": i0, "sinc": sinc,
           "igamma": igamma, "igammac": igammac, "polygamma_": polygamma_, "igamma_": igamma_,
           "igammac_": igammac_, "mvlgamma_": mvlgamma_}
METHODS.update({f"{name}_": _in_place(cls, name) for name, cls in _UNARY.items()})


def _in(low, high):
    return lambda rng, shape: samples.values(rng, shape, low, high)


def _unary_entry(name, function, make, torch_call, kinks=""):
    return OpInfo(name, function, lambda rng: samples.unary(make, rng), torch=torch_call,
                  kinks=kinks)


_POLES = "the poles x = 0, -1, -2, ..."
OPS = [
    _unary_entry("lgamma", lgamma, lambda rng, shape: samples.away_from(
        rng, shape, (0.0, -1.0, -2.0), margin=0.2, low=-2.5, high=4.0),
        lambda torch, a: torch.lgamma(a), kinks=f"{_POLES} and the sign changes of Γ"),
    _unary_entry("digamma", digamma, lambda rng, shape: samples.away_from(
        rng, shape, (0.0, -1.0, -2.0), margin=0.2, low=-2.5, high=4.0),
        lambda torch, a: torch.digamma(a), kinks=_POLES),
    OpInfo("polygamma", polygamma, lambda rng: [
        Sample((n, samples.positive(rng, (3, 4))), note=f"n={n}") for n in (0, 1, 2, 3)] + [
        Sample((2, samples.positive(rng, (4, 3))), layout="transposed", note="transposed"),
        Sample((1, samples.away_from(rng, (2, 3), (-1.0, 0.0), margin=0.2, low=-1.8, high=-0.2)),
               note="negative x")], torch=lambda torch, n, a: torch.polygamma(n, a), kinks=_POLES),
    OpInfo("mvlgamma", mvlgamma, lambda rng: [
        Sample((samples.positive(rng, (3, 4), 1.2, 3.0), 3), note="p=3"),
        Sample((samples.positive(rng, (4, 3), 0.3, 2.0), 1), layout="transposed", note="p=1")],
        torch=lambda torch, a, p: torch.mvlgamma(a, p)),
    _unary_entry("erfc", erfc, samples.values, lambda torch, a: torch.erfc(a)),
    _unary_entry("entr", entr, samples.positive, lambda torch, a: torch.special.entr(a)),
    _unary_entry("erfcx", erfcx, _in(-3.0, 5.0), lambda torch, a: torch.special.erfcx(a)),
    _unary_entry("erfinv", erfinv, _in(-0.95, 0.95), lambda torch, a: torch.erfinv(a)),
    _unary_entry("ndtri", ndtri, _in(0.02, 0.98), lambda torch, a: torch.special.ndtri(a)),
    _unary_entry("log_ndtr", log_ndtr, _in(-6.0, 3.0), lambda torch, a: torch.special.log_ndtr(a)),
    _unary_entry("i0", i0, _in(-4.0, 4.0), lambda torch, a: torch.i0(a)),
    _unary_entry("i0e", i0e, lambda rng, shape: samples.away_from(rng, shape, (0.0,), low=-4.0,
                                                                  high=4.0),
                 lambda torch, a: torch.special.i0e(a), kinks="x == 0 (|x| has a kink)"),
    _unary_entry("i1", i1, _in(-4.0, 4.0), lambda torch, a: torch.special.i1(a)),
    _unary_entry("i1e", i1e, lambda rng, shape: samples.away_from(rng, shape, (0.0,), low=-4.0,
                                                                  high=4.0),
                 lambda torch, a: torch.special.i1e(a), kinks="x == 0 (|x| has a kink)"),
    _unary_entry("sinc", sinc, samples.values, lambda torch, a: torch.sinc(a)),
    OpInfo("igamma", igamma, lambda rng: _incomplete_gamma_samples(rng),
           torch=lambda torch, a, x: torch.igamma(a, x)),
    OpInfo("igammac", igammac, lambda rng: _incomplete_gamma_samples(rng),
           torch=lambda torch, a, x: torch.igammac(a, x)),
    OpInfo("zeta", zeta, lambda rng: [
        Sample((samples.positive(rng, (3, 4), 1.5, 5.0), samples.positive(rng, (3, 4))),
               grad=(False, True), note="q needs grad"),
        Sample((samples.positive(rng, (4,), 1.5, 5.0), samples.positive(rng, (3, 4))),
               grad=(False, True), note="broadcast x"),
        Sample((samples.positive(rng, (4, 3), 1.5, 5.0), samples.positive(rng, (4, 3))),
               grad=(False, True), layout="transposed", note="transposed"),
        Sample((3.0, samples.positive(rng, (3, 4))), note="scalar x")],
        torch=lambda torch, x, q: torch.special.zeta(x, q)),
]


def _incomplete_gamma_samples(rng) -> list:
    def a_values(rng, shape):
        return samples.positive(rng, shape, 0.5, 4.0)

    def x_values(rng, shape):
        return samples.positive(rng, shape, 0.2, 6.0)
    return [
        Sample((a_values(rng, (3, 4)), x_values(rng, (3, 4))), grad=(False, True), note="2-D"),
        Sample((a_values(rng, (4,)), x_values(rng, (3, 4))), grad=(False, True),
               note="broadcast a"),
        Sample((a_values(rng, (3, 4)), x_values(rng, (4,))), grad=(False, True),
               note="broadcast x"),
        Sample((a_values(rng, (4, 3)), x_values(rng, (4, 3))), grad=(False, True),
               layout="transposed", note="transposed"),
        Sample((a_values(rng, (3, 4)), x_values(rng, (3, 4))), grad=(False, False),
               note="no grad"),
    ]
