"""The saved-tensor hooks in force on this thread, and how a saved tensor is packed and unpacked
with them (the state behind `genesis.autograd.graph.saved_tensors_hooks`).

A tensor a Function saves with `ctx.save_for_backward` while hooks are in force is handed to
the innermost pack hook when the node joins the graph; what the hook returns is kept instead
of the tensor, and the unpack hook turns it back into a tensor each time backward reads
`ctx.saved_tensors`. The unpacked tensor routes its gradient where the original's went, shares
the version counter of what the unpack hook returned (not the original's), and is not checked
for in-place changes (the hooks may keep a copy), as in PyTorch.

>>> import genesis
>>> calls = []
>>> state.stack.append((lambda t: calls.append("pack") or t, lambda t: calls.append("unpack") or t))
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> y = x.exp()
>>> _ = state.stack.pop()
>>> y.sum().backward(); calls
['pack', 'unpack']
"""
from __future__ import annotations

import threading

from ..grad_state import grad_state
from ..tensor import Tensor, wrap_array

__all__ = ["state", "PackedSaved", "pack", "pack_with", "push_hooks", "pop_hooks", "disable_hooks"]


class _State(threading.local):
    """`stack`: (pack_hook, unpack_hook) pairs, innermost last; `disabled`: the error message
    of the innermost `disable_saved_tensors_hooks`, None when hooks may be registered."""

    def __init__(self):
        self.stack = []
        self.disabled = None


state = _State()


def push_hooks(pack_hook, unpack_hook) -> None:
    if state.disabled is not None:
        raise RuntimeError(state.disabled)
    state.stack.append((pack_hook, unpack_hook))


def pop_hooks() -> None:
    if state.stack:
        state.stack.pop()


def disable_hooks(message: str | None) -> None:
    """Forbid registering hooks (`message` is the error raised then); None allows it again."""
    if message is not None and state.stack:
        raise RuntimeError(message)
    state.disabled = message


class PackedSaved:
    """What a pack hook returned for one saved tensor, with what unpacking needs: the unpack
    hook and the edge through which the original's gradient went (`(None, output_nr)` for
    an output of the saving node itself, kept without the node so that node and saved value
    make no cycle; None when the original did not require grad)."""

    __slots__ = ("packed", "unpack_hook", "edge", "leaf")

    def __init__(self, packed, unpack_hook, edge: tuple | None, leaf: bool):
        self.packed, self.unpack_hook, self.edge, self.leaf = packed, unpack_hook, edge, leaf

    def unpack(self, node) -> Tensor:
        """The tensor backward reads: the unpack hook's result, linked into the graph where
        the original tensor was (`node`: the node that saved it)."""
        result = self.unpack_hook(self.packed)
        if not isinstance(result, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(result).__name__}; the unpack hook must "
                            "return the saved tensor (or an equal one)")
        edge = self.edge
        if edge is None and not result._requires_grad:  # nothing to link: the hook's tensor
            return result                                 # itself, as PyTorch returns it
        tensor = wrap_array(result._data, result._device)
        tensor._version_counter = result._version_counter
        if edge is not None:
            tensor._requires_grad = True
            if self.leaf:
                tensor._accumulator = edge[0]
            else:
                tensor.grad_fn, tensor._output_nr = edge[0] or node, edge[1]
        return tensor


def pack(tensor: Tensor, edge: tuple | None) -> PackedSaved | None:
    """`tensor` packed with the innermost hooks, or None when no hooks are in force. `edge`:
    see `PackedSaved`."""
    stack = state.stack
    if not stack:
        return None
    return pack_with(tensor, edge, *stack[-1])


def pack_with(tensor: Tensor, edge: tuple | None, pack_hook, unpack_hook) -> PackedSaved:
    """`tensor` packed with `pack_hook` (run with grad disabled, as in PyTorch), to be
    unpacked with `unpack_hook`; PyTorch's error when the pack hook changes its input in
    place. `edge`: see `PackedSaved`."""
    version = tensor._version_counter[0]
    enabled, grad_state.enabled = grad_state.enabled, False
    try:
        packed = pack_hook(tensor)
    finally:
        grad_state.enabled = enabled
    if tensor._version_counter[0] != version:
        raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors "
                           "provided as input to pack hook can not be modified by in-place "
                           "operations as this can lead to unexpected side-effects. Please "
                           "consider making a clone of the tensor in the pack hook before "
                           "modifying it in place.")
    return PackedSaved(packed, unpack_hook, edge, tensor.grad_fn is None and edge is not None
                       and edge[0] is not None)
