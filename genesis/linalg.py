"""`genesis.linalg`: linear algebra on (batches of) square matrices, as `torch.linalg`:
`inv`, `det`, `slogdet`, `solve`, `cholesky` (see `genesis.ops.linear_systems` for the
gradients), `vector_norm`, `matrix_norm`, `norm`; the decompositions `svd`, `svdvals`, `qr`,
`eigh`, `eigvalsh` (`genesis.ops.decompositions`); `pinv`, `lstsq`, `matrix_exp`,
`matrix_rank` (`genesis.ops.matrix_functions`); the triangular and LU solves
`solve_triangular`, `lu_factor`, `lu`, `lu_solve`, `inv_ex`, `cholesky_ex`
(`genesis.ops.triangular_systems`); `householder_product` (`genesis.ops.householder`);
`cross`, `vecdot`, `multi_dot`, `diagonal`.
eig and eigvals are missing: their results are complex, and genesis has no complex dtype.

>>> import genesis
>>> a = genesis.tensor([[4., 2.], [2., 3.]])
>>> genesis.linalg.solve(a, genesis.tensor([2., 1.]))
tensor([0.5000, 0.0000])
>>> genesis.linalg.inv(a) @ a
tensor([[1., 0.],
        [0., 1.]])
"""
from .ops.decompositions import eigh, eigvalsh
from .ops.decompositions import linalg_qr as qr
from .ops.decompositions import linalg_svd as svd
from .ops.decompositions import svdvals
from .ops.householder import householder_product
from .ops.linalg_composites import cross, diagonal, matrix_norm, multi_dot, norm, vecdot
from .ops.linear_systems import cholesky, det, inverse as inv, slogdet, solve
from .ops.matrix_composites import matrix_power
from .ops.matrix_functions import lstsq, matrix_exp, matrix_rank, pinv
from .ops.norm import vector_norm
from .ops.triangular_systems import cholesky_ex, inv_ex
from .ops.triangular_systems import linalg_lu as lu
from .ops.triangular_systems import lu_factor
from .ops.triangular_systems import lu_solve_linalg as lu_solve
from .ops.triangular_systems import solve_triangular

__all__ = ["inv", "det", "slogdet", "solve", "cholesky", "vector_norm", "matrix_norm", "matrix_power",
           "norm", "svd", "svdvals", "qr", "eigh", "eigvalsh", "pinv", "lstsq", "matrix_exp",
           "matrix_rank", "cross", "vecdot", "multi_dot", "diagonal", "solve_triangular",
           "lu_factor", "lu", "lu_solve", "inv_ex", "cholesky_ex", "householder_product"]
