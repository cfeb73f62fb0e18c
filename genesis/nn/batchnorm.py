"""`BatchNorm1d`, `BatchNorm2d`, `BatchNorm3d`: per-channel normalisation with running statistics."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..creation import ones, tensor, zeros
from ..dtypes import int64
from ..tensor import Tensor
from ._norm_functions import batch_norm
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


def register_affine(module: Module, num_features: int, affine: bool, bias: bool, device, dtype) -> None:
    """A norm layer's per-channel `weight` (ones) and `bias` (zeros), or None for each it
    does not have."""
    module.register_parameter("weight", Parameter(ones(num_features, device=device, dtype=dtype))
                              if affine else None)
    module.register_parameter("bias", Parameter(zeros(num_features, device=device, dtype=dtype))
                              if affine and bias else None)


class _BatchNorm(Module):
    _input_dims: tuple = ()
    _version = 2  # PyTorch's: num_batches_tracked was added in version 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        register_affine(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._input_dims:
            expected = " or ".join(f"{d}D" for d in self._input_dims)
            raise ValueError(f"{type(self).__name__}: expected {expected} input (got {input.ndim}D "
                             f"input of shape {tuple(input.shape)})")
        if input.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}) got an input with "
                             f"{input.shape[1]} channels (shape {tuple(input.shape)})")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        use_batch_statistics = self.training or self.running_mean is None
        tracking = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if tracking else None,
                          self.running_var if tracking else None, self.weight, self.bias,
                          use_batch_statistics, momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs.

    >>> import genesis
    >>> norm = genesis.nn.BatchNorm1d(3)
    >>> _ = norm(genesis.randn(8, 3))
    >>> norm.num_batches_tracked, norm.running_var.shape
    (tensor(1), genesis.Size([3]))
    """

    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    _input_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs."""

    _input_dims = (5,)
