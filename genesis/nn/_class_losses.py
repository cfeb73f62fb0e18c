"""Functional losses against class indices, with PyTorch's semantics (class weights,
ignore_index, label smoothing): nll_loss and cross_entropy; and their registry entries
(`OPS`). Cross entropy, the common training loss, is one fused node (two: plain targets, and
weighted, ignored or smoothed ones) built from fused GPU kernels, differentiable again under
create_graph."""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import FLOAT32
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..device import device_mismatch_message
from ..ops._index_checks import any_outside
from ..ops._operands import ignore_float_errors
from ..ops.gather import gather
from ..ops.registry import OpInfo, Sample
from ..ops.samples import positive, values
from ..ops.softmax import log_softmax, softmax
from ..ops.where import where
from ..tensor import Tensor, wrap_array
from ._class_loss_kernels import CROSS_ENTROPY_GRAD, CROSS_ENTROPY_ROWS
from ._pointwise_losses import REDUCTIONS, quiet_mean, reduce_loss

__all__ = ["nll_loss", "cross_entropy"]


def _class_dim(input: Tensor, target: Tensor, name: str) -> int:
    """The class dimension of `input`, after checking that `target` holds one class index
    for each of its positions."""
    if target._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: class targets must be an integer tensor, got {target.dtype!r}")
    if target._device is not input._device:
        raise RuntimeError(device_mismatch_message(name, input.device, target.device))
    class_dim = 0 if input.ndim == 1 else 1
    expected = () if input.ndim == 1 else (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise ValueError(f"{name}: input of shape {tuple(input.shape)} (classes in dim "
                         f"{class_dim}) needs a target of shape {expected}, got "
                         f"{tuple(target.shape)}")
    return class_dim


def _class_targets(input: Tensor, target: Tensor, ignore_index: int, name: str):
    """(class dim, safe target array with ignored entries set to 0, mask of kept entries)."""
    class_dim = _class_dim(input, target, name)
    xp = target._device.xp
    classes = input.shape[class_dim]
    data = target._data
    kept = data != ignore_index
    safe = xp.where(kept, data, 0)
    if safe.dtype.itemsize < 8:
        safe = safe.astype(np.int64)
    # One pass finds both ends: read as unsigned, a negative target is larger than any class.
    if bool((safe.view(np.uint64) >= classes).any()):
        bad = kept & ((data < 0) | (data >= classes))
        raise IndexError(f"{name}: target {int(data[bad].reshape(-1)[0])} is out of bounds for "
                         f"{classes} classes (valid: 0..{classes - 1}, or ignore_index="
                         f"{ignore_index})")
    return class_dim, safe, kept


def _plain_class_targets(input: Tensor, target: Tensor, ignore_index: int, name: str):
    """The targets as an int64 array when every one is a class (none out of range, none
    ignored), found in one pass and one wait for a GPU; None otherwise (or for targets
    narrower than 32 bits), for `_class_targets` to sort out."""
    class_dim = _class_dim(input, target, name)
    classes = input.shape[class_dim]
    data = target._data
    if 0 <= ignore_index < classes or data.dtype.itemsize < 4:
        return None
    if any_outside(target._device, data, classes):  # out of range, or ignored
        return None
    return data if data.dtype == np.int64 else data.astype(np.int64)


def _picked(input: Tensor, safe_target, class_dim: int) -> Tensor:
    index = wrap_array(safe_target.reshape(safe_target.shape[:class_dim] + (1,)
                                           + safe_target.shape[class_dim:]), input.device)
    return gather(input, class_dim, index).squeeze(class_dim)


def _target_weights(weight: Tensor | None, safe_target, kept, input: Tensor):
    """Per-element weights (class weight, 0 where ignored) as an array, or None if all are 1."""
    if weight is None:
        return None if bool(kept.all()) else kept.astype(input._data.dtype)
    if weight._device is not input._device:
        raise RuntimeError(device_mismatch_message("nll_loss", input.device, weight.device))
    if weight.shape != (input.shape[0 if input.ndim == 1 else 1],):
        raise ValueError(f"weight has shape {tuple(weight.shape)}, expected one weight per class")
    return weight._data[safe_target] * kept


def _nll(log_probs: Tensor, safe_target, kept, weights, class_dim: int, reduction: str) -> Tensor:
    """The weighted negative log likelihood; ignored positions (not `kept`) get a gradient of
    exactly 0, even where "mean" divides by summed weights of 0 (PyTorch's)."""
    picked = _picked(log_probs, safe_target, class_dim)
    if weights is None:
        return reduce_loss(-picked, reduction, "nll_loss")
    picked = where(wrap_array(kept, log_probs.device), picked, 0.0)
    loss = -picked * wrap_array(weights, log_probs.device)
    if reduction == "mean":
        return loss.sum() / wrap_array(weights.sum(), log_probs.device)
    return reduce_loss(loss, reduction, "nll_loss")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood of class `target` given log-probabilities `input` of shape
    (N, C, ...) or (C,). With `weight`, "mean" divides by the summed weights of the targets;
    targets equal to `ignore_index` count for nothing.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.nll_loss(genesis.tensor([[-1., -2.], [-3., -0.5]]), genesis.tensor([0, 1]))
    tensor(0.7500)
    """
    input, target, weight = autocast_inputs(FLOAT32, input, target, weight)
    class_dim, safe_target, kept = _class_targets(input, target, ignore_index, "nll_loss")
    weights = _target_weights(weight, safe_target, kept, input)
    return _nll(input, safe_target, kept, weights, class_dim, reduction)


class CrossEntropy(Op):
    """Softmax cross entropy against class indices that are all classes (none ignored), with
    no class weights or label smoothing: the common training loss, in one node. On a GPU
    its forward is one launch for "none" and two otherwise, its backward one.

    Per position: loss = log(sum_c exp(x_c - m)) - (x_target - m), m the largest x; the
    gradient is (softmax(x) - onehot(target)) * grad, over the positions for "mean".

    A plain backward reads the forward's log-probabilities, not the input (as PyTorch's
    log_softmax + nll_loss, which keep the log-probabilities): an in-place write to the input
    after the forward leaves it free to run. A create_graph backward differentiates
    softmax(input), so it reads the saved input, checked for such writes.
    """

    autocast_policy = FLOAT32

    @staticmethod
    @ignore_float_errors  # inf/nan logits give nan like PyTorch
    def forward(ctx, input, target, reduction):
        device = input._device
        axis = 0 if input.ndim == 1 else 1
        data = input._data
        x = data.astype(np.float32) if data.dtype.itemsize < 4 else data
        index = target.reshape(target.shape[:axis] + (1,) + target.shape[axis:])
        log_probabilities, losses = CROSS_ENTROPY_ROWS(device, x, index, axis=axis)
        positions = losses.size
        scale = (1.0 / positions if positions else math.nan) if reduction == "mean" else 1.0
        if reduction == "none":
            loss = losses.squeeze(axis)
        elif reduction == "sum":
            loss = losses.sum()
        else:
            loss = quiet_mean(losses, {})  # the mean of nothing is nan
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(input)
            ctx.log_probabilities, ctx.index, ctx.axis, ctx.scale, ctx.reduction = \
                log_probabilities, index, axis, scale, reduction
            ctx.dtype = data.dtype
        return device.xp.asarray(loss, dtype=data.dtype)

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad):
        device, axis = grad._device, ctx.axis
        if ctx.reduction == "none":
            grad = grad.unsqueeze(axis)
        if grad_state.enabled:  # create_graph: the rule, as ops (softmax of the input)
            (input,) = ctx.saved_tensors
            onehot = device.xp.zeros(input.shape, input._data.dtype)
            device.xp.put_along_axis(onehot, ctx.index, 1, axis)
            local = softmax(input, axis) - wrap_array(onehot, device)
            return local * (grad * ctx.scale), None, None
        # the rule's accelerated form: one launch on a GPU, its reference on the CPU, from the
        # forward's log-probabilities (tests/ops/test_rule_executors.py checks it agrees)
        log_probabilities = ctx.log_probabilities
        dx = CROSS_ENTROPY_GRAD(device, log_probabilities, ctx.index, grad._data, ctx.scale,
                                 log_probabilities.shape[axis],
                                 math.prod(log_probabilities.shape[axis + 1:]))
        return wrap_array(dx.astype(ctx.dtype, copy=False), device), None, None


class WeightedCrossEntropy(Op):
    """Softmax cross entropy against class indices, in one node, with class weights, ignored
    targets and label smoothing.

    Per position i: loss_i = -sum_c A[i, c] * log_softmax(x)[i, c], where A holds
    (1 - smoothing) * w[t_i] at the target class plus smoothing / C * w[c] everywhere
    (0 for ignored positions). The gradient is (softmax(x) * sum_c A[i, c] - A) * grad,
    exactly 0 at ignored positions. "mean" divides by the summed target weights; where they
    are 0 (every target ignored, or of weight 0), the loss is nan and so is the gradient
    of the positions not ignored, as PyTorch's (its nll part is 0 / 0). A plain backward reads
    the forward's softmax, not the input (see CrossEntropy).
    """

    autocast_policy = FLOAT32

    @staticmethod
    @ignore_float_errors  # inf/nan logits, or every target ignored (0 / 0), give nan like PyTorch
    def forward(ctx, input, coefficients, kept, reduction, denominator):
        xp = input._device.xp
        axis = 0 if input.ndim == 1 else 1
        data = input._data
        x = data.astype(np.float32) if data.dtype.itemsize < 4 else data
        shifted = x - x.max(axis=axis, keepdims=True)
        exps = xp.exp(shifted)
        sums = exps.sum(axis=axis, keepdims=True)
        loss = (coefficients * (xp.log(sums) - shifted)).sum(axis=axis)
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(input)
            ctx.probabilities = exps / sums
            ctx.axis, ctx.coefficients, ctx.kept, ctx.reduction, ctx.denominator = \
                axis, coefficients, kept, reduction, denominator
            ctx.dtype = data.dtype
        if reduction == "mean":  # (a where, not an if: no wait for a GPU)
            loss = xp.where(denominator == 0, np.nan, loss.sum() / denominator)
        elif reduction == "sum":
            loss = loss.sum()
        return xp.asarray(loss, dtype=data.dtype)

    @staticmethod
    def backward(ctx, grad):
        axis, coefficients, dtype = ctx.axis, ctx.coefficients, ctx.dtype
        device = grad._device
        if grad_state.enabled:  # create_graph: the softmax as an op, differentiated too
            (input,) = ctx.saved_tensors
            probabilities = softmax(input, axis)
        else:  # the forward's softmax
            probabilities = wrap_array(ctx.probabilities.astype(dtype, copy=False), device)
        totals = coefficients.sum(axis=axis, keepdims=True).astype(dtype, copy=False)
        local = probabilities * wrap_array(totals, device) - wrap_array(
            coefficients.astype(dtype, copy=False), device)
        if ctx.reduction == "none":
            grad = grad.unsqueeze(axis)
        elif ctx.reduction == "mean":
            denominator = ctx.denominator
            grad = grad / wrap_array(device.xp.where(denominator == 0, np.nan, denominator), device)
        kept = wrap_array(device.xp.expand_dims(ctx.kept, axis), device)
        return where(kept, local * grad, 0.0), None, None, None, None


def _coefficients(input: Tensor, safe_target, kept, weight, label_smoothing: float):
    """The matrix A of `WeightedCrossEntropy` and the "mean" denominator (summed target weights, a 0-d
    array)."""
    xp = input._device.xp
    axis = 0 if input.ndim == 1 else 1
    classes = input.shape[axis]
    dtype = np.float32 if input._data.dtype.itemsize < 4 else input._data.dtype
    kept_values = kept.astype(dtype)
    class_weights = None if weight is None else weight._data.astype(dtype)
    target_weights = kept_values if class_weights is None else class_weights[safe_target] * kept_values
    coefficients = xp.zeros(input.shape, dtype)
    index = xp.expand_dims(safe_target, axis)
    at_target = target_weights * (1 - label_smoothing) if label_smoothing else target_weights
    xp.put_along_axis(coefficients, index, xp.expand_dims(at_target, axis), axis=axis)
    if label_smoothing:
        spread = xp.full((classes,), label_smoothing / classes, dtype) if class_weights is None \
            else class_weights * (label_smoothing / classes)
        shape = (classes,) + (1,) * (input.ndim - axis - 1)
        coefficients += spread.reshape(shape) * xp.expand_dims(kept_values, axis)
    return coefficients, target_weights.sum()  # stays on the device: no wait for the GPU


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross entropy of logits `input` (N, C, ...) or (C,) against class indices, or
    against class probabilities of the input's shape.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.cross_entropy(genesis.tensor([[2., 0.], [0., 2.]]), genesis.tensor([0, 0]))
    tensor(1.1269)
    """
    input, target, weight = autocast_inputs(FLOAT32, input, target, weight)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"cross_entropy: {reduction!r} is not a valid value for reduction; use one "
                         f"of {REDUCTIONS}")
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if weight is not None and weight.shape != (classes,):
        raise ValueError(f"cross_entropy: weight has shape {tuple(weight.shape)}, expected "
                         f"({classes},): one weight per class")
    if weight is not None and weight._device is not input._device:
        raise RuntimeError(device_mismatch_message("cross_entropy", input.device, weight.device))
    if target.is_floating_point():
        return _cross_entropy_with_probabilities(input, target, weight, reduction, label_smoothing)
    if weight is None and not label_smoothing:
        plain_target = _plain_class_targets(input, target, ignore_index, "cross_entropy")
        if plain_target is not None:
            return CrossEntropy.apply(input, plain_target, reduction)
    _, safe_target, kept = _class_targets(input, target, ignore_index, "cross_entropy")
    coefficients, denominator = _coefficients(input, safe_target, kept, weight, label_smoothing)
    return WeightedCrossEntropy.apply(input, coefficients, kept, reduction, denominator)


def _cross_entropy_with_probabilities(input, target, weight, reduction, label_smoothing):
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if target.shape != input.shape:
        raise ValueError(f"cross_entropy: probability targets must have the input's shape "
                         f"{tuple(input.shape)}, got {tuple(target.shape)}")
    log_probs = log_softmax(input, class_dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    products = log_probs * target
    if weight is not None:
        products = products * weight.reshape((classes,) + (1,) * (input.ndim - class_dim - 1))
    loss = -products.sum(class_dim)
    if reduction == "mean":
        return loss.sum() / (input.numel() // classes)
    return reduce_loss(loss, reduction, "cross_entropy")


def _class_samples(rng, *, label_smoothing: bool) -> list:
    """Samples for a loss of (scores, class indices): each reduction, class weights,
    ignored targets, spatial and 1-D inputs, non-contiguous scores."""
    def classes(shape, count=5, ignored=None):
        target = rng.integers(0, count, size=shape)
        if ignored is not None:
            target.reshape(-1)[::3] = ignored
        return target

    weight = positive(rng, (5,))
    samples = [
        Sample((values(rng, (4, 5)), classes(4)), note="mean"),
        Sample((values(rng, (4, 5)), classes(4)), {"reduction": "sum"}, note="sum"),
        Sample((values(rng, (4, 5)), classes(4)), {"reduction": "none"}, note="none"),
        Sample((values(rng, (2, 5, 3)), classes((2, 3))), note="spatial (N, C, d)"),
        Sample((values(rng, (5,)), classes(())), note="1-D scores"),
        Sample((values(rng, (4, 5)), classes(4), weight), grad=(True, False, False),
               note="class weights"),
        Sample((values(rng, (2, 5, 3)), classes((2, 3)), weight), {"reduction": "none"},
               grad=(True, False, False), note="class weights, none"),
        Sample((values(rng, (6, 5)), classes(6, ignored=-100)), note="ignored targets"),
        Sample((values(rng, (6, 5)), classes(6, ignored=2), weight), {"ignore_index": 2},
               grad=(True, False, False), note="ignore_index 2 with class weights"),
        Sample((values(rng, (4, 5)), classes(4)), grad=(False, False), note="no grad"),
        Sample((values(rng, (4, 5)), classes(4)), layout="transposed", note="transposed"),
        Sample((values(rng, (2, 5, 3)), classes((2, 3))), {"reduction": "sum"}, layout="strided",
               note="strided"),
    ]
    if label_smoothing:
        samples += [
            Sample((values(rng, (4, 5)), classes(4)), {"label_smoothing": 0.1},
                   note="label smoothing"),
            Sample((values(rng, (6, 5)), classes(6, ignored=-100), weight),
                   {"label_smoothing": 0.2, "reduction": "sum"}, grad=(True, False, False),
                   note="label smoothing, class weights, ignored targets"),
        ]
    return samples


def _nll_loss_samples(rng):
    return _class_samples(rng, label_smoothing=False)


def _probability_targets(rng, shape, class_dim=1):
    scores = rng.uniform(0.1, 1.0, size=shape)
    return scores / scores.sum(axis=class_dim, keepdims=True)


def _cross_entropy_samples(rng):
    return _class_samples(rng, label_smoothing=True) + [
        Sample((values(rng, (4, 5)), _probability_targets(rng, (4, 5))),
               note="probability targets"),
        Sample((values(rng, (2, 5, 3)), _probability_targets(rng, (2, 5, 3)), positive(rng, (5,))),
               {"label_smoothing": 0.1, "reduction": "none"}, grad=(True, False, False),
               note="probability targets, class weights, label smoothing"),
    ]


OPS = [
    OpInfo("nll_loss", nll_loss, _nll_loss_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.nll_loss(*args, **kw)),
    OpInfo("cross_entropy", cross_entropy, _cross_entropy_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.cross_entropy(*args, **kw)),
]
