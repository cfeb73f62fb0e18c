"""Functional losses with PyTorch's semantics: reductions, class weights, ignore_index, label
smoothing. Most are composed from differentiable ops; cross entropy against class indices,
the common training loss, is one fused node (two: plain targets, and weighted, ignored or
smoothed ones) built from fused GPU kernels, differentiable again under create_graph."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..autograd.function import Function
from ..device import device_mismatch_message
from ..autograd.grad_mode import grad_state
from ..ops._operands import ignore_float_errors
from ..ops.activation import relu
from ..ops.gather import gather
from ..ops.selection import clamp, where
from ..ops._index_checks import any_outside
from ..ops._kernels import MEAN_OF_REDUCED, Elementwise, Reduction
from ..ops._row_kernels import RowKernel
from ..ops.softmax import PEAK_AND_LOG_TOTAL, log_softmax, log_softmax_reference, softmax
from ..ops.unary import abs, exp, log, log1p
from ..tensor import Tensor, wrap_array

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(loss: Tensor, reduction: str, name: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: {reduction!r} is not a valid value for reduction; use one of "
                     f"{_REDUCTIONS}")


def _check_pair(input: Tensor, target: Tensor, name: str) -> None:
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}: target must be a genesis Tensor, got {type(target).__name__}")
    if target.shape != input.shape:
        warnings.warn(f"{name}: the target size {tuple(target.shape)} differs from the input size "
                      f"{tuple(input.shape)}; they will be broadcast, which is probably not what "
                      "you want. Make them the same size.", stacklevel=3)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean squared error: (input - target)**2, reduced.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.mse_loss(genesis.tensor([1., 2.]), genesis.tensor([0., 0.]))
    tensor(2.5000)
    """
    _check_pair(input, target, "mse_loss")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"mse_loss: {reduction!r} is not a valid value for reduction; use one of "
                         f"{_REDUCTIONS}")
    return MseLoss.apply(input, target, reduction)


def _quiet_mean(values, where: dict):
    """values.mean(**where); the mean of nothing is nan, without NumPy's warning (PyTorch's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return values.mean(**where)


def _pointwise_loss(name: str, inputs: str, expression: str, reference) -> dict:
    """Kernels for a loss computed per element by `expression` (C, over `inputs`) or
    `reference` (array calls): reduction -> kernel, "none" keeping every element, "sum" and
    "mean" reducing them all in the same launch."""
    return {
        "none": Elementwise(f"genesis_{name}", inputs, "T loss", f"loss = {expression}", reference),
        "sum": Reduction(f"genesis_{name}_sum", inputs, "T loss", expression, "a + b", "loss = a",
                         "0", lambda device, *args, **where: reference(device, *args).sum(**where)),
        "mean": Reduction(f"genesis_{name}_mean", inputs, "T loss", expression, "a + b",
                          f"loss = {MEAN_OF_REDUCED}", "0",
                          lambda device, *args, **where: _quiet_mean(reference(device, *args), where)),
    }


def _reduced_loss(kernels: dict, device, arrays, reduction: str):
    """The loss of `_pointwise_loss`'s `kernels` over `arrays`, reduced by `reduction`."""
    if reduction == "none":
        return kernels["none"](device, *arrays)
    return device.xp.asarray(kernels[reduction](device, *arrays, axis=None, keepdims=False))


def _gradient_scale(factor: float, arrays, reduction: str) -> float:
    """`factor`, over the number of elements the broadcast `arrays` hold for "mean" (nan
    for none: the mean of nothing)."""
    if reduction != "mean":
        return factor
    count = math.prod(np.broadcast_shapes(*(np.shape(array) for array in arrays)))
    return factor / count if count else math.nan


_SQUARED_ERROR = _pointwise_loss("squared_error", "T x, T t", "(x - t) * (x - t)",
                                 lambda device, x, t: (x - t) * (x - t))
_SQUARED_ERROR_GRAD = Elementwise("genesis_squared_error_grad", "T x, T t, T g, T scale", "T dx",
                                  "dx = (x - t) * (g * scale)",
                                  lambda device, x, t, g, scale: (x - t) * (g * scale))


class MseLoss(Function):
    """(input - target)**2, reduced, in one node: one GPU launch forward and one (two when
    the target needs a gradient too) backward."""

    @staticmethod
    @ignore_float_errors  # the mean of nothing is nan
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        return _reduced_loss(_SQUARED_ERROR, input._device, (input._data, target._data), reduction)

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        needs = ctx.needs_input_grad
        scale = _gradient_scale(2.0, (input._data, target._data), ctx.reduction)
        if grad_state.enabled:  # create_graph: differentiable ops
            to_input = (input - target) * (grad * scale)
        else:
            device = input._device
            to_input = wrap_array(_SQUARED_ERROR_GRAD(device, input._data, target._data,
                                                      grad._data, scale), device)
        return to_input if needs[0] else None, -to_input if needs[1] else None, None


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean absolute error: |input - target|, reduced."""
    _check_pair(input, target, "l1_loss")
    return _reduce(abs(input - target), reduction, "l1_loss")


def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 * d**2 / beta where |d| < beta, else |d| - 0.5 * beta (d = input - target)."""
    _check_pair(input, target, "smooth_l1_loss")
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    distance = abs(input - target)
    if beta == 0:
        return _reduce(distance, reduction, "smooth_l1_loss")
    loss = where(distance < beta, distance ** 2 * (0.5 / beta), distance - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """0.5 * d**2 where |d| < delta, else delta * (|d| - 0.5 * delta)."""
    _check_pair(input, target, "huber_loss")
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    distance = abs(input - target)
    loss = where(distance < delta, distance ** 2 * 0.5, (distance - 0.5 * delta) * delta)
    return _reduce(loss, reduction, "huber_loss")


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


def _nll(log_probs: Tensor, safe_target, weights, class_dim: int, reduction: str) -> Tensor:
    loss = -_picked(log_probs, safe_target, class_dim)
    if weights is None:
        return _reduce(loss, reduction, "nll_loss")
    loss = loss * wrap_array(weights, log_probs.device)
    if reduction == "mean":
        return loss.sum() / wrap_array(weights.sum(), log_probs.device)
    return _reduce(loss, reduction, "nll_loss")


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
    class_dim, safe_target, kept = _class_targets(input, target, ignore_index, "nll_loss")
    weights = _target_weights(weight, safe_target, kept, input)
    return _nll(input, safe_target, weights, class_dim, reduction)


def _cross_entropy_rows_reference(device, x, target, axis):
    log_probabilities = log_softmax_reference(device, x, axis)
    return log_probabilities, -device.xp.take_along_axis(log_probabilities, target, axis)


def _cross_entropy_grad_reference(device, log_probabilities, index, grad, scale, classes, inner):
    xp = device.xp
    axis = 0 if log_probabilities.ndim == 1 else 1
    probabilities = xp.exp(log_probabilities)
    xp.put_along_axis(probabilities, index, xp.take_along_axis(probabilities, index, axis) - 1, axis)
    probabilities *= grad * scale
    return probabilities


# Each position's log-probabilities and loss, -log_softmax(x)[target], in one launch.
_CROSS_ENTROPY_ROWS = RowKernel(
    "genesis_cross_entropy_rows", "T x, row int64 target", "T log_probabilities, row T loss",
    PEAK_AND_LOG_TOTAL + """
  FOR_ROW(j) log_probabilities[AT(j)] = (x[AT(j)] - peak) - log_total;
  if (threadIdx.x == 0) loss[0] = log_total - (x[AT(target[0])] - peak);""",
    _cross_entropy_rows_reference)
# The gradient (softmax - onehot(index)) * grad * scale; an element's class is
# (i / inner) % classes.
_CROSS_ENTROPY_GRAD = Elementwise(
    "genesis_cross_entropy_grad",
    "T log_probabilities, int64 index, T grad, T scale, int64 classes, int64 inner", "T dx",
    "dx = (exp(log_probabilities) - ((i / inner) % classes == index ? T(1) : T(0))) "
    "* (grad * scale)", _cross_entropy_grad_reference)


class CrossEntropy(Function):
    """Softmax cross entropy against class indices that are all classes (none ignored), with
    no class weights or label smoothing: the common training loss, in one node. On a GPU
    its forward is one launch for "none" and two otherwise, its backward one.

    Per position: loss = log(sum_c exp(x_c - m)) - (x_target - m), m the largest x; the
    gradient is (softmax(x) - onehot(target)) * grad, over the positions for "mean".
    """

    autocast_policy = "float32"

    @staticmethod
    @ignore_float_errors  # inf/nan logits give nan like PyTorch
    def forward(ctx, input, target, reduction):
        device = input._device
        axis = 0 if input.ndim == 1 else 1
        data = input._data
        x = data.astype(np.float32) if data.dtype.itemsize < 4 else data
        index = target.reshape(target.shape[:axis] + (1,) + target.shape[axis:])
        log_probabilities, losses = _CROSS_ENTROPY_ROWS(device, x, index, axis=axis)
        positions = losses.size
        scale = (1.0 / positions if positions else math.nan) if reduction == "mean" else 1.0
        if reduction == "none":
            loss = losses.squeeze(axis)
        elif reduction == "sum":
            loss = losses.sum()
        else:
            loss = _quiet_mean(losses, {})  # the mean of nothing is nan
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(input)
            ctx.log_probabilities, ctx.index, ctx.axis, ctx.scale, ctx.reduction = \
                log_probabilities, index, axis, scale, reduction
        return device.xp.asarray(loss, dtype=data.dtype)

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        device, axis = input._device, ctx.axis
        if ctx.reduction == "none":
            grad = grad.unsqueeze(axis)
        if grad_state.enabled:  # create_graph: differentiate through the softmax op
            onehot = device.xp.zeros(input.shape, input._data.dtype)
            device.xp.put_along_axis(onehot, ctx.index, 1, axis)
            local = softmax(input, axis) - wrap_array(onehot, device)
            return local * (grad * ctx.scale), None, None
        log_probabilities = ctx.log_probabilities
        dx = _CROSS_ENTROPY_GRAD(device, log_probabilities, ctx.index, grad._data, ctx.scale,
                                 input.shape[axis], math.prod(log_probabilities.shape[axis + 1:]))
        return wrap_array(dx.astype(input._data.dtype, copy=False), device), None, None


class WeightedCrossEntropy(Function):
    """Softmax cross entropy against class indices, in one node, with class weights, ignored
    targets and label smoothing.

    Per position i: loss_i = -sum_c A[i, c] * log_softmax(x)[i, c], where A holds
    (1 - smoothing) * w[t_i] at the target class plus smoothing / C * w[c] everywhere
    (0 for ignored positions). The gradient is (softmax(x) * sum_c A[i, c] - A) * grad.
    """

    autocast_policy = "float32"

    @staticmethod
    @ignore_float_errors  # inf/nan logits, or every target ignored (0 / 0), give nan like PyTorch
    def forward(ctx, input, coefficients, reduction, denominator):
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
            ctx.axis, ctx.coefficients, ctx.reduction, ctx.denominator = \
                axis, coefficients, reduction, denominator
        if reduction == "mean":
            loss = loss.sum() / denominator
        elif reduction == "sum":
            loss = loss.sum()
        return xp.asarray(loss, dtype=data.dtype)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        axis, coefficients = ctx.axis, ctx.coefficients
        device = input.device
        if grad_state.enabled:  # create_graph: differentiate through the softmax op
            probabilities = softmax(input, axis)
        else:
            probabilities = wrap_array(ctx.probabilities.astype(input._data.dtype, copy=False), device)
        totals = coefficients.sum(axis=axis, keepdims=True).astype(input._data.dtype, copy=False)
        local = probabilities * wrap_array(totals, device) - wrap_array(
            coefficients.astype(input._data.dtype, copy=False), device)
        if ctx.reduction == "none":
            grad = grad.unsqueeze(axis)
        elif ctx.reduction == "mean":
            grad = grad / wrap_array(ctx.denominator, device)
        return local * grad, None, None, None


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
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"cross_entropy: {reduction!r} is not a valid value for reduction; use one "
                         f"of {_REDUCTIONS}")
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
    return WeightedCrossEntropy.apply(input, coefficients, reduction, denominator)


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
    return _reduce(loss, reduction, "cross_entropy")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         reduction: str = "mean") -> Tensor:
    """-(t * log(x) + (1 - t) * log(1 - x)) for probabilities x in [0, 1]; each log is
    clamped at -100 (as in PyTorch), so x = 0 or 1 gives a finite loss."""
    _check_pair(input, target, "binary_cross_entropy")
    data = input._data
    if bool(((data < 0) | (data > 1)).any()):
        raise RuntimeError("binary_cross_entropy: all elements of input should be between 0 and 1; "
                           "for logits use binary_cross_entropy_with_logits")
    log_x = clamp(log(clamp(input, min=0.0)), min=-100.0)
    log_not_x = clamp(log(clamp(1 - input, min=0.0)), min=-100.0)
    loss = -(target * log_x + (1 - target) * log_not_x)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy of sigmoid(input), computed stably from the logits; `pos_weight`
    weighs the positive term (one value per class, broadcast over the last dimension)."""
    _check_pair(input, target, "binary_cross_entropy_with_logits")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"binary_cross_entropy_with_logits: {reduction!r} is not a valid value "
                         f"for reduction; use one of {_REDUCTIONS}")
    constants = [t for t in (target, weight, pos_weight) if t is not None]
    if all(isinstance(t, Tensor) and not t.requires_grad for t in constants):
        return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)
    # A target or weight that needs a gradient too: composed from differentiable ops.
    log_sigmoid_neg = log1p(exp(-abs(input))) + relu(-input)  # -log(sigmoid(input))
    if pos_weight is None:
        loss = (1 - target) * input + log_sigmoid_neg
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * log_sigmoid_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


# Per element, with lw = 1 + (pos_weight - 1) * t and -log(sigmoid(x)) computed stably:
# loss = ((1 - t) * x + lw * -log(sigmoid(x))) * weight; d loss / dx = ((1 - t) + lw *
# (sigmoid(x) - 1)) * weight (weight and pos_weight are 1 when not given).
_BCE_LOGITS_EXPRESSION = ("((T(1) - t) * x + (T(1) + (pw - T(1)) * t)"
                          " * (log1p(exp(-fabs(x))) + (x < T(0) ? -x : T(0)))) * w")


def _bce_logits_reference(device, x, t, w, pw):
    xp = device.xp
    log_sigmoid_neg = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0)
    return ((1 - t) * x + (1 + (pw - 1) * t) * log_sigmoid_neg) * w


_BCE_LOGITS = _pointwise_loss("bce_logits", "T x, T t, T w, T pw", _BCE_LOGITS_EXPRESSION,
                              _bce_logits_reference)


def _bce_logits_grad_reference(device, x, t, w, pw, g, scale):
    sigmoid = 1 / (1 + device.xp.exp(-x))
    return ((1 - t) + (1 + (pw - 1) * t) * (sigmoid - 1)) * w * (g * scale)


_BCE_LOGITS_GRAD = Elementwise(
    "genesis_bce_logits_grad", "T x, T t, T w, T pw, T g, T scale", "T dx",
    "T sigmoid = T(1) / (T(1) + exp(-x));"
    " dx = ((T(1) - t) + (T(1) + (pw - T(1)) * t) * (sigmoid - T(1))) * w * (g * scale)",
    _bce_logits_grad_reference)


class BinaryCrossEntropyWithLogits(Function):
    """Binary cross entropy of sigmoid(input) from the logits, reduced, in one node (one GPU
    launch each way), for a target, weight and pos_weight that need no gradient."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, input, target, weight, pos_weight, reduction):
        device = input._device
        arrays = (input._data, target._data, 1.0 if weight is None else weight._data,
                  1.0 if pos_weight is None else pos_weight._data)
        ctx.arrays, ctx.reduction = arrays, reduction
        ctx.save_for_backward(input)
        return _reduced_loss(_BCE_LOGITS, device, arrays, reduction)

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        _, t, w, pw = ctx.arrays
        scale = _gradient_scale(1.0, ctx.arrays, ctx.reduction)
        device = input._device
        if grad_state.enabled:  # create_graph: differentiable in the input
            t, w, pw = (wrap_array(device.xp.asarray(a), device) for a in (t, w, pw))
            return ((1 - t) + (1 + (pw - 1) * t) * (input.sigmoid() - 1)) * w * (grad * scale), \
                None, None, None, None
        return wrap_array(_BCE_LOGITS_GRAD(device, input._data, t, w, pw, grad._data, scale),
                          device), None, None, None, None


def kl_div(input: Tensor, target: Tensor, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise: target * (log(target) - input), 0 where target is 0.
    `input` holds log-probabilities; "batchmean" divides the sum by the batch size (the true KL)."""
    if log_target:
        loss = exp(target) * (target - input)
    else:
        positive = target > 0
        loss = target * (log(where(positive, target, 1.0)) - input)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction, "kl_div")
