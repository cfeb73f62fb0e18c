"""Running extremes and log-sum-exp along a dim: cummax, cummin (values gathered at the
running argmax/argmin, so Gather's gradient serves them) and logcumsumexp (a scan of
logaddexp, exact where values differ by more than exp can hold)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..tensor import Tensor, wrap_array
from . import samples
from ._operands import normalize_dim
from .binary_math import logaddexp
from .gather import gather
from .join import cat
from .registry import OpInfo, Sample

__all__ = ["cummax", "cummin", "logcumsumexp"]

cummax_result = namedtuple("cummax", ("values", "indices"))
cummin_result = namedtuple("cummin", ("values", "indices"))


def _running_index(data, dim: int, better) -> np.ndarray:
    """Along `dim`, the index of the best element so far (the latest among equals, as
    PyTorch; NaN wins and stays)."""
    moved = np.moveaxis(np.asarray(data), dim, -1)
    best = np.zeros(moved.shape, np.int64)
    for position in range(1, moved.shape[-1]):
        previous = np.take_along_axis(moved, best[..., position - 1:position], -1)[..., 0]
        current = moved[..., position]
        take = better(current, previous) | np.isnan(current) | ((current == previous) & ~np.isnan(previous))
        best[..., position] = np.where(take, position, best[..., position - 1])
    return np.moveaxis(best, -1, dim)


def _cumulative_extreme(input: Tensor, dim: int, better, result, op: str):
    if input.ndim == 0:
        return result(input.clone(), wrap_array(input._device.xp.zeros((), np.int64), input._device))
    dim = normalize_dim(dim, input.ndim, op)
    data = input._data if input._device.xp is np else input._data.get()
    indices = wrap_array(input._device.xp.asarray(_running_index(data, dim, better)), input._device)
    return result(gather(input, dim, indices), indices)


def cummax(input: Tensor, dim: int) -> tuple:
    """(values, indices) of the running maximum along `dim`.

    >>> import genesis
    >>> cummax(genesis.tensor([1., 3., 2., 5.]), 0)
    cummax(values=tensor([1., 3., 3., 5.]), indices=tensor([0, 1, 1, 3]))
    """
    return _cumulative_extreme(input, dim, np.greater, cummax_result, "cummax")


def cummin(input: Tensor, dim: int) -> tuple:
    """(values, indices) of the running minimum along `dim`."""
    return _cumulative_extreme(input, dim, np.less, cummin_result, "cummin")


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along `dim`, computed as a running logaddexp (no overflow or
    underflow where values lie far apart).

    >>> import genesis
    >>> logcumsumexp(genesis.tensor([-1000.0, 0.0]), 0).tolist()
    [-1000.0, 0.0]
    """
    if input.ndim == 0:
        return input.clone()
    dim = normalize_dim(dim, input.ndim, "logcumsumexp")
    extent = input.shape[dim]
    if extent == 0:
        return input.clone()
    running = input.narrow(dim, 0, 1)
    pieces = [running]
    for position in range(1, extent):
        running = logaddexp(running, input.narrow(dim, position, 1))
        pieces.append(running)
    return cat(pieces, dim)


METHODS = {"cummax": cummax, "cummin": cummin, "logcumsumexp": logcumsumexp}

OPS = [
    OpInfo("cummax", lambda *a: cummax(*a).values, lambda rng: [
        Sample((samples.values(rng, (3, 5)), 1), note="dim 1"),
        Sample((samples.values(rng, (4, 3)), 0), note="dim 0")], kinks="ties",
        torch=lambda torch, *a: torch.cummax(*a).values),
    OpInfo("cummin", lambda *a: cummin(*a).values, lambda rng: [
        Sample((samples.values(rng, (3, 5)), -1), note="last dim")], kinks="ties",
        torch=lambda torch, *a: torch.cummin(*a).values),
    OpInfo("logcumsumexp", logcumsumexp, lambda rng: [
        Sample((samples.values(rng, (3, 5)), 1), note="dim 1"),
        Sample((samples.values(rng, (4, 2)), 0), note="dim 0")],
        torch=lambda torch, *a: torch.logcumsumexp(*a)),
]
