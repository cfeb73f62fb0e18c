"""RAdam (Adam with a rectified adaptive learning rate), as in PyTorch."""
from __future__ import annotations

from ._implementation_options import implementation_options
from .adam import decayed_gradient, update_moments
from .optimizer import Optimizer, check_adam_options, check_tensor_lr, count_step, scalar

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (Liu et al.): m = lerp(m, g, 1 - beta1), v = beta2 * v + (1 - beta2) * g * g;
    with rho_inf = 2 / (1 - beta2) - 1 and rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t),
    while rho_t <= 5 the step is plain momentum, p -= lr * m / (1 - beta1**t); after that
    it is rectified, p -= lr * m / (1 - beta1**t) * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t
    with r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t)).

    `weight_decay` adds weight_decay * p to the gradient, or with
    `decoupled_weight_decay=True` (RAdamW) multiplies p by 1 - lr * weight_decay first.
    `lr` may be a one-element Tensor; `foreach`, `capturable` and `differentiable` are
    PyTorch's implementation switches (see `genesis.optim._implementation_options`). State
    per parameter: "step", "exp_avg", "exp_avg_sq".

    >>> import genesis
    >>> w = genesis.tensor([1., -1.], requires_grad=True)
    >>> optimizer = genesis.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); optimizer.step(); w
    tensor([ 0.8000, -0.8000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_tensor_lr(lr)
        check_adam_options(lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      **implementation_options("RAdam", foreach=foreach,
                                                               capturable=capturable,
                                                               differentiable=differentiable)))

    def _update_group(self, group: dict) -> None:
        lr, eps, weight_decay = scalar(group["lr"]), group["eps"], group["weight_decay"]
        beta1, beta2 = (scalar(beta) for beta in group["betas"])
        rho_inf = 2 / (1 - beta2) - 1
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self._state_of(param, "exp_avg", "exp_avg_sq")
            if group["maximize"]:
                g = -g
            step = count_step(state)
            g = decayed_gradient(g, data, lr, weight_decay, group["decoupled_weight_decay"])
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            scratch = self._scratch(param)
            update_moments(xp, exp_avg, exp_avg_sq, g, beta1, beta2, scratch)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            update = xp.divide(exp_avg, bias_correction1, out=scratch)
            update *= lr
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive_lr = xp.sqrt(exp_avg_sq, out=self._scratch(param, 1))
                adaptive_lr += eps
                xp.reciprocal(adaptive_lr, out=adaptive_lr)  # PyTorch: number / tensor
                adaptive_lr *= bias_correction2 ** 0.5
                update *= adaptive_lr
                update *= rect
            data -= update
            param._version_counter[0] += 1
