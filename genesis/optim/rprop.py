"""Rprop (resilient backpropagation), as in PyTorch."""
from __future__ import annotations

from ..tensor import wrap_array
from ._implementation_options import implementation_options
from .optimizer import Optimizer, check_tensor_lr, count_step, scalar, step_counter

__all__ = ["Rprop"]


def sign(xp, array, out):
    """PyTorch's sign, (x > 0) - (x < 0), into `out` (not `array`): NaN and -0.0 give 0, where
    NumPy's sign keeps them, so a NaN gradient freezes an element for a step, as in PyTorch.

    >>> import numpy as np
    >>> sign(np, np.array([np.nan, -0.0, -3.0, 2.0]), out=np.empty(4))
    array([ 0.,  0., -1.,  1.])
    """
    xp.greater(array, 0, out=out)
    out -= xp.less(array, 0)
    return out


class Rprop(Optimizer):
    """Rprop (Riedmiller & Braun): each element has its own step size, which grows by
    etas[1] while its gradient keeps its sign and shrinks by etas[0] when the sign flips,
    clamped to `step_sizes` (min, max); p -= sign(g) * step_size, except after a flip, where
    the element does not move and its gradient counts as 0 for the next comparison.

    Only the gradient's sign is used, so the step size starts at `lr` and a scheduler
    changing lr later changes nothing (as in PyTorch). `lr` may be a one-element Tensor;
    `foreach`, `capturable` and `differentiable` are PyTorch's implementation switches (see
    `genesis.optim._implementation_options`). State per parameter: "step", "prev" (the
    gradient of the last step, 0 where it flipped), "step_size".

    >>> import genesis
    >>> w = genesis.tensor([1., -1.], requires_grad=True)
    >>> optimizer = genesis.optim.Rprop([w], lr=0.1)
    >>> for _ in range(2):
    ...     optimizer.zero_grad(); (w * w).sum().backward(); optimizer.step()
    >>> w, optimizer.state[w]["step_size"]
    (tensor([ 0.7800, -0.7800], requires_grad=True), tensor([0.1200, 0.1200]))
    """

    def __init__(self, params, lr: float = 1e-2, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False):
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize,
                                      **implementation_options("Rprop", foreach=foreach,
                                                               differentiable=differentiable,
                                                               capturable=capturable)))

    def _state_with_step_sizes(self, param, lr: float) -> dict:
        state = self.state[param]
        if not state:
            state["step"] = step_counter()
            state["prev"] = self._zeros_like(param)
            state["step_size"] = wrap_array(param._device.xp.full_like(param._data, lr),
                                            param._device)
        return state

    def _update_group(self, group: dict) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        for param, data, g in self._with_grads(group):
            xp = param._device.xp
            state = self._state_with_step_sizes(param, scalar(group["lr"]))
            if group["maximize"]:
                g = -g
            count_step(state)
            prev, step_size = state["prev"]._data, state["step_size"]._data
            product = xp.multiply(g, prev, out=self._scratch(param))
            factor = sign(xp, product, out=self._scratch(param, 1))
            factor[factor > 0] = etaplus
            factor[factor < 0] = etaminus
            factor[factor == 0] = 1
            step_size *= factor
            xp.clip(step_size, step_size_min, step_size_max, out=step_size)
            prev[...] = g
            prev[factor == etaminus] = 0
            direction = sign(xp, prev, out=product)
            direction *= step_size
            data -= direction
            param._version_counter[0] += 1
