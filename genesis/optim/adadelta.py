"""Adadelta, as in PyTorch."""
from __future__ import annotations

from ._implementation_options import implementation_options
from .optimizer import Optimizer, check_tensor_lr, count_step, scalar

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """s = rho s + (1 - rho) g²; d = sqrt(a + eps) / sqrt(s + eps) * g;
    a = rho a + (1 - rho) d²; p -= lr * d.
    `lr` may be a one-element Tensor; `foreach`, `capturable` and `differentiable` are
    PyTorch's implementation switches (see `genesis.optim._implementation_options`).

    >>> import genesis
    >>> w = genesis.tensor([1.], requires_grad=True)
    >>> optimizer = genesis.optim.Adadelta([w], lr=1.0)
    >>> (w * 2).sum().backward(); optimizer.step(); round(w.item(), 6)
    0.996838
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False):
        check_tensor_lr(lr)
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if eps < 0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if weight_decay < 0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize,
                                      **implementation_options("Adadelta", foreach=foreach,
                                                               capturable=capturable,
                                                               differentiable=differentiable)))

    def _update_group(self, group: dict) -> None:
        lr, rho, eps = scalar(group["lr"]), group["rho"], group["eps"]
        weight_decay, maximize = group["weight_decay"], group["maximize"]
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self._state_of(param, "square_avg", "acc_delta")
            count_step(state)
            if maximize:
                g = -g
            if weight_decay != 0:
                g = g + weight_decay * data
            square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
            square_avg *= rho
            square_avg += (1 - rho) * g * g
            delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * g
            acc_delta *= rho
            acc_delta += (1 - rho) * delta * delta
            data -= lr * delta
            param._version_counter[0] += 1
