"""`SyncBatchNorm`: batch norm whose statistics are shared by the processes of a distributed
run. Genesis runs in one process, so it is batch norm over inputs of any rank >= 2; it exists
so that scripts that build it, or convert their model with `convert_sync_batchnorm`, run."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .batchnorm import _BatchNorm
from .module import Module

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch norm over (N, C, *) inputs; `process_group` is kept and unused (one process).

    >>> import genesis
    >>> norm = genesis.nn.SyncBatchNorm(3)
    >>> norm(genesis.randn(4, 3, 2, 2, 2, 2)).shape
    genesis.Size([4, 3, 2, 2, 2, 2])
    """

    _input_dims = tuple(range(2, 65))

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2D input (got {input.ndim}D input "
                             f"of shape {tuple(input.shape)})")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """`module` with every BatchNorm*d layer in it replaced by a SyncBatchNorm holding the
        same parameters and buffers (a new layer when `module` itself is one), as PyTorch.

        >>> import genesis
        >>> model = genesis.nn.Sequential(genesis.nn.Linear(2, 3), genesis.nn.BatchNorm1d(3))
        >>> type(genesis.nn.SyncBatchNorm.convert_sync_batchnorm(model)[1]).__name__
        'SyncBatchNorm'
        """
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
