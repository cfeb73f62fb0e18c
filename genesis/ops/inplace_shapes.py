"""In-place changes of a tensor's shape: `t_`, `transpose_`, `swapaxes_`, `swapdims_`,
`squeeze_`, `unsqueeze_`, as PyTorch's. The tensor becomes the view the out-of-place op
would return (same storage, new shape), and takes that view's place in the graph, so
gradients flow as through `x = x.t()`. A leaf that requires grad is refused outside
no_grad, as in PyTorch.

>>> import genesis
>>> x = genesis.zeros(2, 3)
>>> x.t_().shape, x.unsqueeze_(0).shape
(genesis.Size([3, 2]), genesis.Size([1, 3, 2]))
"""
from __future__ import annotations

from ..autograd.function import refuse_view_update
from ..autograd.grad_mode import grad_state
from ..inference_tensors import refuse_inference_tensor_update
from ..tensor import Tensor
from . import shape, tensor_info
from .inplace import refuse_leaf_change

__all__: list = []


def _reshaped_in_place(self: Tensor, name: str, view: Tensor) -> Tensor:
    """Make `self` the `view` of itself: its array and, when recording, its place in the graph."""
    refuse_inference_tensor_update(self, name)
    own = self._view
    if grad_state.enabled:
        if self._requires_grad:
            refuse_leaf_change(name, self)
        if own is not None and own[2] is not None and (self._requires_grad or
                                                       own[0]._requires_grad):
            refuse_view_update(self, name)
    self._data = view._data
    if view.grad_fn is not None:
        self.grad_fn, self._output_nr = view.grad_fn, view._output_nr
    if own is not None and view._view is not None:
        # still a view of the same base, through one more step; how the view was made stays
        # (an in-place view op under no_grad does not make it a no_grad view, as in PyTorch)
        self._view = view._view[:2] + (own[2],) + view._view[3:]
    return self


def _in_place_view(function, name: str):
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        return _reshaped_in_place(self, name, function(self, *args, **kwargs))

    method.__name__ = name
    method.__doc__ = (f"In place: `self` becomes `self.{function.__name__}(...)` (same storage, "
                      "new shape).")
    return method


_SOURCES = {"t_": tensor_info.t, "transpose_": shape.transpose, "swapaxes_": shape.transpose,
            "swapdims_": shape.transpose, "squeeze_": shape.squeeze, "unsqueeze_": shape.unsqueeze}

METHODS = {name: _in_place_view(function, name) for name, function in _SOURCES.items()}
OPS: list = []
