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
from .storage import _refuse_resize, _resized

__all__ = []  # the out= path of the ops that take one; no public function of its own


def write_out(name: str, compute, out, inputs: tuple) -> Tensor:
    """`compute(*inputs)` written into `out` (the op `name` called with `out=`); returns `out`."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    _refuse_recorded_write(name, [out], inputs)
    with no_grad():
        result = compute(*inputs)
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}(): this form returns {len(result)} tensors, so argument 'out' "
                        f"must be a tuple of {len(result)} Tensors, not Tensor")
    return _store(name, result, out)


def write_outs(name: str, compute, outs, inputs: tuple, index_outputs: tuple = ()):
    """`compute(*inputs)`, a tuple of tensors (values and indices), written into the tensors
    of the tuple `outs`, one each; returns them as the op returns its results (the same
    named tuple). The outputs at `index_outputs` must be int64, as PyTorch requires."""
    if not isinstance(outs, (tuple, list)) or not all(isinstance(out, Tensor) for out in outs):
        raise TypeError(f"{name}(): argument 'out' must be a tuple of Tensors, not "
                        f"{type(outs).__name__}")
    _refuse_recorded_write(name, list(outs), inputs)
    with no_grad():
        results = compute(*inputs)
    if isinstance(results, Tensor) or len(results) != len(outs):
        count = 1 if isinstance(results, Tensor) else len(results)
        raise TypeError(f"{name}(): this form returns {count} tensor(s), but 'out' holds {len(outs)}")
    for position in index_outputs:
        if outs[position].dtype.name != "int64":
            raise RuntimeError(f"{name}(): expected out tensor {position} to have dtype int64 (the "
                               f"indices), but got {outs[position].dtype.name} instead")
    stored = []
    for result, out in zip(results, outs):  # a loop, not a comprehension: one frame to the caller
        stored.append(_store(name, result, out))
    return type(results)(*stored) if hasattr(results, "_fields") else tuple(stored)


def _refuse_recorded_write(name: str, outs: list, inputs: tuple) -> None:
    tensors = [value for value in inputs if isinstance(value, Tensor)] + outs
    tensors += [item for value in inputs if isinstance(value, (tuple, list))
                for item in value if isinstance(item, Tensor)]  # cat and stack take a sequence
    if grad_state.enabled and any(tensor._requires_grad for tensor in tensors):
        culprit = "out" if any(out._requires_grad for out in outs) else "an input"
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad ({culprit} "
                           "does). Call it without out= to record the op, or inside "
                           "genesis.no_grad() to write the result without a graph.")
    if function.dual_mode.active and function.dual_mode.tangent_of is not None and any(
            function.dual_mode.tangent_of(tensor) is not None for tensor in tensors):
        raise RuntimeError(f"{name}(): the out= function does not support forward automatic "
                           "differentiation, but one of its arguments has a tangent: call it "
                           "without out=")
    for out in outs:
        if out._version_counter.__class__ is not list:
            refuse_inference_tensor_update(out, name)


def _store(name: str, result: Tensor, out: Tensor) -> Tensor:
    """`result` copied into `out`, resized first when its shape differs; the version of
    `out` goes up once for both, as in PyTorch."""
    if result._data.shape != out._data.shape:
        if out._data.size:
            warnings.warn(f"{name}(): an output with one or more elements was resized since it "
                          f"had shape {list(out.shape)}, which does not match the required "
                          f"output shape {list(result.shape)}. Resize it to zero elements "
                          "first (t.resize_(0)) to reuse it without this warning.", UserWarning,
                          stacklevel=4)
        _refuse_resize(name, out)
    if write_listeners:
        tell_before_write(out)
    if result._data.shape != out._data.shape:
        _resized(out, result._data.shape)
    try:
        out._device.xp.copyto(out._data, result._data, casting="same_kind")
    except TypeError as error:
        raise RuntimeError(f"{name}(): result type {result.dtype.name} can't be cast to the "
                           f"desired output type {out.dtype.name}: {error}") from None
    out._version_counter[0] += 1
    return out
