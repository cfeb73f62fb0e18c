"""RMSprop (optionally centered, with momentum), as in PyTorch."""
from __future__ import annotations

from ._implementation_options import implementation_options
from .adam import lerp_
from .optimizer import Optimizer, check_tensor_lr, count_step, scalar

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """v = alpha * v + (1 - alpha) * g * g; avg = sqrt(v) (centered: sqrt(v - mean(g)**2)) + eps;
    p -= lr * g / avg, or with momentum b = momentum * b + g / avg and p -= lr * b.
    `lr` may be a one-element Tensor; `capturable`, `foreach` and `differentiable` are
    PyTorch's implementation switches (see `genesis.optim._implementation_options`).

    >>> import genesis
    >>> w = genesis.tensor([1.], requires_grad=True)
    >>> optimizer = genesis.optim.RMSprop([w], lr=0.01)
    >>> (w * 3).sum().backward(); optimizer.step(); w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False):
        check_tensor_lr(lr)
        for name, value in (("learning rate", lr), ("epsilon value", eps), ("momentum value", momentum),
                            ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if value < 0:
                raise ValueError(f"Invalid {name}: {value}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize,
                                      **implementation_options("RMSprop", capturable=capturable,
                                                               foreach=foreach,
                                                               differentiable=differentiable)))

    def _update_group(self, group: dict) -> None:
        lr, alpha, eps = scalar(group["lr"]), group["alpha"], group["eps"]
        weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        maximize = group["maximize"]
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self._state_of(param, "square_avg", *(["momentum_buffer"] if momentum > 0 else []),
                                   *(["grad_avg"] if centered else []))
            if maximize:
                g = -g
            count_step(state)
            if weight_decay != 0:
                g = g + weight_decay * data
            square_avg = state["square_avg"]._data
            scratch = self._scratch(param)
            square_avg *= alpha
            xp.multiply(g, 1 - alpha, out=scratch)
            scratch *= g
            square_avg += scratch
            avg = self._scratch(param, 1)
            if centered:
                grad_avg = state["grad_avg"]._data
                lerp_(grad_avg, g, 1 - alpha, scratch)
                xp.multiply(grad_avg, -1, out=scratch)
                scratch *= grad_avg
                xp.add(square_avg, scratch, out=avg)
                xp.sqrt(avg, out=avg)
            else:
                xp.sqrt(square_avg, out=avg)
            avg += eps
            if momentum > 0:
                buffer = state["momentum_buffer"]._data
                buffer *= momentum
                xp.divide(g, avg, out=scratch)
                buffer += scratch
                xp.multiply(buffer, lr, out=scratch)
                data -= scratch
            else:
                xp.multiply(g, -lr, out=scratch)
                scratch /= avg
                data += scratch
            param._version_counter[0] += 1
