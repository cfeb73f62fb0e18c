"""Reductions: sum, mean, prod, var, std; each gradient spreads back over the reduced dims.

sum, mean, var and std are rows of one table (their gradients are one line each); prod,
whose gradient must stay exact where inputs are zero, is a Function of its own.

max/min/amax/amin/argmax/argmin live in `extrema.py`, norms in `norm.py`,
cumulative sums and products in `cumulative.py`.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ..autocast_rules import FLOAT32, FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..dtypes import get_dtype
from ..tensor import Tensor, wrap_array
from . import samples
from ._blocked_sums import in_blocks, summed
from ._operands import accumulated_in_float32, normalize_dim, normalize_dims, saved_with_input
from .gradient_rules import run_rule
from .join import cat
from .registry import OpInfo, Sample

__all__ = ["sum", "mean", "prod", "var", "std", "var_mean", "std_mean"]


def kept_shape(shape: tuple, dims) -> tuple:
    """`shape` with the reduced `dims` (None: all) set to 1, i.e. the keepdim result shape."""
    if dims is None:
        return (1,) * len(shape)
    return tuple(1 if index in dims else extent for index, extent in enumerate(shape))


# The gradients of sum, mean, var and std, one line each (genesis.ops.gradient_rules runs
# them on the arrays, or on the Tensors under create_graph). A derivative is a function of
# the math `m`, the gradient `g` (with the reduced dims kept as 1s), what the row reads
# (`a` the input, `out` the output, also with the reduced dims kept) and `r`, the call (its
# ctx): r.shape the input's shape, r.dims the reduced dims (None: all), r.count the
# elements each output combines, r.inverse 1 / (count - correction) for var and std. It
# returns a gradient that broadcasts to the input's shape.
def _sum_gradient(m, g, r):
    return m.expand(g, r.shape)


def _mean_gradient(m, g, r):
    return m.expand(g / r.count, r.shape)  # divided before spreading: fewer divisions


def _var_gradient(m, g, a, r):
    return g * (a - m.mean_kept(a, r.dims)) * (2 * r.inverse)


def _std_gradient(m, g, a, out, r):  # 0 where the std is 0, as in PyTorch
    return g / m.nonzero_divisor(out) * (a - m.mean_kept(a, r.dims)) * r.inverse


def _reduction_op(name: str, doc: str, compute, derivative, reads: tuple, autocast_policy=None):
    """A Function `name`: `compute(ctx, a, dims, keepdim, option)` gives the reduced array
    (`option`: sum's dtype, var's and std's correction); `derivative` (above) is its gradient;
    `reads`, () or ("a",) or ("a", "out"), what it reads besides the gradient, kept for
    backward when the input needs a gradient; `autocast_policy` its rule under autocast."""
    keeps_out = "out" in reads
    on_kept_dims = functools.partial(_on_kept_dims, derivative, keeps_out)

    def forward(ctx, a, dims, keepdim, option):
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        out = compute(ctx, a, dims, keepdim, option)
        if reads and ctx.needs_input_grad[0]:
            if keeps_out:
                out = wrap_array(out, a._device)
                ctx.save_for_backward(a, out)
            else:
                ctx.save_for_backward(a)
        return out

    def backward(ctx, grad):
        rule = derivative if ctx.dims is None or ctx.keepdim else on_kept_dims
        if reads:
            return run_rule(rule, grad, *ctx.saved_tensors, ctx), None, None, None
        return run_rule(rule, grad, ctx), None, None, None

    body = {"forward": staticmethod(forward), "backward": staticmethod(backward),
            "autocast_policy": autocast_policy, "__module__": __name__, "__doc__": doc}
    return type(name, (Op,), body)


def _on_kept_dims(derivative, keeps_out: bool, m, g, *operands):
    """`derivative` given `g` (and `out`, the last value read, when `keeps_out`), arrays or
    Tensors, with the reduced dims put back as 1s."""
    *values, r = operands
    kept = kept_shape(r.shape, r.dims)
    if keeps_out:
        values[-1] = values[-1].reshape(kept)
    return derivative(m, g.reshape(kept), *values, r)


def _sum(ctx, a, dims, keepdim, dtype):
    if dtype is None:
        return accumulated_in_float32(lambda x: summed(x, dims, keepdim, None), a._data)
    return summed(a._data, dims, keepdim, dtype)


def _mean(ctx, a, dims, keepdim, dtype):
    if dtype is None:
        _require_floating(a, "mean")
    ctx.count = reduced_count(a._data.shape, dims)
    if dtype is None:
        return accumulated_in_float32(lambda x: _mean_array(x, dims, keepdim, None, ctx.count),
                                      a._data)
    return _mean_array(a._data, dims, keepdim, dtype, ctx.count)


def _mean_array(x, dims, keepdim, dtype, count):
    if in_blocks(x, dims, dtype):  # NumPy's mean adds the rows one by one (see summed)
        return np.divide(summed(x, dims, keepdim, dtype), count, dtype=np.float32)
    return x.mean(axis=dims, keepdims=keepdim, dtype=dtype)


def _var(ctx, a, dims, keepdim, correction):
    return _variance(ctx, a, dims, correction, keepdim, "var")


def _std(ctx, a, dims, keepdim, correction):
    return _variance(ctx, a, dims, correction, keepdim, "std", root=True)


# CUDA's autocast lists sum (run in float32); mean, var and std keep the input's dtype there,
# as in PyTorch (a float16 or bfloat16 input is still accumulated in float32 and rounded once)
Sum = _reduction_op("Sum", "Sum over `dims` (None: all elements).", _sum, _sum_gradient, (),
                    FLOAT32_ON_CUDA)
Mean = _reduction_op("Mean", "Mean over `dims` (None: all elements).", _mean, _mean_gradient, ())
Var = _reduction_op("Var", "Variance over `dims`, dividing by (count - correction).", _var,
                    _var_gradient, ("a",))
Std = _reduction_op("Std", "Standard deviation over `dims`; its gradient is zero where it is "
                    "zero (as in PyTorch).", _std, _std_gradient, ("a", "out"))


class VarMean(Op):
    """(variance, mean) over `dims` in one node with two outputs, as PyTorch's var_mean: a
    hook on the node sees both gradients, and its backward adds the two rules'."""

    autocast_policy = None  # the input's dtype under autocast, as var and mean

    @staticmethod
    def forward(ctx, a, dims, keepdim, correction):
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        variance = _variance(ctx, a, dims, correction, keepdim, "var_mean")
        ctx.count = reduced_count(a.shape, dims)
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(a)
        return variance, accumulated_in_float32(
            lambda x: x.mean(axis=dims, keepdims=keepdim), a._data)

    @staticmethod
    def backward(ctx, grad_var, grad_mean):
        (a,) = ctx.saved_tensors
        kept = ctx.dims is None or ctx.keepdim
        var_rule = _var_gradient if kept else functools.partial(_on_kept_dims, _var_gradient, False)
        mean_rule = _mean_gradient if kept else functools.partial(_on_kept_dims, _mean_gradient, False)
        return (run_rule(var_rule, grad_var, a, ctx) + run_rule(mean_rule, grad_mean, ctx),
                None, None, None)


class Prod(Op):
    """Product over one dim (None: all elements).

    The gradient is the product of the other elements: `out / a` when no input is
    zero, else an exact product of exclusive cumulative products (no division).
    """

    autocast_policy = FLOAT32

    @staticmethod
    def forward(ctx, a, dim, keepdim, dtype):
        ctx.dim, ctx.keepdim = dim, keepdim
        out = a._data.prod(axis=dim, keepdims=keepdim, dtype=dtype)
        return saved_with_input(ctx, a, out)

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        dims = None if ctx.dim is None else (ctx.dim,)
        grad = unreduced(grad, a.shape, dims, ctx.keepdim)
        if not (a._data == 0).any():
            return grad * unreduced(out, a.shape, dims, ctx.keepdim) / a, None, None, None
        if ctx.dim is None:
            others = product_of_others(a.reshape(-1), 0).reshape(a.shape)
        else:
            others = product_of_others(a, ctx.dim)
        return grad * others, None, None, None


def product_of_others(a: Tensor, dim: int) -> Tensor:
    """For each element, the product of the other elements along `dim`, without dividing
    (exact when some are zero, and differentiable again)."""
    before = exclusive_cumprod(a, dim)
    after = exclusive_cumprod(a.flip(dim), dim).flip(dim)
    return before * after


def exclusive_cumprod(a: Tensor, dim: int) -> Tensor:
    """Along `dim`, the product of the elements strictly before each one (1 for the first)."""
    extent = a.shape[dim]
    ones = wrap_array(a._device.xp.ones(a.shape[:dim] + (1,) + a.shape[dim + 1:], a._data.dtype),
                      a._device)
    return cat([ones, a.narrow(dim, 0, extent - 1)], dim).cumprod(dim) if extent else a


def unreduced(grad: Tensor, shape: tuple, dims, keepdim: bool) -> Tensor:
    """A reduction's result (or gradient) with the reduced dims put back as size 1."""
    if keepdim or grad.ndim == len(shape):
        return grad
    return grad.reshape(kept_shape(shape, dims))


def reduced_count(shape: tuple, dims) -> int:
    """How many elements each output of a reduction over `dims` (None: all) combines."""
    count = 1
    for index, extent in enumerate(shape):
        if dims is None or index in dims:
            count *= extent
    return count


def _variance(ctx, a: Tensor, dims, correction, keepdim: bool, op: str, root: bool = False):
    """The variance over `dims` dividing by count - correction (var's and std's forward), or
    its square root with `root`; sets ctx.inverse, 1 / that divisor (inf when it is 0)."""
    _require_floating(a, op)
    divisor = max(reduced_count(a.shape, dims) - correction, 0)
    ctx.inverse = 1.0 / divisor if divisor else float("inf")
    xp = a._device.xp

    def variance(x):
        out = xp.var(x, axis=dims, ddof=correction, keepdims=keepdim)
        return xp.sqrt(out) if root else out

    if divisor > 0:
        return accumulated_in_float32(variance, a._data)
    warnings.warn(f"{op}(): degrees of freedom is <= 0 (the correction {correction} is not less "
                  f"than the {reduced_count(a.shape, dims)} elements reduced); the result is "
                  "nan or inf", RuntimeWarning, stacklevel=6)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return accumulated_in_float32(variance, a._data)


def _require_floating(a: Tensor, op: str) -> None:
    if not a.is_floating_point():  # (bfloat16 included)
        raise RuntimeError(f"{op}: input dtype must be floating point, got {a.dtype!r}; "
                           f"use t.float().{op}()")


def _dim_arguments(dim, keepdim, axis, keepdims):
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, bool(keepdim)


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None,
        keepdims=None) -> Tensor:
    """Sum of elements over `dim` (an int, a tuple, or None for all).

    `axis`/`keepdims` are accepted as aliases of `dim`/`keepdim`.

    >>> import genesis
    >>> genesis.tensor([[1., 2.], [3., 4.]]).sum(dim=0)
    tensor([4., 6.])
    """
    if axis is not None or keepdims is not None:
        dim, keepdim = _dim_arguments(dim, keepdim, axis, keepdims)
    dims = None if dim is None else normalize_dims(dim, input.ndim, "sum")
    return Sum.apply(input, dims, keepdim, _accumulator_dtype(input, dtype))


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, axis=None,
         keepdims=None) -> Tensor:
    """Mean of elements over `dim` (an int, a tuple, or None for all); with `dtype` (a
    floating one), computed and returned in that dtype, as PyTorch's.

    >>> import genesis
    >>> genesis.tensor([1, 2]).mean(dtype=genesis.float64)
    tensor(1.5000, dtype=genesis.float64)
    """
    dim, keepdim = _dim_arguments(dim, keepdim, axis, keepdims)
    if dtype is not None:
        dtype = get_dtype(dtype)
        if not dtype.is_floating_point:
            raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: {dtype!r}")
        dtype = dtype.numpy_dtype
    return Mean.apply(input, normalize_dims(dim, input.ndim, "mean"), keepdim, dtype)


def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or along one `dim`; integers and bools multiply in int64.

    >>> import genesis
    >>> x = genesis.tensor([[1., 2.], [0., 4.]], requires_grad=True)
    >>> x.prod(dim=1)
    tensor([2., 0.], grad_fn=<ProdBackward0>)
    >>> x.prod().backward(); x.grad  # exact with zeros: the product of the others
    tensor([[0., 0.],
            [8., 0.]])
    """
    if dim is not None:
        dim = normalize_dim(dim, input.ndim, "prod")
    return Prod.apply(input, dim, bool(keepdim), _accumulator_dtype(input, dtype))


def _accumulator_dtype(input: Tensor, dtype):
    if dtype is not None:
        return get_dtype(dtype).numpy_dtype
    if input._data.dtype.kind in "biu":
        return "int64"  # PyTorch sums and multiplies integers and bools in int64
    return None


def _variance_arguments(op: str, input: Tensor, dim, unbiased, keepdim, correction, axis, keepdims):
    """Resolve PyTorch's two signatures, `(dim, unbiased, keepdim)` and `(dim, *, correction,
    keepdim)`; `input.var(False)` passes `unbiased` first."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    dim, keepdim = _dim_arguments(dim, keepdim, axis, keepdims)
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}: pass either unbiased or correction, not both")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return normalize_dims(dim, input.ndim, op), correction, keepdim


def var(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None,
        axis=None, keepdims=None) -> Tensor:
    """Variance over `dim` (all dims when None), dividing by N - `correction`.

    `correction` defaults to 1 (Bessel's correction); `unbiased=False` means 0.

    >>> import genesis
    >>> genesis.tensor([1., 2., 3., 4.]).var()
    tensor(1.6667)
    >>> genesis.tensor([1., 2., 3., 4.]).var(correction=0)
    tensor(1.2500)
    """
    dims, correction, keepdim = _variance_arguments("var", input, dim, unbiased, keepdim,
                                                    correction, axis, keepdims)
    return Var.apply(input, dims, keepdim, correction)


def std(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None,
        axis=None, keepdims=None) -> Tensor:
    """Standard deviation over `dim`; same arguments as `var`. Its gradient is 0 where the
    standard deviation is 0 (PyTorch's convention at that kink).

    >>> import genesis
    >>> genesis.tensor([[1., 3.], [2., 2.]]).std(dim=1)
    tensor([1.4142, 0.0000])
    """
    dims, correction, keepdim = _variance_arguments("std", input, dim, unbiased, keepdim,
                                                    correction, axis, keepdims)
    return Std.apply(input, dims, keepdim, correction)


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """(variance, mean) over `dim`, with `var`'s arguments.

    >>> import genesis
    >>> genesis.var_mean(genesis.tensor([1., 2., 3., 4.]))
    (tensor(1.6667), tensor(2.5000))
    """
    dims, correction, keepdim = _variance_arguments("var_mean", input, dim, unbiased, keepdim,
                                                    correction, None, None)
    return VarMean.apply(input, dims, keepdim, correction)


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """(standard deviation, mean) over `dim`, with `std`'s arguments."""
    return (std(input, dim, unbiased, keepdim, correction=correction),
            _mean_over(input, dim, unbiased, keepdim))


def _mean_over(input: Tensor, dim, unbiased, keepdim: bool) -> Tensor:
    if isinstance(dim, bool):  # var_mean(x, False): the second form, unbiased first
        dim = None
    return mean(input, dim, keepdim)


METHODS = {"sum": sum, "mean": mean, "prod": prod, "var": var, "std": std}


def _reduction_samples(rng):
    def make(**kwargs):
        return [Sample((samples.values(rng, (3, 4, 2)),), kwargs, note=str(kwargs))]

    return (samples.unary(samples.values, rng) + make(dim=1) + make(dim=-1, keepdim=True)
            + make(dim=(0, 2)) + make(dim=(0, 2), keepdim=True)
            + [Sample((samples.values(rng, (4, 3)),), {"dim": 0}, layout="transposed",
                      note="transposed, dim 0")])


def _prod_samples(rng):
    def make(array, *args, layout="contiguous", **kwargs):
        return Sample((array,) + args, kwargs, layout=layout, note=f"{array.shape} {args} {kwargs}")

    one_zero = samples.values(rng, (3, 4)) * [1, 0, 1, 1]
    two_zeros = samples.values(rng, (2, 5)) * [0, 1, 1, 0, 1]
    return samples.unary(samples.values, rng) + [
        make(samples.values(rng, (3, 4, 2)), 1), make(samples.values(rng, (3, 4)), -1, True),
        make(samples.values(rng, (4, 3)), 0, layout="transposed"), make(one_zero),
        make(one_zero, 1), make(one_zero, 0, keepdim=True), make(two_zeros), make(two_zeros, 1)]


def _variance_samples(rng):
    def make(*args, shape=(3, 4), layout="contiguous", **kwargs):
        return Sample((samples.values(rng, shape),) + args, kwargs, layout=layout,
                      note=f"{shape} {args} {kwargs} {layout}")

    return [make(), make(1), make(0, keepdim=True), make((0, 1), correction=0),
            make(-1, False, True), make(False), make(dim=1, correction=2, shape=(2, 5)),
            make(0, layout="transposed", shape=(4, 3)), make(1, layout="strided", shape=(2, 5)),
            make(1, shape=(2, 3, 4))]


def _torch_variance(name):
    return lambda torch, a, *args, **kwargs: getattr(torch, name)(a, *args, **kwargs)


OPS = [
    OpInfo("prod", prod, _prod_samples,
           torch=lambda torch, a, *args, **kw: torch.prod(a, *args, **kw)),
    OpInfo("var", var, _variance_samples, torch=_torch_variance("var")),
    OpInfo("std", std, _variance_samples, torch=_torch_variance("std")),
    OpInfo("var_mean", var_mean, _variance_samples, torch=_torch_variance("var_mean")),
    OpInfo("sum", sum, _reduction_samples,
           torch=lambda torch, a, **kw: torch.sum(a, **kw) if kw else torch.sum(a)),
    OpInfo("mean", mean, lambda rng: [s for s in _reduction_samples(rng) if s.note != "zero-size"],
           torch=lambda torch, a, **kw: torch.mean(a, **kw) if kw else torch.mean(a)),
]
