"""SparseAdam: PyTorch's Adam for sparse gradients, which genesis does not have."""
from __future__ import annotations

from .optimizer import Optimizer, check_adam_options, check_tensor_lr

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam updates only the entries a sparse gradient holds (from
    `nn.Embedding(sparse=True)`) and refuses dense gradients. Genesis has no sparse tensors,
    so every gradient is dense: SparseAdam is built, validated and saved as PyTorch's is (a
    script that only makes one runs), and `step` on a parameter with a gradient raises
    PyTorch's error for dense gradients. Use `Adam` (or `AdamW`) instead.

    >>> import genesis
    >>> w = genesis.tensor([1., -1.], requires_grad=True)
    >>> optimizer = genesis.optim.SparseAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); optimizer.step()
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
        for _ in self._with_grads(group):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam "
                               "instead (genesis has no sparse gradients, so SparseAdam cannot "
                               "update anything here)")
