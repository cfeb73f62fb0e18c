"""Adamax (Adam with the infinity norm), as in PyTorch."""
from __future__ import annotations

from ._implementation_options import implementation_options
from .adam import lerp_
from .optimizer import Optimizer, check_adam_options, check_tensor_lr, count_step, scalar

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma & Ba): m = lerp(m, g, 1 - beta1), u = max(beta2 * u, |g| + eps),
    p -= lr / (1 - beta1**t) * m / u.

    `weight_decay` adds weight_decay * p to the gradient. `lr` may be a one-element Tensor;
    `foreach`, `capturable` and `differentiable` are PyTorch's implementation switches (see
    `genesis.optim._implementation_options`). State per parameter: "step", "exp_avg",
    "exp_inf".

    >>> import genesis
    >>> w = genesis.tensor([1., -1.], requires_grad=True)
    >>> optimizer = genesis.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); optimizer.step(); w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        check_tensor_lr(lr)
        check_adam_options(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize,
                                      **implementation_options("Adamax", foreach=foreach,
                                                               differentiable=differentiable,
                                                               capturable=capturable)))

    def _update_group(self, group: dict) -> None:
        lr, eps, weight_decay = scalar(group["lr"]), group["eps"], group["weight_decay"]
        beta1, beta2 = (scalar(beta) for beta in group["betas"])
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self._state_of(param, "exp_avg", "exp_inf")
            if group["maximize"]:
                g = -g
            step = count_step(state)
            if weight_decay != 0:
                g = g + weight_decay * data
            exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
            scratch = self._scratch(param)
            lerp_(exp_avg, g, 1 - beta1, scratch)
            exp_inf *= beta2
            xp.abs(g, out=scratch)
            scratch += eps
            xp.maximum(exp_inf, scratch, out=exp_inf)
            xp.multiply(exp_avg, -lr / (1 - beta1 ** step), out=scratch)
            scratch /= exp_inf
            data += scratch
            param._version_counter[0] += 1
