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
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "recomputed_inputs"]


class Checkpoint(Op):
    """Forward without a graph inside; backward recomputes `fn` with one and differentiates it.

    The trailing `parameters` (of a module `fn`) are arguments only so that the
    output requires grad when they do; their gradients accumulate during the
    recomputation's backward, so their slots return None.
    """

    @staticmethod
    def forward(ctx, fn, preserve_rng_state, parameter_count, *args):
        args = args[:len(args) - parameter_count]
        ctx.parameter_count = parameter_count
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
        inputs = ctx.saved_tensors
        detached = [arg.detach().requires_grad_(arg.requires_grad) if isinstance(arg, Tensor)
                    else arg for arg in inputs]
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
                outputs = ctx.fn(*detached)
        finally:
            module_scope.running.call = caller
            grad_state.in_backward = in_backward
            if restore:
                for device, state in zip(ctx.devices, current):
                    random.set_rng_state(state, device)
        # argument positions: fn, preserve_rng_state and parameter_count come first
        ctx.recomputed_inputs = {arg._accumulator: 3 + position
                                 for position, arg in enumerate(detached)
                                 if isinstance(arg, Tensor) and arg._accumulator is not None}
        outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
        pairs = [(output, grad) for output, grad in zip(outputs, grad_outputs)
                 if isinstance(output, Tensor) and output.requires_grad and grad is not None]
        if pairs:
            # Leaves inside fn (parameters) accumulate their .grad here; the inputs' gradients
            # are read back from the detached copies.
            engine.backward([output for output, _ in pairs], [grad for _, grad in pairs])
        grads = [arg.grad if isinstance(arg, Tensor) and arg.requires_grad else None
                 for arg in detached]
        return (None, None, None, *grads, *([None] * ctx.parameter_count))


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
