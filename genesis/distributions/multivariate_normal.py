"""MultivariateNormal: a Gaussian over vectors, given by one of its covariance matrix, the
covariance's lower Cholesky factor or its precision matrix."""
from __future__ import annotations

import math

from ..linalg import cholesky, inv, solve_triangular
from ..random import generator_for
from ..ops.composites import broadcast_shapes
from ..tensor import Tensor, wrap_array
from . import constraints
from .distribution import Distribution

__all__ = ["MultivariateNormal"]


class MultivariateNormal(Distribution):
    """N(loc, Σ) over vectors of the last dimension of `loc`, with Σ given by exactly one of
    `covariance_matrix`, `scale_tril` (L with Σ = L Lᵀ) or `precision_matrix` (Σ⁻¹). All is
    computed from L, with ops, so gradients flow to loc and to the matrix given.

    >>> import genesis
    >>> mvn = MultivariateNormal(genesis.zeros(2), covariance_matrix=genesis.eye(2))
    >>> round(mvn.log_prob(genesis.zeros(2)).item(), 6)  # -log 2π
    -1.837877
    """

    arg_constraints = {"loc": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True
    batched_params = ("loc", "scale_tril")

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                             "may be specified.")
        matrix, = given
        if loc.dim() < 1 or matrix.dim() < 2:
            raise ValueError("loc must be at least one-dimensional and the matrix at least "
                             "two-dimensional, with shape (..., k, k)")
        if scale_tril is None:
            scale_tril = cholesky(covariance_matrix if covariance_matrix is not None
                                  else inv(precision_matrix))
        batch = broadcast_shapes(tuple(loc.shape[:-1]), tuple(matrix.shape[:-2]))
        self.loc = loc.expand(batch + tuple(loc.shape[-1:]))
        self.scale_tril = scale_tril.expand(batch + tuple(scale_tril.shape[-2:]))
        super().__init__(batch, tuple(loc.shape[-1:]), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def covariance_matrix(self) -> Tensor:
        return self.scale_tril @ self.scale_tril.mT

    @property
    def precision_matrix(self) -> Tensor:
        return inv(self.covariance_matrix)

    @property
    def variance(self) -> Tensor:
        return (self.scale_tril ** 2).sum(-1)

    def _half_log_det(self) -> Tensor:
        return self.scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended(sample_shape)
        noise = generator_for(self.loc._device).standard_normal(shape).astype(self.loc._data.dtype)
        noise = wrap_array(noise, self.loc._device)
        return self.loc + (self.scale_tril @ noise.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        k = self.event_shape[0]
        tril = self.scale_tril.expand(tuple(diff.shape[:-1]) + (k, k))
        whitened = solve_triangular(tril, diff.unsqueeze(-1), upper=False).squeeze(-1)
        return -0.5 * (k * math.log(2 * math.pi) + (whitened ** 2).sum(-1)) - self._half_log_det()

    def entropy(self) -> Tensor:
        k = self.event_shape[0]
        return 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
