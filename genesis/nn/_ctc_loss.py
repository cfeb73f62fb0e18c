"""The connectionist temporal classification loss (`ctc_loss`): the negative log likelihood of
a target sequence summed over all its alignments with the input frames, by the forward-backward
recursions in log space on the arrays (vectorised over the batch and the label positions; one
step per frame).

Its gradient w.r.t. log_probs is PyTorch's: exp(log_probs) - (the posterior of each class at
each frame), which assumes log_probs are normalised (a log_softmax): along such log_probs it is
the exact derivative, so the gradient of the logits under a log_softmax is exact. Frames past
an input's length get zero. PyTorch has no double backward for ctc_loss; neither has genesis:
it says so instead of returning a wrong one.
"""
from __future__ import annotations

import numpy as np

from ..autocast_rules import FLOAT32_ON_CPU
from ..autograd.function import Op
from ..ops.activation import log_softmax
from ..ops.registry import OpInfo, Sample
from ..tensor import Tensor, wrap_array
from ._pointwise_losses import reduce_loss

__all__ = ["ctc_loss"]


def _shift(xp, array, by: int):
    """`array` moved `by` places along its last dim (towards higher positions), -inf filled."""
    out = xp.full(array.shape, -xp.inf, array.dtype)
    out[..., by:] = array[..., :array.shape[-1] - by]
    return out


def _unshift(xp, array, by: int):
    """`array` moved `by` places towards lower positions, -inf filled."""
    out = xp.full(array.shape, -xp.inf, array.dtype)
    out[..., :array.shape[-1] - by] = array[..., by:]
    return out


class _Lattice:
    """The extended labels (blank, l1, blank, l2, ..., blank) of each batch entry, their
    emissions per frame, and which label transitions are allowed."""

    def __init__(self, xp, log_probs, labels, input_lengths, target_lengths, blank):
        frames, batch, _ = log_probs.shape
        width = 2 * labels.shape[1] + 1
        extended = xp.full((batch, width), blank, xp.int64)
        extended[:, 1::2] = labels
        self.extended = extended
        self.emit = xp.take_along_axis(log_probs, xp.broadcast_to(extended, (frames, batch, width)),
                                       axis=2)  # (T, N, L')
        position = xp.arange(width)
        self.valid = position < (2 * target_lengths + 1)[:, None]
        self.skip = (position >= 2) & (extended != blank) & (extended != _shift_int(xp, extended))
        self.input_lengths, self.target_lengths = input_lengths, target_lengths
        self.xp, self.frames, self.batch = xp, frames, batch

    def alpha(self):
        xp, emit = self.xp, self.emit
        alpha = xp.full(emit.shape, -xp.inf, emit.dtype)
        start = xp.full(emit.shape[1:], -xp.inf, emit.dtype)
        start[:, 0] = emit[0, :, 0]
        start[:, 1] = xp.where(self.target_lengths > 0, emit[0, :, 1], -xp.inf)
        alpha[0] = start
        for t in range(1, self.frames):
            previous = alpha[t - 1]
            total = xp.logaddexp(previous, _shift(xp, previous, 1))
            total = xp.logaddexp(total, xp.where(self.skip, _shift(xp, previous, 2), -xp.inf))
            alpha[t] = xp.where(self.valid, total + emit[t], -xp.inf)
        return alpha

    def ends(self, table):
        """The log likelihood: the last frame's last blank and last label of each entry."""
        xp = self.xp
        last = table[self.input_lengths - 1, xp.arange(self.batch)]  # (N, L')
        final = 2 * self.target_lengths
        blank_end = last[xp.arange(self.batch), final]
        label_end = xp.where(self.target_lengths > 0,
                             last[xp.arange(self.batch), xp.maximum(final - 1, 0)], -xp.inf)
        return xp.logaddexp(blank_end, label_end)

    def beta(self):
        xp, emit = self.xp, self.emit
        beta = xp.full(emit.shape, -xp.inf, emit.dtype)
        final = 2 * self.target_lengths
        position = xp.arange(emit.shape[2])
        ends = (position == final[:, None]) | ((position == final[:, None] - 1)
                                               & (self.target_lengths > 0)[:, None])
        for t in range(self.frames - 1, -1, -1):
            last_frame = (t == self.input_lengths - 1)[:, None]
            if t == self.frames - 1:
                following = xp.full(emit.shape[1:], -xp.inf, emit.dtype)
            else:
                following = beta[t + 1]
                following = xp.logaddexp(following, _unshift(xp, following, 1))
                following = xp.logaddexp(following, xp.where(_unshift(xp, self.skip, 2),
                                                             _unshift(xp, beta[t + 1], 2), -xp.inf))
            recursion = xp.where(self.valid, following + emit[t], -xp.inf)
            start = xp.where(ends, emit[t], -xp.inf)
            inside = (t < self.input_lengths - 1)[:, None]
            beta[t] = xp.where(last_frame, start, xp.where(inside, recursion, -xp.inf))
        return beta


def _shift_int(xp, array):
    """The label two positions earlier (-1 where there is none)."""
    out = xp.full(array.shape, -1, array.dtype)
    out[:, 2:] = array[:, :-2]
    return out


class CTCLossFunction(Op):
    """The negative log likelihood of each batch entry's target under log_probs (T, N, C)."""

    autocast_policy = FLOAT32_ON_CPU

    node_name = "CTCLoss"
    # PyTorch's gradient (see the module docstring) is exp(log_probs) * grad away from the
    # derivative, a term a log_softmax before it cancels: node checks that perturb log_probs
    # alone would report a mismatch on correct code, so they skip this node
    surrogate_gradient = True

    @staticmethod
    def forward(ctx, log_probs, labels, input_lengths, target_lengths, blank, zero_infinity):
        xp = log_probs._device.xp
        lattice = _Lattice(xp, log_probs._data, labels, input_lengths, target_lengths, blank)
        nll = -lattice.ends(lattice.alpha())
        if zero_infinity:
            nll = xp.where(xp.isinf(nll), 0.0, nll).astype(nll.dtype)
        ctx.save_for_backward(log_probs)
        ctx.lattice, ctx.zero_infinity = lattice, zero_infinity
        return nll

    @staticmethod
    def backward(ctx, grad):
        (log_probs,) = ctx.saved_tensors
        gradient = wrap_array(_ctc_gradient(ctx.lattice, log_probs._data, ctx.zero_infinity),
                              log_probs._device)
        return CTCGradient.apply(grad, log_probs, gradient), None, None, None, None, None


def _ctc_gradient(lattice: _Lattice, log_probs, zero_infinity: bool):
    """PyTorch's d nll / d log_probs (T, N, C): exp(log_probs) - exp(log sum over the label
    positions of class c of alpha + beta, + nll - log_probs), zero past each input's length."""
    xp = lattice.xp
    alpha, beta = lattice.alpha(), lattice.beta()
    nll = -lattice.ends(alpha)
    both = alpha + beta  # (T, N, L')
    peak = both.max(axis=2, keepdims=True)
    peak = xp.where(xp.isfinite(peak), peak, 0.0)
    onehot = (lattice.extended[:, :, None] == xp.arange(log_probs.shape[2])).astype(both.dtype)
    with np.errstate(divide="ignore"):
        summed = xp.log(xp.einsum("tnl,nlc->tnc", xp.exp(both - peak), onehot)) + peak
    with np.errstate(invalid="ignore"):
        gradient = xp.exp(log_probs) - xp.exp(summed + nll[None, :, None] - log_probs)
    inside = xp.arange(lattice.frames)[:, None] < lattice.input_lengths[None, :]
    keep = inside[:, :, None]
    if zero_infinity:
        keep = keep & ~xp.isinf(nll)[None, :, None]
    return xp.where(keep, gradient, 0.0).astype(log_probs.dtype)


class CTCGradient(Op):
    """grad (N,) times the per-entry gradient (T, N, C) of log_probs; its own gradient
    w.r.t. log_probs (ctc_loss's second derivative) is not implemented, as in PyTorch."""

    @staticmethod
    def forward(ctx, grad, log_probs, gradient):
        ctx.save_for_backward(gradient)
        return grad._data[None, :, None] * gradient._data

    @staticmethod
    def backward(ctx, grad_grad):
        if ctx.needs_input_grad[1]:
            raise RuntimeError("ctc_loss: the derivative of its gradient w.r.t. log_probs (a "
                               "double backward) is not implemented, as in PyTorch; take "
                               "ctc_loss's gradient without create_graph")
        (gradient,) = ctx.saved_tensors
        return (grad_grad * gradient).sum((0, 2)), None, None


def _lengths(op: str, name: str, value, batch: int, xp):
    if isinstance(value, Tensor):
        value = value.numpy() if value._device.type == "cpu" else value.cpu().numpy()
    lengths = np.asarray(value)
    if lengths.dtype.kind not in "iu" or lengths.size != batch:
        raise RuntimeError(f"{op}: {name} must hold {batch} integer lengths (one per batch "
                           f"entry), got {value!r}")
    return lengths.reshape(batch).astype(np.int64)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss of log_probs (T, N, C) (a log_softmax
    over C; (T, C) unbatched) and targets (N, S) padded, or all targets concatenated (1-D);
    input_lengths and target_lengths give each entry's frames and labels. 'mean' divides each
    loss by its target length, then averages; `zero_infinity` zeroes impossible alignments'
    infinite losses and their gradients.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> log_probs = genesis.full((2, 1, 2), 0.5).log()  # two frames, classes blank and 1
    >>> F.ctc_loss(log_probs, genesis.tensor([[1]]), [2], [1], reduction="sum")  # 3 paths of 1/4
    tensor(0.2877)
    """
    op = "ctc_loss"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: {reduction} is not a valid value for reduction; use 'mean', "
                         "'sum' or 'none'")
    if not isinstance(log_probs, Tensor) or log_probs.ndim not in (2, 3) \
            or not log_probs.is_floating_point():
        raise RuntimeError(f"{op}: log_probs must be a floating point (T, N, C) or (T, C) Tensor")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    frames, batch, classes = log_probs.shape
    xp = log_probs._device.xp
    inputs = _lengths(op, "input_lengths", input_lengths, batch, xp)
    lengths = _lengths(op, "target_lengths", target_lengths, batch, xp)
    if (inputs > frames).any() or (inputs < 1).any():
        raise RuntimeError(f"{op}: expected input_lengths to have values in [1, {frames}] (T), "
                           f"got {inputs.tolist()}")
    if (lengths < 0).any():
        raise RuntimeError(f"{op}: target_lengths must be non-negative, got {lengths.tolist()}")
    labels = targets.numpy() if targets._device.type == "cpu" else targets.cpu().numpy()
    if labels.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: targets must hold class indices (an integer tensor), got "
                           f"{targets.dtype.name}")
    longest = int(lengths.max(initial=0))
    if labels.ndim == 2 and not unbatched:
        if labels.shape[1] < longest:
            raise RuntimeError(f"{op}: targets of shape {labels.shape} are shorter than the "
                               f"longest target length {longest}")
        padded = labels[:, :max(longest, 1)]
    else:
        flat = labels.reshape(-1)
        if flat.size < lengths.sum():
            raise RuntimeError(f"{op}: the concatenated targets hold {flat.size} labels, fewer "
                               f"than the target_lengths' sum {int(lengths.sum())}")
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        padded = np.zeros((batch, max(longest, 1)), np.int64)
        for n, (start, length) in enumerate(zip(starts, lengths)):
            padded[n, :length] = flat[start:start + length]
    position = np.arange(padded.shape[1])
    padded = np.where(position < lengths[:, None], padded, blank).astype(np.int64)
    if ((padded < 0) | (padded >= classes)).any():
        raise RuntimeError(f"{op}: targets must lie in [0, {classes}) (C), got "
                           f"{padded[position < lengths[:, None]].tolist()}")
    loss = CTCLossFunction.apply(log_probs, xp.asarray(padded), xp.asarray(inputs),
                                 xp.asarray(lengths), blank, bool(zero_infinity))
    if reduction == "mean":
        divisor = wrap_array(xp.asarray(np.maximum(lengths, 1).astype(log_probs._data.dtype)),
                             log_probs._device)
        return (loss / divisor).mean()
    if unbatched:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction, op)


def _ctc_samples(rng):
    """Logits (a log_softmax is applied in the call, as ctc_loss's gradient assumes)."""
    def sample(frames, batch, classes, targets, inputs, lengths, layout="contiguous", **kwargs):
        logits = rng.standard_normal((frames, batch, classes) if batch else (frames, classes))
        return Sample((logits, np.array(targets), inputs, lengths), kwargs, layout=layout,
                      note=f"T={frames} N={batch} C={classes} {kwargs} {layout}")
    return [sample(5, 2, 4, [[1, 2, 2], [3, 1, 0]], (5, 4), (3, 2)),
            sample(6, 3, 3, [1, 2, 2, 1, 1], (6, 6, 3), (2, 3, 0), reduction="sum"),
            sample(4, 2, 5, [[4, 4], [1, 3]], (4, 3), (2, 2), reduction="none", blank=2,
                   layout="transposed"),
            sample(4, 0, 3, [1, 2], 4, 2, reduction="none"),
            sample(3, 2, 3, [[1, 1, 1], [2, 0, 0]], (3, 3), (3, 1), zero_infinity=True)]


def _ctc_of_logits(logits, *args, **kwargs):
    return ctc_loss(log_softmax(logits, -1), *args, **kwargs)


def _torch_ctc_of_logits(torch, logits, targets, inputs, lengths, **kwargs):
    if isinstance(inputs, int):
        inputs, lengths = torch.tensor(inputs), torch.tensor(lengths)
    return torch.nn.functional.ctc_loss(logits.log_softmax(-1), targets, inputs, lengths, **kwargs)


OPS = [OpInfo("ctc_loss", _ctc_of_logits, _ctc_samples, torch=_torch_ctc_of_logits,
              kinks="none (log_probs taken through a log_softmax, as ctc_loss assumes)")]
