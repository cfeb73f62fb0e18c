"""`pdist`: the p-norm distances between every pair of rows of a matrix (the condensed
upper triangle, as PyTorch and SciPy), written with `index_select` and `norm` so its
gradient is theirs. `OPS` registers it for the registry's gradchecks and PyTorch comparison."""
from __future__ import annotations

from ..ops.composites import triu_indices
from ..ops.registry import OpInfo, Sample
from ..ops.samples import values
from ..tensor import Tensor

__all__ = ["pdist"]


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """||input[i] - input[j]||_p for each i < j, in row-major order: N(N-1)/2 values for an
    (N, M) input.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.pdist(genesis.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D (shape "
                           f"{tuple(input.shape)})")
    if p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got p={p}")
    if not input.is_floating_point():
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype!r}")
    first, second = triu_indices(input.shape[0], input.shape[0], 1, device=input._device)
    return (input.index_select(0, first) - input.index_select(0, second)).norm(p, 1)


def _pdist_samples(rng):
    return [
        Sample((values(rng, (4, 3)),), note="p=2"),
        Sample((values(rng, (4, 3)), 1.0), note="p=1"),
        Sample((values(rng, (3, 5)), 3.0), note="p=3"),
        Sample((values(rng, (4, 3)), float("inf")), note="p=inf"),
        Sample((values(rng, (1, 3)),), note="one row: no pairs"),
        Sample((values(rng, (4, 3)),), layout="transposed", note="transposed"),
        Sample((values(rng, (4, 3)),), layout="strided", note="strided"),
    ]


OPS = [
    OpInfo("pdist", pdist, _pdist_samples,
           torch=lambda torch, *args: torch.nn.functional.pdist(*args),
           kinks="two equal rows; for p = inf, ties between the largest differences"),
]
