"""The older, hook-based spectral normalization, as `torch.nn.utils.spectral_norm` (GAN
code written against it is common; `genesis.nn.utils.parametrizations.spectral_norm` is
the newer form).

The weight moves to the parameter `<name>_orig`; the power-iteration vectors are the
buffers `<name>_u` and `<name>_v`; before each forward a hook sets `module.<name>` to
`<name>_orig / sigma`, refining u and v by `n_power_iterations` steps first in training.

>>> import genesis
>>> layer = spectral_norm(genesis.nn.Linear(4, 3))
>>> sorted(layer.state_dict())
['bias', 'weight_orig', 'weight_u', 'weight_v']
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...creation import empty
from .._composite_functions import normalize
from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..module import Module
from ..parameter import Parameter
from ._weight_hooks import attach, detach, refuse_second
from ._norm_math import as_matrix

__all__ = ["spectral_norm", "remove_spectral_norm", "SpectralNorm"]


class SpectralNorm:
    """The forward pre-hook that computes `module.<name>` = `<name>_orig` / sigma."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def compute_weight(self, module: Module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = as_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(matrix.T.mv(u), dim=0, eps=self.eps))
                    u.copy_(normalize(matrix.mv(v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()  # the buffers change again at the next forward
        sigma = u.dot(matrix.mv(v))
        return weight / sigma

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> "SpectralNorm":
        refuse_second(module, "spectral_norm", name)
        weight = module._parameters.get(name)
        if not isinstance(weight, Parameter):
            raise ValueError(f"spectral_norm: {type(module).__name__} has no parameter named '{name}'")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        with no_grad():
            rows, columns = as_matrix(weight, fn.dim).shape
            u = normalize(empty(rows, dtype=weight.dtype, device=weight.device).normal_(0, 1),
                          dim=0, eps=fn.eps)
            v = normalize(empty(columns, dtype=weight.dtype, device=weight.device).normal_(0, 1),
                          dim=0, eps=fn.eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        attach(module, "spectral_norm", name, fn)
        return fn

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        del module._parameters[self.name + "_orig"]
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide `module.<name>` by its largest singular value (of the weight as a matrix whose
    rows run along `dim`: 1 for transposed convolutions, else 0) before every forward."""
    if dim is None:
        dim = 1 if isinstance(module, ConvTranspose1d | ConvTranspose2d | ConvTranspose3d) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo `spectral_norm`: `module.<name>` is one parameter again, the normalized value."""
    return detach(module, "spectral_norm", name)
