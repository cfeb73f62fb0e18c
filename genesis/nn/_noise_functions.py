"""Functional forms that draw random numbers while training, written with genesis ops (so
their gradients are the ops'): `alpha_dropout` and `feature_alpha_dropout` (SELU's dropout,
which keeps a zero-mean unit-variance input so), and `rrelu` (a leaky ReLU whose negative
slope is drawn per element from U(lower, upper) while training, their mean otherwise).
`OPS` registers the draws that are the same on every run: p = 1, evaluation mode."""
from __future__ import annotations

from ..ops.activation import leaky_relu
from ..ops.registry import OpInfo, Sample
from ..ops.samples import values
from ..ops.where import where
from ..random import generator_for
from ..tensor import Tensor, wrap_array

__all__ = ["alpha_dropout", "feature_alpha_dropout", "rrelu", "rrelu_"]

# SELU's scale * alpha: the value a dropped unit takes before the affine correction.
_SELU_SATURATION = 1.7580993408473766


def _check_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    """a * keep * x + a * saturation * (keep - 1 + p), with keep ~ Bernoulli(1 - p) per
    element (per (sample, channel) when `feature`) and a = ((saturation^2 p + 1)(1 - p))^-1/2,
    which keep mean 0 and variance 1 (PyTorch's formula)."""
    _check_probability(p)
    if not training or p == 0:
        return input
    if not input.is_floating_point():
        raise RuntimeError(f"alpha_dropout needs a floating point input, got {input.dtype!r}")
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input, got "
                           f"shape {tuple(input.shape)}")
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    keep = (generator_for(input._device).random(shape) >= p).astype(input._data.dtype)
    a = ((_SELU_SATURATION ** 2 * p + 1) * (1 - p)) ** -0.5
    factor = wrap_array(keep * a, input._device)
    shift = wrap_array(_SELU_SATURATION * a * (keep - 1 + p), input._device)
    return input.mul_(factor).add_(shift) if inplace else input * factor + shift


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Alpha dropout (for SELU networks): each element is dropped with probability `p` to
    SELU's negative saturation value, then all are scaled and shifted so that mean and
    variance stay as they were. The identity when not `training` (the default, as PyTorch).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.alpha_dropout(genesis.ones(3), 0.5)
    tensor([1., 1., 1.])
    """
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels: one draw per (sample, channel) of an input with at
    least 2 dims.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.feature_alpha_dropout(genesis.ones(2, 3, 4), 1.0, training=True).abs().sum().item()
    0.0
    """
    return _alpha_dropout(input, p, training, inplace, feature=True)


def _rrelu_slopes(input: Tensor, lower: float, upper: float, training: bool):
    """The negative slope per element: U(lower, upper) draws while training, else their mean."""
    if lower > upper:
        raise RuntimeError(f"rrelu: lower bound should be less than or equal to the upper bound, "
                           f"got lower={lower}, upper={upper}")
    if not input.is_floating_point():
        raise NotImplementedError(f"rrelu needs a floating point input, got {input.dtype!r}")
    if not training:
        return None
    draws = generator_for(input._device).random(tuple(input.shape))
    return wrap_array((lower + (upper - lower) * draws).astype(input._data.dtype), input._device)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: x where x > 0, else slope * x, the slope drawn per element
    from U(lower, upper) while `training`, (lower + upper) / 2 otherwise (the default, as
    PyTorch).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.rrelu(genesis.tensor([-4.0, 2.0]), 0.25, 0.25, training=True)
    tensor([-1.,  2.])
    """
    slopes = _rrelu_slopes(input, lower, upper, training)
    if slopes is None:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    factor = where(input > 0, 1.0, slopes)  # the slope at 0, as PyTorch
    return input.mul_(factor) if inplace else input * factor


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place `rrelu`.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.rrelu_(genesis.tensor([-4.0, 2.0]), 0.25, 0.25)
    tensor([-1.,  2.])
    """
    return rrelu(input, lower, upper, training, inplace=True)


def _alpha_dropout_samples(rng):
    """Only draws with one outcome: p = 1 (everything dropped) and evaluation."""
    return [
        Sample((values(rng, (3, 4)), 1.0, True), note="p=1 drops everything"),
        Sample((values(rng, (4, 3)), 1.0, True), layout="transposed", note="p=1 transposed"),
        Sample((values(rng, (2, 5)), 0.5, False), note="evaluation"),
    ]


def _feature_alpha_dropout_samples(rng):
    return [
        Sample((values(rng, (2, 3, 4)), 1.0, True), note="p=1 drops everything"),
        Sample((values(rng, (2, 3, 4)), 0.5, False), layout="strided", note="evaluation"),
    ]


def _rrelu_samples(rng):
    """Evaluation mode (the mean slope) and a training draw from an interval of one point."""
    def away_from_zero(shape):
        x = values(rng, shape)
        return x + 0.2 * (2 * (x >= 0) - 1)

    return [
        Sample((away_from_zero((3, 4)),), note="evaluation"),
        Sample((away_from_zero((3, 4)), 0.1, 0.3), layout="transposed", note="transposed"),
        Sample((away_from_zero((3, 4)), 0.25, 0.25, True), note="training, one-point interval"),
    ]


OPS = [
    OpInfo("alpha_dropout", alpha_dropout, _alpha_dropout_samples,
           torch=lambda torch, *args: torch.nn.functional.alpha_dropout(*args)),
    OpInfo("feature_alpha_dropout", feature_alpha_dropout, _feature_alpha_dropout_samples,
           torch=lambda torch, *args: torch.nn.functional.feature_alpha_dropout(*args)),
    OpInfo("rrelu", rrelu, _rrelu_samples,
           torch=lambda torch, *args: torch.nn.functional.rrelu(*args),
           kinks="x = 0"),
]
