"""Higher-level differentiation: `jacobian`, `hessian`, `vjp`, `jvp`, `vhp`, `hvp`.

Same signatures, shapes and tuple structure as `torch.autograd.functional`:
results are tuples where the inputs (or outputs) were given as tuples, and
single tensors otherwise. Everything is built from reverse mode; `jvp` and
`hvp` use the double-backward trick.

>>> import genesis
>>> x = genesis.tensor([1., 2.], dtype=genesis.float64)
>>> jacobian(lambda x: x ** 2, x)
tensor([[2., 0.],
        [0., 4.]], dtype=genesis.float64)
>>> hessian(lambda x: (x ** 3).sum(), x)
tensor([[ 6.,  0.],
        [ 0., 12.]], dtype=genesis.float64)
"""
from __future__ import annotations

from ..ops.join import stack
from ..tensor import Tensor, wrap_array
from .engine import grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """`(func(*inputs), v^T J)`: the vector-Jacobian product, shaped like the inputs.

    `v` may be omitted when func returns a single one-element tensor.

    >>> import genesis
    >>> x = genesis.tensor([1., 2.])
    >>> vjp(lambda x: x * x, x, genesis.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tensors(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _prepare(_as_tensors(v, "v", "vjp")[1], create_graph, need_graph=False)
            _validate_v(v, outputs, outputs_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns "
                               "a single Tensor with a single element.")
    return _product(outputs, outputs_tuple, outputs, inputs, v, inputs, inputs_tuple, create_graph,
                    strict, "back")


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """`(func(*inputs), J v)`: the Jacobian-vector product, shaped like the outputs.

    Computed with the double-backward trick (the vjp is linear in its vector, so
    differentiating it w.r.t. that vector gives J v). `v` may be omitted when
    the input is a single one-element tensor.

    >>> import genesis
    >>> x = genesis.tensor([1., 2.])
    >>> jvp(lambda x: x * x, x, genesis.tensor([1., 0.]))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prepare(_as_tensors(v, "v", "jvp")[1], create_graph, need_graph=False)
            _validate_v(v, inputs, inputs_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        outputs_tuple, outputs = _as_tensors(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # The vjp is linear in these, so their value does not matter (zeros keep NaN out).
        dummies = tuple(_zeros_like(output, requires_grad=True) for output in outputs)
        grad_inputs = _grad_of_used(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    return _product(outputs, outputs_tuple, grad_inputs, dummies, v, outputs, outputs_tuple, create_graph,
                    strict, "back_trick")


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of `func` at `inputs`: shape `output.shape + input.shape` per pair.

    A single tensor for one input and one output; a tuple over inputs (or
    outputs) when that side is a tuple; a tuple of tuples `[output][input]`
    when both are. Rows are computed one backward each; `vectorize` and
    `strategy="forward-mode"` are accepted with PyTorch's argument rules and give the
    same values (genesis computes every Jacobian in reverse mode).

    >>> import genesis
    >>> a, b = genesis.tensor([1., 2.]), genesis.tensor([3., 4.])
    >>> jacobian(lambda a, b: a * b, (a, b))
    (tensor([[3., 0.],
            [0., 4.]]), tensor([[1., 0.],
            [0., 2.]]))
    """
    _check_strategy("jacobian", strategy, "strategy", strict, vectorize)
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tensors(func(*inputs), "outputs of the user-provided function",
                                             "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        blocks = []
        for i, output in enumerate(outputs):
            rows = [[] for _ in inputs]
            count = output.numel()
            for row in range(count):
                seed = output._device.xp.zeros(count, dtype=output._data.dtype)
                seed[row] = 1
                seed = wrap_array(seed.reshape(output.shape), output._device)
                grads = _grad_of_used((output,), inputs, (seed,), create_graph, retain_graph=True)
                for j, (gradient, tensor) in enumerate(zip(grads, inputs)):
                    if gradient is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                               f"of input {j}. This is not allowed in strict mode.")
                        gradient = _zeros_like(tensor)
                    elif strict and create_graph and not gradient.requires_grad:
                        raise RuntimeError("The jacobian of the user-provided function is independent of "
                                           f"input {i}. This is not allowed in strict mode when "
                                           "create_graph=True.")
                    rows[j].append(gradient)
            blocks.append(tuple(_stack_rows(rows[j], output, tensor) for j, tensor in enumerate(inputs)))
    blocks = tuple(_finish(block, create_graph) for block in blocks)
    return _unpack_nested(blocks, outputs_tuple, inputs_tuple)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function returning one element: shape `input.shape + input.shape`,
    or a tuple of tuples `[i][j]` when `inputs` is a tuple. `vectorize` and
    `outer_jacobian_strategy` are accepted as in `jacobian`.

    >>> import genesis
    >>> x, y = genesis.tensor(1.), genesis.tensor(2.)
    >>> hessian(lambda x, y: x * x * y, (x, y))
    ((tensor(4.), tensor(2.)), (tensor(2.), tensor(0.)))
    """
    _check_strategy("hessian", outer_jacobian_strategy, "outer_jacobian_strategy", strict,
                    vectorize)
    inputs_tuple, inputs = _as_tensors(inputs, "inputs", "hessian")

    def single_output(*args):
        output = func(*args)
        if not isinstance(output, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        _check_requires_grad((output,), "outputs", strict)
        if output.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain "
                               f"a single element, got shape {tuple(output.shape)}")
        return output.reshape(())

    def gradient(*args):
        jac = jacobian(single_output, args, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return _unpack_nested(result, inputs_tuple, inputs_tuple)


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """`(func(*inputs), v^T H)` for a function returning one element.

    >>> import genesis
    >>> x = genesis.tensor([1., 2.])
    >>> vhp(lambda x: (x ** 3).sum(), x, genesis.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    inputs_tuple, inputs, outputs_tuple, outputs, jac, v = _hessian_setup(
        "vhp", func, inputs, v, create_graph, strict)
    return _product(outputs, outputs_tuple, jac, inputs, v, inputs, inputs_tuple, create_graph,
                    strict, "double_back")


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """`(func(*inputs), H v)` for a function returning one element (double-backward trick;
    equal to `vhp` when the function is twice continuously differentiable).

    >>> import genesis
    >>> x = genesis.tensor([1., 2.])
    >>> hvp(lambda x: (x ** 3).sum(), x, genesis.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    inputs_tuple, inputs, outputs_tuple, outputs, jac, v = _hessian_setup(
        "hvp", func, inputs, v, create_graph, strict)
    with enable_grad():
        dummies = tuple(_zeros_like(tensor, requires_grad=True) for tensor in inputs)
        double_back = _grad_of_used(jac, inputs, dummies, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    return _product(outputs, outputs_tuple, double_back, dummies, v, inputs, inputs_tuple, create_graph,
                    strict, "double_back_trick")


def _hessian_setup(name, func, inputs, v, create_graph, strict) -> tuple:
    """Shared start of vhp/hvp: checked inputs, v, the one-element output and its gradient."""
    with enable_grad():
        inputs_tuple, inputs = _as_tensors(inputs, "inputs", name)
        inputs = _prepare(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prepare(_as_tensors(v, "v", name)[1], create_graph, need_graph=False)
            _validate_v(v, inputs, inputs_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        outputs_tuple, outputs = _as_tensors(func(*inputs), "outputs of the user-provided function", name)
        _check_requires_grad(outputs, "outputs", strict)
        if outputs_tuple:
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a "
                               f"single element, got shape {tuple(outputs[0].shape)}")
        jac = _grad_of_used(outputs, inputs, None, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, outputs_tuple, outputs, jac, v


# -- helpers --------------------------------------------------------------------------

class InvalidStrategyError(ValueError, AssertionError):
    """A strategy that is neither "forward-mode" nor "reverse-mode" (an AssertionError in
    PyTorch, so both are caught)."""


def _check_strategy(fn_name: str, strategy: str, arg_name: str, strict: bool,
                    vectorize: bool) -> None:
    """PyTorch's checks of `strategy`, `strict` and `vectorize` together."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise InvalidStrategyError(f"Expected {arg_name} to be either \"forward-mode\" or "
                         f"\"reverse-mode\". Hint: If your function has more outputs than "
                         f"inputs, \"forward-mode\" tends to be more performant. Otherwise, prefer "
                         f"to use \"reverse-mode\". (got {strategy!r})")
    if strict and vectorize:
        raise RuntimeError(f"torch.autograd.functional.{fn_name}: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian is only implemented for `vectorize=True`.")


def _as_tensors(value, arg_name: str, fn_name: str) -> tuple:
    """(whether `value` was a tuple, `value` as a tuple of Tensors)."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for index, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {index}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                            f"Tensors but {where} has type {type(item).__name__}.")
    return is_tuple, items


def _prepare(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the inputs: differentiable aliases when the caller wants a graph
    back to them, else detached leaves (requiring grad when we differentiate w.r.t. them)."""
    prepared = []
    for tensor in tensors:
        if create_graph and tensor.requires_grad:
            prepared.append(tensor.reshape(tensor.shape))
        else:
            prepared.append(tensor.detach().requires_grad_(need_graph))
    return tuple(prepared)


def _validate_v(v: tuple, other: tuple, other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (vector, reference) in enumerate(zip(v, other)):
        if vector.shape != reference.shape:
            prefix = f"Entry {index} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {tuple(reference.shape)} but got "
                               f"{tuple(vector.shape)}.")


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for index, tensor in enumerate(tensors):
        if tensor is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {index}. "
                               "This is not allowed in strict mode.")
        if tensor.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to input {index} is "
                               "independent of the input. This is not allowed in strict mode. You should "
                               "ensure that your function is thrice differentiable and that the hessian "
                               "depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided "
                               f"function with respect to input {index} is independent of the input. This "
                               "is not allowed in strict mode. You should ensure that your function is "
                               "twice differentiable and that the jacobian depends on the inputs (this "
                               "would be violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {index} is independent of the inputs "
                               "of the user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(f"Output {index} of the user-provided function does not require gradients. The "
                           "outputs must be computed in a differentiable manner from the input when "
                           "running in strict mode.")


def _product(outputs, outputs_tuple, roots, wrt, v, like, like_tuple, create_graph: bool,
             strict: bool, stage: str) -> tuple:
    """(the function's outputs, the gradient of `roots` w.r.t. `wrt` weighted by `v`), zeros
    filled in for unused `like` entries, each unpacked as the caller passed it."""
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        grads = _grad_of_used(roots, wrt, v, create_graph)
        result = _fill_in_zeros(grads, like, strict, create_graph, stage)
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), like_tuple))


def _grad_of_used(outputs: tuple, inputs: tuple, grad_outputs, create_graph: bool,
                  retain_graph=None) -> tuple:
    """`grad` that skips outputs which don't require grad (None for every input if none do)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    used = [(output, g) for output, g in zip(outputs, grad_outputs)
            if output is not None and output.requires_grad]
    if not used:
        return (None,) * len(inputs)
    return grad([o for o, _ in used], inputs, [g for _, g in used], retain_graph=retain_graph,
                create_graph=create_graph, allow_unused=True)


_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is "
                   "not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in "
                         "the grad_jacobian. This is not allowed in strict mode as it prevents from "
                         "using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads: tuple, references: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros (shaped like the reference) where no gradient arrived; strict mode raises instead."""
    filled = []
    for index, (gradient, reference) in enumerate(zip(grads, references)):
        if gradient is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=index))
            gradient = _zeros_like(reference)
        elif strict and create_graph and not gradient.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {index}. "
                               "This is not allowed in strict mode when create_graph=True.")
        filled.append(gradient)
    return tuple(filled)


def _finish(tensors: tuple, create_graph: bool) -> tuple:
    """Results keep their history only when the caller asked for a graph."""
    return tensors if create_graph else tuple(tensor.detach() for tensor in tensors)


def _unpack(values: tuple, was_tuple: bool):
    return values if was_tuple else values[0]


def _unpack_nested(blocks: tuple, outer_tuple: bool, inner_tuple: bool):
    if not inner_tuple:
        blocks = tuple(block[0] for block in blocks)
    return blocks if outer_tuple else blocks[0]


def _zeros_like(tensor: Tensor, requires_grad: bool = False) -> Tensor:
    zeros = wrap_array(tensor._device.xp.zeros(tensor.shape, dtype=tensor._data.dtype), tensor._device)
    zeros._requires_grad = requires_grad
    return zeros


def _stack_rows(rows: list, output: Tensor, input: Tensor) -> Tensor:
    """The (output, input) block of the Jacobian, of shape `output.shape + input.shape`."""
    if not rows:
        return wrap_array(input._device.xp.zeros(tuple(output.shape) + tuple(input.shape),
                                                 dtype=input._data.dtype), input._device)
    return stack(rows).reshape(tuple(output.shape) + tuple(input.shape))
