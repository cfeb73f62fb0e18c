"""Gradient checkpointing: trade compute for memory.

`checkpoint(fn, *args, use_reentrant=False)` runs `fn` keeping none of the tensors its ops
save for backward; backward recomputes them by running `fn` again (with the random-number
state it had the first time, so dropout draws the same mask, under the same autocast, and
inside the module call that was running when `checkpoint` was called, as a forward pass:
dispatch modes and the observers of `genesis.autograd.function` see its ops). Gradients are
identical to running `fn` directly.

The two variants, as in PyTorch:

- non-reentrant (`use_reentrant=False`, recommended; `genesis.utils.checkpoint_frame`): `fn`
  runs with the caller's grad mode and builds its graph as usual, under saved-tensor hooks
  that keep an empty holder for each saved tensor. The first holder a backward call reads
  recomputes `fn` once for that call (or for a `GraphExecGroup`), refilling the holders; with
  early stop (the default; `early_stop=False` or `set_checkpoint_early_stop(False)` turn it
  off) the recomputation ends once every holder is refilled. `autograd.grad`, keyword
  arguments, non-tensor inputs and outputs, tensors from the enclosing scope, custom
  Functions and nested checkpoints all work. The recomputation must save as many tensors as
  the forward, of the same shapes, dtypes and devices, else `CheckpointError`
  (`determinism_check="none"` leaves out the metadata check).
- reentrant (`use_reentrant=True`, the default when not given, with a warning): `fn` runs
  under no_grad, and the checkpoint is one node (`CheckpointBackward`) whose backward
  recomputes `fn` and runs a backward of its own, so tensors `fn` uses without taking them
  as inputs get their gradients accumulated in `.grad` then (the parameters of a module `fn`
  are found, so its output requires grad). No keyword arguments, `context_fn` or `debug`;
  a backward that computes only some gradients (`autograd.grad`, `backward(inputs=...)`) is
  refused, as in PyTorch. `recomputed_inputs` says which leaves of its recomputation stand
  for the checkpoint's inputs.

>>> import genesis
>>> w = genesis.randn(4, 4, requires_grad=True)
>>> x = genesis.randn(2, 4, requires_grad=True)
>>> y = checkpoint(lambda a: (a @ w).tanh() @ w, x, use_reentrant=False)
>>> y.sum().backward()
>>> x.grad.shape, w.grad.shape
(genesis.Size([2, 4]), genesis.Size([4, 4]))
"""
from __future__ import annotations

import contextlib
import warnings

from .. import random
from ..autograd import engine, module_scope
from ..autograd.function import Op
from ..autograd.grad_mode import enable_grad, grad_state, is_grad_enabled, no_grad
from ..nn.containers import Sequential
from ..nn.module import Module
from ..ops import samples
from ..ops.registry import OpInfo, Sample
from ..tensor import Tensor
from ._python_dispatch import not_dispatched
from .checkpoint_frame import (CheckpointError, CheckpointSettings, GraphExecGroup,  # noqa: F401
                               forward_state, run_checkpointed)
from .selective_checkpoint import (CheckpointPolicy, SelectiveCheckpointContext,  # noqa: F401
                                   _CachedTorchDispatchMode, _CachingTorchDispatchMode,
                                   create_selective_checkpoint_contexts)  # (torch.utils.checkpoint's names)

__all__ = ["checkpoint", "checkpoint_sequential", "recomputed_inputs", "CheckpointError",
           "GraphExecGroup", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "noop_context_fn", "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]

_REENTRANT_WARNING = (
    "{where}: the use_reentrant parameter should be passed explicitly. use_reentrant=False is "
    "recommended (it supports autograd.grad, keyword arguments and nested checkpoints); pass "
    "use_reentrant=True to keep the current default. See the genesis.utils.checkpoint docstring "
    "for the differences between the two variants.")


class _Settings:
    early_stop: bool | None = None  # set_checkpoint_early_stop's value, while one is active
    debug: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Within it, non-reentrant checkpoints made stop (or not) recomputing once every saved
    tensor backward needs is recomputed, whatever their own `early_stop` says; the choice holds
    for their backward, run after the block has ended.

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
    """What one reentrant checkpoint call keeps for its backward: the function, how its
    arguments and outputs are laid out, and the state its forward ran in."""

    def __init__(self, fn, preserve_rng_state: bool):
        self.fn = fn
        self.module_call = module_scope.running.call
        self.kwarg_names: tuple = ()
        self.arg_count = 0       # positional arguments, then keyword values, then extras
        self.input_count = 0
        self.outputs: tuple = ()  # the forward's output tensors, until the node takes them
        self.structure = None
        self.devices: list = []
        self.rng_states = None
        self.preserve_rng_state = preserve_rng_state
        # the autocast the forward ran under (None: off), for the recomputation
        self.autocast = grad_state.autocast

    def call(self, inputs: tuple):
        args = inputs[:self.arg_count]
        kwargs = dict(zip(self.kwarg_names, inputs[self.arg_count:self.input_count]))
        return self.fn(*args, **kwargs)


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
    """A reentrant checkpoint as one node: its forward hands on the outputs the function made
    (under no_grad), keeping only the inputs; its backward recomputes the function and runs a
    backward through that recomputation.

    Arguments: the function's positional arguments, its keyword arguments' values, the
    extras (a module's parameters, there only so that the output requires grad, their
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
        return outputs

    @staticmethod
    def backward(ctx, *grad_outputs):
        return _reentrant_gradients(ctx, grad_outputs)


@not_dispatched
class CheckpointOutput(Op):
    """One output of a reentrant checkpoint that has several, as a node of its own (the
    checkpoint's node is its next function): a hook on it concerns this output alone."""

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
    if not engine._is_checkpoint_valid():
        raise RuntimeError(
            "torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter "
            "to .backward(): a reentrant checkpoint computes its gradients with a backward of its "
            "own, which accumulates into .grad. To resolve this error, you can either set "
            "use_reentrant=False, or call .backward() without passing the `inputs` argument.")
    detached = [arg.detach().requires_grad_() if isinstance(arg, Tensor) and arg.requires_grad
                else arg for arg in ctx.saved_tensors]
    outputs = _recompute(ctx.segment, detached)
    ctx.recomputed_inputs = {arg._accumulator: position for position, arg in enumerate(detached)
                             if isinstance(arg, Tensor) and arg._accumulator is not None}
    if not any(output.requires_grad for output in outputs):
        raise RuntimeError("checkpoint: none of output has requires_grad=True, this checkpoint() "
                           "is not necessary: the function made its outputs without a graph "
                           "(under no_grad?); call it directly, or use use_reentrant=False")
    pairs = [(output, grad) for output, grad in zip(outputs, grad_outputs)
             if isinstance(output, Tensor) and output.requires_grad and grad is not None]
    if pairs:
        engine.backward([output for output, _ in pairs], [grad for _, grad in pairs])
    grads = [arg.grad if isinstance(arg, Tensor) and arg.requires_grad else None
             for arg in detached]
    return (*grads, *([None] * len(ctx.extras)), None)


def _recompute(segment: _Segment, inputs) -> list:
    """The output tensors of the function run again with grad enabled, as its forward ran
    (`checkpoint_frame.forward_state`)."""
    with forward_state(segment), enable_grad():
        result = segment.call(tuple(inputs))
    tensors: list = []
    _flatten(result, tensors)
    return tensors


def recomputed_inputs(node) -> dict:
    """{leaf node of the recomputation: position of the argument of the checkpoint it stands
    for} for the backward node of a reentrant checkpoint whose backward has run, else {}. The
    leaves are detached copies of the checkpoint's inputs, so `node.next_functions[position]`
    is where each input really came from.

    >>> import genesis
    >>> x = genesis.randn(3, requires_grad=True)
    >>> y = checkpoint(lambda a: a.exp(), x, use_reentrant=True)
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
    `determinism_check`: "default" checks that the recomputation saves tensors of the same
    shapes, dtypes and devices as the forward (else `CheckpointError`); "none" does not.
    `debug`: list the ops of both runs in that error. `early_stop`: (non-reentrant) end the
    recomputation once every saved tensor is recomputed. `preserve_rng_state` (keyword,
    default True): recompute with the random-number state of the forward.

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
        return _run_reentrant(function, args, preserve_rng_state)
    contexts = context_fn()
    if not (isinstance(contexts, tuple) and len(contexts) == 2):
        raise TypeError("checkpoint: context_fn must return a tuple of two context managers "
                        f"(forward, recomputation), got {type(contexts).__name__}")
    forward_context, recompute_context = contexts
    settings = CheckpointSettings(
        early_stop=early_stop if _Settings.early_stop is None else _Settings.early_stop,
        check_metadata=determinism_check == "default", debug=debug,
        preserve_rng_state=preserve_rng_state, recompute_context=recompute_context)
    return run_checkpointed(function, args, kwargs, settings, forward_context)


def _run_reentrant(function, inputs: tuple, preserve_rng_state: bool):
    segment = _Segment(function, preserve_rng_state)
    segment.arg_count = segment.input_count = len(inputs)
    segment.devices = sorted({str(arg.device) for arg in inputs if isinstance(arg, Tensor)}) or ["cpu"]
    if preserve_rng_state:
        segment.rng_states = [random.device_state(device) for device in segment.devices]
    parameters = _parameters_of(segment.fn)
    if is_grad_enabled() and not parameters and not any(
            isinstance(arg, Tensor) and arg.requires_grad for arg in inputs):
        warnings.warn("checkpoint: none of the inputs requires grad and the function is not a "
                      "genesis.nn.Module, so no gradient will flow through this segment; pass a "
                      "module (its parameters are found), an input that requires grad, or "
                      "use_reentrant=False", stacklevel=3)
    with no_grad():
        result = segment.call(inputs)
    tensors: list = []
    segment.structure = _flatten(result, tensors)
    if not tensors:
        return result
    segment.outputs = tuple(tensors)
    outputs = Checkpoint.apply(*inputs, *parameters, segment)
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
    genesis.Size([2, 3])
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
