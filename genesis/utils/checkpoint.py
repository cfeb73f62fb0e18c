"""Gradient checkpointing: trade compute for memory.

`checkpoint(fn, *args, use_reentrant=False)` runs `fn` and keeps none of its
intermediate tensors, only its inputs; during backward it runs `fn` again (with the
random-number state it had the first time, so dropout draws the same mask, and inside
the module call that was running when `checkpoint` was called, so its ops belong to the
same modules; as a forward pass, which the observers of `genesis.autograd.function`
see) and differentiates that recomputation. Gradients are identical to running `fn`
directly. That inner backward call is part of the outer one (see
`genesis.autograd.engine`): tools watching a script's backward calls see one call,
whose graph takes in the recomputed ops; `recomputed_inputs` says which leaves of the
recomputation stand for the checkpoint's inputs.

The two variants, as in PyTorch:

- non-reentrant (`use_reentrant=False`, recommended): `fn` runs with the caller's grad
  mode; the tensors it uses that require grad without being its inputs (parameters,
  tensors from the enclosing scope) are found while it runs and get their gradients
  through the checkpoint's node, so `genesis.autograd.grad` works, as do keyword
  arguments, non-tensor inputs and outputs (tuples, lists, dicts of them), inputs that
  need no grad and nested checkpoints. The recomputation must call as many ops as the
  forward did, with outputs of the same shapes and dtypes, else `CheckpointError`
  (`determinism_check="none"` turns that off).
- reentrant (`use_reentrant=True`, the default when not given, with a warning): `fn`
  runs under no_grad; its backward runs a backward of its own, so tensors `fn` uses
  without taking them as inputs get their gradients accumulated in `.grad` then (the
  parameters of a module `fn` are found, so its output requires grad). No keyword
  arguments, `context_fn` or `debug`.

Where genesis differs from PyTorch: a checkpoint is one node, whose backward is the
whole recomputed graph (PyTorch keeps the forward's graph and recomputes only the tensors
it saved). So the recomputation always runs all of `fn` (`early_stop` and
`set_checkpoint_early_stop` are accepted and change nothing), a recomputation calling
more ops than the forward is an error even with early stop, one output of a checkpoint
is not differentiable with respect to another, and the checkpoint's node (the `grad_fn` of
its only output; with several outputs, each has a `CheckpointOutputBackward` leading to it)
recomputes once per backward that reaches it. A tensor `fn` uses without taking it as an
input has its hooks run once, when the outer backward reaches it. Dispatch modes
(`genesis.utils._python_dispatch`) see the ops inside a checkpoint, not the checkpoint
itself; reentrant checkpoints refuse a backward that computes only some gradients
(`autograd.grad`, `backward(inputs=...)`), as in PyTorch.
Non-reentrant forward builds `fn`'s graph while it runs (as PyTorch does, so `fn` may
call `autograd.grad`) and lets it go when it returns.

>>> import genesis
>>> w = genesis.randn(4, 4, requires_grad=True)
>>> x = genesis.randn(2, 4, requires_grad=True)
>>> y = checkpoint(lambda a: (a @ w).tanh() @ w, x, use_reentrant=False)
>>> y.sum().backward()
>>> x.grad.shape, w.grad.shape
((2, 4), (4, 4))
"""
from __future__ import annotations

import contextlib
import threading
import warnings

from .. import random
from ..autograd import engine, function, module_scope
from ..autograd.function import Op
from ..autograd.grad_mode import enable_grad, grad_state, is_grad_enabled, no_grad
from ..nn.containers import Sequential
from ..nn.module import Module
from ..ops import samples
from ..ops.registry import OpInfo, Sample
from ..tensor import Tensor
from ._python_dispatch import not_dispatched
from .selective_checkpoint import (CheckpointPolicy, SelectiveCheckpointContext,  # noqa: F401
                                   _CachedTorchDispatchMode, _CachingTorchDispatchMode,
                                   create_selective_checkpoint_contexts)  # (torch.utils.checkpoint's names)

__all__ = ["checkpoint", "checkpoint_sequential", "recomputed_inputs", "CheckpointError",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled", "noop_context_fn",
           "CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts"]

_REENTRANT_WARNING = (
    "{where}: the use_reentrant parameter should be passed explicitly. use_reentrant=False is "
    "recommended (it supports autograd.grad, keyword arguments and nested checkpoints); pass "
    "use_reentrant=True to keep the current default. See the genesis.utils.checkpoint docstring "
    "for the differences between the two variants.")


class CheckpointError(RuntimeError):
    """A checkpoint's recomputation did not reproduce its forward (other ops, or outputs of
    other shapes or dtypes).

    >>> issubclass(CheckpointError, RuntimeError)
    True
    """


class _Settings:
    early_stop: bool | None = None  # set_checkpoint_early_stop's value, while one is active
    debug: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Within it, checkpoints made are told whether to stop recomputing once everything
    backward needs is recomputed (overriding their `early_stop`). Genesis always recomputes
    the whole function (see the module docstring), so this only records the choice.

    >>> with set_checkpoint_early_stop(False):
    ...     pass
    """
    previous, _Settings.early_stop = _Settings.early_stop, bool(enable)
    try:
        yield
    finally:
        _Settings.early_stop = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Within it, checkpoints behave as if given `debug=enabled` (None: their own setting).

    >>> with set_checkpoint_debug_enabled(True):
    ...     pass
    """
    previous, _Settings.debug = _Settings.debug, enabled
    try:
        yield
    finally:
        _Settings.debug = previous


def noop_context_fn():
    """The default `context_fn`: two contexts that do nothing.

    >>> [type(context).__name__ for context in noop_context_fn()]
    ['nullcontext', 'nullcontext']
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


class _Segment:
    """What one checkpoint call keeps for its backward: the function, how its arguments and
    outputs are laid out, the random-number state, and the ops its forward ran."""

    def __init__(self, fn, reentrant: bool, preserve_rng_state: bool, determinism: bool,
                 debug: bool, early_stop: bool):
        self.fn, self.reentrant = fn, reentrant
        self.preserve_rng_state, self.determinism, self.debug = preserve_rng_state, determinism, debug
        self.early_stop = early_stop
        self.recompute_context = contextlib.nullcontext
        self.module_call = module_scope.running.call
        self.kwarg_names: tuple = ()
        self.arg_count = 0       # positional arguments, then keyword values, then extras
        self.input_count = 0
        self.forward_ops: list = []
        self.outputs: tuple = ()  # the forward's output tensors, until the node takes them
        self.structure = None
        self.devices: list = []
        self.rng_states = None
        # the autocast dtype the forward ran under (None: off), for the recomputation
        self.autocast = grad_state.autocast_dtype

    def call(self, inputs: tuple):
        args = inputs[:self.arg_count]
        kwargs = dict(zip(self.kwarg_names, inputs[self.arg_count:self.input_count]))
        return self.fn(*args, **kwargs)


class _Watcher:
    """An op observer over one run of a checkpointed function: the ops it calls (name and
    output shapes/dtypes), and the tensors requiring grad that it uses without having made
    them or taken them as inputs. With `expected`, it checks each op against the forward's."""

    def __init__(self, inputs: tuple, expected: list | None = None, debug: bool = False):
        self.inputs = inputs
        self.ops: list = []
        self.made: set = set()  # ids of the nodes of this run's ops (kept alive in `nodes`)
        self.nodes: list = []
        self.externals: list = []
        self.expected, self.debug = expected, debug

    def __enter__(self):
        function.observers.add(self)
        return self

    def __exit__(self, *exc):
        function.observers.discard(self)

    def __call__(self, node, args: tuple, outputs: tuple) -> None:
        for arg in args:
            if isinstance(arg, Tensor) and arg._requires_grad \
                    and (arg.grad_fn is None or id(arg.grad_fn) not in self.made) \
                    and not any(arg is known for known in self.inputs) \
                    and not any(arg is known for known in self.externals):
                self.externals.append(arg)
        self.made.add(id(node))
        self.nodes.append(node)
        record = (function._op_name(node._forward_cls),
                  tuple((tuple(out.shape), out.dtype) for out in outputs if isinstance(out, Tensor)))
        self.ops.append(record)
        if self.expected is not None:
            index = len(self.ops) - 1
            if index >= len(self.expected):
                raise CheckpointError(self._message(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    f"than during the original forward pass: the recomputation calls op "
                    f"{record[0]!r} (op {index + 1}) where the forward called "
                    f"{len(self.expected)} ops."))
            if record[1] != self.expected[index][1]:  # shapes and dtypes, as PyTorch compares
                raise CheckpointError(self._message(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\nop {index + 1}:\n"
                    f"forward: {_describe(self.expected[index])}\n"
                    f"recomputation: {_describe(record)}"))

    def finish(self) -> None:
        """At the end of a recomputation: the same number of ops as the forward."""
        if self.expected is not None and len(self.ops) != len(self.expected):
            raise CheckpointError(self._message(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation (genesis counts op calls).\n"
                f"Number of ops during forward: {len(self.expected)}\n"
                f"Number of ops during recomputation: {len(self.ops)}"))

    def _message(self, text: str) -> str:
        if not self.debug:
            return text + "\nThe checkpointed function must call the same ops each time it " \
                          "runs; pass debug=True to checkpoint to see the ops of both runs."
        forward = "\n".join(f"  {_describe(op)}" for op in self.expected)
        recomputed = "\n".join(f"  {_describe(op)}" for op in self.ops)
        return (f"{text}\nYou are seeing this error because you passed `debug=True` to checkpoint "
                f"(or set_checkpoint_debug_enabled(True) is active).\nOps of the forward:\n"
                f"{forward}\nOps of the recomputation:\n{recomputed}")


def _describe(record: tuple) -> str:
    name, outputs = record
    return f"{name} -> " + ", ".join(f"shape={shape} dtype={dtype}" for shape, dtype in outputs)


def _flatten(value, tensors: list):
    """A spec of `value` (tuples, lists and dicts walked; Tensors replaced by their index in
    `tensors`, where they are appended); `_unflatten` rebuilds it from other tensors."""
    if isinstance(value, Tensor):
        tensors.append(value)
        return ("tensor", len(tensors) - 1)
    if type(value) in (tuple, list):
        return (type(value), [_flatten(item, tensors) for item in value])
    if type(value) is dict:
        return (dict, {key: _flatten(item, tensors) for key, item in value.items()})
    return ("value", value)


def _unflatten(spec, tensors):
    kind, content = spec
    if kind == "tensor":
        return tensors[content]
    if kind == "value":
        return content
    if kind is dict:
        return {key: _unflatten(item, tensors) for key, item in content.items()}
    return kind(_unflatten(item, tensors) for item in content)


@not_dispatched  # no ATen operator: dispatch modes see the ops inside it
class Checkpoint(Op):
    """A checkpointed function as one node: its forward hands on the outputs the function
    made, keeping only the inputs; its backward recomputes the function and differentiates
    that recomputation.

    Arguments: the function's positional arguments, its keyword arguments' values, the
    extras (non-reentrant: the tensors it used that require grad without being inputs;
    reentrant: a module's parameters, there only so that the output requires grad, their
    gradients accumulating during the recomputation's backward), then the `_Segment`.
    """

    fresh_gradients = False  # its backward returns what the user's code (hooks, fn) made
    not_rerunnable = ("a checkpoint's forward hands on outputs its function computed before the "
                      "node was made, so it can't be re-run alone; the ops inside it are "
                      "checked one by one where they ran")

    @staticmethod
    def forward(ctx, *args):
        segment = args[-1]
        ctx.segment = segment
        ctx.save_for_backward(*args[:segment.input_count])
        ctx.extras = args[segment.input_count:-1]
        ctx.recomputed_inputs = {}  # filled by backward
        outputs, segment.outputs = segment.outputs, ()
        if not segment.reentrant:  # an output the function made without a graph keeps none
            ctx.mark_non_differentiable(*(output for output in outputs if not output._requires_grad))
        return outputs

    @staticmethod
    def backward(ctx, *grad_outputs):
        if ctx.segment.reentrant and not is_grad_enabled():
            return _reentrant_gradients(ctx, grad_outputs)
        return _gradients(ctx, ctx.extras, grad_outputs, create_graph=is_grad_enabled())


@not_dispatched
class CheckpointOutput(Op):
    """One output of a checkpoint that has several, as a node of its own (the checkpoint's
    node is its next function): a hook on it, or a backward from another output, concerns
    this output alone, as in PyTorch, where each output has the node of the op that made it."""

    @staticmethod
    def forward(ctx, output):
        return output._data  # the checkpoint's own output, held by nothing else

    @staticmethod
    def backward(ctx, grad):
        return grad


def _reentrant_gradients(ctx, grad_outputs) -> tuple:
    """Recompute on detached copies of the inputs and run a backward through it: tensors the
    function used that are not inputs accumulate their `.grad` there; the inputs' gradients
    are read back from the copies."""
    if not engine._is_checkpoint_valid(_own_passes.positions):
        raise RuntimeError(
            "torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter "
            "to .backward(): a reentrant checkpoint computes its gradients with a backward of its "
            "own, which accumulates into .grad. To resolve this error, you can either set "
            "use_reentrant=False, or call .backward() without passing the `inputs` argument.")
    detached = _detached_inputs(ctx.saved_tensors)
    outputs = _recompute(ctx.segment, detached)
    ctx.recomputed_inputs = {arg._accumulator: position for position, arg in enumerate(detached)
                             if isinstance(arg, Tensor) and arg._accumulator is not None}
    if not any(output.requires_grad for output in outputs):
        raise RuntimeError("checkpoint: none of output has requires_grad=True, this checkpoint() "
                           "is not necessary: the function made its outputs without a graph "
                           "(under no_grad?); call it directly, or use use_reentrant=False")
    pairs = _differentiable_outputs(outputs, grad_outputs)
    if pairs:
        engine.backward([output for output, _ in pairs], [grad for _, grad in pairs])
    grads = [arg.grad if isinstance(arg, Tensor) and arg.requires_grad else None
             for arg in detached]
    return (*grads, *([None] * len(ctx.extras)), None)


def _gradients(ctx, extras: tuple, grad_outputs, create_graph: bool) -> tuple:
    """Recompute and differentiate with respect to the inputs and the extras: on detached
    copies of the inputs, or, for a create_graph backward, on views of them (a view per
    argument, so that an input passed twice gets each use's gradient in its own slot), so
    that the recorded gradients reach back to the inputs."""
    if create_graph:
        inputs = [arg[...] if isinstance(arg, Tensor) and arg.requires_grad else arg
                  for arg in ctx.saved_tensors]
    else:
        inputs = _detached_inputs(ctx.saved_tensors)
    arguments = (*inputs, *extras)
    targets = [arg for arg in arguments if isinstance(arg, Tensor) and arg.requires_grad]
    pairs = _differentiable_outputs(_recompute(ctx.segment, inputs), grad_outputs)
    if not create_graph:
        ctx.recomputed_inputs = {arg._accumulator: position for position, arg in enumerate(inputs)
                                 if isinstance(arg, Tensor) and arg._accumulator is not None}
    if not pairs or not targets:
        return (None,) * (len(arguments) + 1)
    # the hooks of the extras run once, when the outer backward reaches them; this pass is
    # the checkpoint's own (a reentrant checkpoint inside looks through it to the caller's)
    _own_passes.positions.append(engine._running_passes())
    try:
        with _hooks_set_aside(extras):
            grads = iter(engine.grad([output for output, _ in pairs], targets,
                                     [grad for _, grad in pairs], create_graph=create_graph,
                                     allow_unused=True))
    finally:
        _own_passes.positions.pop()
    return (*(next(grads) if isinstance(arg, Tensor) and arg.requires_grad else None
              for arg in arguments), None)


class _OwnPasses(threading.local):
    """The positions, among the backward passes running on this thread, of those a
    non-reentrant checkpoint's backward runs to differentiate its recomputation."""

    def __init__(self):
        self.positions: list = []


_own_passes = _OwnPasses()


def _detached_inputs(saved: tuple) -> list:
    """The recomputation's inputs: a new leaf for each input that requires grad; the others
    are passed as they are (a Function saving one gets that very tensor back, as in PyTorch)."""
    return [arg.detach().requires_grad_() if isinstance(arg, Tensor) and arg.requires_grad else arg
            for arg in saved]


@contextlib.contextmanager
def _hooks_set_aside(extras: tuple):
    """While the recomputation is differentiated with respect to the tensors the function used
    without taking them as inputs, their hooks and retain_grad wait: the outer backward runs
    them when the checkpoint's gradient for them reaches them."""
    leaves = [(tensor, tensor._hooks) for tensor in extras if tensor.grad_fn is None]
    nodes = {id(tensor.grad_fn): tensor.grad_fn for tensor in extras if tensor.grad_fn is not None}
    kept = [(node, node._tensor_hooks, node._retained) for node in nodes.values()]
    for tensor, _ in leaves:
        tensor._hooks = None
    for node, _, _ in kept:
        node._tensor_hooks = node._retained = None
    try:
        yield
    finally:
        for tensor, hooks in leaves:
            tensor._hooks = hooks
        for node, tensor_hooks, retained in kept:
            node._tensor_hooks, node._retained = tensor_hooks, retained


def _recompute(segment: _Segment, inputs) -> list:
    """The output tensors of the function run again with grad enabled: with the random-number
    state of the forward, inside the module call that was running then, as a forward pass
    that observers see, and checked against the forward's ops."""
    restore = segment.rng_states is not None
    if restore:
        current = [random.get_rng_state(device) for device in segment.devices]
        for device, state in zip(segment.devices, segment.rng_states):
            random.set_rng_state(state, device)
    caller, module_scope.running.call = module_scope.running.call, segment.module_call
    # the recomputation is a forward pass of the script's code: observers see its ops
    in_backward, grad_state.in_backward = grad_state.in_backward, False
    # under the forward's autocast (or none), whatever is in force where backward runs
    autocast, grad_state.local_autocast = grad_state.local_autocast, segment.autocast
    expected = segment.forward_ops if segment.determinism else None
    watcher = _Watcher(tuple(inputs), expected, segment.debug)
    try:
        with enable_grad(), segment.recompute_context(), watcher:
            result = segment.call(tuple(inputs))
        watcher.finish()
    finally:
        module_scope.running.call = caller
        grad_state.in_backward = in_backward
        grad_state.local_autocast = autocast
        if restore:
            for device, state in zip(segment.devices, current):
                random.set_rng_state(state, device)
    tensors: list = []
    _flatten(result, tensors)
    return tensors


def _differentiable_outputs(outputs, grad_outputs) -> list:
    """(output, its gradient) for the outputs that require grad and got a gradient."""
    return [(output, grad) for output, grad in zip(outputs, grad_outputs)
            if isinstance(output, Tensor) and output.requires_grad and grad is not None]


def recomputed_inputs(node) -> dict:
    """{leaf node of the recomputation: position of the argument of the checkpoint it stands
    for} for the backward node of a checkpoint whose backward has run, else {}. The leaves
    are detached copies of the checkpoint's inputs, so `node.next_functions[position]` is
    where each input really came from.

    >>> import genesis
    >>> x = genesis.randn(3, requires_grad=True)
    >>> y = checkpoint(lambda a: a.exp(), x, use_reentrant=False)
    >>> y.sum().backward()
    >>> [(type(leaf).__name__, position) for leaf, position in recomputed_inputs(y.grad_fn).items()]
    [('AccumulateGrad', 0)]
    >>> y.grad_fn.next_functions[0][0] is x._accumulator
    True
    """
    return node.recomputed_inputs if node._forward_cls is Checkpoint else {}


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs):
    """Run `function(*args, **kwargs)` without keeping its intermediates; recompute them in
    backward (see the module docstring for the two variants).

    `use_reentrant`: pass it (False is recommended); left out, it is True, with a warning.
    `context_fn`: (non-reentrant) returns two context managers, entered around the forward
    run and the recomputation (`create_selective_checkpoint_contexts` makes such a pair).
    `determinism_check`: "default" checks that the recomputation calls as many ops as the
    forward, with outputs of the same shapes and dtypes (else `CheckpointError`); "none" does
    not.
    `debug`: list the ops of both runs in that error. `preserve_rng_state` (keyword, default
    True): recompute with the random-number state of the forward.

    >>> import genesis
    >>> x = genesis.randn(3, requires_grad=True)
    >>> y = checkpoint(lambda a, scale=1.0: a.sin() * scale, x, scale=2.0, use_reentrant=False)
    >>> genesis.autograd.grad(y.sum(), x)[0].allclose(2 * x.detach().cos())
    True
    """
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING.format(where="torch.utils.checkpoint"), stacklevel=2)
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if not callable(function):
        raise TypeError(f"checkpoint: the first argument must be callable, got {type(function).__name__}")
    if determinism_check not in ("default", "none"):
        raise ValueError("checkpoint: determinism_check should be one of ['default', 'none'], "
                         f"but got {determinism_check!r}")
    if _Settings.debug is not None:
        debug = _Settings.debug
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("checkpoint: Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("checkpoint: Unexpected keyword arguments: " + ",".join(kwargs)
                             + " (keyword arguments need use_reentrant=False)")
    segment = _Segment(function, use_reentrant, preserve_rng_state,
                       determinism_check == "default" and not use_reentrant, debug,
                       early_stop if _Settings.early_stop is None else _Settings.early_stop)
    segment.kwarg_names = tuple(kwargs)
    inputs = (*args, *kwargs.values())
    segment.arg_count, segment.input_count = len(args), len(inputs)
    segment.devices = sorted({str(arg.device) for arg in inputs if isinstance(arg, Tensor)}) or ["cpu"]
    if preserve_rng_state:
        segment.rng_states = [random.get_rng_state(device) for device in segment.devices]
    if use_reentrant:
        return _run_reentrant(segment, inputs)
    contexts = context_fn()
    if not (isinstance(contexts, tuple) and len(contexts) == 2):
        raise TypeError("checkpoint: context_fn must return a tuple of two context managers "
                        f"(forward, recomputation), got {type(contexts).__name__}")
    forward_context, recompute_context = contexts
    segment.recompute_context = lambda: recompute_context
    with forward_context, _Watcher(inputs) as watcher:
        result = segment.call(inputs)
    segment.forward_ops = watcher.ops
    return _attach(segment, result, inputs, tuple(watcher.externals))


def _run_reentrant(segment: _Segment, inputs: tuple):
    parameters = _parameters_of(segment.fn)
    if is_grad_enabled() and not parameters and not any(
            isinstance(arg, Tensor) and arg.requires_grad for arg in inputs):
        warnings.warn("checkpoint: none of the inputs requires grad and the function is not a "
                      "genesis.nn.Module, so no gradient will flow through this segment; pass a "
                      "module (its parameters are found), an input that requires grad, or "
                      "use_reentrant=False", stacklevel=3)
    with no_grad(), _Watcher(inputs) as watcher:
        result = segment.call(inputs)
    segment.forward_ops = watcher.ops
    return _attach(segment, result, inputs, tuple(parameters))


def _attach(segment: _Segment, result, inputs: tuple, extras: tuple):
    """The function's result with its tensors replaced by the checkpoint node's outputs."""
    tensors: list = []
    segment.structure = _flatten(result, tensors)
    if not tensors:
        return result
    segment.outputs = tuple(tensors)
    outputs = Checkpoint.apply(*inputs, *extras, segment)
    if len(outputs) > 1:
        outputs = tuple(CheckpointOutput.apply(output) if output._requires_grad else output
                        for output in outputs)
    return _unflatten(segment.structure, outputs)


def _parameters_of(function) -> list:
    """Parameters requiring grad of a module, or of the module a bound method belongs to."""
    owner = function if isinstance(function, Module) else getattr(function, "__self__", None)
    if not isinstance(owner, Module):
        return []
    return [parameter for parameter in owner.parameters() if parameter.requires_grad]


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run a sequence of modules/functions in `segments` chunks, each but the last one
    checkpointed (the last one's intermediates are needed by the backward right away).

    >>> import genesis
    >>> model = genesis.nn.Sequential(*[genesis.nn.Linear(3, 3) for _ in range(4)])
    >>> checkpoint_sequential(model, 2, genesis.randn(2, 3), use_reentrant=False).shape
    (2, 3)
    """
    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING.format(where="torch.utils.checkpoint.checkpoint_sequential"),
                      stacklevel=2)
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("checkpoint_sequential: Unexpected keyword arguments: " + ",".join(kwargs))
    functions = list(functions.children()) if isinstance(functions, Module) else list(functions)
    if not isinstance(segments, int) or segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be an int >= 1, got {segments}")
    size = len(functions) // segments
    if size == 0:
        raise ValueError(f"checkpoint_sequential: segments ({segments}) must be at most the number "
                         f"of functions ({len(functions)})")

    def run(chunk):
        if all(isinstance(step, Module) for step in chunk):
            return Sequential(*chunk)  # a module, so reentrant checkpoint finds its parameters

        def forward(value):
            for step in chunk:
                value = step(value)
            return value

        return forward

    last = size * (segments - 1)
    for start in range(0, last, size):
        input = checkpoint(run(functions[start:start + size]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve_rng_state)
    return run(functions[last:])(input)


def _two_layers(input, weight):
    """A small function to checkpoint: Tensor methods only, so PyTorch runs it too."""
    return (input @ weight).tanh() @ weight


def _checkpointed_two_layers(input: Tensor, weight: Tensor) -> Tensor:
    return checkpoint(_two_layers, input, weight, use_reentrant=False)


def _two_outputs(input, weight):
    """A checkpointed function with two outputs (each gets a node of its own)."""
    hidden = (input @ weight).tanh()
    return hidden, hidden @ weight


def _checkpointed_two_outputs(input: Tensor, weight: Tensor) -> tuple:
    return checkpoint(_two_outputs, input, weight, use_reentrant=False)


def _checkpoint_samples(rng) -> list:
    def sample(rows, layout="contiguous", grad=None, note=""):
        return Sample((samples.values(rng, (rows, 3)), samples.values(rng, (3, 3))),
                      layout=layout, grad=grad, note=note)

    return [sample(2, note="2 rows"), sample(4, layout="transposed", note="transposed"),
            sample(2, layout="strided", note="strided"),
            sample(2, grad=(False, True), note="input needs no grad"),
            sample(3, grad=(True, False), note="weight needs no grad")]


OPS = [
    OpInfo("checkpoint", _checkpointed_two_layers, _checkpoint_samples,
           torch=lambda torch, input, weight: torch.utils.checkpoint.checkpoint(
               _two_layers, input, weight, use_reentrant=False)),
    OpInfo("checkpoint_two_outputs", _checkpointed_two_outputs, _checkpoint_samples,
           torch=lambda torch, input, weight: torch.utils.checkpoint.checkpoint(
               _two_outputs, input, weight, use_reentrant=False)),
]
