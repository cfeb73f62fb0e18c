"""Special functions (PyTorch's `torch.special`): the ones genesis has, under their special
names, and a few written from them: expit, erfc, ndtr, entr, xlog1py, sinc. Their gradients
are those of the ops they are made of."""
from __future__ import annotations

import math

from .ops.composites import logit, xlogy
from .ops.softmax import log_softmax, logsumexp, softmax
from .ops.unary import erf, exp2, expm1, log1p, sigmoid
from .ops.where import where
from .tensor import Tensor

__all__ = ["expit", "logit", "erf", "erfc", "ndtr", "entr", "xlogy", "xlog1py", "sinc", "exp2",
           "expm1", "log1p", "logsumexp", "softmax", "log_softmax"]

expit = sigmoid


def erfc(input: Tensor) -> Tensor:
    """1 - erf(x)."""
    return 1 - erf(input)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal distribution function: 0.5 (1 + erf(x / √2)).

    >>> import genesis
    >>> ndtr(genesis.tensor([0.0])).tolist()
    [0.5]
    """
    return 0.5 * (1 + erf(input / math.sqrt(2)))


def entr(input: Tensor) -> Tensor:
    """-x log x elementwise: 0 at 0, -inf below 0."""
    positive = where(input > 0, input, 1.0)
    return where(input > 0, -positive * positive.log(), where(input == 0, 0.0, -math.inf))


def xlog1py(input, other) -> Tensor:
    """x * log1p(y), 0 where x is 0."""
    x = input if isinstance(input, Tensor) else other.new_tensor(input)
    y = other if isinstance(other, Tensor) else x.new_tensor(other)
    product = x * log1p(where(x == 0, 0.0, y))  # (no 0 * -inf where x is 0)
    return where(y != y, y, product)  # NaN in y stays NaN, as in PyTorch


def sinc(input: Tensor) -> Tensor:
    """sin(πx) / (πx), 1 at 0."""
    nonzero = where(input == 0, 1.0, input)
    return where(input == 0, 1.0, (math.pi * nonzero).sin() / (math.pi * nonzero))
