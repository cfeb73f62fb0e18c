"""Adafactor (Shazeer & Stern, 2018), as PyTorch's `torch.optim.Adafactor` computes it."""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor, wrap_array
from .adam import lerp_
from .optimizer import Optimizer, check_tensor_lr, count_step, scalar, step_counter

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor: Adam-like steps whose second moment of a matrix is kept factored, as one
    running mean per row and one per column (the last two dims), so its state is O(rows +
    columns) instead of O(rows x columns); a vector keeps a full running mean.

    Per step t, for each parameter p with gradient g (negated with `maximize`):
    beta2_t = 1 - t**beta2_decay; rho_t = min(lr, 1 / sqrt(t)); the step size is
    alpha = max(eps[1], RMS(p)) * rho_t; `weight_decay` shrinks p by (1 - lr * weight_decay)
    first. The running means move toward mean(g**2) over each row and each column with weight
    1 - beta2_t, the estimate of g**2 is their outer product over the rows' mean, the update
    u = g / sqrt(max(estimate, eps[0]**2)) is scaled down to RMS(u) <= d, and p -= alpha * u.
    `eps[0]` None means the parameter dtype's machine epsilon. State per parameter: "step",
    and "row_var" and "col_var" (a matrix or more dims) or "variance" (a vector or 0-d).

    `lr` may be a one-element Tensor, read as a number at each step (PyTorch works out that
    step's size in the tensor's own dtype, float32: about 1e-8 relative apart); `foreach` is
    PyTorch's implementation switch (recorded, the update is the same).

    >>> import genesis
    >>> w = genesis.tensor([[1., -1.], [2., 0.5]], requires_grad=True)
    >>> optimizer = genesis.optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward(); optimizer.step(); w
    tensor([[ 0.9078, -0.8156],
            [ 1.8735,  0.4368]], requires_grad=True)
    """

    def __init__(self, params, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False):
        check_tensor_lr(lr)
        _check_options(scalar(lr), beta2_decay, eps, d, weight_decay)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def _update_group(self, group: dict) -> None:
        lr, weight_decay, d = scalar(group["lr"]), group["weight_decay"], group["d"]
        eps1, eps2 = group["eps"]
        for param, data, g in self._with_grads(group):
            if eps1 is None:  # PyTorch takes it from the group's first parameter's dtype
                eps1 = float(np.finfo(data.dtype).eps)
            xp = param._device.xp
            state = self._factored_state(param)
            if group["maximize"]:
                g = -g
            step = count_step(state)
            beta2_weight = step ** group["beta2_decay"]  # 1 - beta2_t
            alpha = max(eps2, _rms(xp, data)) * min(lr, 1 / math.sqrt(step))
            if weight_decay != 0:
                data *= 1 - lr * weight_decay
            if g.ndim > 1:
                row_var, col_var = state["row_var"]._data, state["col_var"]._data
                lerp_(row_var, _mean_square(xp, g, -1), beta2_weight)
                lerp_(col_var, _mean_square(xp, g, -2), beta2_weight)
                estimate = xp.matmul(row_var, col_var)
                estimate /= xp.maximum(row_var.mean(axis=-2, keepdims=True), eps1)
            else:
                variance = state["variance"]._data
                lerp_(variance, g * g, beta2_weight)
                estimate = variance.copy()
            update = xp.sqrt(xp.maximum(estimate, eps1 * eps1, out=estimate), out=estimate)
            xp.divide(g, update, out=update)
            shrink = max(1.0, _rms(xp, update) / d)
            update *= -alpha / shrink
            data += update
            param._version_counter[0] += 1

    def _factored_state(self, param: Tensor) -> dict:
        """The state of `param`; on its first update step 0 and zero-filled running means:
        per row and per column of the last two dims for a matrix, whole for a vector."""
        state = self.state[param]
        if not state:
            state["step"] = step_counter()
            data, xp = param._data, param._device.xp
            if data.ndim > 1:
                state["row_var"] = wrap_array(xp.zeros((*data.shape[:-1], 1), data.dtype),
                                              param._device)
                state["col_var"] = wrap_array(
                    xp.zeros((*data.shape[:-2], 1, data.shape[-1]), data.dtype), param._device)
            else:
                state["variance"] = self._zeros_like(param)
        return state


def _rms(xp, array) -> float:
    """The root mean square of `array`'s elements, as a number: ||array||_2 / sqrt(size)."""
    flat = array.reshape(-1)
    return math.sqrt(float(xp.dot(flat, flat))) / math.sqrt(max(array.size, 1))


def _mean_square(xp, g, axis: int):
    """The mean of g**2 along `axis`, that axis kept as 1."""
    return (g * g).sum(axis=axis, keepdims=True) / g.shape[axis]


def _check_options(lr: float, beta2_decay: float, eps: tuple, d: float,
                   weight_decay: float) -> None:
    """PyTorch's checks of Adafactor's options, in its order and words."""
    if not 0.0 <= lr:
        raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
    if not 0.0 >= beta2_decay:
        raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
    if eps[0] is not None and not 0.0 <= eps[0]:
        raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
    if not 0.0 <= eps[1]:
        raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
    if not 1.0 <= d:
        raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
