"""`AdaptiveLogSoftmaxWithLoss` (Grave et al., efficient softmax approximation for GPUs), as in
PyTorch: a head over the frequent classes (the shortlist) plus one entry per cluster of rarer
classes, each cluster a low-rank two-layer projection; forward gives each target's log
probability and the mean negative log likelihood.

>>> import genesis
>>> layer = genesis.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8])
>>> output, loss = layer(genesis.randn(3, 8), genesis.tensor([1, 5, 9]))
>>> output.shape, loss.shape
(genesis.Size([3]), genesis.Size([]))
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

from ..creation import zeros
from ..ops.activation import log_softmax
from ..ops.gather import index_add
from ..ops.join import cat
from ..tensor import Tensor, wrap_array
from .containers import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """The adaptive softmax of (N, in_features) over `n_classes` classes sorted by frequency:
    classes below cutoffs[0] are in the head; cluster i holds [cutoffs[i], cutoffs[i + 1]) and
    projects through in_features // div_value ** (i + 1) features.

    `forward(input, target)` returns (output, loss): each target's log probability and their
    mean negated; `log_prob(input)` gives all classes' log probabilities, `predict(input)` the
    most likely class.

    >>> import genesis
    >>> layer = genesis.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs=[5, 12], div_value=2.0)
    >>> totals = layer.log_prob(genesis.randn(2, 16)).exp().sum(1)  # a distribution per row
    >>> genesis.allclose(totals, genesis.ones(2), atol=1e-6)
    True
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of length "
                             "larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, "
                             "positive integers sorted in an increasing order, where each value "
                             f"is between 1 and n_classes-1 ({n_classes - 1}); got {cutoffs}")
        options = {"device": device, "dtype": dtype}
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **options)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **options),
                                        Linear(hidden, size, bias=False, **options)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("AdaptiveLogSoftmaxWithLoss: input and target should have the "
                                   "same size in the batch dimension, got "
                                   f"{tuple(input.shape)} and {tuple(target.shape)}")
            if input.ndim != 2:
                raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: 1D target tensor expects 2D "
                                   f"input tensors, but found inputs with size "
                                   f"{tuple(input.shape)}")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: 0D target tensor expects 1D "
                                   f"input tensors, but found inputs with size "
                                   f"{tuple(input.shape)}")
        else:
            raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 0D or 1D target tensor expected, "
                               "multi-target not supported")
        batched = target.ndim > 0
        if not batched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        xp, device = input._device.xp, input._device
        labels = target._data
        inside = (labels >= 0) & (labels < self.n_classes)
        if not bool(inside.all()):
            raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: target values should be in [0, "
                               f"{self.n_classes - 1}], but values in range [{int(labels.min())}, "
                               f"{int(labels.max())}] were found")
        output = zeros(labels.shape[0], dtype=input.dtype, device=device)
        head_column = xp.where(labels < self.shortlist_size, labels, 0)
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            chosen = (labels >= low) & (labels < high)
            rows = xp.nonzero(chosen)[0]
            if rows.size == 0:
                continue
            head_column = xp.where(chosen, self.shortlist_size + i, head_column)
            row_index = wrap_array(rows, device)
            cluster = log_softmax(self.tail[i](input.index_select(0, row_index)), 1)
            relative = wrap_array((labels[rows] - low)[:, None], device)
            output = index_add(output, 0, row_index, cluster.gather(1, relative).squeeze(1))
        head = log_softmax(self.head(input), 1)
        output = output + head.gather(1, wrap_array(head_column[:, None], device)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head = log_softmax(head_output, 1)
        parts = [head[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = log_softmax(self.tail[i](input), 1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log probabilities (N, n_classes) of every class."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row: `log_prob(input).argmax(1)`, with the clusters
        computed only when the head's best entry is a cluster."""
        head_output = self.head(input)
        best = head_output.argmax(1)
        if not bool((best._data >= self.shortlist_size).any()):
            return best
        return self._full_log_prob(input, head_output).argmax(1)
