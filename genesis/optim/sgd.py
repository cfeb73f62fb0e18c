"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from ..tensor import wrap_array
from ._implementation_options import implementation_options
from .optimizer import Optimizer, check_tensor_lr, scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """PyTorch's SGD: g = grad + weight_decay * p; with momentum, b = momentum * b +
    (1 - dampening) * g (b = g on the first step) and g = b (or g + momentum * b with
    Nesterov); then p -= lr * g. `maximize` ascends instead. `lr` may be a one-element
    Tensor; `foreach`, `fused` and `differentiable` are PyTorch's implementation switches
    (see `genesis.optim._implementation_options`).

    >>> import genesis
    >>> w = genesis.tensor([1.], requires_grad=True)
    >>> optimizer = genesis.optim.SGD([w], lr=0.5, momentum=0.9)
    >>> for _ in range(2):
    ...     optimizer.zero_grad(); (w * 2).sum().backward(); optimizer.step()
    >>> w
    tensor([-1.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None):
        check_tensor_lr(lr)
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize,
                                      **implementation_options("SGD", foreach=foreach,
                                                               differentiable=differentiable,
                                                               fused=fused)))

    def _update_group(self, group: dict) -> None:
        lr, momentum, dampening = scalar(group["lr"]), group["momentum"], group["dampening"]
        weight_decay, nesterov = scalar(group["weight_decay"]), group["nesterov"]
        maximize = group["maximize"]
        for param, data, g in self._with_grads(group):
            if maximize:
                g = -g
            if weight_decay != 0:
                g = g + weight_decay * data
            if momentum != 0:
                state = self.state[param]
                buffer = state.get("momentum_buffer")
                if buffer is None:
                    state["momentum_buffer"] = buffer = wrap_array(g.copy(), param._device)
                else:
                    b = buffer._data
                    b *= momentum
                    b += (1 - dampening) * g
                g = g + momentum * buffer._data if nesterov else buffer._data
            step = self._scratch(param)
            param._device.xp.multiply(g, lr, out=step)
            data -= step
            param._version_counter[0] += 1
