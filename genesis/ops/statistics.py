"""Statistics as compositions of genesis ops (their gradients are those ops'): `nanmean`,
`nansum`, `quantile`, `nanquantile`, `cov`, `corrcoef`; and `histc` (counts, no gradient)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import normalize_dim
from .gather import gather
from .join import stack
from .composites import TiedValue
from .registry import OpInfo, Sample
from .sorting import sort
from .where import where

__all__ = ["nanmean", "nansum", "quantile", "nanquantile", "cov", "corrcoef", "histc", "mode",
           "nanmedian"]

mode_result = namedtuple("mode", ("values", "indices"))
median_result = namedtuple("nanmedian", ("values", "indices"))


def _not_nan(input: Tensor) -> Tensor:
    return wrap_array(~input._device.xp.isnan(input._data), input._device)


def nansum(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The sum, NaN counted as 0."""
    return where(_not_nan(input), input, 0.0).sum(dim, keepdim=keepdim)


def nanmean(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The mean of the elements that are not NaN.

    >>> import genesis
    >>> nanmean(genesis.tensor([1.0, float("nan"), 3.0])).item()
    2.0
    """
    kept = _not_nan(input)
    count = kept.sum(dim, keepdim=keepdim).to(input.dtype)
    return nansum(input, dim, keepdim) / count


def quantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles (q a number or a 1-D tensor in [0, 1]) of all elements or along
    `dim`, interpolated between the two nearest ranks ("linear", "lower", "higher",
    "nearest", "midpoint"). A q tensor adds a leading dim.

    >>> import genesis
    >>> quantile(genesis.tensor([1.0, 2.0, 3.0, 4.0]), 0.5).item()
    2.5
    """
    input, q = autocast_inputs(FLOAT32_ON_CPU, input, q)
    return _quantile(input, q, dim, keepdim, interpolation, "quantile")


def nanquantile(input: Tensor, q, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """`quantile` of the elements that are not NaN, over all elements."""
    input, q = autocast_inputs(FLOAT32_ON_CPU, input, q)
    if dim is not None:
        raise NotImplementedError("nanquantile along a dim is not supported by genesis yet")
    kept = input.reshape(-1)[wrap_array(~input._device.xp.isnan(input._data.reshape(-1)), input._device)]
    return _quantile(kept, q, None, keepdim, interpolation, "nanquantile")


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str, op: str) -> Tensor:
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise ValueError(f"{op}: interpolation must be linear, lower, higher, nearest or midpoint, "
                         f"got {interpolation!r}")
    scalar = not isinstance(q, Tensor)
    qs = np.atleast_1d(np.asarray(q.tolist() if isinstance(q, Tensor) else q, dtype=np.float64))
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    flat = dim is None
    values = sort(input.reshape(-1) if flat else input, 0 if flat else dim).values
    axis = 0 if flat else normalize_dim(dim, input.ndim, op)
    count = values.shape[axis]
    if count == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    results = []
    for fraction in qs:
        rank = fraction * (count - 1)
        low, high = int(np.floor(rank)), int(np.ceil(rank))
        if interpolation == "lower":
            high = low
        elif interpolation == "higher":
            low = high
        elif interpolation == "nearest":
            low = high = int(np.round(rank))  # half to even, as PyTorch
        lower, upper = values.narrow(axis, low, 1), values.narrow(axis, high, 1)
        weight = 0.5 if interpolation == "midpoint" else rank - low if interpolation == "linear" else 0.0
        picked = lower + (upper - lower) * weight if high != low else lower
        if keepdim and flat:
            picked = picked.reshape((1,) * input.ndim)
        elif not keepdim:
            picked = picked.squeeze(axis) if not flat else picked.reshape(())
        results.append(picked)
    if scalar:
        return results[0]
    return stack(results, 0)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> tuple:
    """(values, indices): along `dim`, the most frequent value (the smallest of equally
    frequent ones) and the index of its last occurrence, as PyTorch.

    >>> import genesis
    >>> mode(genesis.tensor([1, 2, 2, 3, 3, 1, 1]))
    mode(values=tensor(1), indices=tensor(6))
    """
    if input.ndim == 0:
        return mode_result(input.clone(), wrap_array(input._device.xp.zeros((), np.int64), input._device))
    dim = normalize_dim(dim, input.ndim, "mode")
    data = input._data if input._device.xp is np else input._data.get()
    moved = np.moveaxis(data, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    last = np.empty(rows.shape[0], np.int64)
    for number, row in enumerate(rows):
        values, counts = np.unique(row, return_counts=True)
        best = values[np.argmax(counts)]
        last[number] = row.shape[0] - 1 - int(np.argmax(row[::-1] == best))
    index = np.expand_dims(last.reshape(moved.shape[:-1]), dim)
    indices = wrap_array(input._device.xp.asarray(index), input._device)
    values = gather(input, dim, indices)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return mode_result(values, indices)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median of the values that are not NaN (NaN where all are): of all elements
    (a 0-d tensor), or along `dim` the named tuple (values, indices).

    >>> import genesis
    >>> nanmedian(genesis.tensor([1.0, float("nan"), 3.0, 2.0])).item()
    2.0
    """
    flat = dim is None
    source = input.reshape(-1) if flat else input
    axis = 0 if flat else normalize_dim(dim, input.ndim, "nanmedian")
    ordered = sort(source, axis)  # NaN sorts last
    xp = input._device.xp
    kept = (~xp.isnan(source._data)).sum(axis=axis, keepdims=True)
    position = wrap_array(xp.maximum(kept - 1, 0) // 2, input._device)
    values = gather(ordered.values, axis, position)
    indices = gather(ordered.indices, axis, position)
    if flat:
        return TiedValue.apply(input, values.reshape(()).detach())
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return median_result(values, indices)


def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of `input` (observations in the
    columns), dividing by N - correction."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov with fweights or aweights is not supported by genesis yet")
    observations = input if input.ndim == 2 else input.reshape(1, -1)
    centered = observations - observations.mean(1, keepdim=True)
    divisor = max(observations.shape[1] - correction, 0)
    result = centered @ centered.transpose(0, 1) / divisor
    return result.reshape(()) if input.ndim < 2 else result


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of `input`, clipped to [-1, 1]."""
    covariance = cov(input)
    if input.ndim < 2:
        return covariance / covariance
    deviation = covariance.diagonal().sqrt()
    return (covariance / deviation.unsqueeze(1) / deviation.unsqueeze(0)).clamp(-1, 1)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts of the elements in `bins` equal bins between min and max (the data's range when
    both are 0); elements outside are ignored. Float, as in PyTorch."""
    data = input._data
    low, high = float(min), float(max)
    if low == high == 0 and data.size:
        low, high = float(data.min()), float(data.max())
    if low == high:
        low, high = low - 1, high + 1
    counts, _ = np.histogram(np.asarray(data.get() if hasattr(data, "get") else data), bins, (low, high))
    return wrap_array(input._device.xp.asarray(counts.astype(data.dtype)), input._device)


METHODS = {"nanmean": nanmean, "nansum": nansum, "quantile": quantile, "nanquantile": nanquantile,
           "histc": histc, "mode": mode, "nanmedian": nanmedian, "cov": cov,
           "corrcoef": corrcoef}

OPS = [
    OpInfo("nanmean", nanmean, lambda rng: [
        Sample((samples.values(rng, (3, 4)),), note="all"),
        Sample((samples.values(rng, (3, 4)), 1), note="dim 1")],
        torch=lambda torch, *a: torch.nanmean(*a)),
    OpInfo("quantile", quantile, lambda rng: [
        Sample((samples.values(rng, (5,)), 0.3), note="1-D"),
        Sample((samples.values(rng, (3, 6)), 0.75, 1), note="dim 1"),
        Sample((samples.values(rng, (4, 5)), 0.5, 0, True), note="keepdim")], kinks="ties",
        torch=lambda torch, *a: torch.quantile(*a)),
    OpInfo("cov", cov, lambda rng: [Sample((samples.values(rng, (3, 6)),), note="3 variables")],
           torch=lambda torch, a: torch.cov(a)),
    OpInfo("corrcoef", corrcoef, lambda rng: [Sample((samples.values(rng, (3, 6)),), note="3 variables")],
           torch=lambda torch, a: torch.corrcoef(a)),
]
