"""The hooks of module calls: their entries (`Hook`), the global ones that run for every
module (`register_module_forward_hook`...: before each module's own, in the order
registered, as PyTorch's), and PyTorch's deprecated non-full backward hooks, which are
hooks of the graph node that made a module's output."""
from __future__ import annotations

import weakref
from typing import NamedTuple

from ..autograd.hooks import RemovableHandle, checked_hook
from ..tensor import Tensor

__all__ = ["Hook", "REGISTERED_BY", "global_call_hooks", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_backward_hook",
           "attach_legacy_backward_hooks"]


class Hook(NamedTuple):
    kind: str            # "forward_pre", "forward", "backward", "backward_pre", "legacy_backward"
    function: object
    with_kwargs: bool
    always_call: bool = False  # a forward hook also run when the call raises


REGISTERED_BY = {"forward_pre": "register_forward_pre_hook", "forward": "register_forward_hook",
                 "backward": "register_full_backward_hook",
                 "backward_pre": "register_full_backward_pre_hook",
                 "legacy_backward": "register_backward_hook"}

global_call_hooks: list = []  # Hook entries run by every module call, before its own


def _add_global_hook(kind: str, hook, with_kwargs: bool = False,
                     always_call: bool = False) -> RemovableHandle:
    function = checked_hook(hook, "register_module_" + REGISTERED_BY[kind].removeprefix("register_"))
    return RemovableHandle(global_call_hooks, Hook(kind, function, with_kwargs, always_call))


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """`hook(module, args)` before every module's forward (see Module.register_forward_pre_hook)."""
    return _add_global_hook("forward_pre", hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """`hook(module, args, output)` after every module's forward (see
    Module.register_forward_hook).

    >>> import genesis
    >>> handle = register_module_forward_hook(lambda module, args, out: out + 1)
    >>> genesis.nn.Identity()(genesis.tensor([1.]))
    tensor([2.])
    >>> handle.remove()
    """
    return _add_global_hook("forward", hook, with_kwargs, always_call)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """`hook(module, grad_output)` for every module (see Module.register_full_backward_pre_hook)."""
    return _add_global_hook("backward_pre", hook)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """`hook(module, grad_input, grad_output)` for every module (see
    Module.register_full_backward_hook)."""
    return _add_global_hook("backward", hook)


def register_module_backward_hook(hook) -> RemovableHandle:
    """PyTorch's deprecated non-full backward hook, for every module (see
    Module.register_backward_hook)."""
    return _add_global_hook("legacy_backward", hook)


def attach_legacy_backward_hooks(module, hooks: list, result) -> None:
    """Register each of `hooks` as `hook(module, grad_inputs, grad_outputs)` on the graph node
    that made the first tensor of `result` (the first of a tuple or list, the first tensor
    value of a dict, as PyTorch finds it); nothing when that tensor has no grad_fn."""
    found = result
    while not isinstance(found, Tensor):
        if isinstance(found, dict):
            found = next(value for value in found.values() if isinstance(value, Tensor))
        else:
            found = found[0]
    node = found.grad_fn
    if node is None:
        return
    for hook in hooks:
        node.register_hook(_ModuleNodeHook(hook, module))


class _ModuleNodeHook:
    """A module's non-full backward hook, called as the node's hook (PyTorch's _WrappedHook):
    the graph holds the module weakly, so a module gone by the backward is an error."""

    def __init__(self, hook, module):
        self.hook, self.module = hook, weakref.ref(module)

    def __call__(self, grad_inputs: tuple, grad_outputs: tuple):
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, grad_inputs, grad_outputs)
