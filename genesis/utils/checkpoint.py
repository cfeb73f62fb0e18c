"""Gradient checkpointing: trade compute for memory.

`checkpoint(fn, *args)` runs `fn` without keeping its intermediate tensors;
during backward it runs `fn` again (with the random-number state it had the
first time, so dropout draws the same mask, and inside the module call that was
running when `checkpoint` was called, so its ops belong to the same modules; as a
forward pass, which the observers of `genesis.autograd.function` see) and
backpropagates through that recomputation. Gradients are identical to running `fn`
directly. That inner backward call is part of the outer one (see
`genesis.autograd.engine`): tools watching a script's backward calls see one call,
whose graph takes in the recomputed ops; `recomputed_inputs` says which leaves of the
recomputation stand for the checkpoint's inputs.

>>> import genesis
>>> w = genesis.randn(4, 4, requires_grad=True)
>>> x = genesis.randn(2, 4, requires_grad=True)
>>> y = checkpoint(lambda a: (a @ w).tanh() @ w, x)
>>> y.sum().backward()
>>> x.grad.shape, w.grad.shape
((2, 4), (4, 4))
"""
from __future__ import annotations

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

__all__ = ["checkpoint", "checkpoint_sequential", "recomputed_inputs"]


class Checkpoint(Op):
    """Forward without a graph inside; backward recomputes `fn` with one and differentiates it.

    The trailing `parameters` (of a module `fn`) are arguments only so that the
    output requires grad when they do; their gradients accumulate during the
    recomputation's backward, so their slots return None. A create_graph backward
    differentiates the recomputation on the inputs themselves instead
    (`_differentiable_gradients`), so that its gradients can be differentiated again.
    """

    fresh_gradients = False  # its backward returns what the user's code (hooks, fn) made

    @staticmethod
    def forward(ctx, fn, preserve_rng_state, parameter_count, *args):
        split = len(args) - parameter_count
        args, ctx.parameters = args[:split], args[split:]
        ctx.fn = fn
        ctx.devices = sorted({str(arg.device) for arg in args if isinstance(arg, Tensor)}) or ["cpu"]
        ctx.rng_states = [random.get_rng_state(device) for device in ctx.devices] \
            if preserve_rng_state else None
        ctx.save_for_backward(*args)
        ctx.recomputed_inputs = {}  # filled by backward
        with no_grad():  # built-in forwards run with grad enabled; this one calls Tensor ops
            return fn(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if is_grad_enabled():  # a create_graph backward: the gradients are recorded too
            return _differentiable_gradients(ctx, grad_outputs)
        inputs = ctx.saved_tensors
        detached = [arg.detach().requires_grad_(arg.requires_grad) if isinstance(arg, Tensor)
                    else arg for arg in inputs]
        outputs = _recompute(ctx, detached)
        # argument positions: fn, preserve_rng_state and parameter_count come first
        ctx.recomputed_inputs = {arg._accumulator: 3 + position
                                 for position, arg in enumerate(detached)
                                 if isinstance(arg, Tensor) and arg._accumulator is not None}
        pairs = _differentiable_outputs(outputs, grad_outputs)
        if pairs:
            # Leaves inside fn (parameters) accumulate their .grad here; the inputs' gradients
            # are read back from the detached copies.
            engine.backward([output for output, _ in pairs], [grad for _, grad in pairs])
        grads = [arg.grad if isinstance(arg, Tensor) and arg.requires_grad else None
                 for arg in detached]
        return (None, None, None, *grads, *([None] * len(ctx.parameters)))


def _recompute(ctx, inputs) -> tuple:
    """The outputs of `ctx.fn(*inputs)` run again with grad enabled: with the random-number
    state of the forward, inside the module call that was running then, and as a forward
    pass that observers see."""
    restore = ctx.rng_states is not None
    if restore:
        current = [random.get_rng_state(device) for device in ctx.devices]
        for device, state in zip(ctx.devices, ctx.rng_states):
            random.set_rng_state(state, device)
    caller, module_scope.running.call = module_scope.running.call, ctx._module_call
    # the recomputation is a forward pass of the script's code: observers see its ops
    in_backward, grad_state.in_backward = grad_state.in_backward, False
    try:
        with enable_grad():
            outputs = ctx.fn(*inputs)
    finally:
        module_scope.running.call = caller
        grad_state.in_backward = in_backward
        if restore:
            for device, state in zip(ctx.devices, current):
                random.set_rng_state(state, device)
    return (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)


def _differentiable_outputs(outputs, grad_outputs) -> list:
    """(output, its gradient) for the outputs that require grad and got a gradient."""
    return [(output, grad) for output, grad in zip(outputs, grad_outputs)
            if isinstance(output, Tensor) and output.requires_grad and grad is not None]


def _differentiable_gradients(ctx, grad_outputs) -> tuple:
    """The gradients of a create_graph backward. `fn` is recomputed on views of the inputs,
    not on detached copies, so the recorded gradients reach back to the inputs (a view per
    argument, so that an input passed twice gets each use's gradient in its own slot); every
    input and parameter that requires grad gets its gradient through its slot."""
    views = [arg[...] if isinstance(arg, Tensor) and arg.requires_grad else arg
             for arg in ctx.saved_tensors]
    arguments = (*views, *ctx.parameters)
    targets = [arg for arg in arguments if isinstance(arg, Tensor) and arg.requires_grad]
    pairs = _differentiable_outputs(_recompute(ctx, views), grad_outputs)
    if not pairs or not targets:
        return (None,) * (3 + len(arguments))
    grads = iter(engine.grad([output for output, _ in pairs], targets, [grad for _, grad in pairs],
                             create_graph=True, allow_unused=True))
    return (None, None, None, *(next(grads) if isinstance(arg, Tensor) and arg.requires_grad
                                else None for arg in arguments))


def recomputed_inputs(node) -> dict:
    """{leaf node of the recomputation: position of the argument of the checkpoint it stands
    for} for the backward node of a checkpoint whose backward has run, else {}. The leaves
    are detached copies of the checkpoint's inputs, so `node.next_functions[position]` is
    where each input really came from.

    >>> import genesis
    >>> x = genesis.randn(3, requires_grad=True)
    >>> y = checkpoint(lambda a: a.exp(), x)
    >>> y.sum().backward()
    >>> [(type(leaf).__name__, position) for leaf, position in recomputed_inputs(y.grad_fn).items()]
    [('AccumulateGrad', 3)]
    >>> y.grad_fn.next_functions[3][0] is x._accumulator
    True
    """
    return node.recomputed_inputs if node._forward_cls is Checkpoint else {}


def checkpoint(function, *args, preserve_rng_state: bool = True, use_reentrant: bool | None = None):
    """Run `function(*args)` without storing intermediates; recompute them in backward.

    `use_reentrant` is accepted for PyTorch compatibility; both settings behave the same.
    """
    if not callable(function):
        raise TypeError(f"checkpoint: the first argument must be callable, got {type(function).__name__}")
    parameters = _parameters_of(function)
    if is_grad_enabled() and not parameters and not any(
            isinstance(arg, Tensor) and arg.requires_grad for arg in args):
        warnings.warn("checkpoint: none of the inputs requires grad and the function is not a "
                      "genesis.nn.Module, so no gradient will flow through this segment; pass a "
                      "module (its parameters are found) or an input that requires grad",
                      stacklevel=2)
    return Checkpoint.apply(function, preserve_rng_state, len(parameters), *args, *parameters)


def _parameters_of(function) -> list:
    """Parameters requiring grad of a module, or of the module a bound method belongs to."""
    owner = function if isinstance(function, Module) else getattr(function, "__self__", None)
    if not isinstance(owner, Module):
        return []
    return [parameter for parameter in owner.parameters() if parameter.requires_grad]


def checkpoint_sequential(functions, segments: int, input, *, preserve_rng_state: bool = True,
                          use_reentrant: bool | None = None):
    """Split a sequence of modules/functions into `segments` checkpointed chunks."""
    functions = list(functions.children()) if isinstance(functions, Module) else list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be >= 1, got {segments}")
    size = -(-len(functions) // segments)

    def run(chunk):
        if all(isinstance(function, Module) for function in chunk):
            return Sequential(*chunk)  # a module, so checkpoint finds its parameters

        def forward(value):
            for function in chunk:
                value = function(value)
            return value

        return forward

    for start in range(0, len(functions), size):
        input = checkpoint(run(functions[start:start + size]), input,
                           preserve_rng_state=preserve_rng_state)
    return input


def _two_layers(input, weight):
    """A small function to checkpoint: Tensor methods only, so PyTorch runs it too."""
    return (input @ weight).tanh() @ weight


def _checkpointed_two_layers(input: Tensor, weight: Tensor) -> Tensor:
    return checkpoint(_two_layers, input, weight)


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
]
