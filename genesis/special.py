"""Special functions (PyTorch's `torch.special`): the ones genesis has, under their special
names, and a few written from them: expit, ndtr, xlog1py. Their gradients are those of
the ops they are made of."""
from __future__ import annotations

import math

from .ops.composites import logit, xlogy
from .ops.softmax import log_softmax, logsumexp, softmax
from .ops.special_functions import (digamma, entr, erfc, erfcx, erfinv, i0, i0e, i1, i1e, igamma,
                                    igammac, lgamma, log_ndtr, mvlgamma, ndtri, polygamma, sinc,
                                    zeta)
from .ops.unary import erf, exp2, expm1, log1p, sigmoid
from .ops.where import where
from .tensor import Tensor

__all__ = ["expit", "logit", "erf", "erfc", "erfcx", "erfinv", "ndtr", "ndtri", "log_ndtr", "entr",
           "xlogy", "xlog1py", "sinc", "exp2", "expm1", "log1p", "logsumexp", "softmax",
           "log_softmax", "gammaln", "digamma", "psi", "polygamma", "multigammaln", "i0", "i0e",
           "i1", "i1e", "gammainc", "gammaincc", "zeta"]

expit = sigmoid
gammaln = lgamma
psi = digamma
multigammaln = mvlgamma
gammainc = igamma
gammaincc = igammac


def ndtr(input: Tensor) -> Tensor:
    """The standard normal distribution function: erfc(-x / √2) / 2 (accurate in the left tail).

    >>> import genesis
    >>> ndtr(genesis.tensor([0.0])).tolist()
    [0.5]
    """
    return 0.5 * erfc(input * -math.sqrt(0.5))


def xlog1py(input, other) -> Tensor:
    """x * log1p(y), 0 where x is 0."""
    x = input if isinstance(input, Tensor) else other.new_tensor(input)
    y = other if isinstance(other, Tensor) else x.new_tensor(other)
    product = x * log1p(where(x == 0, 0.0, y))  # (no 0 * -inf where x is 0)
    return where(y != y, y, product)  # NaN in y stays NaN, as in PyTorch
