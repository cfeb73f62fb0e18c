"""Weight and spectral normalization as parametrizations, as
`torch.nn.utils.parametrizations` (see `genesis.nn.utils.parametrize`).

`weight_norm` splits a weight into a magnitude `original0` (g) and a direction
`original1` (v), weight = g * v / ||v||; `spectral_norm` divides a weight by an estimate of
its largest singular value, refined by power iteration at each read in training mode (the
vectors are the buffers `_u` and `_v`), so a GAN critic stays 1-Lipschitz; `orthogonal`
keeps a weight orthogonal (see `_orthogonal`).

>>> import genesis
>>> layer = weight_norm(genesis.nn.Linear(4, 3))
>>> layer.parametrizations.weight.original0.shape, layer.parametrizations.weight.original1.shape
(genesis.Size([3, 1]), genesis.Size([3, 4]))
"""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...creation import empty
from ...tensor import Tensor
from .._composite_functions import normalize
from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..module import Module
from . import parametrize
from ._norm_math import as_matrix, norm_except_dim, weight_from_norm
from ._orthogonal import ORTHOGONAL_MAPS, Orthogonal

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_from_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize `module.<name>` as g * v / ||v||, the norm per slice along `dim` (per
    output unit by default; dim=None: one norm for all of it). A state dict saved with the
    older `genesis.nn.utils.weight_norm` (keys `<name>_g`, `<name>_v`) still loads."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def renamed_old_keys(state_dict, prefix, *_):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(renamed_old_keys)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = as_matrix(weight.detach(), self.dim)
            rows, columns = matrix.shape
            u = empty(rows, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            v = empty(columns, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _power_method(self, matrix: Tensor, iterations: int) -> None:
        with no_grad():
            for _ in range(iterations):
                self._u.copy_(normalize(matrix.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(matrix.T.conj().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        matrix = as_matrix(weight, self.dim)
        if self.training:
            self._power_method(matrix.detach(), self.n_power_iterations)
        sigma = self._u.clone().vdot(matrix.mv(self._v.clone()))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrize `module.<name>` as W / sigma(W), sigma the largest singular value of
    W seen as a matrix whose rows run along `dim` (1 for transposed convolutions, else 0),
    estimated by `n_power_iterations` power-iteration steps at each read in training."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, ConvTranspose1d | ConvTranspose2d | ConvTranspose3d) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep `module.<name>` (a matrix or a batch of them) orthogonal: the matrix exponential
    (the default for square weights) or the Cayley map of a skew-symmetric matrix; with
    `use_trivialization`, starting from the current weight made orthogonal (its `base`)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} "
                         "dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in ORTHOGONAL_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrize.register_parametrization(
        module, name, Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization),
        unsafe=True)
    return module
