"""What gradcheck's undefined-gradient check runs: a backward in which every output's gradient
is undefined (None), as PyTorch's engine runs one when outputs get no gradient.

genesis's engine runs no node that no gradient reached, so this pass walks the graph itself,
doing what PyTorch's engine does there: each node reached only by undefined gradients runs its
tensor hooks and pre-hooks with None; a genesis op passes undefined gradients on to its inputs;
a user's Function runs its backward, with zeros for the undefined gradients (as
`ctx.set_materialize_grads(True)`, the default, gives it) or with None (after
`set_materialize_grads(False)`), and what it returns must be None or zeros. A leaf's hooks are
called with None too.

>>> import genesis
>>> x = genesis.ones(2, dtype=genesis.float64, requires_grad=True)
>>> def strict(grad):
...     if grad is None:
...         raise RuntimeError("no gradient")
>>> y = x.clone()
>>> handle = y.register_hook(strict)
>>> undefined_backward_failure([y * 3])  # doctest: +ELLIPSIS
"Expected backward function to handle undefined output grads: hook 'strict' (...) raised RuntimeError: no gradient"
"""
from __future__ import annotations

import numpy as np

from ..tensor import wrap_array
from .function import AccumulateGrad
from .grad_mode import no_grad
from .gradcheck_jacobians import flat_values
from .hooks import describe_hook, run_hook

__all__ = ["undefined_backward_failure"]

_WHERE = "given an undefined (None) gradient by gradcheck's undefined-gradient check"


def undefined_backward_failure(outputs: list) -> str | None:
    """Why a backward with undefined gradients for all of `outputs` fails (None if it does not):
    a hook or backward that raised, or a backward that gave a non-zero gradient."""
    pending = [output.grad_fn for output in outputs if output.grad_fn is not None]
    pending += [output._accumulator for output in outputs
                if output.grad_fn is None and output._accumulator is not None]
    seen = set()
    with no_grad():
        while pending:
            node = pending.pop()
            if node in seen:
                continue
            seen.add(node)
            try:
                failure = _run_undefined(node, pending)
            except Exception as error:
                return _raised(node, error)
            if failure is not None:
                return failure
    return None


def _run_undefined(node, pending: list) -> str | None:
    """Run `node` as PyTorch's engine does when all its output gradients are undefined; the
    nodes its undefined gradients reach are added to `pending`."""
    if node.__class__ is AccumulateGrad:
        variable = node.variable
        hooks = variable._hooks if variable is not None else None
        for hook in list(hooks.values() if isinstance(hooks, dict) else hooks or ()):
            run_hook(hook, (None,), _WHERE)
        return None
    for hooks in (node._tensor_hooks or {}).values():
        for hook in list(hooks):
            run_hook(hook, (None,), _WHERE)
    count = len(node._output_meta)
    for hook in list(node._prehooks):
        run_hook(hook, ((None,) * count,), _WHERE)
    function = node._forward_cls
    if function._builtin:  # genesis's ops give undefined gradients for undefined ones
        pending.extend(child for child in node._next_nodes if child is not None)
        return None
    grads = [None] * count
    if node._materialize_grads:
        grads = [None if meta is None else wrap_array(meta[2].xp.zeros(meta[0], meta[1]), meta[2])
                 for meta in node._output_meta]
    result = function.backward(node, *grads)
    result = result if isinstance(result, tuple | list) else (result,)
    for index, (child, gradient) in enumerate(zip(node._next_nodes, result)):
        if child is None:
            continue
        if gradient is None:
            pending.append(child)
        elif np.any(values := flat_values(gradient)):
            return (f"Expected all input grads to be undefined or zero when all output grads are "
                    f"undefined or zero: {type(node).__name__}'s backward returned a gradient with "
                    f"non-zero entries (max |g| = {np.abs(values).max():.6g}) for its input {index} "
                    "when its output gradients were undefined")
    return None


def _raised(node, error: Exception) -> str:
    """The failure for an exception raised in the pass: a RuntimeError is the check's finding
    (PyTorch's gradcheck reports it the same way); any other error is a bug in the code run,
    re-raised as it is, with a note saying where."""
    hook = getattr(error, "hook", None)
    where = describe_hook(hook) if hook is not None else f"{type(node).__name__}'s backward"
    if not isinstance(error, RuntimeError):
        error.add_note(f"(raised by {where} in gradcheck's undefined-gradient check, which runs "
                       "backward with undefined (None) output gradients; pass "
                       "check_undefined_grad=False to skip it)")
        raise error
    return (f"Expected backward function to handle undefined output grads: {where} raised "
            f"{type(error).__name__}: {error}")
