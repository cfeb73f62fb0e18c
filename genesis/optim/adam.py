"""Adam and AdamW (decoupled weight decay), with amsgrad, as in PyTorch."""
from __future__ import annotations

import numpy as np

from ..ops._kernels import fusing_pays
from ._fused import ADAM_STEPS
from ._implementation_options import implementation_options
from .optimizer import Optimizer, check_adam_options, check_tensor_lr, count_step, scalar

__all__ = ["Adam", "AdamW"]


def lerp_(target, end, weight: float, scratch=None) -> None:
    """target += weight * (end - target), rounded the way PyTorch's lerp_ kernel rounds.

    `scratch` (an array like target) avoids allocating a temporary (NumPy's ufunc hands
    CuPy arrays to CuPy)."""
    difference = end - target if scratch is None else np.subtract(end, target, out=scratch)
    if abs(weight) < 0.5:
        difference *= weight
        target += difference
    else:
        difference *= 1 - weight
        target[...] = end - difference


def decayed_gradient(g, data, lr: float, weight_decay: float, decoupled: bool):
    """The gradient Adam-family steps use with weight decay: L2 adds weight_decay * p to it;
    decoupled decay (AdamW's) shrinks the weights in place instead and leaves it."""
    if weight_decay == 0:
        return g
    if decoupled:
        data *= 1 - lr * weight_decay
        return g
    return g + weight_decay * data


def update_moments(xp, exp_avg, exp_avg_sq, g, beta1: float, beta2: float, scratch) -> None:
    """Adam's running moments, in place and rounded as PyTorch's kernels round them:
    exp_avg = lerp(exp_avg, g, 1 - beta1), exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) g^2."""
    lerp_(exp_avg, g, 1 - beta1, scratch)
    exp_avg_sq *= beta2
    xp.multiply(g, 1 - beta2, out=scratch)
    scratch *= g
    exp_avg_sq += scratch


class Adam(Optimizer):
    """Adam (Kingma & Ba): m = lerp(m, g, 1 - beta1), v = beta2 * v + (1 - beta2) * g * g,
    p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps).

    `weight_decay` adds weight_decay * p to the gradient (L2); use `AdamW` for
    decoupled decay. `amsgrad` uses the running maximum of v. `lr` (and the betas) may be
    one-element Tensors; `foreach`, `fused`, `capturable` and `differentiable` are PyTorch's
    implementation switches (see `genesis.optim._implementation_options`).

    >>> import genesis
    >>> w = genesis.tensor([1., -1.], requires_grad=True)
    >>> optimizer = genesis.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); optimizer.step(); w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False):
        options = implementation_options(type(self).__name__, foreach=foreach,
                                         capturable=capturable, differentiable=differentiable,
                                         fused=fused)
        check_tensor_lr(lr, foreach)
        check_adam_options(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(scalar(beta) for beta in betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                                      **options, decoupled_weight_decay=decoupled_weight_decay))

    def _update_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = scalar(group["lr"]), group["betas"], group["eps"]
        weight_decay, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
        decoupled = group["decoupled_weight_decay"]
        fused = {}  # (device, step) -> the parameters one GPU launch updates
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self._state_of(param, "exp_avg", "exp_avg_sq",
                                   *(["max_exp_avg_sq"] if amsgrad else []))
            step = count_step(state)
            if fusing_pays(param._device) and not (amsgrad or maximize) and beta1 > 0.5:
                fused.setdefault((param._device, step), []).append(
                    (g, data, state["exp_avg"]._data, state["exp_avg_sq"]._data))
                param._version_counter[0] += 1
                continue
            if maximize:
                g = -g
            g = decayed_gradient(g, data, lr, weight_decay, decoupled)
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            scratch = self._scratch(param)
            update_moments(xp, exp_avg, exp_avg_sq, g, beta1, beta2, scratch)
            step_size = lr / (1 - beta1 ** step)
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            if amsgrad:
                max_exp_avg_sq = state["max_exp_avg_sq"]._data
                xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            denom = xp.sqrt(state["max_exp_avg_sq"]._data if amsgrad else exp_avg_sq,
                            out=self._scratch(param, 1))
            denom /= bias_correction2_sqrt
            denom += eps
            xp.multiply(exp_avg, -step_size, out=scratch)
            scratch /= denom
            data += scratch
            param._version_counter[0] += 1
        for (device, step), tensors in fused.items():  # on a GPU: the whole update, one launch
            ADAM_STEPS(device, tensors, 1 - beta1, beta2, 1 - beta2, lr / (1 - beta1 ** step),
                       (1 - beta2 ** step) ** 0.5, eps, 0.0 if decoupled else weight_decay,
                       1 - lr * weight_decay if decoupled else 1.0)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p *= 1 - lr * weight_decay
    before the Adam update. Default weight_decay is 0.01.

    >>> import genesis
    >>> w = genesis.tensor([1., -1.], requires_grad=True)
    >>> optimizer = genesis.optim.AdamW([w], lr=0.1)
    >>> (w * w).sum().backward(); optimizer.step(); w
    tensor([ 0.8990, -0.8990], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
