"""`embedding_bag`: the sum, mean or max of the embedding rows in each bag of indices,
written with genesis ops (an embedding lookup, then `index_add` for sum and mean, a padded
gather and `max` along the bag for max), so its gradients are theirs; `OPS` puts it in the
registry, which gradchecks it and compares it with PyTorch.

Bags: a 2-D input (B, L) is B bags of L indices; a 1-D input is cut into bags at `offsets`
(bag i runs from offsets[i] to offsets[i + 1], the last to the end of the input, or with
`include_last_offset` to offsets[-1]). Indices equal to `padding_idx` are left out of their
bag (a mean counts only the others); an empty bag gives zeros. `scale_grad_by_freq` divides
each row's gradient by how often its index occurs in the bags, as PyTorch documents it (the
lookup's own scaling, `embedding(..., scale_grad_by_freq=True)`, over the indices kept).
"""
from __future__ import annotations

import numpy as np

from ..creation import full, zeros
from ..ops.join import cat
from ..ops.registry import OpInfo, Sample
from ..ops.samples import values
from ..ops.where import where
from ..tensor import Tensor, wrap_array
from ._layers import _renorm_rows, embedding

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool):
    """(flat indices, the bag of each, whether each is inside a bag, number of bags) as arrays
    of the input's device."""
    xp = input._device.xp
    data = input._data
    if data.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as "
                             "input is treated is a mini-batch of fixed length sequences; "
                             f"got offsets of type {type(offsets).__name__}")
        count, length = data.shape
        bag_of = xp.repeat(xp.arange(count), length)
        return data.reshape(-1), bag_of, xp.ones(data.size, dtype=bool), count
    if data.ndim != 1:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D Tensor, but got Tensor of "
                         f"dimension {data.ndim}")
    if not isinstance(offsets, Tensor) or offsets.ndim != 1:
        got = f"shape {tuple(offsets.shape)}" if isinstance(offsets, Tensor) else repr(offsets)
        raise ValueError(f"embedding_bag: offsets has to be a 1D Tensor when input is 1D, but "
                         f"got {got}")
    if offsets._data.dtype.kind not in "iu":
        raise RuntimeError(f"embedding_bag: offsets must be an integer tensor, got {offsets.dtype}")
    starts = offsets._data.astype("int64")
    count = starts.shape[0] - 1 if include_last_offset else starts.shape[0]
    if starts.shape[0] and int(starts[0]) != 0:
        raise RuntimeError(f"embedding_bag: offsets[0] has to be 0, i.e., the first sequence in "
                           f"the mini-batch has to start from position 0. However, got "
                           f"{int(starts[0])}")
    if starts.shape[0] and (bool((xp.diff(starts) < 0).any()) or int(starts[-1]) > data.size):
        raise RuntimeError("embedding_bag: offsets must be non-decreasing and at most the "
                           f"input's length {data.size}")
    positions = xp.arange(data.size)
    end = int(starts[count]) if include_last_offset else data.size
    bag_of = xp.searchsorted(starts[:max(count, 0)], positions, side="right") - 1
    return data, bag_of, (positions < end) & (bag_of >= 0), max(count, 0)


def _bag_max(rows: Tensor, bags, bag_count: int, counts) -> Tensor:
    """The elementwise max of each bag's rows (zeros for an empty bag): the rows, one bag per
    line of a (bags, longest bag) grid padded with -inf, reduced by `max` along the bag."""
    xp = rows._device.xp
    longest = int(counts.max()) if bag_count else 0
    if longest == 0:
        return zeros(bag_count, rows.shape[1], dtype=rows.dtype, device=rows._device)
    first = xp.cumsum(counts) - counts
    slot = xp.arange(bags.shape[0]) - first[bags]
    grid = xp.full((bag_count, longest), bags.shape[0], dtype="int64")
    grid[bags, slot] = xp.arange(bags.shape[0])
    filler = full((1, rows.shape[1]), float("-inf"), dtype=rows.dtype, device=rows._device)
    gathered = embedding(wrap_array(grid, rows._device), cat([rows, filler]))
    filled = wrap_array((counts > 0)[:, None], rows._device)
    return where(filled, gathered.max(dim=1).values, 0.0)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2.0,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The `mode` ("sum", "mean" or "max") of the rows of `weight` picked by each bag of
    indices: a (bags, embedding_dim) tensor. `per_sample_weights` (mode "sum" only, the
    input's shape) scales each row first. `scale_grad_by_freq` (modes "sum" and "mean"):
    the gradient of each row of `weight` is divided by how often its index occurs in the
    mini-batch's bags (padding_idx aside). `sparse=True`: a dense gradient, which
    `SparseAdam` accepts (see `embedding`).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> table = genesis.arange(8.).reshape(4, 2)
    >>> F.embedding_bag(genesis.tensor([0, 1, 3]), table, genesis.tensor([0, 2]), mode="sum")
    tensor([[2., 4.],
            [6., 7.]])
    """
    if mode not in _MODES:
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("embedding_bag: max mode does not support scaling the gradient by the "
                         "frequency (scale_grad_by_freq=True); use mode 'sum' or 'mean'")
    if not isinstance(input, Tensor) or input._data.dtype.kind not in "iu":
        what = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"embedding_bag: indices (input) must be an integer tensor, got {what}; "
                           "use t.long()")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding_bag: weight must be 2-D (num_embeddings, embedding_dim), "
                           f"got shape {tuple(weight.shape)}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                      f"per_sample_weights is only supported for mode='sum' "
                                      f"(got mode={mode!r})")
        if per_sample_weights.shape != input.shape:
            raise ValueError(f"embedding_bag: per_sample_weights {tuple(per_sample_weights.shape)} "
                             f"must have the same shape as the input {tuple(input.shape)}")
    rows_in_table = weight.shape[0]
    if padding_idx is not None:
        if not -rows_in_table <= padding_idx < rows_in_table:
            raise ValueError(f"embedding_bag: padding_idx {padding_idx} must be within the "
                             f"{rows_in_table} rows of weight")
        padding_idx %= rows_in_table
    flat, bag_of, inside, bag_count = _bags(input, offsets, include_last_offset)
    xp = input._device.xp
    if flat.size and bool(((flat < 0) | (flat >= rows_in_table)).any()):
        bad = flat[(flat < 0) | (flat >= rows_in_table)][0]
        raise RuntimeError(f"embedding_bag: index {int(bad)} is not in the valid range "
                           f"[0, {rows_in_table}) of weight's rows")
    keep = inside if padding_idx is None else inside & (flat != padding_idx)
    picked, bags = flat[keep], bag_of[keep]
    if max_norm is not None:
        _renorm_rows(weight, picked, max_norm, norm_type)
    rows = embedding(wrap_array(picked, input._device), weight,
                     scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
    if per_sample_weights is not None:
        positions = wrap_array(xp.nonzero(keep)[0], input._device)
        rows = rows * per_sample_weights.reshape(-1).index_select(0, positions).unsqueeze(1)
    counts = xp.bincount(bags, minlength=bag_count)[:bag_count]
    if mode == "max":
        return _bag_max(rows, bags, bag_count, counts)
    out = zeros(bag_count, weight.shape[1], dtype=weight.dtype, device=weight._device)
    out = out.index_add(0, wrap_array(bags, input._device), rows)
    if mode == "mean":
        sizes = xp.maximum(counts, 1)[:, None].astype(weight._data.dtype)
        out = out / wrap_array(sizes, weight._device)
    return out


def _embedding_bag_samples(rng):
    """Indices never name the padding row (its gradient is zero by definition); max-mode
    bags hold distinct rows, so their maxima are not ties."""
    def indices(shape, rows=7, avoid=None):
        return rng.choice([row for row in range(rows) if row != avoid], size=shape)

    def distinct(count, rows=7):
        return rng.permutation(rows)[:count]

    offsets = np.array([0, 2, 2, 5])

    def weighted():  # per_sample_weights is the 9th positional argument
        return (indices(6), values(rng, (7, 3)), offsets, None, 2.0, False, "sum", False,
                values(rng, (6,)))

    return [
        Sample((indices((3, 4)), values(rng, (7, 3))), {"mode": "sum"}, note="2-D sum"),
        Sample((indices((3, 4)), values(rng, (7, 3))), note="2-D mean"),
        Sample((np.stack([distinct(3) for _ in range(2)]), values(rng, (7, 3))), {"mode": "max"},
               note="2-D max"),
        Sample((indices(6), values(rng, (7, 3)), offsets), {"mode": "sum"},
               note="offsets, one empty bag"),
        Sample((indices(6), values(rng, (7, 3)), offsets), note="offsets mean"),
        Sample((distinct(6), values(rng, (7, 3)), offsets), {"mode": "max"}, note="offsets max"),
        Sample((indices(6), values(rng, (7, 3)), np.array([0, 2, 2, 6])),
               {"include_last_offset": True},
               note="include_last_offset"),
        Sample(weighted(), note="per_sample_weights"),
        Sample(weighted(), grad=(False, False, False, True),
               note="only the weights per sample need grad"),
        Sample((np.array([1, 2, 1, 4, 1, 5]), values(rng, (7, 3)), offsets),
               {"mode": "mean", "padding_idx": 1}, note="padding_idx left out of the mean"),
        Sample((indices((3, 4)), values(rng, (7, 3))), layout="transposed", note="transposed"),
        Sample((indices((3, 4)), values(rng, (7, 3))), {"mode": "sum"}, layout="strided",
               note="strided"),
    ]


def _torch_embedding_bag(torch, *args, **kwargs):
    return torch.nn.functional.embedding_bag(*args, **kwargs)


OPS = [
    OpInfo("embedding_bag", embedding_bag, _embedding_bag_samples, torch=_torch_embedding_bag,
           kinks="ties within a max bag; the padding_idx row, whose gradient is zero by "
                 "definition"),
]
