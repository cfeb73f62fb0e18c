"""Instance norm: each channel of each sample normalised over its spatial dims
(`F.instance_norm`, `InstanceNorm1d/2d/3d`), with optional per-channel affine and running
statistics, as in PyTorch."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..creation import ones, zeros
from ..tensor import Tensor
from ._norm_functions import batch_norm, group_norm
from .batchnorm import register_affine
from .module import Module

__all__ = ["instance_norm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over the spatial dims; with `use_input_stats=False`,
    by the running statistics instead. Given running statistics and input stats, they move
    towards the batch's mean of the per-instance means and (unbiased) variances.

    >>> import genesis
    >>> out = instance_norm(genesis.randn(2, 3, 8))
    >>> bool(out.mean(dim=2).abs().max() < 1e-5)
    True
    """
    if input.ndim < 3:
        raise ValueError(f"instance_norm: expected an input of shape (N, C, *spatial), got shape "
                         f"{tuple(input.shape)}")
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    if running_mean is not None or running_var is not None:
        with no_grad():
            spatial = tuple(range(2, input.ndim))
            count = 1
            for dim in spatial:
                count *= input.shape[dim]
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(input.mean(spatial).mean(0) * momentum)
            if running_var is not None:
                variance = input.var(spatial, correction=1 if count > 1 else 0).mean(0)
                running_var.mul_(1 - momentum).add_(variance * momentum)
    return group_norm(input, input.shape[1], weight, bias, eps)


class _InstanceNorm(Module):
    _spatial_dims = 1
    _version = 2  # PyTorch's (its instance norms share batch norm's base)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        register_affine(self, num_features, affine, True, device, dtype)
        self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype)
                             if track_running_stats else None)
        self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype)
                             if track_running_stats else None)

    def forward(self, input: Tensor) -> Tensor:
        batched = self._spatial_dims + 2
        if input.ndim not in (batched, batched - 1):
            raise ValueError(f"{type(self).__name__}: expected {batched - 1}D (unbatched) or "
                             f"{batched}D (batched) input, got shape {tuple(input.shape)}")
        unbatched = input.ndim == batched - 1
        if unbatched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.num_features and self.affine:
            raise ValueError(f"{type(self).__name__}({self.num_features}) got an input with "
                             f"{input.shape[1]} channels (shape {tuple(input.shape)})")
        use_input_stats = self.training or not self.track_running_stats
        out = instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            use_input_stats, self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L) inputs."""

    _spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W) inputs."""

    _spatial_dims = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W) inputs."""

    _spatial_dims = 3
