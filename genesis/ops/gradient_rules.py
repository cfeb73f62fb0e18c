"""One gradient rule, two executors.

A backward states its gradient rule once, as arithmetic and methods that arrays and
Tensors share (`+`, `*`, `@`, `.T`, `.reshape`, `.sum(axis)`) and functions taken from
its first argument, `m`. `run_rule` runs the rule on the Tensors when the backward is
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

from ..autograd.grad_mode import grad_state
from ..tensor import Tensor, wrap_array
from ._kernels import fusing_pays
from .unary import TENSOR_MATH, array_math

__all__ = ["run_rule", "run_partials", "array_of"]


def run_rule(rule, grad: Tensor, *operands, fused=None):
    """`rule(m, grad, *operands)`: on the Tensors under create_graph (arrays among the
    operands made Tensors too), else on the arrays (`fused(device, grad, *operands)` on
    arrays instead, where a fused kernel pays). Numbers, None and options pass as they are.
    Returns what the rule returns, arrays wrapped as Tensors (a tuple stays a tuple, None
    stays None)."""
    device = grad._device
    if grad_state.enabled:
        array_type = device.xp.ndarray
        return rule(TENSOR_MATH, grad, *(wrap_array(value, device)
                                         if isinstance(value, array_type) else value
                                         for value in operands))
    arrays = [value._data if isinstance(value, Tensor) else value for value in operands]
    if fused is not None and fusing_pays(device):
        result = fused(device, grad._data, *arrays)
    else:
        result = rule(array_math(device.xp), grad._data, *arrays)
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
        array_type = device.xp.ndarray
        a, b, out = (wrap_array(value, device) if isinstance(value, array_type) else value
                     for value in (a, b, out))
        return (partial_a(TENSOR_MATH, grad, a, b, out) if needs[0] else None,
                partial_b(TENSOR_MATH, grad, a, b, out) if needs[1] else None)
    m, g = array_math(device.xp), grad._data
    a, b, out = array_of(a), array_of(b), array_of(out)
    return (wrap_array(partial_a(m, g, a, b, out), device) if needs[0] else None,
            wrap_array(partial_b(m, g, a, b, out), device) if needs[1] else None)


def array_of(value):
    """A Tensor's array; anything else as it is."""
    return value._data if isinstance(value, Tensor) else value
