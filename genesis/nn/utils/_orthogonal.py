"""The orthogonal parametrization of `torch.nn.utils.parametrizations.orthogonal`: a weight
(or batch of matrices) kept orthogonal as the image of a skew-symmetric matrix under the
matrix exponential or the Cayley map, or as a product of Householder reflectors (the
default for non-square weights), times a fixed orthogonal `base` when trivialized."""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...creation import eye, randn, zeros_like
from ...dtypes import finfo
from ...ops.householder import geqrf, householder_product
from ...ops.join import cat
from ...ops.linear_systems import solve
from ...ops.matrix_functions import matrix_exp
from ...tensor import Tensor
from ..module import Module

__all__ = ["Orthogonal", "ORTHOGONAL_MAPS"]

ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    identity = eye(k, dtype=Q.dtype, device=Q.device)
    return bool(((Q.mT @ Q - identity).abs() <= 10.0 * n * finfo(Q.dtype).eps).all())


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A = QR with diag(R) non-negative (A tall)."""
    X, tau = geqrf(A)
    return householder_product(X, tau) * X.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class Orthogonal(Module):
    """weight = base @ map(skew(X)) for the parameter X (transposed for wide weights)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        self.use_trivialization = use_trivialization
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            signs = X.diagonal(dim1=-2, dim2=-1).int().to(dtype=X.dtype)  # truncated, as PyTorch's
            Q = householder_product(A, tau) * signs.unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:
                X = cat([X, zeros_like(X[..., :1]).expand(*X.shape[:-1], n - k)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == "matrix_exp":
                Q = matrix_exp(A)
            else:
                identity = eye(n, dtype=A.dtype, device=A.device)
                Q = solve(identity - 0.5 * A, identity + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if self.use_trivialization:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            if tuple(Q.shape) != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {tuple(Q.shape)}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transposed = n < k
            if transposed:
                Q = Q.mT
                n, k = k, n
            if not self.use_trivialization:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                A, tau = geqrf(Q)  # reflectors whose product is Q, the signs on the diagonal
                signs = A.diagonal(dim1=-2, dim2=-1).sign()
                signs = signs * (1 - 2 * (tau == 0.0).to(dtype=signs.dtype))
                A.diagonal(dim1=-2, dim2=-1).copy_(signs)
                return A.mT if transposed else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                filler = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, filler], dim=-1))
            self.base = Q
            negative_identity = zeros_like(Q_init)
            negative_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return negative_identity
