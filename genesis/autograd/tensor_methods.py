"""The Tensor methods that run the autograd core: `backward` and `register_hook`.

They live here, not in genesis/tensor.py, because the engine and the hooks build on the
Tensor class; genesis.ops.catalog binds `METHODS` onto Tensor with every op family's.
"""
from __future__ import annotations

from ..listeners import Listeners
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
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        return self.grad_fn._add_tensor_hook(self._output_nr, hook)
    if self._hooks is None:
        self._hooks = []
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


METHODS = {"backward": backward, "register_hook": register_hook,
           "register_post_accumulate_grad_hook": register_post_accumulate_grad_hook}
