"""Functional losses computed element by element, then reduced, with PyTorch's semantics:
mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy(_with_logits), kl_div;
and their registry entries (`OPS`). Most are composed from differentiable ops; mse_loss and
binary_cross_entropy_with_logits (for targets and weights that need no gradient) are one
node each, from fused GPU kernels. The losses against class indices are in
`_class_losses.py`."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..autocast_rules import FLOAT32, FLOAT32_ON_CPU
from ..autograd.autocast_casts import autocast_inputs
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..ops._kernels import MEAN_OF_REDUCED, Elementwise, Reduction
from ..ops._operands import ignore_float_errors
from ..ops.gradient_rules import array_math, run_rule
from ..ops.registry import OpInfo, Sample
from ..ops.samples import away_from, positive, values
from ..ops.unary import abs, exp
from ..ops.composites import xlogy
from ..ops.where import where
from ..tensor import Tensor, wrap_array
from ._composite_functions import logsigmoid

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div"]

REDUCTIONS = ("none", "mean", "sum")


def reduce_loss(loss: Tensor, reduction: str, name: str) -> Tensor:
    """The per-element `loss` reduced as `reduction` says; `name` (the loss) for the error."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: {reduction!r} is not a valid value for reduction; use one of "
                     f"{REDUCTIONS}")


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
    if reduction not in REDUCTIONS:
        raise ValueError(f"mse_loss: {reduction!r} is not a valid value for reduction; use one of "
                         f"{REDUCTIONS}")
    return MseLoss.apply(input, target, reduction)


def quiet_mean(values, where: dict):
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
                          lambda device, *args, **where: quiet_mean(reference(device, *args), where)),
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
def _squared_error_rule(m, grad, x, t, scale):
    """The gradient of (x - t)**2 reduced with `scale` (2, over the count for "mean")."""
    return (x - t) * (grad * scale)


_SQUARED_ERROR_GRAD = Elementwise(
    "genesis_squared_error_grad", "T x, T t, T g, T scale", "T dx", "dx = (x - t) * (g * scale)",
    lambda device, x, t, g, scale: _squared_error_rule(array_math(device), g, x, t, scale))


def _fused_squared_error_grad(device, g, x, t, scale):
    return _SQUARED_ERROR_GRAD(device, x, t, g, scale)


class MseLoss(Op):
    """(input - target)**2, reduced, in one node: one GPU launch forward and one (two when
    the target needs a gradient too) backward."""

    autocast_policy = FLOAT32

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
        to_input = run_rule(_squared_error_rule, grad, input, target, scale,
                            fused=_fused_squared_error_grad)
        return to_input if needs[0] else None, -to_input if needs[1] else None, None


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean absolute error: |input - target|, reduced."""
    input, target = autocast_inputs(FLOAT32, input, target)
    _check_pair(input, target, "l1_loss")
    return reduce_loss(abs(input - target), reduction, "l1_loss")


def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 * d**2 / beta where |d| < beta, else |d| - 0.5 * beta (d = input - target)."""
    input, target = autocast_inputs(FLOAT32, input, target)
    _check_pair(input, target, "smooth_l1_loss")
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    distance = abs(input - target)
    if beta == 0:
        return reduce_loss(distance, reduction, "smooth_l1_loss")
    loss = where(distance < beta, distance ** 2 * (0.5 / beta), distance - 0.5 * beta)
    return reduce_loss(loss, reduction, "smooth_l1_loss")


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """0.5 * d**2 where |d| < delta, else delta * (|d| - 0.5 * delta)."""
    input, target = autocast_inputs(FLOAT32, input, target)
    _check_pair(input, target, "huber_loss")
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    distance = abs(input - target)
    loss = where(distance < delta, distance ** 2 * 0.5, (distance - 0.5 * delta) * delta)
    return reduce_loss(loss, reduction, "huber_loss")


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         reduction: str = "mean") -> Tensor:
    """-(t * log(x) + (1 - t) * log(1 - x)) for probabilities x in [0, 1], times `weight`,
    reduced; each log is clamped at -100 and the gradient's denominator x * (1 - x) at
    1e-12, as in PyTorch, so x = 0 or 1 gives a finite loss and gradient.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> p = genesis.tensor([1.0, 0.0], requires_grad=True)
    >>> F.binary_cross_entropy(p, genesis.tensor([1.0, 0.0])).backward()
    >>> p.grad
    tensor([0., 0.])
    """
    if not isinstance(target, Tensor):
        raise TypeError(f"binary_cross_entropy: target must be a genesis Tensor, got "
                        f"{type(target).__name__}")
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({tuple(target.shape)}) that is different to the "
                         f"input size ({tuple(input.shape)}) is deprecated. Please ensure they "
                         "have the same size.")
    if reduction not in REDUCTIONS:
        raise ValueError(f"binary_cross_entropy: {reduction!r} is not a valid value for "
                         f"reduction; use one of {REDUCTIONS}")
    if target.dtype != input.dtype:
        raise RuntimeError(f"binary_cross_entropy: expected a target of the input's dtype "
                           f"{input.dtype}, got {target.dtype}; cast it with "
                           f".to(input.dtype)")
    if weight is not None and weight.requires_grad:
        raise RuntimeError("The function 'binary_cross_entropy' is not differentiable with "
                           "respect to argument 'weight'. This input cannot have "
                           "requires_grad True.")
    for name, data in (("input", input._data), ("target", target._data)):
        if bool(((data < 0) | (data > 1)).any()):
            raise RuntimeError(f"binary_cross_entropy: all elements of {name} should be between "
                               "0 and 1" + ("; for logits use binary_cross_entropy_with_logits"
                                            if name == "input" else ""))
    if weight is not None:
        weight = weight.to(input.dtype).expand(input.shape)
    return BinaryCrossEntropy.apply(input, target, weight, reduction)


# PyTorch's floor for x * (1 - x) in the gradient (a C float there, also for float64), and
# its offset in the second derivatives (a double)
_BCE_GRADIENT_FLOOR = np.float32(1e-12)
_BCE_EPSILON = 1e-12


def _divided_by_count(gradient, input: Tensor, reduction: str):
    """`gradient`, divided by the number of elements for "mean" (PyTorch divides last)."""
    return gradient / input.numel() if reduction == "mean" else gradient


class BinaryCrossEntropy(Op):
    """Binary cross entropy of probabilities, weighted and reduced, in one node with
    PyTorch's formulas: the loss (t - 1) max(log1p(-x), -100) - t max(log x, -100); the
    gradient g (x - t) / max(x (1 - x), 1e-12) for the input (BinaryCrossEntropyGrad, whose
    own backward gives PyTorch's second derivatives) and -g logit(x) for the target."""

    autocast_policy = FLOAT32_ON_CPU

    @staticmethod
    @ignore_float_errors  # log(0); the mean of nothing is nan
    def forward(ctx, input, target, weight, reduction):
        xp = input._device.xp
        x, t = input._data, target._data
        floor = x.dtype.type(-100)
        loss = (t - 1) * xp.maximum(xp.log1p(-x), floor) - t * xp.maximum(xp.log(x), floor)
        if weight is not None:
            loss = loss * weight._data
        ctx.save_for_backward(input, target, weight)  # the weight too: checked for writes
        ctx.reduction = reduction
        if reduction == "none":
            return loss
        return xp.asarray(quiet_mean(loss, {}) if reduction == "mean" else loss.sum())

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad):
        input, target, weight = ctx.saved_tensors
        reduction = ctx.reduction
        needs = ctx.needs_input_grad
        to_input = (BinaryCrossEntropyGrad.apply(grad, input, target, weight, reduction)
                    if needs[0] else None)
        to_target = None
        if needs[1]:  # -logit(x) g w, with logit(0) = -inf and logit(1) = inf
            to_target = (input / (1 - input)).log().neg() * grad
            if weight is not None:
                to_target = to_target * weight
            to_target = _divided_by_count(to_target, input, reduction)
        return to_input, to_target, None, None


class BinaryCrossEntropyGrad(Op):
    """The input's gradient of binary cross entropy, g (x - t) / max(x (1 - x), 1e-12)
    (times the weight, over the count for "mean"); its backward is PyTorch's
    binary_cross_entropy_double_backward (and its _grad_output and _target forms)."""

    @staticmethod
    @ignore_float_errors
    def forward(ctx, grad, input, target, weight, reduction):
        xp = input._device.xp
        x, t = input._data, target._data
        floor = x.dtype.type(_BCE_GRADIENT_FLOOR)
        gradient = grad._data * (x - t) / xp.maximum((1 - x) * x, floor)
        if weight is not None:
            gradient = gradient * weight._data
        ctx.save_for_backward(grad, input, target, weight)
        ctx.reduction = reduction
        return _divided_by_count(gradient, input, reduction)

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad_grad):
        grad, input, target, weight = ctx.saved_tensors
        reduction = ctx.reduction
        needs = ctx.needs_input_grad
        x, t, eps = input, target, _BCE_EPSILON
        to_grad = to_input = to_target = None
        if needs[0]:  # summed back to the loss's shape by the engine for "mean" and "sum"
            to_grad = (x - t) / ((x + eps) * (1 - x + eps)) * grad_grad
            if weight is not None:
                to_grad = to_grad * weight
            to_grad = _divided_by_count(to_grad, input, reduction)
        if needs[1]:
            to_input = ((x * x - 2 * x * t + t) / ((x + eps) ** 2 * (1 - x + eps) ** 2)
                        * (grad_grad * grad))
            if weight is not None:
                to_input = to_input * weight
            to_input = _divided_by_count(to_input, input, reduction)
        if needs[2]:
            to_target = -grad_grad * grad
            if weight is not None:
                to_target = to_target * weight
            to_target = _divided_by_count(to_target / ((1 - x) * x).detach().clamp(min=eps),
                                          input, reduction)
        return to_grad, to_input, to_target, None, None


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy of sigmoid(input), computed stably from the logits; `pos_weight`
    weighs the positive term (one value per class, broadcast over the last dimension).
    Differentiable in the input and the target (not the weights), as PyTorch's."""
    _check_pair(input, target, "binary_cross_entropy_with_logits")
    if reduction not in REDUCTIONS:
        raise ValueError(f"binary_cross_entropy_with_logits: {reduction!r} is not a valid value "
                         f"for reduction; use one of {REDUCTIONS}")
    for name, value in (("weight", weight), ("pos_weight", pos_weight)):
        if value is not None and value.requires_grad:
            raise RuntimeError(f"The function 'binary_cross_entropy_with_logits' is not "
                               f"differentiable with respect to argument '{name}'. This input "
                               "cannot have requires_grad True.")
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


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


def _bce_logits_rule(m, grad, x, t, w, pw, scale):
    """The gradient of binary cross entropy from the logits `x` (targets `t`, weight `w`,
    positive-class weight `pw`), reduced with `scale`: PyTorch's (pw t + 1 - t) sigmoid(x) -
    pw t, which keeps sigmoid(x)'s tiny values where 1 + lw (sigmoid(x) - 1) would cancel."""
    positive = pw * t
    return ((positive + 1 - t) * m.sigmoid(x) - positive) * w * (grad * scale)


_BCE_LOGITS_GRAD = Elementwise(
    "genesis_bce_logits_grad", "T x, T t, T w, T pw, T g, T scale", "T dx",
    "T sigmoid = T(1) / (T(1) + exp(-x)); T positive = pw * t;"
    " dx = ((positive + T(1) - t) * sigmoid - positive) * w * (g * scale)",
    lambda device, x, t, w, pw, g, scale: _bce_logits_rule(array_math(device), g, x, t, w, pw,
                                                           scale))


def _fused_bce_logits_grad(device, g, x, t, w, pw, scale):
    return _BCE_LOGITS_GRAD(device, x, t, w, pw, g, scale)


class BinaryCrossEntropyWithLogits(Op):
    """Binary cross entropy of sigmoid(input) from the logits, reduced, in one node (one GPU
    launch each way); the target's gradient is PyTorch's, -g x (log sigmoid(-x) - pw log
    sigmoid(x) with a pos_weight), and the weights are constants."""

    autocast_policy = FLOAT32

    @staticmethod
    @ignore_float_errors
    def forward(ctx, input, target, weight, pos_weight, reduction):
        device = input._device
        arrays = (input._data, target._data, 1.0 if weight is None else weight._data,
                  1.0 if pos_weight is None else pos_weight._data)
        ctx.reduction = reduction
        ctx.save_for_backward(input, target, weight, pos_weight)  # weights checked for writes
        return _reduced_loss(_BCE_LOGITS, device, arrays, reduction)

    @staticmethod
    @ignore_float_errors
    def backward(ctx, grad):
        input, target, weight, pos_weight = ctx.saved_tensors
        w = 1.0 if weight is None else weight._data
        pw = 1.0 if pos_weight is None else pos_weight._data
        needs = ctx.needs_input_grad
        scale = _gradient_scale(1.0, (input._data, target._data, w, pw), ctx.reduction)
        to_input = to_target = None
        if needs[0]:
            # the target as a Tensor: under create_graph the gradient depends on it too
            to_input = run_rule(_bce_logits_rule, grad, input, target, w, pw, scale,
                                fused=_fused_bce_logits_grad)
        if needs[1]:
            if pos_weight is None:
                to_target = -input * (grad * scale)
            else:
                to_target = (logsigmoid(-input) - logsigmoid(input) * pos_weight) * (grad * scale)
            if weight is not None:
                to_target = to_target * weight
        return to_input, to_target, None, None, None


def kl_div(input: Tensor, target: Tensor, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise: xlogy(target, target) - target * input (PyTorch's
    composition, so the target's gradient log(target) + 1 - input is nan at target 0).
    `input` holds log-probabilities; "batchmean" divides the sum by the batch size (the true KL)."""
    loss = KLDiv.apply(input, target, bool(log_target))
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return reduce_loss(loss, reduction, "kl_div")


class KLDiv(Op):
    """kl_div's loss per element in one node whose input 0 is `input`, the log-probabilities
    (where genesis.debug's softmax_into_loss rule looks for softmax probabilities given
    instead); the values and gradients of PyTorch's composition xlogy(t, t) - t * x
    (exp(t) * (t - x) with log_target), the target's gradient nan where it is 0.

    What it reads is what that composition saves: the target, and the input only for the
    target's gradient; with log_target, neither (a plain backward reads the forward's exp(t)
    and t - x; a create_graph backward differentiates them, so reads and checks both). An
    in-place write to what is not read leaves the backward free to run, as in PyTorch."""

    autocast_policy = FLOAT32

    @staticmethod
    @ignore_float_errors
    def forward(ctx, input, target, log_target):
        ctx.log_target = log_target
        xp = input._device.xp
        x, t = input._data, target._data
        if log_target:
            ctx.save_for_backward(input, target)
            ctx.exp_target, ctx.difference = xp.exp(t), t - x
            return ctx.exp_target * ctx.difference
        ctx.save_for_backward(input if ctx.needs_input_grad[1] else None, target)
        return xp.where(t != t, t, xp.where(t == 0, 0, t * xp.log(t))) - t * x

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        if ctx.log_target and not grad_state.enabled:
            weight = wrap_array(ctx.exp_target, grad._device)
            return (-(weight * grad) if needs[0] else None,
                    weight * (wrap_array(ctx.difference, grad._device) + 1) * grad
                    if needs[1] else None, None)
        input, target = ctx.saved_tensors
        weight = exp(target) if ctx.log_target else target
        to_input = -(weight * grad) if needs[0] else None
        to_target = None
        if needs[1] and ctx.log_target:  # exp(t) (t - x), differentiated
            to_target = weight * (target - input + 1) * grad
        elif needs[1]:  # through xlogy(t, t) as PyTorch: xlogy(t != 0, t) + t / t, nan at 0
            to_target = (xlogy(target != 0, target) + target / target - input) * grad
        return to_input, to_target, None


def _pair_samples(make_input, make_target, rng, **kwargs) -> list:
    """Samples for a loss of (input, target): each reduction, either operand without grad,
    non-contiguous layouts, 0-d operands."""
    def pair(shape):
        target = make_target(rng, shape)
        return make_input(rng, shape, target), target

    return [
        Sample(pair((3, 4)), dict(kwargs), note="mean"),
        Sample(pair((3, 4)), dict(kwargs, reduction="sum"), note="sum"),
        Sample(pair((2, 3, 4)), dict(kwargs, reduction="none"), note="none"),
        Sample(pair((3, 4)), dict(kwargs), grad=(True, False), note="target needs no grad"),
        Sample(pair((3, 4)), dict(kwargs), grad=(False, True), note="input needs no grad"),
        Sample(pair((4, 3)), dict(kwargs), layout="transposed", note="transposed"),
        Sample(pair((2, 5)), dict(kwargs, reduction="none"), layout="strided", note="strided"),
        Sample(pair(()), dict(kwargs), note="0-d"),
    ]


def _anywhere(rng, shape, target):
    return values(rng, shape)


def _distance_from(points):
    """Inputs whose distance to the target stays away from `points` (kinks)."""
    def make(rng, shape, target):
        return np.asarray(target + away_from(rng, shape, points))
    return make


def _mse_samples(rng):
    return _pair_samples(_anywhere, values, rng)


def _l1_samples(rng):
    return _pair_samples(_distance_from((0.0,)), values, rng)


def _one_pair(rng, points) -> tuple:
    target = values(rng, (3, 4))
    return _distance_from(points)(rng, (3, 4), target), target


def _smooth_l1_samples(rng):
    return _pair_samples(_distance_from((-1.0, 0.0, 1.0)), values, rng) + [
        Sample(_one_pair(rng, (-0.5, 0.0, 0.5)), {"beta": 0.5}, note="beta 0.5"),
        Sample(_one_pair(rng, (0.0,)), {"beta": 0.0, "reduction": "sum"}, note="beta 0"),
    ]


def _huber_samples(rng):
    return _pair_samples(_distance_from((-1.0, 1.0)), values, rng) + [
        Sample(_one_pair(rng, (-0.5, 0.5)), {"delta": 0.5, "reduction": "sum"},
               note="delta 0.5"),
    ]


def _probabilities(rng, shape, target=None):
    return rng.uniform(0.05, 0.95, size=shape)


def _binary_cross_entropy_samples(rng):
    def weighted(weight_shape, **kwargs):
        return Sample((_probabilities(rng, (3, 4)), _probabilities(rng, (3, 4)),
                       positive(rng, weight_shape)), kwargs, grad=(True, True, False),
                      note=f"weight {weight_shape} {kwargs}")

    return (_pair_samples(_probabilities, _probabilities, rng)
            + [weighted((3, 4)), weighted((4,), reduction="none")])


def _logits_samples(rng):
    def logits(shape=(3, 4), weight=None, pos_weight=None, reduction="mean", target_grad=False):
        arrays = (values(rng, shape), _probabilities(rng, shape))
        args = arrays + (None if weight is None else positive(rng, weight), reduction)
        if pos_weight is not None:
            args += (positive(rng, pos_weight),)
        grad = (True, target_grad) + (False,) * (weight is not None) + \
            (False,) * (pos_weight is not None)
        return Sample(args, grad=grad, note=f"{shape} weight {weight} pos_weight {pos_weight} "
                                            f"{reduction}{' target grad' if target_grad else ''}")

    return [
        logits(), logits(reduction="sum"), logits((2, 3, 4), reduction="none"),
        logits(weight=(4,)), logits(pos_weight=(4,)), logits(weight=(3, 4), pos_weight=(4,)),
        logits(target_grad=True), logits(weight=(4,), pos_weight=(4,), target_grad=True),
        logits(()),
        Sample((values(rng, (4, 3)), _probabilities(rng, (4, 3))), grad=(True, False),
               layout="transposed", note="transposed"),
        Sample((values(rng, (2, 5)), _probabilities(rng, (2, 5))), layout="strided",
               note="strided"),
    ]


def _kl_div_samples(rng):
    def pair(shape, log_target=False):
        target = positive(rng, shape, 0.1, 1.0)
        return values(rng, shape, -3.0, 0.0), np.log(target) if log_target else target

    return [
        Sample(pair((3, 4)), {"reduction": "batchmean"}, note="batchmean"),
        Sample(pair((2, 3, 4)), {"reduction": "sum"}, note="sum"),
        Sample(pair((3, 4)), {"reduction": "none"}, note="none"),
        Sample(pair((3, 4), log_target=True), {"reduction": "batchmean", "log_target": True},
               note="log_target"),
        Sample(pair((3, 4)), {"reduction": "batchmean"}, grad=(True, False),
               note="target needs no grad"),
        Sample(pair((3, 4)), {"reduction": "sum"}, grad=(False, True), note="input needs no grad"),
        Sample(pair((4, 3)), {"reduction": "batchmean"}, layout="transposed", note="transposed"),
        Sample(pair((2, 5), log_target=True), {"reduction": "none", "log_target": True},
               layout="strided", note="strided"),
    ]


def _torch_logits_loss(torch, input, target, weight=None, reduction="mean", pos_weight=None):
    return torch.nn.functional.binary_cross_entropy_with_logits(
        input, target, weight, reduction=reduction, pos_weight=pos_weight)


OPS = [
    OpInfo("mse_loss", mse_loss, _mse_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.mse_loss(*args, **kw)),
    OpInfo("l1_loss", l1_loss, _l1_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.l1_loss(*args, **kw),
           kinks="input == target"),
    OpInfo("smooth_l1_loss", smooth_l1_loss, _smooth_l1_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.smooth_l1_loss(*args, **kw),
           kinks="input == target when beta is 0; the second derivative jumps where "
                 "|input - target| == beta"),
    OpInfo("huber_loss", huber_loss, _huber_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.huber_loss(*args, **kw),
           kinks="the second derivative jumps where |input - target| == delta"),
    OpInfo("binary_cross_entropy", binary_cross_entropy, _binary_cross_entropy_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.binary_cross_entropy(*args, **kw),
           kinks="input 0 or 1, where each log is clamped at -100"),
    OpInfo("binary_cross_entropy_with_logits", binary_cross_entropy_with_logits, _logits_samples,
           torch=_torch_logits_loss),
    OpInfo("kl_div", kl_div, _kl_div_samples,
           torch=lambda torch, *args, **kw: torch.nn.functional.kl_div(*args, **kw),
           kinks="target 0 (0 * log 0 is taken as 0) when log_target is False"),
]
