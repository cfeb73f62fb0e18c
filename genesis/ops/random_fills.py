"""Random numbers drawn into a tensor or as a new one: the in-place fills (`normal_`,
`uniform_`, `bernoulli_`, `random_`, `exponential_`), and `bernoulli`, `multinomial`,
`normal`. Each takes `generator=` (a `genesis.Generator`); without one it draws from the
device's generator.

An in-place fill is a `copy_` of the drawn values, so it follows copy_'s rules: refused on
a leaf that requires grad outside `genesis.no_grad()`, and it cuts the gradient to the
tensor's old values, as in PyTorch.
"""
from __future__ import annotations

import math

import numpy as np

from ..creation import empty
from ..device import cpu
from ..dtypes import finfo
from ..random import generator_for
from ..tensor import Tensor, wrap_array
from .fill import copy_

__all__ = ["bernoulli", "multinomial", "normal", "poisson", "binomial"]


def _floating(tensor: Tensor, op: str) -> None:
    if not tensor.is_floating_point():
        raise RuntimeError(f"{op}: expected a floating point tensor, got {tensor.dtype!r}")


def _drawn_into(self: Tensor, array) -> Tensor:
    return copy_(self, wrap_array(array.astype(self._data.dtype, copy=False), self._device))


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of N(mean, std²), in place.

    >>> import genesis
    >>> genesis.zeros(3).normal_(generator=genesis.Generator().manual_seed(0)).shape
    genesis.Size([3])
    """
    _floating(self, "normal_")
    if std < 0:
        raise RuntimeError(f"normal_ expects std >= 0.0, but found std {std}")
    draws = generator_for(self._device, generator)
    return _drawn_into(self, draws.standard_normal(self.shape) * std + mean)


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of U[from_, to), in place."""
    _floating(self, "uniform_")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} "
                           f"> to={to}")
    draws = generator_for(self._device, generator)
    return _drawn_into(self, draws.random(self.shape) * (to - from_) + from_)


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of the exponential distribution of rate `lambd`, in place."""
    _floating(self, "exponential_")
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    draws = generator_for(self._device, generator)
    return _drawn_into(self, draws.exponential(1.0 / lambd, self.shape))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of the Cauchy distribution (location `median`, scale `sigma`), in
    place."""
    _floating(self, "cauchy_")
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    draws = generator_for(self._device, generator)
    uniform = draws.random(self.shape)  # the inverse CDF (CuPy's generators have no cauchy)
    return _drawn_into(self, self._device.xp.tan(np.pi * (uniform - 0.5)) * sigma + median)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with exp of samples of N(mean, std²), in place."""
    _floating(self, "log_normal_")
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    draws = generator_for(self._device, generator)
    return _drawn_into(self, self._device.xp.exp(draws.standard_normal(self.shape) * std + mean))


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...), in
    place."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    draws = generator_for(self._device, generator)
    return _drawn_into(self, draws.geometric(p, self.shape))


def poisson(input: Tensor, generator=None) -> Tensor:
    """Samples of Poisson distributions whose rates are `input`'s elements (same shape and
    dtype; not differentiable).

    >>> import genesis
    >>> genesis.poisson(genesis.zeros(3))
    tensor([0., 0., 0.])
    """
    _floating(input, "poisson")
    rates = input._data
    if bool((rates < 0).any()):
        raise RuntimeError("poisson: the rates must be non-negative")
    draws = generator_for(input._device, generator)
    return wrap_array(draws.poisson(rates).astype(rates.dtype), input._device)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Samples of Binomial(count, prob), elementwise (broadcast), as floats like `count`."""
    _floating(count, "binomial")
    _check_probabilities(prob._data if prob._device.xp is not np else np.asarray(prob._data),
                         "binomial")
    draws = generator_for(count._device, generator)
    trials = count._device.xp.broadcast_arrays(count._data, prob._data)
    return wrap_array(draws.binomial(trials[0].astype(np.int64), trials[1]).astype(
        count._data.dtype), count._device)


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 (probability `p`, a number or a tensor of probabilities) or 0, in place."""
    probabilities = p._data if isinstance(p, Tensor) else p
    _check_probabilities(np.asarray(probabilities) if self._device.xp is np else probabilities,
                         "bernoulli_")
    draws = generator_for(self._device, generator)
    return _drawn_into(self, draws.random(self.shape) < probabilities)


def random_(self: Tensor, from_: int = 0, to: int | None = None, *, generator=None) -> Tensor:
    """Fill with integers uniform in [from_, to) (`random_(to)`: [0, to)), in place."""
    if to is None:
        from_, to = 0, from_ if from_ else _largest_integer(self)
    if to <= from_:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} "
                           f">= to={to}")
    draws = generator_for(self._device, generator)
    return _drawn_into(self, draws.integers(from_, to, self.shape))


def _largest_integer(tensor: Tensor) -> int:
    """random_()'s default upper end: 2**mantissa bits for floats (every integer below is
    exact), the dtype's largest value + 1 for integers."""
    dtype = tensor._data.dtype
    if tensor.is_floating_point():  # (bfloat16 too, whose dtype kind is "V")
        return 2 ** (round(-math.log2(finfo(tensor.dtype).eps)) + 1)
    if dtype.kind == "b":
        return 2
    return int(np.iinfo(dtype).max) + 1


def _check_probabilities(values, op: str) -> None:
    if ((values < 0) | (values > 1)).any() if hasattr(values, "any") else not 0 <= values <= 1:
        raise RuntimeError(f"{op}: probabilities must be in [0, 1]")


def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """1 with the probability in each element of `input` (or `p`), else 0, as a new tensor
    of input's dtype.

    >>> import genesis
    >>> genesis.bernoulli(genesis.tensor([0.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    probabilities = input._data if p is None else (p._data if isinstance(p, Tensor) else p)
    _check_probabilities(probabilities, "bernoulli")
    draws = generator_for(input._device, generator)
    drawn = draws.random(input.shape) < probabilities
    return wrap_array(drawn.astype(input._data.dtype if input.is_floating_point() else "float32"),
                      input._device)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Indices drawn with probabilities proportional to the (non-negative) weights in each
    row of `input` (1-d: one row), `num_samples` per row, int64.

    >>> import genesis
    >>> genesis.multinomial(genesis.tensor([0.0, 0.0, 1.0]), 2, replacement=True).tolist()
    [2, 2]
    """
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got {input.ndim}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial: only floating point weights are supported, got "
                           f"{input.dtype!r}")
    weights = np.asarray(input.detach().cpu()._data if input._device.xp is not np else input._data,
                         np.float64)
    rows = weights.reshape(-1, weights.shape[-1])
    if (rows < 0).any() or not np.isfinite(rows).all():
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError(f"multinomial: cannot sample n_sample ({num_samples}) > prob_dist.size(-1) "
                           f"({rows.shape[1]}) samples without replacement")
    draws = generator_for(generator.device if generator is not None else cpu, generator)
    if replacement:
        chosen = np.stack([draws.choice(len(row), size=num_samples, p=row / row.sum())
                           for row in rows]).astype(np.int64)
    else:  # as PyTorch on the CPU: the top keys w / q, q ~ Exp(1) (zero weights come last)
        keys = rows / draws.standard_exponential(rows.shape)
        chosen = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples].astype(np.int64)
    chosen = chosen.reshape(num_samples) if input.ndim == 1 else chosen
    return wrap_array(input._device.xp.asarray(chosen), input._device)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None) -> Tensor:
    """Samples of N(mean, std²): elementwise for tensor `mean` and/or `std` (broadcast), or
    of shape `size` for numbers.

    >>> import genesis
    >>> genesis.normal(0.0, 1.0, (2, 3)).shape, genesis.normal(genesis.zeros(4), 1.0).shape
    (genesis.Size([2, 3]), genesis.Size([4]))
    """
    tensors = [value for value in (mean, std) if isinstance(value, Tensor)]
    if tensors:
        target = tensors[0]
        shape = np.broadcast_shapes(*(np.shape(v._data) if isinstance(v, Tensor) else () for v in (mean, std)))
        draws = generator_for(target._device, generator)
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
        array = draws.standard_normal(shape) * s + m
        return wrap_array(array.astype(target._data.dtype, copy=False), target._device)
    if size is None:
        raise TypeError("normal: give tensor mean/std, or numbers and a size")
    return normal_(empty(*size if isinstance(size, tuple | list) else (size,), dtype=dtype, device=device),
                   mean, std, generator=generator)


METHODS = {"normal_": normal_, "uniform_": uniform_, "exponential_": exponential_,
           "bernoulli_": bernoulli_, "random_": random_, "bernoulli": bernoulli,
           "multinomial": multinomial, "cauchy_": cauchy_, "log_normal_": log_normal_,
           "geometric_": geometric_}
OPS: list = []
