"""Gradient clipping by total norm or by value, in place, as in `torch.nn.utils`."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ...device import cpu, transfer, writeable
from ...tensor import Tensor, wrap_array
from .._grad_edits import tell_cleared, tell_edited

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _as_list(parameters) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _norm(array, xp, norm_type: float):
    flat = array.reshape(-1)
    if flat.size == 0:
        return xp.zeros((), array.dtype)
    if norm_type == math.inf:
        return xp.abs(flat).max()
    if norm_type == -math.inf:
        return xp.abs(flat).min()
    if norm_type == 0.0:  # the number of non-zero entries, as torch.linalg.vector_norm
        return xp.asarray(xp.count_nonzero(flat), array.dtype)
    if norm_type == 2.0:
        return xp.sqrt(xp.dot(flat, flat))
    return (xp.abs(flat) ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The `norm_type`-norm of all `tensors` together: the norm of their norms (for a p-norm,
    as if concatenated), as a 0-d tensor on the first tensor's device. `foreach` (PyTorch's
    choice of fused kernels) changes nothing here.

    >>> import genesis
    >>> genesis.nn.utils.get_total_norm([genesis.tensor([3.]), genesis.tensor([4.])])
    tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return wrap_array(np.zeros((), np.float32), cpu)
    device = tensors[0]._device
    xp = device.xp
    norms = xp.stack([transfer(_norm(t._data, t._device.xp, norm_type), t._device, device)
                      for t in tensors])
    total = _norm(norms, xp, norm_type)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"the total norm of order {norm_type} of the gradients is non-finite, so it cannot be "
            "clipped. To scale the gradients by the non-finite norm anyway, pass "
            "error_if_nonfinite=False; to find where the NaN/Inf comes from, run the backward "
            "under genesis.autograd.detect_anomaly()")
    return wrap_array(total, device)


def _scale_grad(param: Tensor, factor: float, edits: list) -> None:
    grad = param._grad
    if writeable(grad._data) and grad.grad_fn is None:
        edits.append((param, grad._version_counter[0]))
        grad._data *= factor
        grad._version_counter[0] += 1
    else:
        param._grad = wrap_array(grad._data * factor, grad._device)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients of `parameters` in place so that their total norm is at most
    `max_norm`; returns the total norm before clipping (a 0-d tensor).

    The scale is max_norm / (total_norm + 1e-6), applied only when below 1 (as in PyTorch).
    `foreach` (PyTorch's choice of fused kernels) changes nothing here.

    >>> import genesis
    >>> w = genesis.tensor([3., 4.], requires_grad=True)
    >>> w.grad = genesis.tensor([3., 4.])
    >>> genesis.nn.utils.clip_grad_norm_([w], max_norm=1.0), w.grad
    (tensor(5.), tensor([0.6000, 0.8000]))
    """
    params = [p for p in _as_list(parameters) if p._grad is not None]
    total = get_total_norm([p._grad for p in params], norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """`clip_grad_norm_` under its deprecated name: warns FutureWarning, as PyTorch does.

    >>> import genesis, warnings
    >>> w = genesis.tensor([3., 4.], requires_grad=True)
    >>> w.grad = genesis.tensor([3., 4.])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     genesis.nn.utils.clip_grad_norm([w], max_norm=1.0)
    tensor(5.)
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scale the gradients of `parameters` in place by max_norm / (total_norm + 1e-6) where
    that is below 1: the second half of `clip_grad_norm_`, given a total norm computed
    before (by `get_total_norm`, perhaps over more gradients than these).

    >>> import genesis
    >>> w = genesis.tensor([3., 4.], requires_grad=True)
    >>> w.grad = genesis.tensor([3., 4.])
    >>> genesis.nn.utils.clip_grads_with_norm_([w], 1.0, genesis.tensor(10.)); w.grad
    tensor([0.3000, 0.4000])
    """
    params = [p for p in _as_list(parameters) if p._grad is not None]
    if not params:
        return
    norm = float(total_norm.item() if isinstance(total_norm, Tensor) else total_norm)
    scale = float(max_norm) / (norm + 1e-6)
    if not scale < 1.0 and not math.isnan(scale):
        return
    edits = []
    with np.errstate(invalid="ignore"):  # a non-finite norm gives NaN gradients, as in PyTorch
        for param in params:
            _scale_grad(param, scale, edits)
    tell_edited(edits)
    if scale == 0.0 and math.isfinite(norm):  # (max_norm 0): every gradient is now zeros
        tell_cleared(params, "clip_grad_norm_")


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of `parameters` into [-clip_value, clip_value], in place
    (`foreach`, PyTorch's choice of fused kernels, changes nothing here)."""
    clip_value = float(clip_value)
    edits, clipped = [], []
    for param in _as_list(parameters):
        grad = param._grad
        if grad is None:
            continue
        clipped.append(param)
        xp = grad._device.xp
        if writeable(grad._data) and grad.grad_fn is None:
            edits.append((param, grad._version_counter[0]))
            xp.clip(grad._data, -clip_value, clip_value, out=grad._data)
            grad._version_counter[0] += 1
        else:
            param._grad = wrap_array(xp.clip(grad._data, -clip_value, clip_value), grad._device)
    tell_edited(edits)
    if clip_value == 0.0:  # every gradient is now zeros (but for any NaN in it)
        tell_cleared(clipped, "clip_grad_value_")
