"""Functional forms written as compositions of genesis ops, so each gradient is the ops'
(checked by the registry's gradchecks of those ops and by tests/nn/test_composite_functions.py):
activations (`logsigmoid`, `softsign`, `tanhshrink`, `hardshrink`, `softshrink`,
`threshold`, `glu`, `prelu`), similarities (`normalize`, `cosine_similarity`,
`pairwise_distance`), channel dropout (`dropout1d/2d/3d`) and `one_hot`."""
from __future__ import annotations

import warnings

from ..autocast_rules import LOWER
from ..autograd.autocast_casts import autocast_inputs
from ..creation import zeros
from ..dtypes import int64
from ..ops.smooth_activation import softplus
from ..ops.where import where
from ..random import generator_for
from ..tensor import Tensor, wrap_array

__all__ = ["logsigmoid", "softsign", "tanhshrink", "hardshrink", "softshrink", "threshold", "glu",
           "prelu", "normalize", "cosine_similarity", "pairwise_distance", "one_hot", "dropout1d",
           "dropout2d", "dropout3d"]


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    return -softplus(-input)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (1 + input.abs())


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return where(input.abs() > lambd, input, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}")
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else `value`."""
    return where(input > threshold, input, float(value))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The first half of `dim` times the sigmoid of the second half.

    >>> import genesis
    >>> glu(genesis.tensor([1.0, 0.0])).tolist()
    [0.5]
    """
    if input.shape[dim] % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    first, second = input.chunk(2, dim)
    return first * second.sigmoid()


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x; `weight` has one slope, or one per channel (dim 1)."""
    input, weight = autocast_inputs(LOWER, input, weight)
    if weight.numel() != 1:
        if input.ndim < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(f"prelu: {weight.numel()} slopes need an input with {weight.numel()} "
                               f"channels in dimension 1, got shape {tuple(input.shape)} (give 1 "
                               f"slope, or one per channel)")
        weight = weight.reshape((1, -1) + (1,) * (input.ndim - 2))
    return where(input > 0, input, weight * input)  # the slope at 0, as PyTorch


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """`input` divided by its p-norm along `dim` (at least eps).

    >>> import genesis
    >>> normalize(genesis.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between x1 and x2 along `dim` (each norm at least eps)."""
    dot = (x1 * x2).sum(dim)
    norms = x1.norm(2, dim).clamp(min=eps) * x2.norm(2, dim).clamp(min=eps)
    return dot / norms


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim=keepdim)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot vectors of the class indices in `tensor` (a new last dim of num_classes;
    -1: the largest index + 1).

    >>> import genesis
    >>> one_hot(genesis.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if tensor._data.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if data.size and (data < 0).any():
        raise RuntimeError("one_hot: class values must be non-negative.")
    largest = int(data.max()) + 1 if data.size else 0
    if num_classes == -1:
        if not data.size:
            raise RuntimeError("one_hot: can not infer total number of classes from empty tensor.")
        num_classes = largest
    elif largest > num_classes:
        raise RuntimeError("one_hot: class values must be smaller than num_classes.")
    out = zeros(*tensor.shape, num_classes, dtype=int64, device=tensor._device)
    xp = tensor._device.xp
    xp.put_along_axis(out._data, data.astype("int64")[..., None], 1, axis=-1)
    return out


def _feature_dropout(input: Tensor, p: float, training: bool) -> Tensor:
    """Zero whole features (each (input[0], input[1]) index across the remaining dimensions)
    with probability p, scaling the kept ones by 1 / (1 - p): PyTorch's feature_dropout,
    which the channel dropouts below run on inputs of the rank each expects."""
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0.0
    kept_shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    draws = generator_for(input._device).random(kept_shape)
    mask = wrap_array(((draws >= p) / (1 - p)).astype(input._data.dtype), input._device)
    return input * mask


def _check_probability(p: float) -> None:
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _warn_unusual_rank(op: str, rank: int, usual: str, spatial: str) -> None:
    warnings.warn(f"{op}: Received a {rank}-D input to {op}, which is deprecated and will result "
                  "in an error in a future release. To retain the behavior and silence this "
                  f"warning, please use dropout instead. Note that {op} exists to provide "
                  f"channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
                  f"dimension, and an optional batch dimension (i.e. {usual} inputs).", stacklevel=3)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for (N, C, L) or (C, L) inputs: each channel is zeroed as a whole with
    probability p, the others scaled by 1 / (1 - p).

    >>> import genesis
    >>> dropout1d(genesis.ones(2, 3), p=0.0).shape
    genesis.Size([2, 3])
    """
    _check_probability(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an optional "
                           "batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 3:
        return _feature_dropout(input, p, training)
    return _feature_dropout(input.unsqueeze(0), p, training).squeeze(0)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for (N, C, H, W) inputs: each (sample, channel) plane is zeroed as a
    whole with probability p, the others scaled by 1 / (1 - p).

    Other ranks behave as in PyTorch 2.13, with its warnings: any input of at least 2
    dimensions drops (input[0], input[1]) features over the remaining ones, so a 3-D input is
    read as (N, C, L) (1-D channel dropout) and a 2-D (N, C) one drops single elements.

    >>> import genesis
    >>> dropout2d(genesis.ones(1, 2, 3, 3), p=0.0).shape
    genesis.Size([1, 2, 3, 3])
    """
    _check_probability(p)
    if input.ndim not in (3, 4):
        _warn_unusual_rank("dropout2d", input.ndim, "3D or 4D", "2")
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch "
                      "to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for (N, C, D, H, W) or (C, D, H, W) inputs: each (sample, channel)
    volume is zeroed as a whole with probability p, the others scaled by 1 / (1 - p).

    Other ranks behave as in PyTorch 2.13, with its warning: an input that is not 5-D is
    treated as one sample, so its first dimension is the channel one.

    >>> import genesis
    >>> dropout3d(genesis.ones(2, 2, 2, 2), p=0.0).shape
    genesis.Size([2, 2, 2, 2])
    """
    _check_probability(p)
    if input.ndim not in (4, 5):
        _warn_unusual_rank("dropout3d", input.ndim, "4D or 5D", "3")
    if input.ndim == 5:
        return _feature_dropout(input, p, training)
    return _feature_dropout(input.unsqueeze(0), p, training).squeeze(0)
