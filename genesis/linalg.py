"""`genesis.linalg`: linear algebra on (batches of) square matrices, as `torch.linalg`:
`inv`, `det`, `slogdet`, `solve`, `cholesky` (see `genesis.ops.linear_systems` for the
gradients), `vector_norm` and `matrix_norm`, each differentiable.

>>> import genesis
>>> a = genesis.tensor([[4., 2.], [2., 3.]])
>>> genesis.linalg.solve(a, genesis.tensor([2., 1.]))
tensor([0.5000, 0.0000])
>>> genesis.linalg.inv(a) @ a
tensor([[1., 0.],
        [0., 1.]])
"""
from .ops.linear_systems import cholesky, det, inverse as inv, slogdet, solve
from .ops.matrix_composites import matrix_power
from .ops.norm import matrix_norm, vector_norm

__all__ = ["inv", "det", "slogdet", "solve", "cholesky", "vector_norm", "matrix_norm", "matrix_power"]
