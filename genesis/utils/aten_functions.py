"""ATen operators that PyTorch's programs reach only as `torch.ops.aten.<name>` (no public
function of genesis stands for them), written with genesis's ops. `torch.ops.aten` looks here
after genesis's public functions (genesis.utils._python_dispatch)."""
from __future__ import annotations

import math

from ..creation import zeros
from ..ops.convolution import _convolution_rule, _padding
from ..ops.gradient_rules import TENSOR_MATH
from ..ops.window import as_tuple
from ..ops.window_geometry import Windows
from ..tensor import Tensor

__all__ = ["ATEN_FUNCTIONS", "new_zeros_with_same_feature_meta", "convolution_backward"]


def new_zeros_with_same_feature_meta(input: Tensor, other: Tensor,
                                     self_num_batch_dims: int = 0) -> Tensor:
    """`aten._new_zeros_with_same_feature_meta`: zeros shaped as `input`'s first
    `self_num_batch_dims` dims followed by `other`'s shape, laid out as `other` (its strides and
    storage offset), each batch entry a whole copy of `other`'s storage, in `other`'s dtype and
    device (forward-mode AD's tangent layout).

    >>> import genesis
    >>> other = genesis.zeros(3, 4).t()
    >>> out = new_zeros_with_same_feature_meta(genesis.zeros(2, 5), other, self_num_batch_dims=1)
    >>> out.shape, out.stride(), len(out.storage())
    (genesis.Size([2, 4, 3]), (12, 1, 4), 24)
    """
    if not 0 <= self_num_batch_dims <= input.ndim:
        raise RuntimeError(f"_new_zeros_with_same_feature_meta: self_num_batch_dims must be in "
                           f"[0, {input.ndim}] (the dims of self), got {self_num_batch_dims}")
    storage_numel = len(other.storage())
    batch = tuple(input.shape[:self_num_batch_dims])
    batch_strides = []
    extent = storage_numel
    for size in reversed(batch):
        batch_strides.insert(0, extent)
        extent *= size
    flat = zeros(storage_numel * math.prod(batch), dtype=other.dtype, device=other.device)
    return flat.as_strided(batch + tuple(other.shape), tuple(batch_strides) + tuple(other.stride()),
                           other.storage_offset())


def convolution_backward(grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes, stride,
                         padding, dilation, transposed: bool, output_padding, groups: int,
                         output_mask) -> tuple:
    """`aten.convolution_backward`: the gradients (input, weight, bias) of a convolution of
    batched `input` with `weight` given the gradient of its output, None where `output_mask`
    is False. Computed by the convolution's own gradient rule as Tensor ops, so they carry a
    graph (when recorded) and forward-mode tangents, as PyTorch's do. Transposed
    convolutions are not served (differentiate `conv_transpose*d` with autograd.grad).

    >>> import genesis
    >>> x, w = genesis.ones(1, 1, 3, 3), genesis.ones(2, 1, 2, 2)
    >>> gx, gw, gb = convolution_backward(genesis.ones(1, 2, 2, 2), x, w, [2], [1, 1], [0, 0],
    ...                                   [1, 1], False, [0, 0], 1, [True, False, True])
    >>> gx[0, 0].tolist(), gw, gb.tolist()
    ([[2.0, 4.0, 2.0], [4.0, 8.0, 4.0], [2.0, 4.0, 2.0]], None, [4.0, 4.0])
    """
    if transposed:
        raise NotImplementedError("aten.convolution_backward: genesis does not serve transposed "
                                  "convolutions here; differentiate conv_transpose1d/2d/3d with "
                                  "genesis.autograd.grad instead")
    op = "convolution_backward"
    kernel = tuple(weight.shape[2:])
    dims = len(kernel)
    stride = as_tuple(stride, dims, "stride", op)
    dilation = as_tuple(dilation, dims, "dilation", op)
    windows = Windows(kernel, stride, dilation, _padding(op, padding, kernel, dilation, stride))
    geometry = (groups, tuple(weight.shape), tuple(input.shape[2:]), windows)
    return _convolution_rule(TENSOR_MATH, grad_output, input, weight, geometry,
                             tuple(bool(wanted) for wanted in output_mask))


# ATen name -> the function serving it
ATEN_FUNCTIONS = {"_new_zeros_with_same_feature_meta": new_zeros_with_same_feature_meta,
                  "convolution_backward": convolution_backward}
