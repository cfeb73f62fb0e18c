"""The Tensor methods that run the autograd core: `backward` and `register_hook`.

They live here, not in genesis/tensor.py, because the engine and the hooks build on the
Tensor class; genesis.ops.catalog binds `METHODS` onto Tensor with every op family's.
"""
from __future__ import annotations

from ..listeners import Listeners
from ..dtypes import get_dtype
from ..tensor import Tensor
from .engine import backward as run_backward
from .hooks import RemovableHandle, checked_hook
from .function import gradient_edge

__all__ = ["backward", "register_hook", "METHODS", "backward_roots"]

# Told `backward_root(tensor)` before each `tensor.backward()` runs (genesis trace keeps the
# loss of every step this way); empty, it costs one truth test.
backward_roots: Listeners = Listeners()


def backward(self: Tensor, gradient=None, retain_graph=None, create_graph: bool = False,
             inputs=None) -> None:
    """Compute gradients of this tensor w.r.t. graph leaves, accumulating into `.grad`.

    `gradient` defaults to 1 for a one-element tensor. Saved buffers are freed
    afterwards unless `retain_graph=True` (default: `create_graph`).
    `create_graph=True` records the backward itself for higher-order grads.

    >>> import genesis
    >>> x = genesis.tensor([1., 2.], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad
    tensor([2., 4.])
    """
    if backward_roots:
        for listener in list(backward_roots):
            listener.backward_root(self)
    run_backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph,
                 inputs=inputs)


def register_hook(self: Tensor, hook) -> RemovableHandle:
    """Call `hook(grad)` when this tensor's gradient is computed.

    The hook may return a replacement gradient. Returns a handle whose
    `.remove()` unregisters it.

    >>> import genesis
    >>> x = genesis.tensor([1., 2.], requires_grad=True)
    >>> handle = x.register_hook(lambda g: g * 10)
    >>> (x * x).sum().backward(); x.grad
    tensor([20., 40.])
    """
    checked_hook(hook, "register_hook")
    if not self.requires_grad:  # (the property: a view changed in place gets its new grad_fn)
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        return self.grad_fn._add_tensor_hook(self._output_nr, hook)
    if self._hooks.__class__ is not list:  # None, or a dict assigned to _backward_hooks
        self._hooks = list(self._hooks.values()) if self._hooks else []
    return RemovableHandle(self._hooks, hook)


def register_post_accumulate_grad_hook(self: Tensor, hook) -> RemovableHandle:
    """Call `hook(tensor)` after a backward has added into this leaf's `.grad` (for example
    to step an optimizer per parameter as soon as its gradient is ready). The hook returns
    None. Returns a handle whose `.remove()` unregisters it.

    >>> import genesis
    >>> w = genesis.ones(2, requires_grad=True)
    >>> handle = w.register_post_accumulate_grad_hook(lambda p: print(p.grad))
    >>> (w * 3).sum().backward()
    tensor([3., 3.])
    """
    checked_hook(hook, "register_post_accumulate_grad_hook")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors: "
                           "this tensor was made by " f"{type(self.grad_fn).__name__}; use "
                           "register_hook for the gradient of an intermediate result")
    node = gradient_edge(self)[0]
    if not isinstance(node._post_accumulate_hooks, list):
        node._post_accumulate_hooks = []
    return RemovableHandle(node._post_accumulate_hooks, hook)


def _grad_dtype(self: Tensor):
    """The dtype gradients reaching this leaf are cast to: its own dtype unless set; None
    keeps each gradient in the dtype backward gave it.

    >>> import genesis
    >>> w = genesis.ones(2, requires_grad=True)
    >>> w.grad_dtype
    genesis.float32
    >>> w.grad_dtype = genesis.float64
    >>> (w * 2).sum().backward(); w.grad.dtype
    genesis.float64
    """
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors: this tensor was made by "
                           f"{type(self.grad_fn).__name__}")
    node = self._accumulator
    return node._grad_dtype if node is not None and node._grad_dtype_set else self.dtype


def _set_grad_dtype(self: Tensor, dtype) -> None:
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors: this tensor was made by "
                           f"{type(self.grad_fn).__name__}")
    if dtype is not None:
        dtype = get_dtype(dtype)
        if not dtype.is_floating_point:
            raise RuntimeError(f"grad_dtype must be a floating point dtype or None, got {dtype.name}")
        if self._grad is not None and self._grad.dtype is not dtype:
            raise RuntimeError(f"Cannot set grad_dtype to {dtype.name} because there is already a "
                               f"gradient with dtype {self._grad.dtype.name}; set .grad = None first")
    node = gradient_edge(self)[0]
    node._grad_dtype_set = True
    node._grad_dtype = dtype
    node._grad_numpy_dtype = None if dtype is None else dtype.numpy_dtype


METHODS = {"backward": backward, "register_hook": register_hook,
           "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook,
           "grad_dtype": property(_grad_dtype, _set_grad_dtype)}
