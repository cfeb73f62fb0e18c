"""Functional normalisation (layer_norm, rms_norm, group_norm, batch_norm), the Functions
that hold their gradient rules, and their registry entries (`OPS`).

layer_norm, rms_norm and training-mode batch_norm are one node each (`LayerNormFunction`,
`RMSNormFunction`, `BatchNorm`); group_norm is layer norm's node over each group;
evaluation-mode batch_norm is composed from differentiable ops. RMS norm is layer norm
without the centering. Running statistics are updated in place outside the graph.

Each node normalises over some `dims` to zero mean and unit (biased) variance, then scales
by `weight` and shifts by `bias`, which broadcast against the input: layer norm over the
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

import numpy as np

from ..autocast_rules import FLOAT32_ON_CUDA
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..device import device_mismatch_message
from ..dtypes import finfo, float32
from ..ops._kernels import fusing_pays
from ..ops.broadcast import sum_to_shape
from ..ops.registry import OpInfo, Sample
from ..ops.samples import positive, values
from ..ops.unary import rsqrt
from ..tensor import Tensor, wrap_array
from ._norm_kernels import (normalize_backward, normalize_forward, summed_to,
                            update_running_statistics)

__all__ = ["layer_norm", "rms_norm", "group_norm", "batch_norm"]


def _trailing_dims(input: Tensor, normalized_shape, name: str) -> tuple:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or tuple(input.shape[input.ndim - len(shape):]) != shape or len(shape) > input.ndim:
        raise RuntimeError(f"{name}: normalized_shape {shape} must match the last dimensions of "
                           f"the input, whose shape is {tuple(input.shape)}")
    return tuple(range(input.ndim - len(shape), input.ndim))


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing `normalized_shape` dims to zero mean and unit (biased)
    variance, then scale by `weight` and shift by `bias`.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.layer_norm(genesis.tensor([[1., 3.]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    dims = _trailing_dims(input, normalized_shape, "layer_norm")
    if not input.is_floating_point():  # (bfloat16 included)
        raise RuntimeError(f"layer_norm: needs a floating point input, got {input.dtype.name}; "
                           "convert first with .float()")
    return LayerNormFunction.apply(input, weight, bias, dims, float(eps))


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x**2) + eps) over the trailing dims, times `weight`; `eps` defaults to
    the machine epsilon of the dtype it is computed in (as in PyTorch): float32's for a
    float16/bfloat16 input, computed in float32."""
    dims = _trailing_dims(input, normalized_shape, "rms_norm")
    if not input.is_floating_point():  # (bfloat16 included)
        raise RuntimeError(f"rms_norm: needs a floating point input, got {input.dtype.name}; "
                           "convert first with .float()")
    if eps is None:
        eps = finfo(float32 if input.dtype.itemsize == 2 else input.dtype).eps
    return RMSNormFunction.apply(input, weight, dims, float(eps))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of channels (dim 1 split in `num_groups`) of each sample; then a
    per-channel affine transform."""
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise RuntimeError(f"group_norm: the {input.shape[1] if input.ndim > 1 else 0} channels "
                           f"(dim 1 of shape {tuple(input.shape)}) must split into {num_groups} "
                           "equal groups")
    if not input.is_floating_point():  # (bfloat16 included)
        raise RuntimeError(f"group_norm: needs a floating point input, got {input.dtype.name}; "
                           "convert first with .float()")
    # (N, groups, channels per group, *spatial), normalised over all but the first two dims;
    # the per-channel affine, shaped to match, is part of the same node.
    batch, channels, spatial = input.shape[0], input.shape[1], tuple(input.shape[2:])
    grouped = input.reshape((batch, num_groups, channels // num_groups) + spatial)
    affine_shape = (num_groups, channels // num_groups) + (1,) * len(spatial)
    out = LayerNormFunction.apply(grouped, weight, bias, tuple(range(2, grouped.ndim)),
                                  float(eps), affine_shape)
    return out.reshape(input.shape)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and any spatial dims.

    Training uses the batch statistics and, when running stats are given, moves them
    toward the batch's (mean, unbiased variance) by `momentum`; evaluation uses the
    running statistics.
    """
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input of shape (N, C, ...), got "
                         f"{tuple(input.shape)}")
    for running in (running_mean, running_var):
        if running is not None and running._device is not input._device:
            raise RuntimeError(device_mismatch_message("batch_norm", input.device, running.device))
    if not input.is_floating_point():  # (bfloat16 included)
        raise RuntimeError(f"batch_norm: needs a floating point input, got {input.dtype.name}; "
                           "convert first with .float()")
    dims = (0,) + tuple(range(2, input.ndim))
    channel_shape = (input.shape[1],) + (1,) * (input.ndim - 2)
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when training, "
                             f"got input of shape {tuple(input.shape)}")
        out, mean, variance = BatchNorm.apply(input, weight, bias, dims, float(eps), channel_shape)
        update_running_statistics(
            input._device, None if running_mean is None else running_mean._data,
            None if running_var is None else running_var._data, mean._data, variance._data,
            momentum, count / (count - 1))
        for running in (running_mean, running_var):
            if running is not None:
                running._version_counter[0] += 1
        return out
    if running_mean is None or running_var is None:
        raise ValueError("batch_norm: evaluation needs running_mean and running_var (or pass "
                         "training=True to use the batch statistics)")
    scale = rsqrt(running_var.reshape(channel_shape) + eps)
    return _affine((input - running_mean.reshape(channel_shape)) * scale,
                   None if weight is None else weight.reshape(channel_shape),
                   None if bias is None else bias.reshape(channel_shape))


class LayerNormFunction(Op):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing `dims` (biased var)."""

    node_name = "LayerNorm"
    op_name = "layer_norm"  # in messages
    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    def forward(ctx, input, weight, bias, dims, eps, affine_shape=None):
        out, _, _ = _normalize_forward(ctx, input, weight, bias, dims, eps,
                                       affine_shape=affine_shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        return _normalize_backward(ctx, grad) + (None,)


class RMSNormFunction(Op):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing `dims`: layer norm without the
    centering (and without a bias)."""

    node_name = "RMSNorm"
    op_name = "rms_norm"  # in messages
    autocast_policy = FLOAT32_ON_CUDA

    @staticmethod
    def forward(ctx, input, weight, dims, eps):
        out, _, _ = _normalize_forward(ctx, input, weight, None, dims, eps, centered=False)
        return out

    @staticmethod
    def backward(ctx, grad):
        return _normalize_backward(ctx, grad)[:2] + (None, None)


class BatchNorm(Op):
    """Like LayerNormFunction, over every dim but the channel (dim 1); `weight` and `bias` (C,)
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
        narrow = x.dtype if x.dtype.itemsize == 2 else None
        if narrow is not None:  # float16/bfloat16: computed in float32, the output rounded
            x = x.astype(np.float32)  # once (as PyTorch's CPU kernels do)
            w, b = (None if p is None else p.astype(np.float32) for p in (w, b))
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
        if narrow is not None:
            out = out.astype(narrow)
    if out is normalized:  # no affine part: the output is returned, and may be changed in place
        out = wrap_array(out, device)  # later (ReLU(inplace=True)): backward recomputes it
        saved, ctx.mean = None, mean
    else:
        saved = wrap_array(normalized, device)
    # The input and weight are read only for the input's gradient (the parameters' come from
    # the normalised input): unless it is needed, a write to them after the forward leaves the
    # backward free to run, as PyTorch's rms_norm
    needs_input = ctx.needs_input_grad[0]
    ctx.save_for_backward(input if needs_input else None, weight if needs_input else None, saved,
                          wrap_array(rstd, device))
    return out, mean, variance


def _as_affine(array, affine_shape):
    return array if affine_shape is None else array.reshape(affine_shape)


def _normalize_backward(ctx, grad) -> tuple:
    input, weight, normalized, rstd = ctx.saved_tensors
    needs, shapes, targets = ctx.needs_input_grad, ctx.affine_shapes, ctx.param_shapes
    if grad_state.enabled and input is None:  # only the parameters' gradients, as ops
        grads = (None, sum_to_shape(grad * normalized, shapes[0]) if needs[1] else None,
                 sum_to_shape(grad, shapes[1]) if needs[2] else None)
        grads = tuple(g if g is None or t is None or g.shape == t else g.reshape(t)
                      for g, t in zip(grads, (None,) + targets))  # parameters' own shapes
    elif grad_state.enabled:  # create_graph: the rule, as ops on the input (differentiable)
        if weight is not None and shapes[0] != targets[0]:
            weight = weight.reshape(shapes[0])
        grads = _normalization_rule(grad, input, weight, shapes, ctx.dims, ctx.eps, needs,
                                    ctx.centered)
        grads = tuple(g if g is None or t is None or g.shape == t else g.reshape(t)
                      for g, t in zip(grads, (None,) + targets))  # parameters' own shapes
    else:  # the rule's accelerated form, on the arrays the forward saved
        if normalized is None:  # the output, not kept: (x - mean) * rstd again
            shifted = input._data - ctx.mean if ctx.centered else input._data
            normalized = wrap_array(shifted * rstd._data, input._device)
        w = None if weight is None else _as_affine(weight._data, shapes[0])
        grads = _array_grads(grad, w, normalized, rstd, shapes, targets, ctx.dims, needs,
                             ctx.centered)
    return grads + (None, None)


def _array_grads(grad: Tensor, weight, normalized: Tensor, rstd: Tensor, shapes: tuple,
                 targets: tuple, dims: tuple, needs: tuple, centered: bool) -> tuple:
    """dx = rstd * (g' - mean(g') - n * mean(g' * n)) with g' = grad * `weight` (an array
    in its broadcast shape) and n the normalised input (means over `dims`; no mean(g') term
    when not `centered`); dweight = grad * n and dbias = grad, each summed over the dims its
    parameter is broadcast along (`shapes`), in the parameter's own shape (`targets`).

    `_normalization_rule` in arrays, in place where it can be, or as fused kernels on a GPU;
    tests/ops/test_rule_executors.py checks that both give the same gradients for every
    registered normalization sample."""
    g, n, device = grad._data, normalized._data, grad._device
    xp = device.xp
    if fusing_pays(device):
        return tuple(None if array is None else wrap_array(array, device) for array in
                     normalize_backward(device, g, weight, n, rstd._data, shapes, targets, dims,
                                        needs, centered))
    if g.dtype.itemsize == 2:  # float16/bfloat16: in float32, as the forward (the engine
        g = g.astype(np.float32)  # rounds each gradient to its input's dtype once)
        weight = None if weight is None else weight.astype(np.float32)
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


def _normalization_rule(grad: Tensor, input: Tensor, weight, shapes: tuple, dims: tuple,
                        eps: float, needs: tuple, centered: bool) -> tuple:
    """The gradient rule of layer, RMS, batch and group norm, as ops on the input (so a
    create_graph backward records it): n = (x - mean(x)) * rstd (no mean when not
    `centered`), dx = rstd * (g' - mean(g') - n * mean(g' * n)) with g' = grad * weight,
    dweight = sum of grad * n and dbias = sum of grad over the dims each parameter is
    broadcast along (`shapes`); means over `dims`."""
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


def _layer_norm_samples(rng):
    def affine(shape, bias=True):
        return (positive(rng, shape),) + ((values(rng, shape),) if bias else ())

    return [
        Sample((values(rng, (3, 5)), (5,)) + affine((5,)), note="affine"),
        Sample((values(rng, (2, 3, 4)), (3, 4)) + affine((3, 4)), note="two trailing dims"),
        Sample((values(rng, (4,)), (4,)) + affine((4,)), note="every dim"),
        Sample((values(rng, (3, 5)), (5,)), note="no affine"),
        Sample((values(rng, (3, 5)), (5,)) + affine((5,), bias=False), note="weight only"),
        Sample((values(rng, (3, 5)), (5,), None, values(rng, (5,))), note="bias only"),
        Sample((values(rng, (3, 5)), (5,)) + affine((5,)), {"eps": 1e-3}, note="eps 1e-3"),
        Sample((values(rng, (3, 5)), (5,)) + affine((5,)), grad=(True, False, True),
               note="weight needs no grad"),
        Sample((values(rng, (3, 5)), (5,)) + affine((5,)), grad=(False, True, True),
               note="input needs no grad"),
        Sample((values(rng, (2, 4, 5)), (5,)) + affine((5,)), layout="transposed",
               note="transposed"),
        Sample((values(rng, (2, 5)), (5,)) + affine((5,)), layout="strided", note="strided"),
    ]


def _rms_norm_samples(rng):
    return [
        Sample((values(rng, (3, 5)), (5,), positive(rng, (5,))), note="weight"),
        Sample((values(rng, (2, 3, 4)), (3, 4), positive(rng, (3, 4))),
               note="two trailing dims"),
        Sample((values(rng, (3, 5)), (5,)), note="no weight"),
        Sample((values(rng, (3, 5)), (5,), positive(rng, (5,)), 1e-3), note="eps 1e-3"),
        Sample((values(rng, (3, 5)), (5,), positive(rng, (5,))), grad=(True, False),
               note="weight needs no grad"),
        Sample((values(rng, (3, 5)), (5,), positive(rng, (5,))), grad=(False, True),
               note="input needs no grad"),
        Sample((values(rng, (2, 4, 3)), (3,), positive(rng, (3,))), layout="transposed",
               note="transposed"),
        Sample((values(rng, (2, 5)), (5,), positive(rng, (5,))), layout="strided",
               note="strided"),
    ]


def _group_norm_samples(rng):
    def affine(channels):
        return positive(rng, (channels,)), values(rng, (channels,))

    return [
        Sample((values(rng, (2, 6, 3)), 3) + affine(6), note="3 groups"),
        Sample((values(rng, (2, 4, 2, 2)), 2) + affine(4), note="4-D, 2 groups"),
        Sample((values(rng, (2, 6, 3)), 1) + affine(6), note="1 group"),
        Sample((values(rng, (2, 6, 3)), 6) + affine(6), note="a group per channel"),
        Sample((values(rng, (3, 4)), 2) + affine(4), note="no spatial dims"),
        Sample((values(rng, (2, 6, 3)), 3), {"eps": 1e-3}, note="no affine"),
        Sample((values(rng, (2, 6, 3)), 3) + affine(6), grad=(True, False, True),
               note="weight needs no grad"),
        Sample((values(rng, (2, 6, 3)), 3) + affine(6), grad=(False, True, True),
               note="input needs no grad"),
        Sample((values(rng, (2, 4, 3)), 2) + affine(4), layout="transposed", note="transposed"),
        Sample((values(rng, (2, 4, 3)), 2) + affine(4), layout="strided", note="strided"),
    ]


def _batch_norm_samples(rng):
    def sample(shape, training, running=True, affine=True, **options):
        channels = shape[1]
        statistics = (values(rng, (channels,)), positive(rng, (channels,))) if running \
            else (None, None)
        parameters = (positive(rng, (channels,)), values(rng, (channels,))) if affine \
            else (None, None)
        grad = (True,) + (False, False) * running + (True, True) * affine
        note = f"{shape} {'training' if training else 'evaluation'}" + \
            ("" if running else ", no running statistics") + ("" if affine else ", no affine")
        return Sample((values(rng, shape),) + statistics + parameters + (training,),
                      {key: value for key, value in options.items() if key != "layout"},
                      grad=grad, layout=options.get("layout", "contiguous"),
                      note=note + "".join(f", {key} {value}" for key, value in options.items()))

    return [
        sample((4, 3), True, running=False),
        sample((4, 3, 2), True),
        sample((2, 3, 2, 2), True, running=False, affine=False),
        sample((4, 3), True, momentum=0.5, eps=1e-3),
        sample((4, 3), False),
        sample((2, 3, 2), False, affine=False),
        sample((3, 4, 2), True, layout="transposed"),
        sample((2, 3, 2), True, layout="strided"),
        sample((2, 3, 2), False, layout="transposed"),
    ]


OPS = [
    OpInfo("layer_norm", layer_norm, _layer_norm_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.layer_norm(*args, **kw)),
    OpInfo("rms_norm", rms_norm, _rms_norm_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.rms_norm(*args, **kw)),
    OpInfo("group_norm", group_norm, _group_norm_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.group_norm(*args, **kw)),
    OpInfo("batch_norm", batch_norm, _batch_norm_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.batch_norm(*args, **kw)),
]
