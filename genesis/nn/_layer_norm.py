"""layer_norm as one node (what `F.layer_norm` and `nn.LayerNorm` run).

The forward does the same array operations the composed form would (same values, bit for
bit); a plain backward works on the saved normalised input and 1/std: a few passes and two
large arrays instead of a dozen recorded ops. Under create_graph the gradient is rebuilt
from differentiable ops on the input, so second derivatives are exact.
"""
from __future__ import annotations

from ..autograd.function import Function
from ..autograd.grad_mode import grad_state
from ..ops.unary import rsqrt
from ..tensor import Tensor, wrap_array


class LayerNorm(Function):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing `dims` (biased var)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, input, weight, bias, dims, eps):
        ctx.dims, ctx.eps = dims, eps
        xp, device = input._device.xp, input._device
        x = input._data
        normalized = x - x.mean(axis=dims, keepdims=True)
        rstd = 1 / xp.sqrt((normalized * normalized).mean(axis=dims, keepdims=True) + eps)
        normalized *= rstd
        out = normalized * weight._data if weight is not None else normalized
        if bias is not None:
            out = out + bias._data
        if out is normalized:  # no affine part: the output is what backward needs
            out = saved = wrap_array(out, device)
        else:
            saved = wrap_array(normalized, device)
        ctx.save_for_backward(input, weight, saved, wrap_array(rstd, device))
        return out

    @staticmethod
    def backward(ctx, grad):
        input, weight, normalized, rstd = ctx.saved_tensors
        needs = ctx.needs_input_grad
        if grad_state.enabled:  # create_graph: differentiable ops, recomputed from the input
            return _recorded_grads(grad, input, weight, ctx.dims, ctx.eps, needs)
        return _array_grads(grad, weight, normalized, rstd, ctx.dims, needs)


def _array_grads(grad: Tensor, weight, normalized: Tensor, rstd: Tensor, dims: tuple,
                 needs: tuple) -> tuple:
    """dx = rstd * (g' - mean(g') - n * mean(g' * n)) with g' = grad * weight and n the
    normalised input; dweight = sum(grad * n), dbias = sum(grad) over the leading dims."""
    g, n, device = grad._data, normalized._data, grad._device
    leading = tuple(range(g.ndim - len(dims)))
    grad_times_n = g * n
    grad_weight = wrap_array(grad_times_n.sum(axis=leading), device) if needs[1] else None
    grad_bias = wrap_array(g.sum(axis=leading), device) if needs[2] else None
    grad_input = None
    if needs[0]:
        scaled = g * weight._data if weight is not None else g.copy()
        if weight is not None:
            grad_times_n *= weight._data  # now g' * n
        projection = grad_times_n.mean(axis=dims, keepdims=True)
        scaled -= scaled.mean(axis=dims, keepdims=True)
        scaled -= grad._device.xp.multiply(n, projection, out=grad_times_n)
        scaled *= rstd._data
        grad_input = wrap_array(scaled, device)
    return grad_input, grad_weight, grad_bias, None, None


def _recorded_grads(grad: Tensor, input: Tensor, weight, dims: tuple, eps: float,
                    needs: tuple) -> tuple:
    centered = input - input.mean(dims, keepdim=True)
    rstd = rsqrt((centered * centered).mean(dims, keepdim=True) + eps)
    normalized = centered * rstd
    leading = tuple(range(input.ndim - len(dims)))
    grad_weight = _sum_over(grad * normalized, leading) if needs[1] else None
    grad_bias = _sum_over(grad, leading) if needs[2] else None
    grad_input = None
    if needs[0]:
        scaled = grad * weight if weight is not None else grad
        grad_input = rstd * (scaled - scaled.mean(dims, keepdim=True)
                             - normalized * (scaled * normalized).mean(dims, keepdim=True))
    return grad_input, grad_weight, grad_bias, None, None


def _sum_over(tensor: Tensor, dims: tuple) -> Tensor:
    return tensor.sum(dims) if dims else tensor
