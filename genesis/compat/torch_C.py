"""The few names of PyTorch's private `torch._C` that programs and PyTorch's own autograd
tests reach for, each with what it means in genesis: grad-mode and graph-task queries of the
engine, a weak tensor reference, the AccumulateGrad, DelayedError and UndefinedGrad node
types, and the saved-tensor-hooks switch. Everything else in `torch._C` stays unsupported (one clear line).

>>> torch_C = __import__("genesis.compat.torch_C", fromlist=["_"])
>>> torch_C.is_grad_enabled(), torch_C._current_graph_task_id()
(True, -1)
"""
from __future__ import annotations

import types
import weakref

from ..autograd import engine, forward_ad, function, graph, graph_task, saved_hooks
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.saved_variables import SavedTensor, make_saved_tensor
from ..autograd.tracking_modes import _unsafe_set_version_counter
from ..tensor import Tensor

__all__ = ["is_grad_enabled", "has_lapack", "_will_engine_execute_node", "_current_graph_task_id",
           "_current_autograd_node",
           "_current_graph_task_execution_order", "_set_fwd_grad_enabled", "_WeakTensorRef",
           "_functions", "_autograd", "_set_cached_tensors_enabled", "_add_cached_tensor",
           "_remove_cached_tensor", "_is_cached_tensor"]

has_lapack = True  # NumPy's linear algebra
_will_engine_execute_node = engine.will_engine_execute_node
_current_graph_task_id = engine.current_graph_task_id
_current_autograd_node = graph_task.current_node
_current_graph_task_execution_order = engine.current_graph_task_execution_order
_set_fwd_grad_enabled = forward_ad._set_fwd_grad_enabled


class _WeakTensorRef:
    """A weak reference to a tensor: `expired()` once nothing else holds it."""

    def __init__(self, tensor: Tensor):
        self._reference = weakref.ref(tensor)

    def expired(self) -> bool:
        return self._reference() is None


class DelayedError:
    """`DelayedError(message, num_inputs)(*tensors)`: the tensors, passed through, with a
    backward that raises `message` (PyTorch's node for gradients that must not be taken)."""

    def __init__(self, message: str, num_inputs: int):
        self.message, self.num_inputs = message, num_inputs

    def __call__(self, *tensors):
        if len(tensors) != self.num_inputs:
            raise TypeError(f"DelayedError: expected {self.num_inputs} arguments, got "
                            f"{len(tensors)} instead")
        return function.DelayedError.apply(*tensors, message=self.message)


graph.Node.register(DelayedError)


class _UndefinedGradFunction(function.Function):
    """Passes its inputs through; the gradient it gives them is undefined (None)."""

    @staticmethod
    def forward(ctx, *tensors):
        outputs = tuple(tensor.clone() for tensor in tensors)
        return outputs if len(outputs) > 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * len(grads)


class UndefinedGrad:
    """`UndefinedGrad()(*tensors)`: the tensors, passed through, sending no gradient back
    (PyTorch's node for testing how backwards handle undefined gradients)."""

    def __call__(self, *tensors):
        return _UndefinedGradFunction.apply(*tensors)


graph.Node.register(UndefinedGrad)

_functions = types.SimpleNamespace(AccumulateGrad=function.AccumulateGrad,
                                   DelayedError=DelayedError, UndefinedGrad=UndefinedGrad)
_cached_tensors = {}  # id -> weak reference, while cached
_cached_tensors_enabled = [False]


def _set_cached_tensors_enabled(enabled: bool) -> None:
    """Allow marking tensors as cached (PyTorch's CUDA-graph memory pools own their storage;
    genesis keeps the marks only, with no pool behind them)."""
    _cached_tensors_enabled[0] = bool(enabled)


def _add_cached_tensor(tensor: Tensor) -> None:
    """Mark `tensor` as cached (once, however often it is added)."""
    if not _cached_tensors_enabled[0]:
        raise RuntimeError("_add_cached_tensor: cached tensors are not enabled; call "
                           "torch._C._set_cached_tensors_enabled(True) first")
    key = id(tensor)
    _cached_tensors[key] = weakref.ref(tensor, lambda _, key=key: _cached_tensors.pop(key, None))


def _remove_cached_tensor(tensor: Tensor) -> None:
    """Unmark `tensor` (nothing happens if it was not cached)."""
    _cached_tensors.pop(id(tensor), None)


def _is_cached_tensor(tensor: Tensor) -> bool:
    """Whether `tensor` is marked as cached."""
    reference = _cached_tensors.get(id(tensor))
    return reference is not None and reference() is tensor


_autograd = types.SimpleNamespace(
    _get_current_graph_task_keep_graph=graph_task.current_graph_task_keep_graph,
    SavedTensor=SavedTensor,
    _make_saved_tensor=make_saved_tensor,
    _unsafe_set_version_counter=_unsafe_set_version_counter,
    _saved_tensors_hooks_is_enabled=lambda: saved_hooks.state.disabled is None)
