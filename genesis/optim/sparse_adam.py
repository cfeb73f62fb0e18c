"""SparseAdam: PyTorch's lazy Adam for the gradients of embeddings made with sparse=True."""
from __future__ import annotations

from .. import sparse_gradients
from .optimizer import Optimizer, check_adam_options, check_tensor_lr, count_step, scalar

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam that updates only the rows a gradient holds (lazy Adam), as PyTorch's SparseAdam
    does with the sparse gradient of `nn.Embedding(sparse=True)`: for those rows,
    m += (1 - beta1) (g - m), v += (1 - beta2) (g² - v), then
    p -= lr sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + eps); the other rows keep
    their values, m and v. t counts the steps that gave the parameter a gradient. State per
    parameter: "step", "exp_avg", "exp_avg_sq".

    Genesis has no sparse tensors: an embedding with sparse=True gives a dense gradient,
    zero in the rows no index looked up (`genesis.sparse_gradients` marks its weight), and
    the rows updated are those where it is not all zeros. That is the rows PyTorch's sparse
    gradient holds, unless a looked-up row's gradient is exactly zero (the loss did not
    depend on it): PyTorch still moves such a row by its momentum, genesis leaves it. Any
    other gradient (a dense one, in PyTorch) is refused with PyTorch's error.

    >>> import genesis
    >>> table = genesis.nn.Embedding(4, 2, sparse=True)
    >>> optimizer = genesis.optim.SparseAdam(table.parameters(), lr=0.1)
    >>> before = table.weight.detach().clone()
    >>> table(genesis.tensor([1, 3])).sum().backward(); optimizer.step()
    >>> (table.weight != before).any(dim=1).tolist()   # only the rows looked up moved
    [False, True, False, True]
    >>> w = genesis.tensor([1., -1.], requires_grad=True)
    >>> (w * w).sum().backward(); genesis.optim.SparseAdam([w]).step()
    Traceback (most recent call last):
    ...
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead ...
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False):
        check_tensor_lr(lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_adam_options(lr, eps, betas)  # (the betas: lr and eps are positive already)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _update_group(self, group: dict) -> None:
        updates = []
        for param, data, grad in self._with_grads(group):
            if not sparse_gradients.is_marked(param):
                raise RuntimeError(
                    "SparseAdam does not support dense gradients, please consider Adam instead "
                    "(in genesis, SparseAdam takes the gradients of embeddings made with "
                    "sparse=True, the ones PyTorch makes sparse)")
            updates.append((param, data, grad))
        lr, eps = scalar(group["lr"]), group["eps"]
        beta1, beta2 = (scalar(beta) for beta in group["betas"])
        for param, data, grad in updates:
            state = self._state_of(param, "exp_avg", "exp_avg_sq")
            step = count_step(state)
            xp = param._device.xp
            if group["maximize"]:
                grad = -grad
            rows = xp.flatnonzero(grad.reshape(grad.shape[0], -1).any(axis=1)) if grad.ndim \
                else xp.arange(0)
            if rows.size == 0:
                continue
            g = grad[rows]
            exp_avg, exp_avg_sq = state["exp_avg"]._data, state["exp_avg_sq"]._data
            m = exp_avg[rows]
            m += (g - m) * (1 - beta1)
            v = exp_avg_sq[rows]
            v += (g * g - v) * (1 - beta2)
            exp_avg[rows], exp_avg_sq[rows] = m, v
            step_size = lr * (1 - beta2 ** step) ** 0.5 / (1 - beta1 ** step)
            data[rows] += -step_size * (m / (xp.sqrt(v) + eps))
            param._version_counter[0] += 1
