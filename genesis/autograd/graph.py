"""`genesis.autograd.graph` (served as `torch.autograd.graph`): hooks on what backward saves and
on the gradients it computes, and handles on the graph's nodes and edges.

- `saved_tensors_hooks(pack_hook, unpack_hook)`: while active, each tensor a Function saves
  with `ctx.save_for_backward` is passed to `pack_hook` when the node joins the graph, and
  what it returns is kept instead; backward gets `unpack_hook(packed)` each time it reads
  `ctx.saved_tensors`. Nested contexts: the innermost wins. Only what goes through
  `save_for_backward` is packed, as PyTorch packs only its SavedVariables: values an op
  keeps on its ctx as plain attributes (arrays, shapes, numbers) are not.
- `disable_saved_tensors_hooks(message)`, `save_on_cpu(pin_memory=False)`.
- `Node`: the abstract type of every backward node (`grad_fn`, AccumulateGrad).
- `register_multi_grad_hook(tensors, fn, mode="all"|"any")`.
- `GradientEdge` and `get_gradient_edge(tensor)`: `autograd.grad` and `backward` accept an
  edge wherever they take a tensor, as output or input.
- `increment_version(tensor)`, `allow_mutation_on_saved_tensors()`.

>>> import genesis
>>> x = genesis.tensor([1., 2.], requires_grad=True)
>>> with saved_tensors_hooks(lambda t: t * 2, lambda t: t):
...     y = x * x
>>> y.sum().backward(); x.grad   # each saved x reads as 2x: d(x*x) = 2x + 2x
tensor([4., 8.])
"""
from __future__ import annotations

import abc
import contextlib
import threading
import weakref
from collections import defaultdict

from ..device import cpu
from ..inference_tensors import is_inference_tensor
from ..ops.inplace import write_listeners
from ..ops.storage import storage_address
from ..ops.tensor_attributes import data_ptr
from ..tensor import Tensor, wrap_array
from . import function
from .engine import current_graph_task_id, will_engine_execute_node
from .function import GradientEdge, gradient_edge
from .hooks import RemovableHandle
from .saved_hooks import disable_hooks, pop_hooks, push_hooks, state

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "register_multi_grad_hook", "increment_version",
           "allow_mutation_on_saved_tensors"]


class Node(abc.ABC):
    """The abstract type of the nodes of the backward graph: every `grad_fn`, a leaf's
    AccumulateGrad and a custom Function's node are instances, without deriving from it
    (the concrete class is `genesis.autograd.function.Node`).

    >>> import genesis
    >>> y = genesis.ones(2, requires_grad=True).exp()
    >>> isinstance(y.grad_fn, Node), isinstance(y.grad_fn.next_functions[0][0], Node)
    (True, True)
    """

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name (e.g. "ExpBackward")."""

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple:
        """One `(node, output_nr)` pair per input of the forward."""

    @property
    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict free for tools to annotate the node with."""

    @abc.abstractmethod
    def register_hook(self, fn) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after the node's backward."""

    @abc.abstractmethod
    def register_prehook(self, fn) -> RemovableHandle:
        """`fn(grad_outputs)` runs before the node's backward."""

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and issubclass(subclass, function.Node):
            return True
        return NotImplemented


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which the gradient of `tensor` flows: its `grad_fn` and output number,
    or for a leaf its AccumulateGrad. Pass it to `autograd.grad` as an input to get the
    gradient of what `tensor` was when the edge was taken, even after in-place changes.

    >>> import genesis
    >>> x = genesis.tensor([1., 2.], requires_grad=True)
    >>> edge = get_gradient_edge(x)
    >>> genesis.autograd.grad((x * 3).sum(), edge)
    (tensor([3., 3.]),)
    """
    if not tensor._requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not "
                           f"require gradients: the tensor of shape {tuple(tensor.shape)} does "
                           "not; set requires_grad=True on it (or on what it is computed from)")
    return GradientEdge(*gradient_edge(tensor))


def increment_version(tensor) -> None:
    """Count one in-place change of `tensor` (or of each tensor of an iterable) in its version
    counter, for code that changes the data behind autograd's back. Inference tensors keep
    no version: they are left as they are.

    >>> import genesis
    >>> x = genesis.ones(2)
    >>> increment_version(x); x._version
    1
    """
    for item in ((tensor,) if isinstance(tensor, Tensor) else tensor):
        if not is_inference_tensor(item):
            item._version_counter[0] += 1


class saved_tensors_hooks:
    """Context manager: pack each tensor saved for backward with `pack_hook(tensor)` and
    unpack it with `unpack_hook(packed)` when backward reads it.

    `pack_hook` must not change its input in place (RuntimeError); `unpack_hook` must return
    a tensor (TypeError). The unpacked tensor's gradient goes where the saved one's went; it
    is not checked for in-place changes (the hooks may keep a copy). Hooks are per thread;
    a backward pass sees the hooks active when it started, and a context entered or left by
    code run inside backward ends with that pass. Only tensors given to
    `ctx.save_for_backward` are packed (genesis's ops keep some values on ctx directly, as
    PyTorch's keep non-SavedVariable state): see the module docstring.

    >>> import genesis
    >>> calls = []
    >>> def pack(t):
    ...     calls.append("pack"); return t.clone()
    >>> def unpack(t):
    ...     calls.append("unpack"); return t
    >>> x = genesis.tensor([3.], requires_grad=True)
    >>> with saved_tensors_hooks(pack, unpack):
    ...     y = x.sin()
    >>> y.backward(); calls
    ['pack', 'unpack']
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        push_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *args) -> None:
        pop_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Context manager: keep the tensors saved for backward in CPU memory (a copy, moved back to
    their device when backward reads them): trades transfer time for accelerator memory.
    `pin_memory` is accepted for compatibility (genesis's host arrays are not pinned).

    >>> import genesis
    >>> x = genesis.tensor([1., 2.], requires_grad=True)
    >>> with save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(tensor):
            # a copy of the array, not a genesis op: nothing recorded (checkpoint watches ops)
            data = tensor._data
            host = data.copy() if tensor._device is cpu else data.get()
            return tensor._device, wrap_array(host, cpu)

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager: registering saved-tensor hooks (entering `saved_tensors_hooks`) raises
    RuntimeError(`error_message`) inside it; entering it while hooks are active raises too.

    >>> with disable_saved_tensors_hooks("no hooks here"):
    ...     saved_tensors_hooks(id, id).__enter__()
    Traceback (most recent call last):
    ...
    RuntimeError: no hooks here
    """

    def __init__(self, error_message: str):
        self.error_message = error_message
        self._previous = None

    def __enter__(self):
        self._previous = state.disabled
        disable_hooks(self.error_message)
        return self

    def __exit__(self, *args) -> None:
        disable_hooks(self._previous)


class _MultiHandle(RemovableHandle):
    """The handle `register_multi_grad_hook` returns: `remove()` removes every hook it set."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> RemovableHandle:
    """Call `fn` once per backward pass that computes gradients of `tensors`.

    mode="all": after the gradients of all the tensors this pass reaches are computed,
    `fn(grads)` gets one entry per tensor (None for those the pass does not reach).
    mode="any": `fn(grad)` gets the first of them computed. Passes on several threads are
    counted apart. Returns a handle whose `remove()` unregisters it.

    >>> import genesis
    >>> a, b = genesis.ones(2, requires_grad=True), genesis.ones(2, requires_grad=True)
    >>> seen = []
    >>> handle = register_multi_grad_hook((a, b), lambda grads: seen.append(
    ...     [g is not None for g in grads]))
    >>> (a * 2).sum().backward(inputs=[a]); seen
    [[True, False]]
    """
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        fired = set()

        def first_only(grad):
            task = current_graph_task_id()
            with lock:
                if task in fired:
                    return
                fired.add(task)
            fn(grad)

        return _MultiHandle(tuple(tensor.register_hook(first_only) for tensor in tensors
                                  if tensor._requires_grad))
    nodes = [_edge_node(tensor) for tensor in tensors]
    pending = {}  # task id -> [hooks still to run, grads so far]

    def hook_for(index: int):
        def collect(grad):
            task = current_graph_task_id()
            with lock:
                entry = pending.get(task)
                if entry is None:
                    expected = sum(will_engine_execute_node(node) for node in nodes)
                    entry = pending[task] = [expected, [None] * len(nodes)]
                entry[1][index] = grad
                entry[0] -= 1
                done = entry[0] <= 0
                if done:
                    del pending[task]
            if done:
                fn(entry[1])
        return collect

    return _MultiHandle(tuple(tensor.register_hook(hook_for(index))
                              for index, tensor in enumerate(tensors)))


def _edge_node(tensor) -> function.Node:
    """The node gradient reaches `tensor` through (its grad_fn, or a leaf's AccumulateGrad)."""
    if isinstance(tensor, GradientEdge):
        return tensor.node
    return gradient_edge(tensor)[0]


class _Handle:
    """What the pack hook of `allow_mutation_on_saved_tensors` keeps for one saved tensor: a key
    that lives exactly as long as some node holds the saved tensor; `version` is the tensor's
    version when saved."""

    __slots__ = ("version", "__weakref__")

    def __init__(self, version: int):
        self.version = version


def _tensor_id(tensor: Tensor) -> tuple:
    """Which tensor, at which version: (its id, its first element's address, its version)."""
    return id(tensor), data_ptr(tensor), tensor._version_counter[0]


def _storage_id(tensor: Tensor) -> tuple:
    """Which storage, at which version: a view and its base share it."""
    return storage_address(tensor._data), tensor._version_counter[0]


class _MutationContext:
    """What `allow_mutation_on_saved_tensors` yields. `original` and `cloned` map the handle of
    each saved tensor still held by a node to the tensor itself, or to its copy once the
    tensor was about to change in place (weakly keyed: an entry goes with the node);
    `tid_to_weakhandle` maps (id, address, version) of each saved tensor to its handle;
    `sid_to_tid` maps (storage address, version) to the tensors saved from that storage.
    `closed` once the context is left (everything is cleared then).

    >>> import genesis
    >>> with allow_mutation_on_saved_tensors() as ctx:
    ...     a = genesis.ones(2, requires_grad=True).clone()
    ...     out = (a ** 2).sum()
    ...     saved = len(ctx.tid_to_weakhandle)
    ...     _ = a.sin_()
    ...     saved, len(ctx.cloned)
    (1, 1)
    """

    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()
        self.original = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)
        self.closed = False

    def clear(self) -> None:
        """Forget every saved tensor and copy."""
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def pack(self, tensor: Tensor) -> _Handle:
        """Remember `tensor` (once per tensor and version) and return its handle."""
        tid = _tensor_id(tensor)
        self.sid_to_tid[_storage_id(tensor)].add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = self.tid_to_weakhandle[tid] = _Handle(tid[2])
            # an alias sharing storage and version, not the tensor: a saved output would
            # otherwise hold its node, and the node its handle, for as long as the context
            alias = wrap_array(tensor._data, tensor._device)
            alias._version_counter = tensor._version_counter
            self.original[handle] = alias
        return handle

    def unpack(self, handle: _Handle) -> Tensor:
        """The saved tensor as it was when saved: its copy if it changed since."""
        message = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context "
                   "in which the graph was originally recorded: run backward inside that same "
                   "`with` block")
        if _mutation_context[0] is not self:
            raise AssertionError(message)
        copy = self.cloned.get(handle)
        if copy is not None:
            return copy
        original = self.original.get(handle)
        if original is None:
            raise AssertionError(message)
        if original._version_counter[0] != handle.version:  # written behind the ops' back
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation that allow_mutation_on_saved_tensors did not see: a saved "
                f"tensor of shape {tuple(original.shape)} went from version {handle.version} to "
                f"{original._version_counter[0]} without passing through an op (code that writes "
                "arrays directly, such as an optimizer step); run that code outside the context "
                "or before the forward")
        return original

    def before_write(self, tensor: Tensor) -> None:
        """Copy each saved tensor of `tensor`'s storage (at its current version) that a node
        still holds, before the storage changes."""
        tids = self.sid_to_tid.get(_storage_id(tensor))
        if not tids:
            return
        for tid in tids:
            handle = self.tid_to_weakhandle.get(tid)
            if handle is None or handle in self.cloned:
                continue  # backward has freed it, or it was copied already
            original = self.original.pop(handle)
            self.cloned[handle] = wrap_array(original._data.copy(), original._device)


_mutation_context = [None]  # the open allow_mutation_on_saved_tensors context (one at a time)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager: tensors saved for backward inside it may be changed in place
    afterwards; backward still sees them as they were when saved. Backward must run inside
    the same context (AssertionError otherwise); contexts cannot be nested (RuntimeError).

    As in PyTorch, a saved tensor is copied only when something is about to write into its
    storage (an in-place op on it, its base or a view, an `out=` argument, a `_foreach_*_`
    list) while a node still holds it; the yielded `_MutationContext` shows what was copied.

    >>> import genesis
    >>> a = genesis.tensor([1., 2.], requires_grad=True)
    >>> with allow_mutation_on_saved_tensors() as ctx:
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad
    tensor([2., 4.])
    """
    if _mutation_context[0] is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested: leave the "
                           "open one before entering another")
    context = _mutation_context[0] = _MutationContext()
    write_listeners.add(context.before_write)
    try:
        with saved_tensors_hooks(context.pack, context.unpack):
            yield context
    finally:
        write_listeners.discard(context.before_write)
        context.closed = True
        context.clear()
        _mutation_context[0] = None
