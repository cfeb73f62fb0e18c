"""Functional layers: linear, bilinear, dropout, embedding; their Functions (gradient rules)
and registry entries (`OPS`)."""
from __future__ import annotations

import math

import numpy as np

from ..autocast_rules import LOWER, PROMOTE_ON_CUDA
from ..autograd.autocast_casts import autocast_inputs, outside_autocast
from .. import sparse_gradients
from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..device import host_numbers
from ..ops._index_checks import any_outside
from ..ops._kernels import Elementwise
from ..ops._operands import rounded_product
from ..ops.einsum import einsum
from ..ops.gradient_rules import run_rule
from ..ops.index import IndexScatter
from ..ops.inplace import apply_inplace
from ..ops.registry import OpInfo, Sample
from ..ops.samples import values
from ..random import generator_for
from ..tensor import Tensor, wrap_array

__all__ = ["linear", "bilinear", "dropout", "embedding"]


class LinearFunction(Op):
    """input @ weight.T + bias in one node (PyTorch's addmm)."""

    node_name = "Linear"

    autocast_policy = LOWER

    @staticmethod
    def forward(ctx, input, weight, bias):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(input if needs[1] else None, weight if needs[0] else None)
        x = input._data
        if x.ndim > 2:  # every leading dim is a row: one matrix product, as PyTorch's addmm
            out = (x.reshape(math.prod(x.shape[:-1]), x.shape[-1]) @ weight._data.T).reshape(
                x.shape[:-1] + (weight.shape[0],))
        else:
            out = x @ weight._data.T
        if bias is not None:
            out += bias._data
        return rounded_product(out, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        return run_rule(_linear_rule, grad, input, weight, ctx.needs_input_grad)


def _linear_rule(m, grad, input, weight, needs: tuple) -> tuple:
    """The gradients of input @ weight.T + bias: every leading dim of `grad` is a row."""
    leading = tuple(grad.shape[:-1])
    count = math.prod(leading)  # not -1: an extent may be 0
    rows = grad.reshape(count, grad.shape[-1])
    grad_input = (rows @ weight).reshape(leading + (weight.shape[-1],)) if needs[0] else None
    grad_weight = rows.T @ input.reshape(count, input.shape[-1]) if needs[1] else None
    grad_bias = rows.sum(0) if needs[2] else None
    return grad_input, grad_weight, grad_bias


def _refuse_linear(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """Raise the error that explains why these operands can't go through `linear` (dtype
    mismatches are fine under autocast, which casts them to one dtype)."""
    if input.ndim == 0 or weight.ndim != 2 or input.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"linear: input of shape {tuple(input.shape)} can't be multiplied by "
                           f"a weight of shape {tuple(weight.shape)} (out_features, in_features): "
                           "the input's last dimension must equal in_features")
    if bias is not None and bias.shape != (weight.shape[0],):
        raise RuntimeError(f"linear: bias has shape {tuple(bias.shape)}, expected "
                           f"({weight.shape[0]},) to match out_features")
    if grad_state.autocast_on(input._device.type) is None:
        names = ", ".join(f"{what} {t.dtype.name}" for what, t in
                          (("input", input), ("weight", weight), ("bias", bias)) if t is not None)
        raise RuntimeError(f"linear: dtypes differ ({names}); cast the input (e.g. x.float()) or "
                           "the layer (e.g. layer.double()) so they match")


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """`input @ weight.T + bias`, for input of shape (*, in_features).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.linear(genesis.ones(2, 3), genesis.ones(4, 3), genesis.zeros(4))
    tensor([[3., 3., 3., 3.],
            [3., 3., 3., 3.]])
    """
    x, w = input._data, weight._data
    if x.ndim == 0 or w.ndim != 2 or x.shape[-1] != w.shape[1] or x.dtype != w.dtype or (
            bias is not None and (bias._data.shape != w.shape[:1] or bias._data.dtype != x.dtype)):
        _refuse_linear(input, weight, bias)
    return LinearFunction.apply(input, weight, bias)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y_o = x1^T W_o x2 + b_o for x1 (*, in1), x2 (*, in2) and weight (out, in1, in2).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.bilinear(genesis.ones(2, 3), genesis.ones(2, 4), genesis.ones(5, 3, 4)).shape
    genesis.Size([2, 5])
    """
    if weight.ndim != 3 or input1.ndim == 0 or input1.shape[-1] != weight.shape[1] or \
            input2.shape[-1:] != weight.shape[2:] or input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear: inputs of shapes {tuple(input1.shape)} and "
                           f"{tuple(input2.shape)} don't fit a weight of shape "
                           f"{tuple(weight.shape)} (out, in1, in2): they need the same leading "
                           "dims and last dims in1 and in2")
    if bias is not None and bias.shape != weight.shape[:1]:
        raise RuntimeError(f"bilinear: bias has shape {tuple(bias.shape)}, expected "
                           f"({weight.shape[0]},) to match out_features")
    input1, input2, weight, bias = autocast_inputs(PROMOTE_ON_CUDA, input1, input2, weight, bias)
    with outside_autocast():
        out = einsum("...i,oij,...j->...o", input1, weight, input2)
        return out + bias if bias is not None else out


class DropoutFunction(Op):
    """Zero each element with probability p and scale the rest by 1 / (1 - p)."""

    node_name = "Dropout"

    nondeterministic = True

    @staticmethod
    def forward(ctx, input, p):
        data = input._data
        draw_dtype = data.dtype if data.dtype.itemsize >= 4 else "float32"
        uniform = generator_for(input._device).random(data.shape, dtype=draw_dtype)
        out, mask = _DROPOUT(input._device, data, uniform, p, 1.0 / (1.0 - p) if p < 1 else 1.0)
        if ctx.needs_input_grad[0]:
            ctx.mask = wrap_array(mask, input._device)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.mask, None


def _dropout_reference(device, x, uniform, p, scale):
    mask = (uniform >= p).astype(x.dtype) * scale if scale != 1 else (uniform >= p).astype(x.dtype)
    return x * mask, mask


# Keep an element where its uniform draw is at least p, scaled by 1 / (1 - p): the output
# and the mask (the backward's factor) in one pass.
_DROPOUT = Elementwise("genesis_dropout", "T x, T uniform, T p, T scale", "T y, T mask",
                       "mask = uniform >= p ? scale : T(0); y = x * mask", _dropout_reference)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """During training, zero elements with probability `p` (scaling the rest by 1 / (1 - p));
    the identity when `training` is False.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.dropout(genesis.ones(4), 0.5, training=False)
    tensor([1., 1., 1., 1.])
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not input.is_floating_point():
        raise RuntimeError(f"dropout needs a floating point input, got {input.dtype!r}")
    if not training or p == 0:
        return input
    if inplace:
        return apply_inplace(DropoutFunction, input, p)
    return DropoutFunction.apply(input, p)


class EmbeddingFunction(Op):
    """Rows of `weight` picked by integer `indices`; the gradient adds back into those rows."""

    node_name = "Embedding"
    op_name = "embedding"  # in messages

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq=False):
        ctx.weight_shape = weight.shape
        ctx.indices = indices._data
        ctx.padding_idx = padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        return weight._data[indices._data]

    @staticmethod
    def backward(ctx, grad):
        factor = _row_gradient_factor(ctx.indices, ctx.weight_shape[0], ctx.padding_idx,
                                      ctx.scale_grad_by_freq, grad._device.xp)
        if factor is not None:
            grad = grad * wrap_array(factor[..., None].astype(grad._data.dtype), grad.device)
        return IndexScatter.apply(grad, ctx.weight_shape, (ctx.indices, Ellipsis)), None, None, None

    @staticmethod
    def defined_gradients(args, kwargs) -> dict:
        """The padding row's gradient is zero by definition (as in PyTorch), not derived from
        the output, which does read that row; with scale_grad_by_freq, a row looked up more
        than once gets its gradient divided by that count, by definition too.

        >>> import genesis
        >>> EmbeddingFunction.defined_gradients((genesis.zeros(3, 2), genesis.tensor([0]), 1), {})[0]
        array([[False],
               [ True],
               [False]])
        >>> EmbeddingFunction.defined_gradients((genesis.zeros(3, 2), genesis.tensor([2, 0, 2]),
        ...                                      None, True), {})[0]
        array([[False],
               [False],
               [ True]])
        """
        weight, indices, padding_idx = args[:3]
        scale_grad_by_freq = args[3] if len(args) > 3 else False
        rows = np.zeros((weight.shape[0], 1), dtype=bool)
        if scale_grad_by_freq:
            counts = np.bincount(np.asarray(indices.tolist(), dtype=np.int64).ravel(),
                                 minlength=weight.shape[0])
            rows[counts > 1] = True
        if padding_idx is not None:
            rows[padding_idx] = True
        return {0: rows} if rows.any() else {}


def _row_gradient_factor(indices, rows: int, padding_idx, scale_grad_by_freq: bool, xp):
    """Per looked-up index, what its gradient row is multiplied by: 0 at the padding row,
    1 / (how often its index occurs in the whole input) with scale_grad_by_freq, as in
    PyTorch; None where every factor is 1."""
    factor = None
    if scale_grad_by_freq:
        counts = xp.bincount(indices.ravel(), minlength=rows)
        factor = 1.0 / counts[indices]
    if padding_idx is not None:
        keep = indices != padding_idx
        factor = keep if factor is None else factor * keep
    return factor


def _check_indices(input: Tensor, weight: Tensor) -> None:
    if not isinstance(input, Tensor) or input._data.dtype.kind not in "iu":
        what = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"embedding: indices must be an integer tensor, got {what}; "
                           "use genesis.tensor([...]) of ints or t.long()")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got "
                           f"shape {tuple(weight.shape)}")
    if input._device != weight._device:
        raise RuntimeError(f"embedding: indices are on {input.device}, weight on {weight.device}")
    data = input._data
    if not any_outside(input._device, data, weight.shape[0]):
        return
    low, high = host_numbers(input._device, data.min(), data.max())  # to name the culprit
    bad = low if low < 0 else high
    raise IndexError(f"embedding: index {bad} is out of range for a table of "
                     f"{weight.shape[0]} rows (valid: 0..{weight.shape[0] - 1})")


def _renorm_rows(weight: Tensor, indices, max_norm: float, norm_type: float) -> None:
    """Scale the looked-up rows whose norm exceeds max_norm down to it, in place (no graph)."""
    xp = weight._device.xp
    rows = xp.unique(indices)
    norms = xp.linalg.norm(weight._data[rows], ord=norm_type, axis=1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    weight._data[rows] *= scale[:, None].astype(weight._data.dtype)
    weight._version_counter[0] += 1


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Look up rows of `weight` (num_embeddings, embedding_dim) at integer `input`.

    `padding_idx`: that row gets no gradient. `max_norm`: rows looked up are
    first renormalised in place to at most that `norm_type`-norm. `scale_grad_by_freq`:
    each row's gradient is divided by how often its index occurs in `input`.
    `sparse=True`: the gradient is dense (genesis has no sparse tensors), zero in the rows
    not looked up, and `SparseAdam` accepts it (`genesis.sparse_gradients`).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.embedding(genesis.tensor([2, 0]), genesis.arange(6.).reshape(3, 2))
    tensor([[4., 5.],
            [0., 1.]])
    """
    _check_indices(input, weight)
    if padding_idx is not None:
        if not -weight.shape[0] <= padding_idx < weight.shape[0]:
            raise ValueError(f"embedding: padding_idx {padding_idx} must be within the "
                             f"{weight.shape[0]} rows of weight")
        padding_idx %= weight.shape[0]
    if max_norm is not None:
        _renorm_rows(weight, input._data, max_norm, norm_type)
    if sparse:
        sparse_gradients.mark(weight)
    return EmbeddingFunction.apply(weight, input, padding_idx, bool(scale_grad_by_freq))


def _linear_samples(rng):
    def arrays(input_shape, out_features=5, bias=True):
        weight = values(rng, (out_features, input_shape[-1]))
        made = (values(rng, input_shape), weight)
        return made + (values(rng, (out_features,)),) if bias else made

    return [
        Sample(arrays((3, 4)), note="2-D"),
        Sample(arrays((2, 3, 4)), note="batched 3-D input"),
        Sample(arrays((4,)), note="1-D input"),
        Sample(arrays((3, 4), bias=False), note="no bias"),
        Sample(arrays((3, 4)), grad=(True, False, True), note="weight needs no grad"),
        Sample(arrays((3, 4)), grad=(False, True, False), note="only the weight needs grad"),
        Sample(arrays((4, 3)), layout="transposed", note="transposed"),
        Sample(arrays((2, 3)), layout="strided", note="strided"),
        Sample(arrays((0, 4)), note="zero-size batch"),
    ]


def _bilinear_samples(rng):
    def arrays(batch, bias=True):
        made = (values(rng, batch + (3,)), values(rng, batch + (4,)), values(rng, (5, 3, 4)))
        return made + (values(rng, (5,)),) if bias else made

    return [
        Sample(arrays((2,)), note="2-D"),
        Sample(arrays((2, 3)), note="batched 3-D inputs"),
        Sample(arrays((2,), bias=False), note="no bias"),
        Sample(arrays((2,)), grad=(True, False, True, False), note="input2 and bias need no grad"),
        Sample(arrays((2,)), layout="transposed", note="transposed"),
        Sample(arrays((2,)), layout="strided", note="strided"),
    ]


def _dropout_samples(rng):
    """Training-mode dropout draws random numbers, except at p = 1 (everything dropped): the
    one draw whose result is the same on every run and device, and PyTorch's."""
    return [
        Sample((values(rng, (3, 4)), 1.0), note="p=1 drops everything"),
        Sample((values(rng, (4, 3)), 1.0), layout="transposed", note="p=1 transposed"),
        Sample((values(rng, (2, 5)),), {"p": 0.5, "training": False}, note="evaluation"),
        Sample((values(rng, (2, 5)), 0.0), layout="strided", note="p=0 strided"),
    ]


def _embedding_samples(rng):
    """Indices never name the padding row: its gradient is zero by definition, not the
    derivative finite differences measure."""
    def indices(shape, rows=6, avoid=None):
        choices = [row for row in range(rows) if row != avoid]
        return rng.choice(choices, size=shape)

    return [
        Sample((indices((2, 3)), values(rng, (6, 3))), note="2-D indices"),
        Sample((indices((4,)), values(rng, (6, 3))), note="1-D indices"),
        Sample((indices((2, 3), avoid=2), values(rng, (6, 3)), 2), note="padding_idx"),
        Sample((indices((2, 3), avoid=5), values(rng, (6, 3)), -1), note="negative padding_idx"),
        Sample((np.zeros(4, dtype=np.int64), values(rng, (6, 3))), note="one row picked often"),
        Sample((indices((3, 2)), values(rng, (6, 3))), layout="transposed", note="transposed"),
        Sample((indices((2, 3)), values(rng, (6, 3))), layout="strided", note="strided"),
        Sample((indices((2, 3)), values(rng, (6, 3))), grad=(False, False),
               note="the weight needs no grad"),
    ]


OPS = [
    OpInfo("linear", linear, _linear_samples,
           torch=lambda torch, *args: torch.nn.functional.linear(*args)),
    OpInfo("bilinear", bilinear, _bilinear_samples,
           torch=lambda torch, *args: torch.nn.functional.bilinear(*args)),
    OpInfo("dropout", dropout, _dropout_samples,
           torch=lambda torch, *args, **kwargs: torch.nn.functional.dropout(*args, **kwargs)),
    OpInfo("embedding", embedding, _embedding_samples,
           torch=lambda torch, *args: torch.nn.functional.embedding(*args),
           kinks="the padding_idx row, whose gradient is zero by definition"),
]
