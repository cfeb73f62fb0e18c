"""Recording Function calls for the per-node checks: `InvocationLog`, an observer for
`genesis.autograd.function.observers`, keeps an `Invocation` (copies of the inputs) of
each Function call that joined a graph, for `genesis.debug.node_check.check_invocation`
to re-run later."""
from __future__ import annotations

from dataclasses import dataclass

from ..autograd import engine
from ..tensor import Tensor, wrap_array

__all__ = ["Invocation", "InvocationLog", "PER_SITE"]

PER_SITE = 2         # calls copied per (Function, source line), at most


@dataclass
class Invocation:
    """A recorded Function call: the Function class and copies of its arguments."""

    function: type
    args: tuple          # Tensors are detached copies; other values as given
    requires_grad: tuple  # per argument: did it require grad in the real run
    kwargs: dict
    source: object = None  # genesis.autograd.source.SourceLocation of the call
    # per output: did it get a gradient (False: an integer output, or one the Function marked
    # non-differentiable, such as batch_norm's batch statistics); empty: all that are float
    differentiable_outputs: tuple = ()


class InvocationLog:
    """Observer that copies the inputs of Function calls that joined a graph (an output of
    theirs carries a gradient).

    Only user-defined Functions unless `include_builtin`; at most `per_site`
    calls per (Function, source line), so a loop over layers is not copied a
    hundred times: `not_copied` counts the calls left out that way.

    >>> import genesis
    >>> log = InvocationLog(include_builtin=True, per_site=1)
    >>> genesis.autograd.function.observers.add(log)
    >>> x = genesis.randn(3, requires_grad=True)
    >>> for _ in range(3):
    ...     x = x * 2
    >>> genesis.autograd.function.observers.discard(log)
    >>> len(log.calls), log.not_copied
    (1, 2)
    """

    def __init__(self, include_builtin: bool = False, per_site: int = PER_SITE):
        self.include_builtin = include_builtin
        self.per_site = per_site
        self.calls = {}        # autograd node -> Invocation
        self.not_copied = 0    # calls beyond per_site at their (Function, source line)
        self._per_site = {}

    def __call__(self, node, args, outputs) -> None:
        if not node._next_nodes or engine.unwatched.depth:  # no graph, or gradcheck's own call
            return
        function = type(node)._forward_cls
        if function is None or (function._builtin and not self.include_builtin):
            return
        differentiable = tuple(isinstance(out, Tensor) and out.grad_fn is node for out in outputs)
        if not any(differentiable):  # integer or bool outputs only (a comparison): no gradient
            return
        source = node._source
        site = (function, str(source) if source is not None else None)
        seen = self._per_site.get(site, 0)
        if seen >= self.per_site:
            self.not_copied += 1
            return
        self._per_site[site] = seen + 1
        copies = tuple(_copy(arg) for arg in args)
        requires = tuple(isinstance(arg, Tensor) and arg.requires_grad for arg in args)
        self.calls[node] = Invocation(function, copies, requires, dict(node.__dict__.get(
            "_genesis_kwargs", {})), source, differentiable)


def _copy(value):
    if isinstance(value, Tensor):
        return wrap_array(value._data.copy(), value._device)
    if isinstance(value, list | tuple):
        return type(value)(_copy(item) for item in value)
    return value
