"""layer_norm, rms_norm and training-mode batch_norm as one node each (what
`F.layer_norm`, `nn.LayerNorm`, `F.rms_norm`, `nn.RMSNorm`, `F.batch_norm` and
`nn.BatchNorm*d` run). RMS norm is layer norm without the centering.

Both normalise over some `dims` to zero mean and unit (biased) variance, then scale by
`weight` and shift by `bias`, which broadcast against the input: layer norm over the
trailing dims with an affine per feature, batch norm over all dims but the channel with an
affine per channel. On the CPU the forward does the same array operations the composed
form would (same values, bit for bit); a plain backward works on the saved normalised
input and 1/std: a few passes and two large arrays instead of a dozen recorded ops. On a
GPU both run as fused kernels (`_norm_kernels.py`): with a weight (and bias), one launch
forward and one to three backward (row kernels); without, four forward and five backward.
Under create_graph the gradient is rebuilt from differentiable ops on the input, so second
derivatives are exact.
"""
from __future__ import annotations

from ..autograd.function import Function
from ..autograd.grad_mode import grad_state
from ..ops._kernels import fusing_pays
from ..ops.broadcast import sum_to_shape
from ..ops.unary import rsqrt
from ..tensor import Tensor, wrap_array
from ._norm_kernels import normalize_backward, normalize_forward, summed_to


class LayerNorm(Function):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing `dims` (biased var)."""

    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, input, weight, bias, dims, eps, affine_shape=None):
        out, _, _ = _normalize_forward(ctx, input, weight, bias, dims, eps,
                                       affine_shape=affine_shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        return _normalize_backward(ctx, grad) + (None,)


class RMSNorm(Function):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing `dims`: LayerNorm without the
    centering (and without a bias)."""

    op_name = "rms_norm"  # in messages (not "r_m_s_norm")
    autocast_policy = "float32"

    @staticmethod
    def forward(ctx, input, weight, dims, eps):
        out, _, _ = _normalize_forward(ctx, input, weight, None, dims, eps, centered=False)
        return out

    @staticmethod
    def backward(ctx, grad):
        return _normalize_backward(ctx, grad)[:2] + (None, None)


class BatchNorm(Function):
    """Like LayerNorm, over every dim but the channel (dim 1); `weight` and `bias` (C,)
    broadcast as `affine_shape` (C, 1, ...). Also returns the batch mean and biased variance
    per channel (no gradient), for the running statistics."""

    @staticmethod
    def forward(ctx, input, weight, bias, dims, eps, affine_shape):
        out, mean, variance = _normalize_forward(ctx, input, weight, bias, dims, eps,
                                                 affine_shape=affine_shape)
        device = input._device
        mean, variance = wrap_array(mean.reshape(-1), device), wrap_array(variance.reshape(-1), device)
        ctx.mark_non_differentiable(mean, variance)
        ctx.set_materialize_grads(False)  # no zero arrays for the statistics' gradients
        return out, mean, variance

    @staticmethod
    def backward(ctx, grad, _mean_grad, _variance_grad):
        if grad is None:
            return None, None, None, None, None, None
        return _normalize_backward(ctx, grad) + (None,)


def _normalize_forward(ctx, input, weight, bias, dims, eps, centered: bool = True,
                       affine_shape: tuple | None = None) -> tuple:
    """The normalised and transformed output array, and the mean (None when not `centered`:
    0 is used) and biased variance (the mean square when not centered). `weight` and `bias`
    broadcast against the input as they are, or as `affine_shape` when given (their
    gradients keep their own shapes)."""
    ctx.dims, ctx.eps, ctx.centered = dims, eps, centered
    xp, device = input._device.xp, input._device
    x = input._data
    ctx.param_shapes = (None if weight is None else weight.shape,
                        None if bias is None else bias.shape)
    ctx.affine_shapes = tuple(None if shape is None else affine_shape or shape
                              for shape in ctx.param_shapes)
    w, b = (None if param is None else _as_affine(param._data, affine_shape)
            for param in (weight, bias))
    if fusing_pays(device):
        out, normalized, mean, variance, rstd = normalize_forward(device, x, w, b, dims, eps,
                                                                  centered)
    else:  # the same formulas as array calls, in place where possible
        mean = x.mean(axis=dims, keepdims=True) if centered else None
        centered_x = x - mean if centered else x
        variance = (centered_x * centered_x).mean(axis=dims, keepdims=True)
        rstd = 1 / xp.sqrt(variance + eps)
        if centered:
            normalized = centered_x
            normalized *= rstd
        else:
            normalized = x * rstd
        out = normalized * w if w is not None else normalized
        if b is not None:
            out = out + b
    if out is normalized:  # no affine part: the output is what backward needs
        out = saved = wrap_array(out, device)
    else:
        saved = wrap_array(normalized, device)
    ctx.save_for_backward(input, weight, saved, wrap_array(rstd, device))
    return out, mean, variance


def _as_affine(array, affine_shape):
    return array if affine_shape is None else array.reshape(affine_shape)


def _normalize_backward(ctx, grad) -> tuple:
    input, weight, normalized, rstd = ctx.saved_tensors
    needs, shapes, targets = ctx.needs_input_grad, ctx.affine_shapes, ctx.param_shapes
    if grad_state.enabled:  # create_graph: differentiable ops, recomputed from the input
        if weight is not None and shapes[0] != targets[0]:
            weight = weight.reshape(shapes[0])
        grads = _recorded_grads(grad, input, weight, shapes, ctx.dims, ctx.eps, needs,
                                ctx.centered)
        grads = tuple(g if g is None or t is None or g.shape == t else g.reshape(t)
                      for g, t in zip(grads, (None,) + targets))  # parameters' own shapes
    else:
        w = None if weight is None else _as_affine(weight._data, shapes[0])
        grads = _array_grads(grad, w, normalized, rstd, shapes, targets, ctx.dims, needs,
                             ctx.centered)
    return grads + (None, None)


def _array_grads(grad: Tensor, weight, normalized: Tensor, rstd: Tensor, shapes: tuple,
                 targets: tuple, dims: tuple, needs: tuple, centered: bool) -> tuple:
    """dx = rstd * (g' - mean(g') - n * mean(g' * n)) with g' = grad * `weight` (an array
    in its broadcast shape) and n the normalised input (means over `dims`; no mean(g') term
    when not `centered`); dweight = grad * n and dbias = grad, each summed over the dims its
    parameter is broadcast along (`shapes`), in the parameter's own shape (`targets`)."""
    g, n, device = grad._data, normalized._data, grad._device
    xp = device.xp
    if fusing_pays(device):
        return tuple(None if array is None else wrap_array(array, device) for array in
                     normalize_backward(device, g, weight, n, rstd._data, shapes, targets, dims,
                                        needs, centered))
    grad_times_n = g * n
    grad_weight = wrap_array(summed_to(xp, grad_times_n, shapes[0], targets[0]), device) \
        if needs[1] else None
    grad_bias = wrap_array(summed_to(xp, g, shapes[1], targets[1]), device) if needs[2] else None
    grad_input = None
    if needs[0]:
        # grad_times_n is scratch below, unless it is the weight's gradient itself (nothing
        # was summed: the weight covers every element).
        scratch = None if grad_weight is not None and grad_weight._data is grad_times_n \
            else grad_times_n
        scaled = g * weight if weight is not None else g.copy()
        if weight is not None:
            grad_times_n = xp.multiply(grad_times_n, weight, out=scratch)  # g' * n
        projection = grad_times_n.mean(axis=dims, keepdims=True)
        if centered:
            scaled -= scaled.mean(axis=dims, keepdims=True)
        scaled -= xp.multiply(n, projection, out=scratch)
        scaled *= rstd._data
        grad_input = wrap_array(scaled, device)
    return grad_input, grad_weight, grad_bias


def _recorded_grads(grad: Tensor, input: Tensor, weight, shapes: tuple, dims: tuple, eps: float,
                    needs: tuple, centered: bool) -> tuple:
    shifted = input - input.mean(dims, keepdim=True) if centered else input
    rstd = rsqrt((shifted * shifted).mean(dims, keepdim=True) + eps)
    normalized = shifted * rstd
    grad_weight = sum_to_shape(grad * normalized, shapes[0]) if needs[1] else None
    grad_bias = sum_to_shape(grad, shapes[1]) if needs[2] else None
    grad_input = None
    if needs[0]:
        scaled = grad * weight if weight is not None else grad
        if centered:
            scaled = scaled - scaled.mean(dims, keepdim=True)
        grad_input = rstd * (scaled - normalized * (scaled * normalized).mean(dims, keepdim=True))
    return grad_input, grad_weight, grad_bias
