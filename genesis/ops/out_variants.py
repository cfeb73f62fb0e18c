"""`out=` arguments: an op's result written into a tensor the caller gives, with PyTorch's
rules. Such a call is not differentiable: it is refused while gradients are recorded and an
argument or `out` requires grad, and inside a dual level when one of them carries a tangent.
`out` is resized to the result's shape when it has another (PyTorch warns unless it is
empty); the write counts as an in-place change of `out` (its version goes up).

>>> import genesis
>>> out = genesis.zeros(2)
>>> genesis.mul(genesis.tensor([1., 2.]), 3, out=out), out._version
(tensor([3., 6.]), 1)
"""
from __future__ import annotations

import warnings

from ..autograd import function
from ..autograd.grad_mode import grad_state, no_grad
from ..inference_tensors import refuse_inference_tensor_update
from ..tensor import Tensor
from .inplace import tell_before_write, write_listeners
from .storage import resize_

__all__ = []  # the out= path of the ops that take one; no public function of its own


def write_out(name: str, compute, out, inputs: tuple) -> Tensor:
    """`compute(*inputs)` written into `out` (the op `name` called with `out=`); returns `out`."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    tensors = [value for value in inputs if isinstance(value, Tensor)] + [out]
    if grad_state.enabled and any(tensor._requires_grad for tensor in tensors):
        culprit = "out" if out._requires_grad else "an input"
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad ({culprit} "
                           "does). Call it without out= to record the op, or inside "
                           "genesis.no_grad() to write the result without a graph.")
    if function.dual_mode.active and function.dual_mode.tangent_of is not None and any(
            function.dual_mode.tangent_of(tensor) is not None for tensor in tensors):
        raise RuntimeError(f"{name}(): the out= function does not support forward automatic "
                           "differentiation, but one of its arguments has a tangent: call it "
                           "without out=")
    if out._version_counter.__class__ is not list:
        refuse_inference_tensor_update(out, name)
    with no_grad():
        result = compute(*inputs)
    if result._data.shape != out._data.shape:
        if out._data.size:
            warnings.warn(f"{name}(): an output with one or more elements was resized since it "
                          f"had shape {list(out.shape)}, which does not match the required "
                          f"output shape {list(result.shape)}. Resize it to zero elements "
                          "first (t.resize_(0)) to reuse it without this warning.", UserWarning,
                          stacklevel=3)
        resize_(out, result._data.shape)
    if write_listeners:
        tell_before_write(out)
    try:
        out._device.xp.copyto(out._data, result._data, casting="same_kind")
    except TypeError as error:
        raise RuntimeError(f"{name}(): result type {result.dtype.name} can't be cast to the "
                           f"desired output type {out.dtype.name}: {error}") from None
    out._version_counter[0] += 1
    return out
