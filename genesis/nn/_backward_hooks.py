"""Module backward hooks: identity Functions around a module's inputs and outputs.

The output identity's backward sees the gradients w.r.t. the module's outputs
(it runs first); the input identity's backward sees those w.r.t. its inputs
(it runs once the module's own backward is done). Together they give
`hook(module, grad_input, grad_output)`, as in PyTorch's full backward hooks, with
PyTorch's conventions: grad_output holds None for an output that got no gradient,
grad_input zeros for a tensor input that does not require grad (or got no gradient)
and None for an argument that is not a tensor.
"""
from __future__ import annotations

from ..autograd.function import Op
from ..autograd.grad_mode import grad_state
from ..autograd.hooks import checked_gradients, hook_error, run_hook
from ..tensor import Tensor, wrap_array

__all__ = ["BackwardHook"]


class HookIdentity(Op):
    """Returns its tensors unchanged; its backward passes their gradients through `on_backward`."""

    fresh_gradients = False  # its backward returns what the user's code (hooks, fn) made

    @staticmethod
    def forward(ctx, on_backward, materialize_grads, *tensors):
        ctx.on_backward = on_backward
        ctx.set_materialize_grads(materialize_grads)
        return tuple(tensor._data for tensor in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *ctx.on_backward(grads))


def _pass_through(on_backward, tensors: list, materialize_grads: bool) -> tuple:
    outputs = HookIdentity.apply(on_backward, materialize_grads, *tensors)
    for source, output in zip(tensors, outputs):
        output._version_counter = source._version_counter  # same storage, same version
    return outputs


def _grad_positions(values) -> list:
    return [index for index, value in enumerate(values)
            if isinstance(value, Tensor) and value._requires_grad]


class BackwardHook:
    """The backward hooks of one module call: wraps its inputs and outputs, runs the hooks."""

    def __init__(self, module, hooks: list, pre_hooks: list):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.arg_count = 0
        self.input_positions: list = []
        # (position, shape, dtype, device) of each tensor input that does not require grad:
        # the hooks get zeros for it, as PyTorch's
        self.inputs_without_grad: list = []
        self.output_count = 0
        self.output_positions: list = []
        self.grad_outputs = None

    def wrap_inputs(self, args: tuple) -> tuple:
        self.arg_count = len(args)
        if not grad_state.enabled:
            return args
        self.input_positions = _grad_positions(args)
        if not self.input_positions or not self.hooks:
            return args
        self.inputs_without_grad = [(index, arg._data.shape, arg._data.dtype, arg._device)
                                    for index, arg in enumerate(args)
                                    if isinstance(arg, Tensor) and not arg._requires_grad]
        # an input that got no gradient gets zeros (materialized)
        outputs = _pass_through(self._on_input_grads, [args[i] for i in self.input_positions],
                                materialize_grads=True)
        wrapped = list(args)
        for index, output in zip(self.input_positions, outputs):
            wrapped[index] = output
        return tuple(wrapped)

    def wrap_outputs(self, result):
        single = isinstance(result, Tensor)
        values = (result,) if single else result
        if not grad_state.enabled or not isinstance(values, tuple | list):
            return result
        self.output_count = len(values)
        self.output_positions = _grad_positions(values)
        if not self.output_positions:
            return result
        # an output that got no gradient stays None
        outputs = _pass_through(self._on_output_grads, [values[i] for i in self.output_positions],
                                materialize_grads=False)
        if single:
            return outputs[0]
        wrapped = list(values)
        for index, output in zip(self.output_positions, outputs):
            wrapped[index] = output
        return type(values)(wrapped)

    def _on_output_grads(self, grads: tuple) -> tuple:
        grad_output = self._spread(grads, self.output_positions, self.output_count)
        for hook in self.pre_hooks:
            where = f"a full backward pre-hook of {type(self.module).__name__}"
            replacement = run_hook(hook, (self.module, grad_output), where)
            if replacement is not None:
                grad_output = checked_gradients(hook, where, replacement, grad_output, "grad_output")
        self.grad_outputs = grad_output
        if not self.input_positions:
            self._run_hooks_without_inputs()
        return tuple(grad_output[i] for i in self.output_positions)

    def _on_input_grads(self, grads: tuple) -> tuple:
        if self.grad_outputs is None:  # gradient reaching the inputs without passing through
            return grads               # the outputs (a double backward): no hook, as in PyTorch
        grad_input = self._spread(grads, self.input_positions, self.arg_count)
        if self.inputs_without_grad:
            grad_input = list(grad_input)
            for index, shape, dtype, device in self.inputs_without_grad:
                grad_input[index] = wrap_array(device.xp.zeros(shape, dtype), device)
            grad_input = tuple(grad_input)
        for hook in self.hooks:
            where = f"a full backward hook of {type(self.module).__name__}"
            replacement = run_hook(hook, (self.module, grad_input, self.grad_outputs), where)
            if replacement is not None:
                grad_input = checked_gradients(hook, where, replacement, grad_input, "grad_input")
        self.grad_outputs = None
        return tuple(grad_input[i] for i in self.input_positions)

    def _run_hooks_without_inputs(self) -> None:
        grad_input = (None,) * self.arg_count
        for hook in self.hooks:
            where = f"a full backward hook of {type(self.module).__name__}"
            replacement = run_hook(hook, (self.module, grad_input, self.grad_outputs), where)
            if replacement is None:
                continue
            replacement = checked_gradients(hook, where, replacement, grad_input, "grad_input")
            if any(value is not None for value in replacement):
                raise hook_error(RuntimeError, hook, f"{where}, returned gradients, but no input "
                                 "of the module requires grad; return None (or all Nones) instead.")

    @staticmethod
    def _spread(grads: tuple, positions: list, count: int) -> tuple:
        spread = [None] * count
        for index, grad in zip(positions, grads):
            spread[index] = grad
        return tuple(spread)
