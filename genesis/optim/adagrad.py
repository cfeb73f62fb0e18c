"""Adagrad, as in PyTorch."""
from __future__ import annotations

from ..tensor import wrap_array
from ._implementation_options import implementation_options
from .optimizer import Optimizer, check_tensor_lr, count_step, scalar, step_counter

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """s += g * g; p -= clr * g / (sqrt(s) + eps) with clr = lr / (1 + (t - 1) * lr_decay).
    `lr` may be a one-element Tensor; `foreach`, `fused` and `differentiable` are PyTorch's
    implementation switches (see `genesis.optim._implementation_options`).

    >>> import genesis
    >>> w = genesis.tensor([1.], requires_grad=True)
    >>> optimizer = genesis.optim.Adagrad([w], lr=0.1)
    >>> (w * 2).sum().backward(); optimizer.step(); w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        check_tensor_lr(lr)
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay), ("epsilon value", eps),
                            ("initial_accumulator_value value", initial_accumulator_value)):
            if value < 0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps,
                                      maximize=maximize,
                                      **implementation_options("Adagrad", foreach=foreach,
                                                               differentiable=differentiable,
                                                               fused=fused)))
        for group in self.param_groups:
            for param in group["params"]:
                self._init_state(param, group)

    def _init_state(self, param, group: dict) -> dict:
        state = self.state[param]
        state["step"] = step_counter()
        state["sum"] = wrap_array(param._device.xp.full_like(param._data, group["initial_accumulator_value"]),
                                  param._device)
        return state

    def _update_group(self, group: dict) -> None:
        lr, lr_decay, eps = scalar(group["lr"]), group["lr_decay"], group["eps"]
        weight_decay, maximize = group["weight_decay"], group["maximize"]
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self.state[param] or self._init_state(param, group)
            if maximize:
                g = -g
            step = count_step(state)
            if weight_decay != 0:
                g = g + weight_decay * data
            clr = lr / (1 + (step - 1) * lr_decay)
            accumulated = state["sum"]._data
            scratch = self._scratch(param)
            xp.multiply(g, g, out=scratch)
            accumulated += scratch
            std = xp.sqrt(accumulated, out=self._scratch(param, 1))
            std += eps
            xp.multiply(g, -clr, out=scratch)
            scratch /= std
            data += scratch
            param._version_counter[0] += 1
