"""Rearranging and combining tensors, as compositions of genesis ops (their gradients are
those ops'): `fliplr`, `flipud`, `rot90`, `cartesian_prod`, `kron`, `block_diag`, `cross`."""
from __future__ import annotations

from ..tensor import Tensor
from . import samples
from ._operands import normalize_dim
from .composites import meshgrid
from .join import cat, stack
from .pad import pad
from .registry import OpInfo, Sample

__all__ = ["fliplr", "flipud", "rot90", "cartesian_prod", "kron", "block_diag", "cross"]


def fliplr(input: Tensor) -> Tensor:
    """Reversed along dim 1 (columns of a matrix)."""
    if input.ndim < 2:
        raise RuntimeError("fliplr: input must be >= 2-d")
    return input.flip(1)


def flipud(input: Tensor) -> Tensor:
    """Reversed along dim 0 (rows)."""
    if input.ndim < 1:
        raise RuntimeError("flipud: input must be >= 1-d")
    return input.flip(0)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotated by 90 degrees k times in the plane of `dims`, from the first towards the second.

    >>> import genesis
    >>> rot90(genesis.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    first, second = (normalize_dim(d, input.ndim, "rot90") for d in dims)
    if first == second:
        raise RuntimeError(f"rot90: the two dims must differ, got {tuple(dims)}")
    k %= 4
    if k == 1:
        return input.flip(second).transpose(first, second)
    if k == 2:
        return input.flip(first).flip(second)
    if k == 3:
        return input.transpose(first, second).flip(second)
    return input.clone()


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one element from each 1-D tensor, as rows (a 1-D tensor alone is
    returned as it is)."""
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([grid.reshape(-1) for grid in grids], 1)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: each element of `input` times the whole of `other`.

    >>> import genesis
    >>> kron(genesis.tensor([[1, 2]]), genesis.tensor([[1], [10]])).tolist()
    [[1, 2], [10, 20]]
    """
    ndim = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (ndim - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (ndim - other.ndim) + tuple(other.shape))
    spread_a = a.reshape(tuple(x for extent in a.shape for x in (extent, 1)))
    spread_b = b.reshape(tuple(x for extent in b.shape for x in (1, extent)))
    return (spread_a * spread_b).reshape(tuple(ea * eb for ea, eb in zip(a.shape, b.shape)))


def block_diag(*tensors) -> Tensor:
    """The tensors (0-, 1- or 2-D) as blocks on the diagonal of a matrix of zeros."""
    blocks = [t.reshape(1, 1) if t.ndim == 0 else t.reshape(1, -1) if t.ndim == 1 else t
              for t in tensors]
    if any(b.ndim != 2 for b in blocks):
        raise RuntimeError("block_diag: Input tensors must have 2 or fewer dimensions")
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for block in blocks:
        rows.append(pad(block, (left, width - left - block.shape[1])))
        left += block.shape[1]
    return cat(rows, 0)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along `dim` (default: the first dim of size 3, as
    torch.cross did; PyTorch now recommends naming it)."""
    if dim is None:
        dim = next((d for d, extent in enumerate(input.shape) if extent == 3), None)
        if dim is None:
            raise RuntimeError(f"cross: no dimension of size 3 in input of shape {tuple(input.shape)}")
    dim = normalize_dim(dim, input.ndim, "cross")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"cross: inputs dimension {dim} must have length 3, got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    a = [input.narrow(dim, i, 1) for i in range(3)]
    b = [other.narrow(dim, i, 1) for i in range(3)]
    return cat([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], dim)


METHODS = {"fliplr": fliplr, "flipud": flipud, "rot90": rot90, "kron": kron, "cross": cross}

OPS = [
    OpInfo("rot90", rot90, lambda rng: [
        Sample((samples.values(rng, (2, 3)),), note="k 1"),
        Sample((samples.values(rng, (2, 3, 4)), 2, (1, 2)), note="k 2 dims 1,2"),
        Sample((samples.values(rng, (3, 2)), -1), note="k -1")],
        torch=lambda torch, *a: torch.rot90(*a)),
    OpInfo("kron", kron, lambda rng: [
        Sample((samples.values(rng, (2, 2)), samples.values(rng, (3, 2))), note="matrices"),
        Sample((samples.values(rng, (3,)), samples.values(rng, (2, 2))), note="vector, matrix")],
        torch=lambda torch, *a: torch.kron(*a)),
    OpInfo("block_diag", lambda *a: block_diag(*a), lambda rng: [
        Sample((samples.values(rng, (2, 2)), samples.values(rng, (1, 3)), samples.values(rng, (2,))),
               note="three blocks")],
        torch=lambda torch, *a: torch.block_diag(*a)),
    OpInfo("cross", cross, lambda rng: [
        Sample((samples.values(rng, (4, 3)), samples.values(rng, (4, 3)), 1), note="dim 1"),
        Sample((samples.values(rng, (3, 2)), samples.values(rng, (3, 2)), 0), note="dim 0")],
        torch=lambda torch, *a: torch.cross(*a)),
    OpInfo("cartesian_prod", lambda *a: cartesian_prod(*a), lambda rng: [
        Sample((samples.values(rng, (2,)), samples.values(rng, (3,))), note="two vectors")],
        torch=lambda torch, *a: torch.cartesian_prod(*a)),
]
