"""What an op's output is (ReLU-like, tanh, sigmoid or other) and the few device reductions
`genesis.debug.activation_watch` reads from it at a sampled step.

The kind comes from the op that produced the output (its node's forward `Function`): relu,
and hardtanh clipped at 0 (relu6) are ReLU-like, their outputs exactly zero below the kink;
leaky_relu, gelu, elu and the like are not (never exactly zero), nor a hardtanh clipped below
0. A unit is one feature of the last dimension of a Linear-style output (N, ..., F), one
channel of a conv-style output (N, C, ...): outputs of 4 or more dimensions, or of 3 made
by a convolution, a channel norm or a pooling, count channels. A unit is dead when it is zero for every example of the batch;
with fewer than `MIN_EXAMPLES` values per unit (a batch of one) that says nothing and is not
measured.

>>> import numpy as np
>>> import genesis
>>> y = (genesis.tensor([[1.0, -2.0, 0.5], [3.0, -1.0, -4.0]] * 4, requires_grad=True)).relu()
>>> kind_of(y.grad_fn)
('relu', 'relu')
>>> figures = Figures.measure(np, y._data, "relu", units_axis=1)
>>> numbers = figures.read([float(value) for array in figures.readable()
...                         for value in np.ravel(array)])
>>> [round(numbers[name], 4) for name in ("mean", "std", "zeros", "dead")]
[0.75, 1.0704, 0.5, 0.3333]
"""
from __future__ import annotations

import math

import numpy as np

from ._finite_figures import dot_with_itself
from ..ops.activation import Hardtanh, Relu
from ..ops.elementwise import Mul
from ..ops.reduce import Mean, Sum
from ..ops.unary import Sigmoid, Tanh
from ..tensor import Tensor

__all__ = ["kind_of", "units_axis", "is_sum_or_mean", "multiplies", "Figures", "MIN_EXAMPLES",
           "SATURATION", "SAMPLE_VALUES"]

MIN_EXAMPLES = 8      # values per unit below which "zero for every example" is not measured
SATURATION = 0.99     # |tanh| above it, sigmoid below 1 - it or above it: saturated
SAMPLE_VALUES = 512   # values read to the host for the distribution of a sampled output

_KINDS = {Relu: ("relu", "relu"), Tanh: ("tanh", "tanh"), Sigmoid: ("sigmoid", "sigmoid")}
_CHANNEL_OPS = ("Convolution", "BatchNorm", "InstanceNorm", "GroupNorm", "Pool")  # (N, C, L)
_INDICES = {}  # (shape, id(namespace)) -> the index arrays of the values sampled


def kind_of(node) -> tuple:
    """(kind, op name) of the output `node` (a grad_fn) produced: kind "relu", "tanh",
    "sigmoid" or "other"; the op name as a user writes it ("relu6", "matmul").

    >>> import genesis
    >>> x = genesis.ones(2, requires_grad=True)
    >>> kind_of(genesis.nn.functional.relu6(x).grad_fn), kind_of((x * 2).grad_fn)
    (('relu', 'relu6'), ('other', 'mul'))
    """
    forward = type(node)._forward_cls
    found = _KINDS.get(forward)
    if found is not None:
        return found
    if forward is Hardtanh:
        low, high = node.bounds
        if low == 0:
            return "relu", "relu6" if high == 6 else "hardtanh"
        return "other", "hardtanh"
    name = type(node).__name__
    return "other", (name[:-len("Backward")] if name.endswith("Backward") else name).lower()


def is_sum_or_mean(node) -> bool:
    """Whether `node` (a grad_fn) is a sum or a mean (of a loss, or a pooling).

    >>> import genesis
    >>> x = genesis.ones(2, 3, requires_grad=True)
    >>> is_sum_or_mean(x.mean().grad_fn), is_sum_or_mean((x @ x.T).grad_fn)
    (True, False)
    """
    return type(node)._forward_cls in (Sum, Mean)


def multiplies(node, args: tuple, taken) -> bool:
    """Whether `node` (a grad_fn, with its forward's `args`) multiplies the tensor `taken`
    elementwise by another tensor of more than one value: `taken` is then a gate (an LSTM's
    or a GRU's, a highway layer's, the sigmoid of x * sigmoid(x)), not a scale by a number.

    >>> import genesis
    >>> x = genesis.ones(2, 3, requires_grad=True)
    >>> s = x.sigmoid()
    >>> multiplies((s * x).grad_fn, (s, x), s), multiplies((s * 2).grad_fn, (s, 2), s)
    (True, False)
    """
    if type(node)._forward_cls is not Mul or len(args) != 2:
        return False
    other = args[1] if args[0] is taken else args[0]
    return other is not taken and isinstance(other, Tensor) and other._data.size > 1


def units_axis(output, node) -> int | None:
    """The axis of an output's units: the channels (axis 1) of a conv-style output (4 or more
    dimensions, or 3 made from a convolution, a channel norm or a pooling: (N, C, L)), else
    the last; None for a 0-d output.

    >>> import genesis
    >>> y = genesis.nn.Conv1d(2, 4, 3)(genesis.randn(5, 2, 10)).relu()
    >>> units_axis(y, y.grad_fn), units_axis(y.sum(dim=2), y.sum(dim=2).grad_fn)
    (1, 1)
    """
    if output.ndim == 0:
        return None
    if output.ndim >= 4:
        return 1
    if output.ndim == 3:
        for child in node._next_nodes:
            if child is not None and any(part in type(child).__name__ for part in _CHANNEL_OPS):
                return 1
    return output.ndim - 1


class Figures:
    """The figures of one output (or of several calls' outputs of one module in a step,
    `merged`), kept on its device as 0-d arrays: the values' `count`, `mean` and sum of squared
    deviations (`m2`), the counts of non-zero, finite and (tanh, sigmoid) saturated values,
    which units were non-zero for some example (`alive`, kind "relu", when measurable) and a
    `sample` of at most SAMPLE_VALUES values for the distribution (at the steps that take
    one; of merged figures, drawn from each output's sample in proportion to its values, once
    read). `readable()` gives the arrays to read, `read()` the numbers from their values."""

    __slots__ = ("xp", "kind", "count", "mean", "m2", "nonzero", "finite", "saturated",
                 "alive", "sample", "parts")

    def __init__(self, xp, kind: str, count: int, mean, m2, nonzero, finite, saturated, alive,
                 sample):
        self.xp, self.kind, self.count, self.mean, self.m2 = xp, kind, count, mean, m2
        self.nonzero, self.finite, self.saturated, self.alive = nonzero, finite, saturated, alive
        self.sample = sample
        self.parts = None  # merged: [(count, sample)] of each output, until the sample is drawn

    @classmethod
    def measure(cls, xp, data, kind: str, units_axis: int | None, distribution: bool = True):
        """Figures of the array `data` (of namespace `xp`: NumPy or CuPy) of an output of
        `kind`; `units_axis` as `units_axis()` gives it. With `distribution`, a sample of the
        values and the count of NaN/Inf among them too."""
        size = data.size
        if data.dtype.kind not in "fc":
            data = data.astype(xp.float64)
        alive = saturated = None
        if kind == "relu" and units_axis is not None and \
                size >= MIN_EXAMPLES * data.shape[units_axis]:
            others = tuple(axis for axis in range(data.ndim) if axis != units_axis % data.ndim)
            nonzero = data != 0
            alive = nonzero.any(axis=others) if others else nonzero
            nonzero = xp.count_nonzero(nonzero)
        else:
            nonzero = xp.count_nonzero(data)
        if kind == "tanh":
            saturated = xp.count_nonzero(xp.abs(data) > SATURATION)
        elif kind == "sigmoid":
            saturated = xp.count_nonzero((data < 1 - SATURATION) | (data > SATURATION))
        finite = xp.count_nonzero(xp.isfinite(data)) if distribution else None
        mean, m2 = _mean_and_m2(xp, data)
        return cls(xp, kind, size, mean, m2, nonzero, finite, saturated, alive,
                   _sample(xp, data) if distribution else None)

    @property
    def units(self) -> int | None:
        """How many units the dead ones are counted among (None: not measured)."""
        return None if self.alive is None else self.alive.size

    def merged(self, other: "Figures") -> "Figures":
        """The figures of this output and `other` together (another call of the same module
        in the step, or another time step of a recurrent layer, of the same kind); the sample
        is drawn from both. Units are counted only where both outputs have the same units."""
        count = self.count + other.count
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.count / count)
        m2 = self.m2 + other.m2 + delta * delta * (self.count * other.count / count)
        saturated = self.saturated + other.saturated if self.saturated is not None and \
            other.saturated is not None else None
        alive = None
        if self.alive is not None and other.alive is not None and \
                self.alive.shape == other.alive.shape:
            alive = self.alive | other.alive
        finite = self.finite + other.finite if self.finite is not None and \
            other.finite is not None else None
        parts = None
        if (self.sample is not None or self.parts is not None) and \
                (other.sample is not None or other.parts is not None):
            parts = self.parts if self.parts is not None else [(self.count, self.sample)]
            parts += other.parts if other.parts is not None else [(other.count, other.sample)]
        together = Figures(self.xp, self.kind, count, mean, m2, self.nonzero + other.nonzero,
                           finite, saturated, alive, None)
        together.parts = parts
        return together

    def _draw_sample(self) -> None:
        """The sample of merged figures, from each part's in proportion to its count."""
        if self.parts is None:
            return
        parts, self.parts = self.parts, None
        if sum(sample.size for _, sample in parts) <= SAMPLE_VALUES:
            self.sample = self.xp.concatenate([sample for _, sample in parts])
            return
        drawn = []
        for count, sample in parts:
            take = min(sample.size, round(SAMPLE_VALUES * count / self.count))
            if take:
                spread = np.linspace(0, sample.size - 1, take).astype(np.int64)
                drawn.append(sample[self.xp.asarray(spread)] if take < sample.size else sample)
        self.sample = self.xp.concatenate(drawn)

    def readable(self) -> list:
        """The arrays to read, in the order `read` takes their values."""
        self._draw_sample()
        xp, count = self.xp, self.count
        arrays = [self.mean, xp.sqrt(self.m2 / count), 1.0 - self.nonzero / count]
        if self.alive is not None:  # (the share of dead units is worked out on the host)
            arrays.append(self.alive.reshape(-1))
        if self.saturated is not None:
            arrays.append(self.saturated / count)
        if self.sample is not None:
            arrays += [count - self.finite, self.sample]
        return arrays

    @property
    def width(self) -> int:
        """How many floats the `readable()` arrays read as."""
        self._draw_sample()
        return 3 + (self.alive.size if self.alive is not None else 0) + \
            (self.saturated is not None) + (1 + self.sample.size if self.sample is not None else 0)

    def read(self, values: list) -> dict:
        """The figures as numbers from the floats `values` read for `readable()`: {"mean",
        "std" (of the population), "zeros", "dead", "saturated" (fractions; None where not
        measured), "alive" (which units were non-zero for some example: a NumPy bool array,
        None where not measured), "non_finite", "sample" (None without a distribution)}."""
        self._draw_sample()
        mean, std, zeros = values[:3]
        position = 3
        dead = alive = saturated = non_finite = sample = None
        if self.alive is not None:
            units = self.alive.size
            alive = np.array(values[position:position + units]) != 0
            dead, position = 1.0 - int(np.count_nonzero(alive)) / units, position + units
        if self.saturated is not None:
            saturated, position = values[position], position + 1
        if self.sample is not None:
            non_finite, sample = int(values[position]), values[position + 1:]
        return {"mean": mean, "std": std, "zeros": zeros, "dead": dead, "alive": alive,
                "saturated": saturated, "non_finite": non_finite, "sample": sample}


def _mean_and_m2(xp, data) -> tuple:
    """The mean of `data` and the sum of its squared deviations from it, in float64. A NumPy
    float32/float64 array is summed in its own dtype, and the deviations from that mean (a
    difference of nearby floats: exact) are squared and summed by `dot_with_itself`, then
    corrected by their own mean: four passes and no widened copy, against seven for
    `var(dtype=float64)`."""
    flat = data.reshape(-1)
    near = flat.mean() if xp is np and data.dtype in _OWN_DTYPE_SUMS and data.size else None
    if near is None or not math.isfinite(near):  # (NaN/Inf: as var() says it)
        return data.mean(dtype=xp.float64), data.var(dtype=xp.float64) * data.size
    deviations = flat - near
    offset = float(deviations.sum()) / flat.size  # the rest of the mean: rounding's size
    m2 = float(dot_with_itself(np, deviations)) - offset * offset * flat.size
    return np.float64(float(near) + offset), np.float64(max(m2, 0.0))


_OWN_DTYPE_SUMS = (np.dtype(np.float32), np.dtype(np.float64))


def _sample(xp, data):
    """At most SAMPLE_VALUES values of `data`, spread over it (the same positions at every
    step for one shape); no copy of the whole array."""
    if data.size <= SAMPLE_VALUES:
        return data.reshape(-1)
    key = (data.shape, id(xp))
    indices = _INDICES.get(key)
    if indices is None:
        if len(_INDICES) >= 256:  # shapes that change every step (sequences): keep a few
            _INDICES.clear()
        flat = np.random.default_rng(0).choice(data.size, SAMPLE_VALUES, replace=False)
        flat.sort()
        indices = _INDICES[key] = tuple(xp.asarray(axis)
                                        for axis in np.unravel_index(flat, data.shape))
    return data[indices]
