"""One gradient rule, two executors.

A backward states its gradient rule once, as arithmetic and methods that arrays and
Tensors share (`+`, `*`, `@`, `.T`, `.reshape`, `.sum(axis)`) and functions taken from
its first argument, `m` (`array_math(device)` or `TENSOR_MATH`, both below). `run_rule`
runs the rule on the Tensors when the backward is
itself recorded (create_graph), so the gradient can be differentiated again; otherwise on
their arrays, where no graph is built and no Tensor is made until the result. A fused GPU
kernel, where one pays, computes the same in one launch; tests/ops/test_fused_kernels.py
checks every such kernel against the array code it stands for.

>>> import genesis
>>> def product_rule(m, grad, a, b):
...     return grad * b, grad * a
>>> run_rule(product_rule, genesis.ones(2), genesis.tensor([2., 3.]), genesis.tensor([4., 5.]))
(tensor([4., 5.]), tensor([2., 3.]))
"""
from __future__ import annotations

import functools
import types

import numpy as np

from ..autograd.grad_mode import grad_state
from ..tensor import Tensor, wrap_array
from ._kernels import fusing_pays
from ._select import masked
from ._window_kernels import add_columns, columns
from .broadcast import Expand, broadcast_view
from .window import Fold, Unfold

__all__ = ["run_rule", "run_partials", "array_of", "array_math", "TENSOR_MATH", "nonzero_divisor"]


def nonzero_divisor(value: Tensor) -> Tensor:
    """`value` with its zeros replaced by infinity: dividing by it gives 0 there, which is
    PyTorch's gradient convention at the kink of sqrt-like reductions (std, 2-norm)."""
    zeros = value._data == 0
    if not zeros.any():
        return value
    scalar = value._data.dtype.type
    return value + wrap_array(value._device.xp.where(zeros, scalar(np.inf), scalar(0)), value._device)


# The functions rules call, on Tensors (create_graph: each call is recorded). A masked
# gradient (`gate`: kept where `keep`, `gate_off`: dropped where `drop`) is exactly 0 where
# it is masked, even where the gradient is inf or nan; `columns` / `add_columns` are the
# im2col / col2im pair under convolution; `expand` broadcasts a reduction's gradient back
# (a view), `mean_kept` is a mean keeping the reduced dims, `nonzero_divisor` is above.
TENSOR_MATH = types.SimpleNamespace(
    exp=lambda x: x.exp(), exp2=lambda x: x.exp2(), sin=lambda x: x.sin(),
    cos=lambda x: x.cos(), sinh=lambda x: x.sinh(), cosh=lambda x: x.cosh(),
    rsqrt=lambda x: x.rsqrt(), sigmoid=lambda x: x.sigmoid(),
    gate=lambda values, keep: values.where(keep, 0.0),
    gate_off=lambda values, drop: values.where(~drop, 0.0),
    columns=lambda x, windows: Unfold.apply(x, windows),
    add_columns=lambda cols, spatial, windows: Fold.apply(cols, spatial, windows),
    expand=lambda x, shape: Expand.apply(x, shape),
    mean_kept=lambda x, dims: x.mean(dims, keepdim=True), nonzero_divisor=nonzero_divisor)


def array_math(device) -> types.SimpleNamespace:
    """The same functions on the arrays of `device` (no graph).

    >>> import genesis, numpy as np
    >>> array_math(genesis.device("cpu")).rsqrt(np.array([4.0]))
    array([0.5])
    """
    # Keyed by id: devices are interned for the life of the process (Device.__new__), and
    # hashing one is a Python call, on the path of every +, -, * and / in a backward. The
    # namespace is rebuilt if the device was resolved again since (tests switch "cuda"
    # between NumPy and CuPy in one process).
    math = _ARRAY_MATH.get(id(device))
    if math is None or math.xp is not device._xp:
        math = _ARRAY_MATH[id(device)] = _array_math(device)
    return math


_ARRAY_MATH: dict = {}


def _array_math(device) -> types.SimpleNamespace:
    xp = device.xp
    return types.SimpleNamespace(
        xp=xp, exp=xp.exp, exp2=xp.exp2, sin=xp.sin, cos=xp.cos, sinh=xp.sinh, cosh=xp.cosh,
        rsqrt=lambda x: 1 / xp.sqrt(x), sigmoid=lambda x: 1 / (1 + xp.exp(-x)),
        gate=lambda values, keep: masked(device, values, keep, True),
        gate_off=lambda values, drop: masked(device, values, drop, False),
        columns=lambda x, windows: columns(device, x, windows),
        add_columns=lambda cols, spatial, windows: add_columns(device, cols, spatial, windows),
        expand=functools.partial(broadcast_view, xp=xp),
        mean_kept=lambda x, dims: x.mean(axis=dims, keepdims=True),
        nonzero_divisor=lambda x: xp.where(x == 0, x.dtype.type(np.inf), x))


def run_rule(rule, grad: Tensor, *operands, fused=None):
    """`rule(m, grad, *operands)`: on the Tensors under create_graph (arrays among the
    operands made Tensors too), else on the arrays (`fused(device, grad, *operands)` on
    arrays instead, where a fused kernel pays). Numbers, None and options pass as they are.
    Returns what the rule returns, arrays wrapped as Tensors (a tuple stays a tuple, None
    stays None)."""
    device = grad._device
    if grad_state.enabled:
        return rule(TENSOR_MATH, grad, *(_tensor_operand(value, device) for value in operands))
    arrays = [value._data if isinstance(value, Tensor) else value for value in operands]
    if fused is not None and fusing_pays(device):
        result = fused(device, grad._data, *arrays)
    else:
        result = rule(array_math(device), grad._data, *arrays)
    if result.__class__ is tuple:
        return tuple([None if value is None else wrap_array(value, device) for value in result])
    return wrap_array(result, device)


def run_partials(partial_a, partial_b, needs: tuple, grad: Tensor, a, b, out=None) -> tuple:
    """The gradients of a two-input op whose rule is a partial derivative per input, each
    `partial(m, grad, a, b, out)`, computed for the inputs `needs` asks for: `run_rule` for
    the elementwise tables, without its generality (these run for every `+`, `*`, `/`).

    >>> import genesis
    >>> times_b, times_a = (lambda m, g, a, b, out: g * b), (lambda m, g, a, b, out: g * a)
    >>> a = genesis.tensor([2., 3.])
    >>> run_partials(times_b, times_a, (True, False), genesis.ones(2), a, 5.0)
    (tensor([5., 5.]), None)
    """
    device = grad._device
    if grad_state.enabled:
        a, b, out = (_tensor_operand(value, device) for value in (a, b, out))
        return (partial_a(TENSOR_MATH, grad, a, b, out) if needs[0] else None,
                partial_b(TENSOR_MATH, grad, a, b, out) if needs[1] else None)
    m, g = array_math(device), grad._data
    # (array_of inlined: this runs for every +, -, * and / in a backward)
    a = a._data if isinstance(a, Tensor) else a
    b = b._data if isinstance(b, Tensor) else b
    out = out._data if isinstance(out, Tensor) else out
    return (wrap_array(partial_a(m, g, a, b, out), device) if needs[0] else None,
            wrap_array(partial_b(m, g, a, b, out), device) if needs[1] else None)


def _tensor_operand(value, device):
    """An operand for the rule on Tensors: an array (or a NumPy scalar, what a comparison of
    0-d arrays gives) as a Tensor; a Tensor, number, None or option as it is."""
    if isinstance(value, device.xp.ndarray | np.generic):
        return wrap_array(value, device)
    return value


def array_of(value):
    """A Tensor's array; anything else as it is."""
    return value._data if isinstance(value, Tensor) else value
