"""More pooling, as PyTorch has it: the `*_with_indices` spellings of max pooling,
max_unpool1d/2d/3d (the partial inverse of max pooling: each value put back where its
maximum came from), lp_pool1d/2d/3d (power-average pooling) and local_response_norm.

max_unpool is a Function (a scatter whose backward gathers the gradient at the same
positions, itself differentiable); lp_pool and local_response_norm are PyTorch's own
compositions of genesis ops, so their gradients are those ops'.
"""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..ops.activation import relu
from ..ops.adaptive_pooling import adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d
from ..ops.pad import pad
from ..ops.pooling import (avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d,
                           torch_pool)
from ..ops.registry import OpInfo, Sample
from ..ops.window import as_tuple
from ..tensor import Tensor

__all__ = ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d", "local_response_norm"]


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = True):
    """`max_pool1d(..., return_indices=True)`: the maxima and their positions along L.

    >>> import genesis
    >>> F = genesis.nn.functional
    >>> F.max_pool1d_with_indices(genesis.tensor([[[1., 3., 2., 5.]]]), 2)[1]
    tensor([[[1, 3]]])
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = True):
    """`max_pool2d(..., return_indices=True)`: the maxima and their flat positions in H * W.

    >>> import genesis
    >>> values, indices = genesis.nn.functional.max_pool2d_with_indices(
    ...     genesis.arange(16.).reshape(1, 1, 4, 4), 2)
    >>> indices
    tensor([[[[ 5,  7],
              [13, 15]]]])
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = True):
    """`max_pool3d(..., return_indices=True)`: the maxima and their flat positions in D * H * W.

    >>> import genesis
    >>> genesis.nn.functional.max_pool3d_with_indices(genesis.randn(1, 1, 2, 2, 2), 2)[1].shape
    genesis.Size([1, 1, 1, 1, 1])
    """
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = True):
    """`adaptive_max_pool1d(..., return_indices=True)`.

    >>> import genesis
    >>> genesis.nn.functional.adaptive_max_pool1d_with_indices(
    ...     genesis.tensor([[[1., 5., 2., 4.]]]), 2)[1]
    tensor([[[1, 3]]])
    """
    return adaptive_max_pool1d(input, output_size, return_indices)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = True):
    """`adaptive_max_pool2d(..., return_indices=True)`.

    >>> import genesis
    >>> F = genesis.nn.functional
    >>> F.adaptive_max_pool2d_with_indices(genesis.randn(1, 3, 5, 5), 2)[1].shape
    genesis.Size([1, 3, 2, 2])
    """
    return adaptive_max_pool2d(input, output_size, return_indices)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = True):
    """`adaptive_max_pool3d(..., return_indices=True)`.

    >>> import genesis
    >>> F = genesis.nn.functional
    >>> F.adaptive_max_pool3d_with_indices(genesis.randn(1, 2, 3, 4, 5), 1)[1].shape
    genesis.Size([1, 2, 1, 1, 1])
    """
    return adaptive_max_pool3d(input, output_size, return_indices)


class MaxUnpoolFunction(Op):
    """Each value of (..., *spatial) put at its flat position in an all-zero (..., *out_size)."""

    node_name = "MaxUnpool"

    @staticmethod
    def forward(ctx, input, indices, out_size):
        xp = input._device.xp
        dims = len(out_size)
        lead = input.shape[:input.ndim - dims]
        rows = math.prod(lead)
        flat_indices = indices._data.reshape(rows, -1)
        out = xp.zeros((rows, math.prod(out_size)), input._data.dtype)
        out[xp.arange(rows)[:, None], flat_indices] = input._data.reshape(rows, -1)
        ctx.indices, ctx.dims = indices, dims
        return out.reshape(tuple(lead) + tuple(out_size))

    @staticmethod
    def backward(ctx, grad):
        indices, dims = ctx.indices, ctx.dims
        picked = grad.flatten(grad.ndim - dims).gather(-1, indices.flatten(indices.ndim - dims))
        return picked.reshape(indices.shape), None, None


def _unpool_size(op: str, dims: int, input: Tensor, indices: Tensor, kernel_size, stride,
                 padding, output_size) -> tuple:
    """PyTorch's unpooled size: (in - 1) * stride - 2 * padding + kernel, or `output_size`
    (its last `dims` entries) if it is within a stride of that."""
    if not isinstance(input, Tensor) or not isinstance(indices, Tensor):
        raise TypeError(f"{op}: input and indices must be Tensors, got "
                        f"{type(input).__name__} and {type(indices).__name__}")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"{op}: expected a {dims + 1}-D (unbatched) or {dims + 2}-D (batched) "
                           f"input, got shape {tuple(input.shape)}")
    if indices.shape != input.shape or indices._data.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: indices must be an integer tensor of the input's shape "
                           f"{tuple(input.shape)} (as max_pool's return_indices gives), got "
                           f"{indices.dtype.name} of shape {tuple(indices.shape)}")
    kernel = as_tuple(kernel_size, dims, "kernel_size", op)
    stride = kernel if stride is None else as_tuple(stride, dims, "stride", op)
    padding = as_tuple(padding, dims, "padding", op)
    default = tuple((size - 1) * s + k - 2 * p for size, s, k, p in
                    zip(input.shape[-dims:], stride, kernel, padding))
    if output_size is None:
        sizes = default
    else:
        sizes = tuple(output_size)
        if len(sizes) == dims + 2:
            sizes = sizes[2:]
        if len(sizes) != dims:
            raise ValueError(f"{op}: output_size should be a sequence containing {dims} or "
                             f"{dims + 2} elements, but it has a length of '{len(sizes)}'")
        for d, (n, size, s) in enumerate(zip(sizes, default, stride)):
            if not size - s < n < size + s:
                raise ValueError(f"{op}: invalid output_size \"{list(sizes)}\" (dim {d} must be "
                                 f"between {size - s} and {size + s})")
    if any(n < 0 for n in sizes):
        raise ValueError(f"{op}: output_size must contain non-negative spatial dimensions, got "
                         f"{sizes}")
    return sizes


def _max_unpool(op: str, dims: int, input: Tensor, indices: Tensor, kernel_size, stride, padding,
                output_size) -> Tensor:
    sizes = _unpool_size(op, dims, input, indices, kernel_size, stride, padding, output_size)
    data = indices._data
    if data.size and (bool((data < 0).any()) or int(data.max()) >= math.prod(sizes)):
        raise RuntimeError(f"{op}: found an invalid max index (indices must lie in [0, "
                           f"{math.prod(sizes)}) for an output of spatial size {sizes}); pass the "
                           "output_size of the input that was pooled")
    return MaxUnpoolFunction.apply(input, indices, sizes)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of `max_pool1d`: each value put back at its index along L, zeros
    elsewhere (the output length is `output_size` when given).

    >>> import genesis
    >>> F = genesis.nn.functional
    >>> values, indices = F.max_pool1d(genesis.tensor([[[1., 3., 2., 5.]]]), 2, return_indices=True)
    >>> F.max_unpool1d(values, indices, 2)
    tensor([[[0., 3., 0., 5.]]])
    """
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of `max_pool2d`: each value put back at its flat index in H * W.

    >>> import genesis
    >>> F = genesis.nn.functional
    >>> x = genesis.arange(16.).reshape(1, 1, 4, 4)
    >>> values, indices = F.max_pool2d(x, 2, return_indices=True)
    >>> F.max_unpool2d(values, indices, 2)[0, 0]
    tensor([[ 0.,  0.,  0.,  0.],
            [ 0.,  5.,  0.,  7.],
            [ 0.,  0.,  0.,  0.],
            [ 0., 13.,  0., 15.]])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of `max_pool3d`: each value put back at its flat index in D * H * W.

    >>> import genesis
    >>> F = genesis.nn.functional
    >>> values, indices = F.max_pool3d(genesis.randn(1, 1, 4, 4, 4), 2, return_indices=True)
    >>> F.max_unpool3d(values, indices, 2).shape
    genesis.Size([1, 1, 4, 4, 4])
    """
    input, = autocast_inputs(FLOAT32_ON_CPU, input)
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                       output_size)


def _lp_pool(op: str, dims: int, pool, max_pool, input: Tensor, norm_type, kernel_size, stride,
             ceil_mode: bool) -> Tensor:
    """PyTorch's power-average pooling: (sum over the window of x^p)^(1/p), computed as the
    average times the window size; p = ±inf is the max (min) of |x|."""
    kernel = as_tuple(kernel_size, dims, "kernel_size", op)
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = pool(input ** norm_type, kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs()) * math.prod(kernel)) ** (1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, L): (sum of x^p over each window)^(1/p).

    >>> import genesis
    >>> genesis.nn.functional.lp_pool1d(genesis.tensor([[[3., 4., 1., 0.]]]), 2, 2)
    tensor([[[5., 1.]]])
    """
    return _lp_pool("lp_pool1d", 1, avg_pool1d, max_pool1d, input, norm_type, kernel_size, stride,
                    ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, H, W): (sum of x^p over each window)^(1/p); p = 1 is
    sum pooling, p = inf max pooling of |x|.

    >>> import genesis
    >>> genesis.nn.functional.lp_pool2d(genesis.ones(1, 1, 4, 4), 1, 2)
    tensor([[[[4., 4.],
              [4., 4.]]]])
    """
    return _lp_pool("lp_pool2d", 2, avg_pool2d, max_pool2d, input, norm_type, kernel_size, stride,
                    ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of (N, C, D, H, W), as `lp_pool2d`.

    >>> import genesis
    >>> genesis.nn.functional.lp_pool3d(genesis.ones(1, 1, 2, 2, 2), 1, 2)
    tensor([[[[[8.]]]]])
    """
    return _lp_pool("lp_pool3d", 3, avg_pool3d, max_pool3d, input, norm_type, kernel_size, stride,
                    ceil_mode)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Local response normalisation across channels (dim 1): x / (k + alpha * mean of x² over
    the `size` neighbouring channels)^beta, with PyTorch's window (size // 2 before; the
    channels beyond the ends count as zeros).

    >>> import genesis
    >>> genesis.nn.functional.local_response_norm(genesis.ones(1, 3, 2), 2, alpha=1.0, k=0.0,
    ...                                           beta=1.0)
    tensor([[[2., 2.],
             [1., 1.],
             [1., 1.]]])
    """
    if input.ndim < 3:
        raise ValueError(f"local_response_norm: expected 3D or higher dimensionality input "
                         f"(N, C, *), got {input.ndim} dimensions")
    if input.numel() == 0:
        return input
    square = input * input
    if input.ndim == 3:
        div = pad(square.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        shape = tuple(input.shape)
        div = square.reshape(shape[0], 1, shape[1], shape[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(shape)
    return input / (div * alpha + k) ** beta


def _unpool(pool, unpool):
    """max_unpool of the values and indices of max_pool(input), as a function of those values
    (the input the registry varies), so its samples have valid indices."""
    def call(values, input, kernel_size, *args, **kwargs):
        _, indices = pool(input, kernel_size, *args[:2], return_indices=True)
        return unpool(values, indices, kernel_size, *args, **kwargs)
    return call


def _torch_unpool(dims):
    def call(torch, values, input, kernel_size, *args, **kwargs):
        F = torch.nn.functional
        pool = getattr(F, f"max_pool{dims}d")
        _, indices = pool(input, kernel_size, *args[:2], return_indices=True)
        return getattr(F, f"max_unpool{dims}d")(values, indices, kernel_size, *args, **kwargs)
    return call


def _unpool_samples(dims):
    def build(rng):
        def sample(shape, pooled, *args, layout="contiguous", **kwargs):
            return Sample((rng.uniform(-2, 2, pooled), rng.uniform(-2, 2, shape)) + args, kwargs,
                          grad=(True, False), layout=layout,
                          note=f"{shape} {args} {kwargs} {layout}")
        if dims == 1:
            return [sample((2, 3, 8), (2, 3, 4), 2), sample((3, 9), (3, 4), 2),
                    sample((2, 2, 9), (2, 2, 4), 2, output_size=(9,)),
                    sample((2, 2, 6), (2, 2, 2), 3, 3, 1, output_size=(6,), layout="transposed")]
        if dims == 2:
            return [sample((2, 2, 4, 4), (2, 2, 2, 2), 2),
                    sample((1, 2, 5, 5), (1, 2, 2, 2), 2, output_size=(1, 2, 5, 5)),
                    sample((2, 1, 6, 6), (2, 1, 2, 2), 3, 3, 1, output_size=(6, 6)),
                    sample((3, 4, 6), (3, 2, 3), 2, layout="transposed")]
        return [sample((1, 2, 4, 4, 4), (1, 2, 2, 2, 2), 2),
                sample((2, 3, 5, 4), (2, 1, 2, 2), 2, output_size=(3, 5, 4), layout="transposed")]
    return build


def _lp_samples(dims):
    def build(rng):
        shape = {1: (2, 3, 7), 2: (2, 2, 5, 6), 3: (1, 2, 4, 4, 5)}[dims]
        positive = lambda s: np.abs(rng.uniform(0.5, 2, s))  # noqa: E731  (no kink at 0)
        return [Sample((positive(shape), 2, 2)),
                Sample((positive(shape), 3, 3, 2), layout="transposed"),
                Sample((positive(shape), 1.5, 2), {"ceil_mode": True}),
                Sample((positive(shape[1:]), 2, 2), note="unbatched")]
    return build


def _lrn_samples(rng):
    return [Sample((rng.uniform(-2, 2, (2, 5, 4)), 3)),
            Sample((rng.uniform(-2, 2, (2, 6, 3, 4)), 2), {"alpha": 0.1, "beta": 0.5, "k": 2.0}),
            Sample((rng.uniform(-2, 2, (1, 4, 2, 3, 2)), 4), layout="transposed")]


OPS = [
    OpInfo("max_unpool1d", _unpool(max_pool1d, max_unpool1d), _unpool_samples(1),
           torch=_torch_unpool(1)),
    OpInfo("max_unpool2d", _unpool(max_pool2d, max_unpool2d), _unpool_samples(2),
           torch=_torch_unpool(2)),
    OpInfo("max_unpool3d", _unpool(max_pool3d, max_unpool3d), _unpool_samples(3),
           torch=_torch_unpool(3)),
    OpInfo("lp_pool1d", lp_pool1d, _lp_samples(1), torch=torch_pool("lp_pool1d")),
    OpInfo("lp_pool2d", lp_pool2d, _lp_samples(2), torch=torch_pool("lp_pool2d")),
    OpInfo("lp_pool3d", lp_pool3d, _lp_samples(3), torch=torch_pool("lp_pool3d")),
    OpInfo("local_response_norm", local_response_norm, _lrn_samples,
           torch=torch_pool("local_response_norm")),
]
