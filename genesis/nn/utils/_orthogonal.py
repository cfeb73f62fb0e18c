"""The orthogonal parametrization of `torch.nn.utils.parametrizations.orthogonal`: a weight
(or batch of matrices) kept orthogonal as the image of a skew-symmetric matrix under the
matrix exponential or the Cayley map, times a fixed orthogonal `base` when trivialized.

The Householder map (PyTorch's default for non-square weights) needs
`linalg.householder_product`, which genesis does not have yet: asking for it is a clear
error, not a different map."""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...creation import eye, randn, zeros_like
from ...dtypes import finfo
from ...ops.decompositions import linalg_qr
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
    Q, R = linalg_qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class Orthogonal(Module):
    """weight = base @ map(skew(X)) for the parameter X (transposed for wide weights)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True):
        super().__init__()
        if orthogonal_map == "householder":
            raise NotImplementedError(
                "orthogonal: the 'householder' map (PyTorch's default for non-square weights) "
                "is not supported by genesis yet; pass orthogonal_map='matrix_exp' or 'cayley'")
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
            if not self.use_trivialization:
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            if n < k:
                Q = Q.mT
                n, k = k, n
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                filler = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(cat([Q, filler], dim=-1))
            self.base = Q
            negative_identity = zeros_like(Q_init)
            negative_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return negative_identity
