"""What a node saved for backward, as PyTorch shows it: `grad_fn._saved_<name>` (the value,
unpacked as backward would read it), `grad_fn._raw_saved_<name>` and `ctx._raw_saved_tensors`
(a `SavedTensor` handle on each saved value: its packed data, and hooks set on it alone), and
`make_saved_tensor` (a handle on a tensor saved outside any node).

Ops save their values by position (`ctx.save_for_backward(a, b, out)`); the names are found
only when an attribute is read, never while saving. A Function may declare its names
(`saved_names`, one per position); otherwise an Op's saved value is named by the rule
PyTorch's derivatives follow: an output of the node is `result` (`result0`, `result1`, ...
when the node has several outputs), and the values at positions 0 and 1 are `self` and
`other`, as genesis's ops save their inputs first, in argument order.

>>> import genesis
>>> a = genesis.tensor([1., 2.], requires_grad=True)
>>> y = a * a
>>> y.grad_fn._saved_self is a, y.grad_fn._saved_other is a
(True, True)
>>> z = a.exp()
>>> z.grad_fn._saved_result
tensor([2.7183, 7.3891], grad_fn=<ExpBackward0>)
"""
from __future__ import annotations

import re

from ..tensor import Tensor, wrap_array
from .function import (Node, _CONSUMED, _FREED, _freed_message, gradient_edge, saved_listings,
                       saved_lookups, unpack_saved)
from .saved_hooks import PackedSaved, pack_with, state as hooks_state

__all__ = ["SavedTensor", "saved_names", "make_saved_tensor"]

_INPUT_NAMES = ("self", "other")
_RESULT_NAME = re.compile(r"result\d*")


class SavedTensor:
    """A handle on one value a node saved (`grad_fn._raw_saved_self`): `data` (what is kept:
    the tensor, or what a pack hook returned), `unpack_hook`, `unpack()`, and
    `register_hooks(pack_hook, unpack_hook)`, which packs the value now and unpacks it at
    each read. Made by autograd, never from Python.

    >>> import genesis
    >>> a = genesis.tensor([1., 2.], requires_grad=True)
    >>> y = a * a
    >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: 2 * t, lambda t: t)
    >>> y.grad_fn._saved_self
    tensor([2., 4.], requires_grad=True)
    """

    __slots__ = ("_node", "_index")

    def __init__(self):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden: saved "
                           "tensors are made by autograd when a Function calls "
                           "ctx.save_for_backward")

    @classmethod
    def _of(cls, node: Node, index: int) -> "SavedTensor":
        handle = object.__new__(cls)
        handle._node, handle._index = node, index
        return handle

    def _entry(self) -> tuple:
        saved = self._node._saved
        if saved is _FREED or saved is _CONSUMED:
            raise RuntimeError(_freed_message(self._node))
        return saved[self._index]

    @property
    def data(self):
        """What the node keeps: the saved tensor (an output of the node detached from it),
        or what the pack hook returned."""
        value = self._entry()[0]
        return value.packed if value.__class__ is PackedSaved else value

    @property
    def unpack_hook(self):
        """The unpack hook this value is read with, or None."""
        value = self._entry()[0]
        return value.unpack_hook if value.__class__ is PackedSaved else None

    def unpack(self):
        """The value as backward reads it."""
        return unpack_saved(self._node, self._index, self._entry())

    def register_hooks(self, *hooks) -> None:
        """Pack this value with `pack_hook` now (the node then keeps only what it returns)
        and read it through `unpack_hook(packed)` from then on; once per value."""
        if len(hooks) != 2 or not all(callable(hook) for hook in hooks):
            raise TypeError("register_hooks(): incompatible function arguments. The supported "
                            "arguments are (pack_hook: Callable, unpack_hook: Callable); got "
                            f"{len(hooks)} argument(s) of type(s) "
                            f"{', '.join(type(hook).__name__ for hook in hooks) or 'none'}")
        value, version, output_nr = self._entry()
        if value.__class__ is PackedSaved:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        if not isinstance(value, Tensor):
            what = "None" if value is None else f"a {type(value).__name__}, not a tensor,"
            raise RuntimeError(f"Calling register_hooks on a saved value that is {what} is "
                               "forbidden: only saved tensors can be packed")
        if output_nr >= 0:
            edge = (None, output_nr)
        else:
            edge = gradient_edge(value) if value._requires_grad else None
        packed = pack_with(value, edge, *hooks)
        saved = self._node._saved
        self._node._saved = saved[:self._index] + ((packed, None, -1),) + saved[self._index + 1:]


def saved_names(node: Node) -> tuple:
    """The name of each value `node` saved, by position (None where unnamed): the Function's
    `saved_names` (always), else, for an Op, `result` for an output of the node and `self`,
    `other` for positions 0 and 1; () when nothing was saved or the values were freed.

    >>> import genesis
    >>> a = genesis.tensor([1., 2.], requires_grad=True)
    >>> saved_names((a * a).grad_fn), saved_names(a.exp().grad_fn)
    (('self', 'other', None), ('result',))
    """
    declared = node._forward_cls.saved_names
    saved = node._saved
    if declared is not None:
        return tuple(declared)
    if saved is None or saved is _FREED or saved is _CONSUMED or not node._forward_cls._builtin \
            or not node._next_nodes:
        return ()
    several = len(node._output_meta) > 1
    names = []
    for index, (value, _, output_nr) in enumerate(saved):
        if value.__class__ is PackedSaved and value.edge is not None and value.edge[0] is None:
            output_nr = value.edge[1]
        if output_nr >= 0:
            names.append(f"result{output_nr}" if several else "result")
        else:
            names.append(_INPUT_NAMES[index] if index < len(_INPUT_NAMES) else None)
    return tuple(names)


def _lookup(node: Node, attribute: str):
    """`node._saved_<name>` (the value, unpacked) or `node._raw_saved_<name>` (its handle);
    `node._raw_saved_tensors`: a handle on every saved value."""
    cls = node._forward_cls
    if cls is None or not node._next_nodes:  # a leaf's node, or a ctx still in forward
        raise AttributeError(f"{type(node).__name__} has no attribute {attribute!r}: saved "
                             "values are read once the node is in the graph")
    raw = attribute.startswith("_raw_saved_")
    name = attribute[len("_raw_saved_" if raw else "_saved_"):]
    saved = node._saved
    freed = saved is _FREED or saved is _CONSUMED
    if raw and name == "tensors":
        if freed:
            raise RuntimeError(_freed_message(node))
        return tuple(SavedTensor._of(node, index) for index in range(len(saved or ())))
    if freed and (name in (cls.saved_names or ()) or cls.saved_names is None and cls._builtin
                  and (name in _INPUT_NAMES or _RESULT_NAME.fullmatch(name))):
        raise RuntimeError(_freed_message(node))
    names = saved_names(node)[:len(saved or ())]
    if name not in names:
        raise AttributeError(f"{type(node).__name__} has no attribute {attribute!r}: it saved "
                             f"{_described(names)}")
    index = names.index(name)
    entry = saved[index]
    if not raw:
        return unpack_saved(node, index, entry)
    if entry[0] is not None and not isinstance(entry[0], Tensor | PackedSaved):
        raise AttributeError(f"{type(node).__name__} has no attribute {attribute!r}: its saved "
                             f"{name!r} is of type {type(entry[0]).__name__}, not a tensor "
                             f"(read it as _saved_{name})")
    return SavedTensor._of(node, index)


def _described(names: tuple) -> str:
    named = [f"_saved_{name}" for name in names if name is not None]
    return "nothing under a name" if not named else ", ".join(named)


class _Holder(Node):
    """The node-like keeper of a tensor saved outside any graph (`make_saved_tensor`)."""

    __slots__ = ()
    _forward_cls = None


def make_saved_tensor(tensor: Tensor, is_output: bool = False) -> SavedTensor:
    """`tensor` saved as a node would save it, packed now by the saved-tensor hooks in force
    (`torch._C._autograd._make_saved_tensor`); `is_output`: saved as an output, kept detached.

    >>> import genesis
    >>> saved = make_saved_tensor(genesis.tensor([1., 2.]))
    >>> saved.unpack()
    tensor([1., 2.])
    """
    holder = object.__new__(_Holder)
    holder.next_functions = ((None, 0),)
    if is_output:
        alias = wrap_array(tensor._data, tensor._device)
        alias._version_counter = tensor._version_counter
        tensor, edge = alias, None
    else:
        edge = gradient_edge(tensor) if tensor._requires_grad else None
    if hooks_state.stack:
        entry = (pack_with(tensor, edge, *hooks_state.stack[-1]), None, -1)
    else:
        entry = (tensor, tensor._version_counter[0], -1)
    holder._saved = (entry,)
    return SavedTensor._of(holder, 0)


def _listing(node: Node) -> list:
    """`_saved_<name>` and `_raw_saved_<name>` for each value `node` saved under a name (only
    `_saved_` for a value that is not a tensor), for dir(node); none once they are freed."""
    saved = node._saved
    if node._forward_cls is None or not node._next_nodes or saved is None or saved is _FREED \
            or saved is _CONSUMED:
        return []
    listed = []
    for name, (value, _, _) in zip(saved_names(node), saved):
        if name is not None:
            listed.append(f"_saved_{name}")
            if value is None or isinstance(value, Tensor | PackedSaved):
                listed.append(f"_raw_saved_{name}")
    return listed


saved_lookups[:] = [_lookup]
saved_listings[:] = [_listing]
