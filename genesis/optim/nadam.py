"""NAdam (Adam with Nesterov momentum), as in PyTorch."""
from __future__ import annotations

from ._implementation_options import implementation_options
from .adam import decayed_gradient, update_moments
from .optimizer import (Optimizer, check_adam_options, check_tensor_lr, count_step, scalar, scalar_state,
                        step_counter)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Dozat): Adam whose step looks ahead along the momentum. At step t, with
    mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay)) and prod_t = mu_1 * ... * mu_t:
    m = lerp(m, g, 1 - beta1), v = beta2 * v + (1 - beta2) * g * g,
    d = sqrt(v / (1 - beta2**t)) + eps,
    p -= lr * ((1 - mu_t) / (1 - prod_t) * g + mu_{t+1} / (1 - prod_{t+1}) * m) / d.

    `weight_decay` adds weight_decay * p to the gradient, or with
    `decoupled_weight_decay=True` (NAdamW) multiplies p by 1 - lr * weight_decay first.
    `lr` may be a one-element Tensor; `foreach`, `capturable` and `differentiable` are
    PyTorch's implementation switches (see `genesis.optim._implementation_options`). State
    per parameter: "step", "mu_product" (prod_t, a 0-d tensor on the CPU as in PyTorch),
    "exp_avg", "exp_avg_sq".

    >>> import genesis
    >>> w = genesis.tensor([1., -1.], requires_grad=True)
    >>> optimizer = genesis.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); optimizer.step(); w
    tensor([ 0.8944, -0.8944], requires_grad=True)
    """

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        check_tensor_lr(lr)
        check_adam_options(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize,
                                      **implementation_options("NAdam", foreach=foreach,
                                                               capturable=capturable,
                                                               differentiable=differentiable)))

    def _state_with_mu_product(self, param) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = step_counter()
            state["mu_product"] = scalar_state(1.0)
            state["exp_avg"] = self._zeros_like(param)
            state["exp_avg_sq"] = self._zeros_like(param)
        return state

    def _update_group(self, group: dict) -> None:
        lr, eps, weight_decay = scalar(group["lr"]), group["eps"], group["weight_decay"]
        beta1, beta2 = (scalar(beta) for beta in group["betas"])
        momentum_decay = group["momentum_decay"]
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self._state_with_mu_product(param)
            if group["maximize"]:
                g = -g
            step = count_step(state)
            bias_correction2 = 1 - beta2 ** step
            g = decayed_gradient(g, data, lr, weight_decay, group["decoupled_weight_decay"])
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product = state["mu_product"]
            mu_product._data *= mu  # rounded in the state's dtype, as PyTorch's
            mu_product._version_counter[0] += 1
            mu_product = float(mu_product._data)
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            scratch = self._scratch(param)
            update_moments(xp, exp_avg, exp_avg_sq, g, beta1, beta2, scratch)
            denom = xp.divide(exp_avg_sq, bias_correction2, out=self._scratch(param, 1))
            xp.sqrt(denom, out=denom)
            denom += eps
            xp.multiply(g, -lr * (1.0 - mu) / (1.0 - mu_product), out=scratch)
            scratch /= denom
            data += scratch
            xp.multiply(exp_avg, (-lr * mu_next) / (1.0 - mu_product * mu_next), out=scratch)
            scratch /= denom
            data += scratch
            param._version_counter[0] += 1
