"""The nn.functional ops PyTorch also offers at its top level (`torch.layer_norm`,
`torch.dropout(x, p, train)`, `torch.embedding(weight, indices)`, ...), with PyTorch's
top-level signatures, which differ from `torch.nn.functional`'s: positional `train` flags,
the weight before the indices in `embedding`, weights before running statistics in
`batch_norm`, and losses whose `reduction` is a number (0: none, 1: mean, 2: sum).

>>> import genesis
>>> genesis.dropout(genesis.ones(3), 0.5, False)
tensor([1., 1., 1.])
>>> genesis.margin_ranking_loss(genesis.ones(2), genesis.zeros(2), genesis.ones(2), 0.0, 1)
tensor(0.)
"""
from __future__ import annotations

from .nn import functional as F
from .nn._composite_functions import _feature_dropout
from .nn._margin_losses import triplet_margin_loss_unchecked
from .tensor import Tensor

__all__ = ["dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "layer_norm",
           "group_norm", "batch_norm", "instance_norm", "rms_norm", "embedding", "bilinear",
           "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "prelu",
           "threshold", "threshold_", "hardshrink", "selu_", "celu_", "constant_pad_nd",
           "convolution", "kl_div", "binary_cross_entropy_with_logits", "margin_ranking_loss",
           "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
           "poisson_nll_loss", "channel_shuffle", "pdist", "rrelu", "rrelu_", "dropout_",
           "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_", "ctc_loss"]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(value) -> str:
    """A top-level loss's reduction: PyTorch's number (0, 1, 2) or the name."""
    if isinstance(value, str):
        return value
    if value not in _REDUCTIONS:
        raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {value!r}")
    return _REDUCTIONS[value]


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`F.dropout(input, p, training=train)`."""
    return F.dropout(input, p, training=train)


def feature_dropout(input: Tensor, p: float, train: bool, inplace: bool = False) -> Tensor:
    """Dropout of whole features: each (input[0], input[1]) index is kept or zeroed across the
    other dimensions, for any input of at least 2 dimensions (the kernel under
    `F.dropout1d/2d/3d`, as PyTorch's)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _feature_dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """`F.dropout(input, p, training=train, inplace=True)`."""
    return F.dropout(input, p, training=train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """`F.alpha_dropout(..., inplace=True)`."""
    return F.alpha_dropout(input, p, training=train, inplace=True)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """`feature_dropout(..., inplace=True)`."""
    return feature_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """`F.feature_alpha_dropout(..., inplace=True)`."""
    return F.feature_alpha_dropout(input, p, training=train, inplace=True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False) -> Tensor:
    """`F.rrelu`."""
    return F.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """`F.rrelu(..., inplace=True)`."""
    return F.rrelu_(input, lower, upper, training)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction=1, zero_infinity: bool = False) -> Tensor:
    """`F.ctc_loss`, with a numeric reduction as at PyTorch's top level."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


channel_shuffle, pdist = F.channel_shuffle, F.pdist


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`F.alpha_dropout(input, p, training=train)`."""
    return F.alpha_dropout(input, p, training=train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """`F.feature_alpha_dropout(input, p, training=train)`."""
    return F.feature_alpha_dropout(input, p, training=train)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    """`F.layer_norm`."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    """`F.group_norm`."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    """`F.batch_norm`, with the weights before the running statistics (PyTorch's top-level
    order)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool = True) -> Tensor:
    """`F.instance_norm`, with the weights before the running statistics."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def rms_norm(input: Tensor, normalized_shape, weight=None, eps: float | None = None) -> Tensor:
    """`F.rms_norm`."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """`F.embedding(indices, weight)`: the weight first, and -1 for "no padding index".

    `scale_grad_by_freq` and `sparse` mean what they mean to `F.embedding` (a dense gradient
    either way: genesis has no sparse tensors)."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


bilinear, cosine_similarity, pairwise_distance = F.bilinear, F.cosine_similarity, F.pairwise_distance
pixel_shuffle, pixel_unshuffle, prelu, hardshrink = (F.pixel_shuffle, F.pixel_unshuffle, F.prelu,
                                                     F.hardshrink)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """`F.threshold`: `value` where input <= threshold."""
    return F.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """`F.threshold(..., inplace=True)`."""
    return F.threshold(input, threshold, value, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """`F.selu(input, inplace=True)`."""
    return F.selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """`F.celu(input, alpha, inplace=True)`."""
    return F.celu(input, alpha, inplace=True)


def constant_pad_nd(input: Tensor, pad, value: float = 0) -> Tensor:
    """`F.pad(input, pad, value=value)`."""
    return F.pad(input, pad, value=value)


_CONVOLUTIONS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_TRANSPOSED = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def convolution(input: Tensor, weight: Tensor, bias, stride, padding, dilation, transposed: bool,
                output_padding, groups: int) -> Tensor:
    """The convolution (or transposed convolution) of input's rank: `F.conv2d` and kin."""
    rank = input.ndim - 2
    if rank not in _CONVOLUTIONS:
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D input (batch, channels, "
                           f"spatial dims), got {input.ndim}-D")
    if transposed:
        return _TRANSPOSED[rank](input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)
    return _CONVOLUTIONS[rank](input, weight, bias, stride, padding, dilation, groups)


def kl_div(input: Tensor, target: Tensor, reduction=1, log_target: bool = False) -> Tensor:
    """`F.kl_div`; note PyTorch's top-level default reduction is 1 (mean over elements)."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, pos_weight=None,
                                     reduction=1) -> Tensor:
    """`F.binary_cross_entropy_with_logits` (pos_weight before reduction, as at the top level)."""
    return F.binary_cross_entropy_with_logits(input, target, weight, _reduction(reduction),
                                              pos_weight)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction=1) -> Tensor:
    """`F.margin_ranking_loss`."""
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction=1) -> Tensor:
    """`F.hinge_embedding_loss`."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction=1) -> Tensor:
    """`F.cosine_embedding_loss`."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction=1) -> Tensor:
    """`F.triplet_margin_loss`, any margin taken (PyTorch's top-level form does not check it)."""
    return triplet_margin_loss_unchecked(anchor, positive, negative, margin, p, eps, swap,
                                         reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction) -> Tensor:
    """`F.poisson_nll_loss`, every argument given, as at PyTorch's top level."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))
