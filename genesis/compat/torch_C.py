"""The few names of PyTorch's private `torch._C` that programs and PyTorch's own autograd
tests reach for, each with what it means in genesis: grad-mode and graph-task queries of the
engine, a weak tensor reference, the AccumulateGrad and DelayedError node types, and the
saved-tensor-hooks switch. Everything else in `torch._C` stays unsupported (one clear line).

>>> torch_C = __import__("genesis.compat.torch_C", fromlist=["_"])
>>> torch_C.is_grad_enabled(), torch_C._current_graph_task_id()
(True, -1)
"""
from __future__ import annotations

import types
import weakref

from ..autograd import engine, forward_ad, function, saved_hooks
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tracking_modes import SavedTensor
from ..tensor import Tensor

__all__ = ["is_grad_enabled", "has_lapack", "_will_engine_execute_node", "_current_graph_task_id",
           "_set_fwd_grad_enabled", "_WeakTensorRef", "_functions", "_autograd"]

has_lapack = True  # NumPy's linear algebra
_will_engine_execute_node = engine.will_engine_execute_node
_current_graph_task_id = engine.current_graph_task_id
_set_fwd_grad_enabled = forward_ad._set_fwd_grad_enabled


class _WeakTensorRef:
    """A weak reference to a tensor: `expired()` once nothing else holds it."""

    def __init__(self, tensor: Tensor):
        self._reference = weakref.ref(tensor)

    def expired(self) -> bool:
        return self._reference() is None


class _DelayedErrorFunction(function.Function):
    """Passes its inputs through; differentiating through it raises `message`."""

    @staticmethod
    def forward(ctx, message, *tensors):
        ctx.message = message
        outputs = tuple(tensor.clone() for tensor in tensors)
        return outputs if len(outputs) > 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.message)


class DelayedError:
    """`DelayedError(message, num_inputs)(*tensors)`: the tensors, passed through, with a
    backward that raises `message` (PyTorch's node for gradients that must not be taken)."""

    def __init__(self, message: str, num_inputs: int):
        self.message, self.num_inputs = message, num_inputs

    def __call__(self, *tensors):
        if len(tensors) != self.num_inputs:
            raise TypeError(f"DelayedError: expected {self.num_inputs} arguments, got "
                            f"{len(tensors)} instead")
        return _DelayedErrorFunction.apply(self.message, *tensors)


_functions = types.SimpleNamespace(AccumulateGrad=function.AccumulateGrad,
                                   DelayedError=DelayedError)
_autograd = types.SimpleNamespace(
    SavedTensor=SavedTensor,
    _saved_tensors_hooks_is_enabled=lambda: saved_hooks.state.disabled is None)
