"""ASGD (averaged stochastic gradient descent), as in PyTorch."""
from __future__ import annotations

from ._implementation_options import implementation_options
from .optimizer import Optimizer, check_tensor_lr, count_step, scalar, scalar_state

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD (Polyak & Juditsky): p *= 1 - lambd * eta; p -= eta * g; the average
    ax = ax + mu * (p - ax); then for step t, eta = lr / (1 + lambd * lr * t) ** alpha and
    mu = 1 / max(1, t - t0), so averaging starts after t0 steps.

    The parameters follow the plain iterates; the average is in `state[p]["ax"]` (copy it
    into the parameters to evaluate with it). `weight_decay` adds weight_decay * p to the
    gradient. `lr` may be a one-element Tensor; `foreach`, `capturable` and `differentiable`
    are PyTorch's implementation switches (see `genesis.optim._implementation_options`).
    State per parameter, as PyTorch's: "step", "eta", "mu" (0-d tensors on the parameter's
    device), "ax".

    >>> import genesis
    >>> w = genesis.tensor([1.], requires_grad=True)
    >>> optimizer = genesis.optim.ASGD([w], lr=0.1, lambd=0.0)
    >>> (w * 2).sum().backward(); optimizer.step(); w
    tensor([0.8000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False):
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=maximize,
                                      **implementation_options("ASGD", foreach=foreach,
                                                               differentiable=differentiable,
                                                               capturable=capturable)))

    def _state_of_averaging(self, param, lr: float) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = scalar_state(0.0, param._device)
            state["eta"] = scalar_state(lr, param._device)
            state["mu"] = scalar_state(1.0, param._device)
            state["ax"] = self._zeros_like(param)
        return state

    def _update_group(self, group: dict) -> None:
        lr, lambd, alpha, t0 = scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
        weight_decay = group["weight_decay"]
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self._state_of_averaging(param, lr)
            if group["maximize"]:
                g = -g
            step = count_step(state)
            if weight_decay != 0:
                g = g + weight_decay * data
            eta, mu = state["eta"], state["mu"]
            eta_value, mu_value = float(eta._data), float(mu._data)  # as stored (float32)
            data *= 1 - lambd * eta_value
            scratch = self._scratch(param)
            xp.multiply(g, -eta_value, out=scratch)
            data += scratch
            ax = state["ax"]._data
            if mu_value != 1:
                xp.subtract(data, ax, out=scratch)
                scratch *= mu_value
                ax += scratch
            else:
                ax[...] = data
            eta._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
            mu._data[...] = 1 / max(1, step - t0)
            for changed in (eta, mu, param):
                changed._version_counter[0] += 1
