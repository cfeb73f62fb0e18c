"""Functional normalisation: layer_norm, rms_norm, group_norm, batch_norm.

Composed from differentiable reductions, so gradients (and double backward)
come from the ops, except layer_norm and training-mode batch_norm (one fused node
each, see _fused_norm.py) and group_norm (layer_norm's node over each group). Running
statistics are updated in place outside the graph (one fused kernel each on a GPU).
"""
from __future__ import annotations

import numpy as np

from ..device import device_mismatch_message
from ..ops._kernels import Elementwise
from ..ops.unary import rsqrt
from ..tensor import Tensor
from ._fused_norm import BatchNorm, LayerNorm, RMSNorm

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
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"layer_norm: needs a floating point input, got {input.dtype.name}; "
                           "convert first with .float()")
    return LayerNorm.apply(input, weight, bias, dims, float(eps))


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x**2) + eps) over the trailing dims, times `weight`; `eps` defaults to
    the dtype's machine epsilon (as in PyTorch)."""
    dims = _trailing_dims(input, normalized_shape, "rms_norm")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"rms_norm: needs a floating point input, got {input.dtype.name}; "
                           "convert first with .float()")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    return RMSNorm.apply(input, weight, dims, float(eps))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of channels (dim 1 split in `num_groups`) of each sample; then a
    per-channel affine transform."""
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise RuntimeError(f"group_norm: the {input.shape[1] if input.ndim > 1 else 0} channels "
                           f"(dim 1 of shape {tuple(input.shape)}) must split into {num_groups} "
                           "equal groups")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"group_norm: needs a floating point input, got {input.dtype.name}; "
                           "convert first with .float()")
    # (N, groups, channels per group, *spatial), normalised over all but the first two dims;
    # the per-channel affine, shaped to match, is part of the same node.
    batch, channels, spatial = input.shape[0], input.shape[1], tuple(input.shape[2:])
    grouped = input.reshape((batch, num_groups, channels // num_groups) + spatial)
    affine_shape = (num_groups, channels // num_groups) + (1,) * len(spatial)
    out = LayerNorm.apply(grouped, weight, bias, tuple(range(2, grouped.ndim)), float(eps),
                          affine_shape)
    return out.reshape(input.shape)


def _update_running_reference(device, statistic, momentum, correction, running) -> None:
    running *= 1 - momentum
    running += momentum * (statistic * correction).astype(running.dtype, copy=False)


# running = (1 - momentum) * running + momentum * statistic * correction, in place (one launch).
_UPDATE_RUNNING = Elementwise(
    "genesis_update_running", "T statistic, T momentum, T correction", "T running",
    "running = running * (T(1) - momentum) + momentum * (statistic * correction)",
    _update_running_reference)


def _update_both_reference(device, mean, variance, momentum, correction, running_mean,
                           running_var) -> None:
    _update_running_reference(device, mean, momentum, 1.0, running_mean)
    _update_running_reference(device, variance, momentum, correction, running_var)


# Both running statistics in one launch: the mean's, and the variance's (made unbiased).
_UPDATE_BOTH = Elementwise(
    "genesis_update_running_both", "T mean, T variance, T momentum, T correction",
    "T running_mean, T running_var",
    "running_mean = running_mean * (T(1) - momentum) + momentum * mean; "
    "running_var = running_var * (T(1) - momentum) + momentum * (variance * correction)",
    _update_both_reference)


def _update_running(running_mean: Tensor | None, running_var: Tensor | None, mean, variance,
                    momentum: float, correction: float) -> None:
    """Move the running statistics given toward the batch's `mean` and `variance` (times
    `correction`, making it unbiased) by `momentum`, in place."""
    if running_mean is not None and running_var is not None:
        _UPDATE_BOTH(running_mean._device, mean, variance, momentum, correction,
                     running_mean._data, running_var._data)
    else:
        for running, statistic, factor in ((running_mean, mean, 1.0),
                                           (running_var, variance, correction)):
            if running is not None:
                _UPDATE_RUNNING(running._device, statistic, momentum, factor, running._data)
    for running in (running_mean, running_var):
        if running is not None:
            running._version_counter[0] += 1


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
    if input._data.dtype.kind != "f":
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
        _update_running(running_mean, running_var, mean._data, variance._data, momentum,
                        count / (count - 1))
        return out
    if running_mean is None or running_var is None:
        raise ValueError("batch_norm: evaluation needs running_mean and running_var (or pass "
                         "training=True to use the batch statistics)")
    scale = rsqrt(running_var.reshape(channel_shape) + eps)
    return _affine((input - running_mean.reshape(channel_shape)) * scale,
                   None if weight is None else weight.reshape(channel_shape),
                   None if bias is None else bias.reshape(channel_shape))
