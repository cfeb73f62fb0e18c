"""Cumulative sums and products along a dim.

cumprod's gradient is exact with zeros in the input, to every order: before
the first zero of a slice the usual `reverse_cumsum(grad * out) / a` holds;
at the first zero the gradient is a cumulative product with that zero
replaced by one (no division); after it the gradient is zero, and its
derivative (which a double backward needs) is carried by a zero-valued term
built only when the backward itself is being recorded.
"""
from __future__ import annotations

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..dtypes import get_dtype
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import accumulated_in_float32, normalize_dim, saved_with_input
from .registry import OpInfo, Sample

__all__ = ["cumsum", "cumprod"]


class Cumsum(Op):
    """Running sum along `dim`."""

    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    def forward(ctx, a, dim, dtype):
        ctx.dim = dim
        if dtype is None:
            return accumulated_in_float32(lambda x: x.cumsum(axis=dim), a._data)
        return a._data.cumsum(axis=dim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        return reverse_cumsum(grad, ctx.dim), None, None


def reverse_cumsum(tensor: Tensor, dim: int) -> Tensor:
    """Running sum from the end of `dim` backwards (the adjoint of cumsum)."""
    return tensor.flip(dim).cumsum(dim).flip(dim)


class Cumprod(Op):
    """Running product along `dim`."""

    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    def forward(ctx, a, dim, dtype):
        ctx.dim = dim
        out = a._data.cumprod(axis=dim, dtype=dtype)
        return saved_with_input(ctx, a, out)

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        return cumprod_grad(a, out, grad, ctx.dim), None, None


def cumprod_grad(a: Tensor, out: Tensor, grad: Tensor, dim: int) -> Tensor:
    """The vector-Jacobian product of `out = a.cumprod(dim)`, exact when `a` has zeros:
    element i gets `sum over k >= i of grad[k] * prod(a[j] for j <= k, j != i)`."""
    zeros = a._data == 0
    if not zeros.any():
        return reverse_cumsum(grad * out, dim) / a
    device, dtype = a._device, a._data.dtype
    seen = zeros.cumsum(axis=dim)
    before = wrap_array((seen == 0).astype(dtype), device)  # strictly before the first zero
    first = wrap_array((zeros & (seen == 1)).astype(dtype), device)
    not_before = 1 - before
    grad_a = reverse_cumsum(grad * out, dim) / (a * before + not_before) * before
    zero_to_one = a * (1 - first) + first
    products = zero_to_one.cumprod(dim)  # for k >= first zero: prod(a[j], j <= k, j != zero)
    grad_a = grad_a + (grad * products * not_before).sum(dim, keepdim=True) * first
    if grad_state.enabled:
        # After the first zero z the gradient is a[z] * (the gradient of cumprod with a[z] = 1):
        # zero in value, but its derivative in a[z] is needed by a double backward.
        after = not_before - first
        zero_value = (a * first).sum(dim, keepdim=True)
        grad_a = grad_a + zero_value * cumprod_grad(zero_to_one, products, grad, dim) * after
    return grad_a


def _cumulative(cls, op: str, input: Tensor, dim, dtype) -> Tensor:
    if dtype is not None:
        dtype = get_dtype(dtype).numpy_dtype
    elif input._data.dtype.kind in "biu":
        dtype = "int64"  # as PyTorch: integer and bool inputs accumulate in int64
    if input.ndim == 0:
        normalize_dim(dim, 0, op)
        return cls.apply(input.reshape(1), 0, dtype).reshape(())
    return cls.apply(input, normalize_dim(dim, input.ndim, op), dtype)


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running sum along `dim`; integer and bool inputs give int64.

    >>> import genesis
    >>> genesis.tensor([[1., 2., 3.], [4., 5., 6.]]).cumsum(dim=1)
    tensor([[ 1.,  3.,  6.],
            [ 4.,  9., 15.]])
    """
    return _cumulative(Cumsum, "cumsum", input, dim, dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running product along `dim`; the gradient is exact even with zeros in the input.

    >>> import genesis
    >>> x = genesis.tensor([2., 0., 3.], requires_grad=True)
    >>> x.cumprod(dim=0)
    tensor([2., 0., 0.], grad_fn=<CumprodBackward0>)
    >>> x.cumprod(dim=0).sum().backward(); x.grad
    tensor([1., 8., 0.])
    """
    return _cumulative(Cumprod, "cumprod", input, dim, dtype)


METHODS = {"cumsum": cumsum, "cumprod": cumprod}


def _cumulative_samples(make):
    def build(rng):
        def sample(shape, dim, layout="contiguous"):
            return Sample((make(rng, shape), dim), layout=layout, note=f"{shape} dim {dim} {layout}")

        return [sample((3, 4), 1), sample((3, 4), 0), sample((2, 3, 4), -2),
                sample((4, 3), 0, "transposed"), sample((2, 5), 1, "strided"), sample((), 0),
                sample((0, 3), 1), sample((5,), 0)]

    return build


def _with_zeros(rng, shape):
    """Values with some exact zeros (one, two or none per row)."""
    array = samples.values(rng, shape)
    if array.ndim and array.size:
        flat = array.reshape(-1)
        flat[rng.choice(flat.size, size=max(1, flat.size // 4), replace=False)] = 0.0
    return array


def _cumprod_zero_samples(rng):
    return [Sample((_with_zeros(rng, shape), dim), note=f"zeros {shape} dim {dim}")
            for shape, dim in (((6,), 0), ((3, 5), 1), ((4, 3), 0))] + [
        Sample((samples.values(rng, (5,)) * [1, 0, 1, 0, 1], 0), note="two zeros")]


OPS = [
    OpInfo("cumsum", cumsum, _cumulative_samples(samples.values),
           torch=lambda torch, a, dim: torch.cumsum(a, dim)),
    OpInfo("cumprod", cumprod, lambda rng: _cumulative_samples(samples.away_from)(rng)
           + _cumprod_zero_samples(rng), torch=lambda torch, a, dim: torch.cumprod(a, dim)),
]
