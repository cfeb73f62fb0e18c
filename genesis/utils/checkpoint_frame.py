"""The non-reentrant checkpoint as PyTorch builds it: the forward runs under saved-tensor
hooks, and what each op saves for backward is kept as an empty holder; the first holder a
backward unpacks runs the function again (`recompute`), which refills the holders, in the
order the forward filled them, with the recomputation's values.

- Recomputation happens once per backward call (graph task), or once per `GraphExecGroup`
  when one is active; a read outside any backward (`grad_fn._saved_result`) recomputes each
  time. Each refilled value is handed out once: a second read in the same backward raises
  `CheckpointError` ("Unpack is being triggered for a tensor that was already unpacked
  once").
- Early stop (on by default): the recomputation ends as soon as every holder is refilled;
  the rest of the function does not run. Where the last values saved are inputs of one op,
  it ends before that op is handed to the dispatch modes, as in PyTorch, whose autograd saves
  inputs before dispatching.
- The recomputation must save as many tensors as the forward did, with the same shape,
  dtype and device (`determinism_check="default"`; "none" checks the number only), else
  `CheckpointError`.
- Its ops are a forward pass that only refills holders: dispatch modes and op observers see
  them, the tools watching a script's steps (`genesis.autograd.engine.unwatched`) skip them,
  as they skip the node keeping the checkpoint's inputs.

>>> import genesis
>>> x = genesis.tensor([1.0, 2.0], requires_grad=True)
>>> calls = []
>>> def fn(a):
...     calls.append(1)
...     return a.exp()
>>> y = run_checkpointed(fn, (x,), {}, CheckpointSettings())
>>> y.sum().backward(); len(calls), x.grad.allclose(x.detach().exp())
(2, True)
"""
from __future__ import annotations

import contextlib
import threading
import weakref

from .. import random
from ..autograd import engine, module_scope
from ..autograd.function import Function, observers
from ..autograd.grad_mode import enable_grad, grad_state, is_grad_enabled
from ..autograd.graph_task import current_graph_task_id
from ..autograd.saved_hooks import push_hooks, state as saved_hooks
from ..creation import empty
from ..tensor import Tensor
from ._python_dispatch import aten, dispatch_call, pre_dispatch_hooks

__all__ = ["CheckpointError", "GraphExecGroup", "CheckpointSettings", "run_checkpointed",
           "forward_state"]


class CheckpointError(RuntimeError):
    """A checkpoint's recomputation did not reproduce its forward (another number of saved
    tensors, or saved tensors of other shapes, dtypes or devices), or a value it refilled was
    read twice in one backward.

    >>> issubclass(CheckpointError, RuntimeError)
    True
    """


class _StopRecomputation(Exception):
    """Raised inside a recomputation once every holder is refilled (early stop)."""


class GraphExecGroup:
    """Within it, the backward calls made count as one for non-reentrant checkpoints: one
    recomputation serves them all, and each saved value is handed out once among them (two
    calls needing the same one are an error). Groups do not nest.

    >>> import genesis
    >>> x = genesis.randn(3, requires_grad=True)
    >>> from genesis.utils.checkpoint import checkpoint
    >>> y, z = checkpoint(lambda a: (a.sin(), a.sin().cos()), x, use_reentrant=False)
    >>> with GraphExecGroup():
    ...     g, = genesis.autograd.grad(z.sum(), x)
    ...     h, = genesis.autograd.grad(y.sum(), x)
    """

    def __enter__(self):
        if _group.current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_group.current} (exit it before entering another)")
        _group.current = self
        return self

    def __exit__(self, *exc_info):
        _group.current = None

    @classmethod
    def _get_current_group(cls):
        """The group active on this thread, or None."""
        return _group.current


class _Group(threading.local):
    current = None


_group = _Group()


class CheckpointSettings:
    """How one checkpoint call recomputes: `early_stop`, `check_metadata`
    (determinism_check="default"), `debug`, `preserve_rng_state` and the recomputation's
    context manager.

    >>> CheckpointSettings().early_stop
    True
    """

    def __init__(self, early_stop: bool = True, check_metadata: bool = True, debug: bool = False,
                 preserve_rng_state: bool = True, recompute_context=None):
        self.early_stop, self.check_metadata, self.debug = early_stop, check_metadata, debug
        self.preserve_rng_state = preserve_rng_state
        self.recompute_context = recompute_context or contextlib.nullcontext()


class _Holder:
    """What the forward graph keeps for one saved tensor: per backward call (or group), the
    recomputed value, None once handed out."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles: dict = {}


class _SaveInputs(Function):
    """Keeps the checkpoint's arguments as saved values of a node (so nested checkpoints get
    them from the recomputation of the enclosing one, and they go with the graph); its output
    is an empty tensor nothing uses."""

    mixes_devices = True

    @staticmethod
    def forward(ctx, dummy, *args):
        # a Function saves tensors only: the other arguments are kept on ctx
        ctx.save_for_backward(*(arg if isinstance(arg, Tensor) else None for arg in args))
        ctx.non_tensor_args = tuple(None if isinstance(arg, Tensor) else arg for arg in args)
        return empty(0)

    @staticmethod
    def arguments(node) -> tuple:
        """The arguments a _SaveInputs node (`node`) keeps, in order."""
        return tuple(other if tensor is None else tensor
                     for tensor, other in zip(node.saved_tensors, node.non_tensor_args))

    @staticmethod
    def backward(ctx, grad):
        return (None,) * len(ctx.needs_input_grad)


class _Frame:
    """One checkpoint call: its function, its holders (weakly: the graph owns them) with the
    metadata and op of each, and per backward call how many the recomputation refilled."""

    def __init__(self, function, args: tuple, kwargs: dict, settings: CheckpointSettings):
        self.function, self.kwarg_names = function, tuple(kwargs)
        self.arg_count = len(args)
        self.settings = settings
        self.holders: list = []          # weakrefs, in the order the forward saved
        self.metadata: list = []         # (shape, dtype, device) of each, when checked
        self.saved_by: list = []         # (op call number, op class, argument position or None)
        self.pending: list = []          # (holder index, tensor) saved by the op running now
        self.calls = 0
        self.refilled: dict = {}         # gid -> number of tensors the recomputation saved
        self.recomputed: set = set()     # gids recomputed
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        self.thread = threading.get_ident()
        self.input_saver = None
        self.module_call = module_scope.running.call
        self.autocast = grad_state.autocast
        devices = sorted({str(arg.device) for arg in (*args, *kwargs.values())
                          if isinstance(arg, Tensor)}) or ["cpu"]
        self.devices = devices
        self.rng_states = [random.device_state(device) for device in devices] \
            if settings.preserve_rng_state else None
        self.forward_ops: list = []      # with debug: the ops of the forward
        self.recompute_ops: list = []    # with debug: the ops of the last recomputation
        self.stop_due: set = set()       # gids whose recomputation refilled every holder
        self.sees_backward = True        # as an op observer: see ops run inside a backward too

    # -- the forward ------------------------------------------------------------------
    def pack(self, tensor: Tensor) -> _Holder:
        holder = _Holder()
        index = len(self.holders)
        self.holders.append(weakref.ref(holder))
        if self.settings.check_metadata:
            self.metadata.append(_metadata(tensor))
        self.saved_by.append(None)
        self.pending.append((index, tensor))
        return holder

    def __call__(self, node, args: tuple, outputs: tuple) -> None:
        """As an op observer during the forward: which op saved the pending tensors, and at
        which argument position (None: an output, or saved otherwise)."""
        if threading.get_ident() != self.thread:
            return
        if self.settings.debug:
            self.forward_ops.append(_describe_op(node, outputs))
        if not self.pending:
            return
        self.calls += 1
        for index, tensor in self.pending:
            position = next((place for place, arg in enumerate(args) if arg is tensor), None)
            self.saved_by[index] = (self.calls, node._forward_cls, position)
        self.pending.clear()

    def unpack(self, holder: _Holder) -> Tensor:
        gid = _group.current
        if gid is None:
            gid = current_graph_task_id()
            if gid == -1:
                gid = object()  # read outside backward: a recomputation of its own
        if gid not in self.recomputed:
            self.recompute(gid)
        value = holder.handles.get(gid)
        if value is None:
            overlap = ("Performing two backward calls that overlap (i.e. require the same saved "
                       "activation in order to compute gradients) is not allowed while under the "
                       "torch.utils.checkpoint.GraphExecGroup context. "
                       if _group.current is not None else "")
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                f"unpacked once. {overlap}If you are calling ctx.saved_tensors in backward, make "
                "sure to do so only once. Otherwise please open an issue with details on your "
                "use case. (Each value a non-reentrant checkpoint recomputes is handed out once "
                "per backward call.)")
        holder.handles[gid] = None
        return value

    # -- the recomputation ------------------------------------------------------------
    def recompute(self, gid) -> None:
        inputs = _SaveInputs.arguments(self.input_saver.grad_fn)
        args = inputs[:self.arg_count]
        kwargs = dict(zip(self.kwarg_names, inputs[self.arg_count:]))
        self.refilled[gid] = 0
        self.recompute_ops = []
        hooks = (lambda tensor: self.refill(gid, tensor), _identity)
        stack_depth = len(saved_hooks.stack)
        watching = self.settings.debug or self.settings.early_stop
        observer = _RecomputationObserver(self, gid)
        if watching:
            observers.add(observer)
        _recomputing.frames.append((self, gid, hooks))
        try:
            # its ops only refill the holders: tools watching the script's steps skip them
            with forward_state(self), enable_grad(), engine.unwatched, \
                    self.settings.recompute_context:
                push_hooks(*hooks)
                try:
                    self.function(*args, **kwargs)
                finally:
                    del saved_hooks.stack[stack_depth:]
        except _StopRecomputation:
            pass
        finally:
            _recomputing.frames.pop()
            self.stop_due.discard(gid)
            if watching:
                observers.discard(observer)
        self.recomputed.add(gid)
        self.check(gid)

    def refill(self, gid, tensor: Tensor):
        """The pack hook of the recomputation: the tensor goes into the next holder."""
        if tensor.requires_grad:
            tensor = dispatch_call(aten.detach.default, Tensor.detach, (tensor,))
        index = self.refilled[gid]
        self.refilled[gid] = index + 1
        if index >= len(self.holders):
            if not self.forward_completed:  # autograd.grad inside the checkpointed function
                self.ignore_saved_mismatch = True
                return tensor
            raise CheckpointError(self._message(
                "torch.utils.checkpoint: trying to save more tensors during recomputation than "
                f"during the original forward pass (the forward saved {len(self.holders)}; the "
                f"recomputation saves tensor {index + 1} now)."))
        holder = self.holders[index]()
        if holder is not None:
            holder.handles[gid] = tensor
        if self.settings.early_stop and index + 1 == len(self.holders):
            self.stop_due.add(gid)  # once the op saving it is whole (see _after_recomputed_op)
        return tensor

    def stop_before(self, gid, cls, args: tuple) -> None:
        """Before an op of the recomputation is dispatched: with early stop, when the holders
        left are inputs of the forward's last saving op and this is that op, refill them from
        its arguments and stop (the op does not reach the dispatch modes)."""
        if not self.settings.early_stop or not self.forward_completed:
            return
        index = self.refilled[gid]
        if not index < len(self.saved_by) or self.saved_by[index] is None:
            return
        call, op, _ = self.saved_by[index]
        if op is not cls:
            return
        rest = self.saved_by[index:]
        for entry in rest:
            if entry is None or entry[0] != call or entry[2] is None or entry[2] >= len(args) \
                    or not isinstance(args[entry[2]], Tensor):
                return
        for _, _, position in rest:
            self.refill(gid, args[position])
        raise _StopRecomputation()

    def check(self, gid) -> None:
        """After a recomputation: as many saved tensors as the forward's, of the same metadata."""
        if self.ignore_saved_mismatch:
            return
        count = self.refilled[gid]
        if count != len(self.holders):
            raise CheckpointError(self._message(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.holders)}\n"
                f"Number of tensors saved during recomputation: {count}"))
        if not self.settings.check_metadata:
            return
        different = []
        for index, reference in enumerate(self.holders):
            holder = reference()
            if holder is None:
                continue
            value = holder.handles.get(gid)
            if value is not None and _metadata(value) != self.metadata[index]:
                different.append(f"tensor at position {index}:\n"
                                 f"saved metadata: {_shown(self.metadata[index])}\n"
                                 f"recomputed metadata: {_shown(_metadata(value))}")
        if different:
            raise CheckpointError(self._message(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n" + "\n".join(different)))

    def _after_recomputed_op(self, gid, node, outputs: tuple) -> None:
        """An op observer during the recomputation: notes the op (with debug), and stops the
        recomputation (early stop) after the op that saved the last tensor, once its node is
        whole (stopping inside its packing would leave a half-made node)."""
        if threading.get_ident() != self.thread:
            return
        if self.settings.debug:
            self.recompute_ops.append(_describe_op(node, outputs))
        if gid in self.stop_due:
            raise _StopRecomputation()

    def _message(self, text: str) -> str:
        if not self.settings.debug:
            return (text + "\nThe checkpointed function must save the same tensors each time it "
                    "runs; pass debug=True to checkpoint to see the ops of both runs.")
        forward = "\n".join(f"  {op}" for op in self.forward_ops)
        recomputed = "\n".join(f"  {op}" for op in self.recompute_ops)
        return (f"{text}\nYou are seeing this error because you passed `debug=True` to checkpoint "
                "(or set_checkpoint_debug_enabled(True) is active).\nOps of the original forward:\n"
                f"{forward}\nOps of the recomputation:\n{recomputed}")


class _RecomputationObserver:
    """`_Frame._after_recomputed_op` as an op observer that sees the ops of a backward run
    inside the recomputation too (a create_graph backward saves tensors)."""

    __slots__ = ("frame", "gid")
    sees_backward = True

    def __init__(self, frame: _Frame, gid):
        self.frame, self.gid = frame, gid

    def __call__(self, node, args: tuple, outputs: tuple) -> None:
        self.frame._after_recomputed_op(self.gid, node, outputs)


def _identity(value):
    return value


def _metadata(tensor: Tensor) -> tuple:
    return tuple(tensor.shape), tensor.dtype, str(tensor.device)


def _shown(metadata: tuple) -> str:
    shape, dtype, device = metadata
    return f"{{'shape': {shape}, 'dtype': {dtype}, 'device': {device}}}"


def _describe_op(node, outputs: tuple) -> str:
    shapes = ", ".join(f"shape={tuple(out.shape)} dtype={out.dtype}" for out in outputs
                       if isinstance(out, Tensor))
    return f"{node._forward_cls.node_name} -> {shapes}"


class _Recomputing(threading.local):
    """The recomputations running on this thread, innermost last: (frame, gid, its hooks)."""

    def __init__(self):
        self.frames: list = []


_recomputing = _Recomputing()


def _before_dispatch(cls, args: tuple) -> None:
    """Early stop before an op reaches the dispatch modes (see `_Frame.stop_before`): only the
    innermost recomputation, and only while its hooks are the ones in force."""
    frames = _recomputing.frames
    if frames:
        frame, gid, hooks = frames[-1]
        if saved_hooks.stack and saved_hooks.stack[-1][0] is hooks[0]:
            frame.stop_before(gid, cls, args)


pre_dispatch_hooks.append(_before_dispatch)


@contextlib.contextmanager
def forward_state(frame):
    """Run a recomputation as the forward ran: with its random-number state (when kept),
    inside the module call that was running, as a forward pass that op observers see, under
    the forward's autocast (`frame`: has devices, rng_states, module_call, autocast).

    >>> import genesis
    >>> frame = _Frame(lambda: None, (), {}, CheckpointSettings())
    >>> first = genesis.rand(2)
    >>> with forward_state(frame):
    ...     again = genesis.rand(2)
    >>> bool((first == again).all())
    True
    """
    restore = frame.rng_states is not None
    if restore:
        current = [random.device_state(device) for device in frame.devices]
        for device, state in zip(frame.devices, frame.rng_states):
            random.restore_device_state(state, device)
    caller, module_scope.running.call = module_scope.running.call, frame.module_call
    in_backward, grad_state.in_backward = grad_state.in_backward, False
    autocast, grad_state.local_autocast = grad_state.local_autocast, frame.autocast
    try:
        yield
    finally:
        module_scope.running.call = caller
        grad_state.in_backward = in_backward
        grad_state.local_autocast = autocast
        if restore:
            for device, state in zip(frame.devices, current):
                random.restore_device_state(state, device)


def run_checkpointed(function, args: tuple, kwargs: dict, settings: CheckpointSettings,
                     forward_context=None):
    """`function(*args, **kwargs)` whose saved tensors are dropped and recomputed in backward
    (see the module docstring); with grad disabled, a plain call.

    >>> import genesis
    >>> w = genesis.randn(3, requires_grad=True)
    >>> y = run_checkpointed(lambda a: (a * w).sin(), (genesis.randn(3),), {}, CheckpointSettings())
    >>> type(y.grad_fn).__name__, y.grad_fn._raw_saved_self.data.__class__.__name__
    ('SinBackward', '_Holder')
    """
    if not is_grad_enabled():
        return function(*args, **kwargs)
    frame = _Frame(function, args, kwargs, settings)
    dummy = empty(0, requires_grad=True)
    with engine.unwatched:  # genesis's own node: tools watching the script skip it
        frame.input_saver = _SaveInputs.apply(dummy, *args, *kwargs.values())
    hooks = (frame.pack, frame.unpack)
    stack_depth = len(saved_hooks.stack)
    observers.add(frame)
    try:
        with forward_context or contextlib.nullcontext():
            push_hooks(*hooks)
            try:
                result = function(*args, **kwargs)
            finally:
                del saved_hooks.stack[stack_depth:]
    finally:
        observers.discard(frame)
        frame.pending.clear()
    frame.forward_completed = True
    return result
