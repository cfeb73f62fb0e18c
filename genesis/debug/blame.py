"""Pointing a wrong gradient at the line to edit: which input of a Function has the wrong
gradient (by the name `forward` gives it), where its backward is defined, the `return`
that produced that input's slot and, when the evidence is exact, what shape the error
has (a constant factor, a wrong sign, a transpose, two inputs' gradients swapped, a sum
over the wrong axis, zeros).

>>> import genesis
>>> class Scale(genesis.autograd.Function):
...     @staticmethod
...     def forward(ctx, x, factor):
...         return x * factor
...     @staticmethod
...     def backward(ctx, grad):
...         grad_x = grad * 2
...         return grad_x, None
>>> forward_input_names(Scale)
['x', 'factor']
>>> class Reverse(genesis.autograd.Function):  # PyTorch's other style: no ctx in forward
...     @staticmethod
...     def forward(x, lambd):
...         return x.view_as(x)
...     @staticmethod
...     def setup_context(ctx, inputs, output):
...         ctx.lambd = inputs[1]
>>> forward_input_names(Reverse)
['x', 'lambd']
>>> site = BackwardSite.of(Scale)
>>> site.definition.endswith(f":{site.def_line}") and site.return_lines == []
True
"""
from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..autograd.function import Function
from .difference_shape import explain_difference

__all__ = ["forward_input_names", "forward_parameters", "BackwardSite", "explain_inputs"]


def forward_input_names(function) -> list:
    """The names of a Function's forward inputs (its signature after ctx, or all of it for
    a forward without ctx, whose Function has a `setup_context`); [] if unknown."""
    return [p.name for p in forward_parameters(function) or ()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def forward_parameters(function) -> list | None:
    """The `inspect.Parameter`s of a Function's forward that take its inputs: those after
    ctx, or all of them for a forward without ctx, whose Function has a `setup_context`;
    None when the signature can't be read.

    >>> from genesis.ops.elementwise import Mul
    >>> [p.name for p in forward_parameters(Mul)]
    ['a', 'b']
    """
    try:
        parameters = list(inspect.signature(function.forward).parameters.values())
    except (TypeError, ValueError):
        return None
    takes_ctx = getattr(function, "setup_context", Function.setup_context) is Function.setup_context
    return parameters[1:] if takes_ctx else parameters


@dataclass
class BackwardSite:
    """Where a Function's backward is written: its file and `def` line, and the lines of the
    `return` statements seen ending its calls while `watching()`."""

    function: object
    file: str | None = None
    def_line: int | None = None
    return_lines: list = field(default_factory=list)

    @classmethod
    def of(cls, function) -> "BackwardSite":
        backward = _written_backward(function)
        code = getattr(backward, "__code__", None)
        if code is None:
            return cls(function)
        try:
            lines, start = inspect.getsourcelines(backward)
            tree = ast.parse(textwrap.dedent("".join(lines)))
            start += next(node.lineno for node in ast.walk(tree)
                          if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)) - 1
        except (OSError, TypeError, SyntaxError, StopIteration):
            start = code.co_firstlineno  # the line of its first decorator, if it has one
        return cls(function, code.co_filename, start)

    @property
    def definition(self) -> str:
        return f"{self.file}:{self.def_line}"

    @contextmanager
    def watching(self):
        """Note the line of each `return` that ends a call of the backward run inside."""
        code = getattr(_written_backward(self.function), "__code__", None)
        previous = sys.getprofile()

        def profile(frame, event, arg):
            if event == "return" and frame.f_code is code and frame.f_lineno not in self.return_lines:
                self.return_lines.append(frame.f_lineno)
            if previous is not None:
                previous(frame, event, arg)

        if code is not None:
            sys.setprofile(profile)
        try:
            yield self
        finally:
            if code is not None:
                sys.setprofile(previous)

    def slot_site(self, slot: int) -> tuple:
        """(line, code) where the gradient returned in `slot` is computed: the one assignment
        of the name the `return` gives there, else the `return` line itself; (None, "") when
        the return was not seen or the source can't be read."""
        if len(self.return_lines) != 1 or self.file is None:
            return None, ""
        line = self.return_lines[0]
        try:
            lines, start = inspect.getsourcelines(self.function.backward)
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except (OSError, TypeError, SyntaxError):
            return line, ""
        offset = start - 1
        returned = [node for node in ast.walk(tree) if isinstance(node, ast.Return)
                    and node.value is not None and node.lineno + offset <= line
                    <= node.end_lineno + offset]
        code = lines[line - start].strip() if 0 <= line - start < len(lines) else ""
        if len(returned) != 1:
            return line, code
        value = returned[0].value
        elements = value.elts if isinstance(value, ast.Tuple | ast.List) else [value]
        if slot >= len(elements):
            return line, code
        element = elements[slot]
        if isinstance(element, ast.Name):
            assigned = [node for node in ast.walk(tree) if _assigns(node, element.id)]
            if len(assigned) == 1:
                found = assigned[0].lineno + offset
                return found, lines[found - start].strip()
        found = element.lineno + offset
        return found, lines[found - start].strip()


def _assigns(node, name: str) -> bool:
    if isinstance(node, ast.Assign):
        return any(_binds(target, name) for target in node.targets)
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return _binds(node.target, name)
    return False


def _binds(target, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, ast.Tuple | ast.List):
        return any(_binds(item, name) for item in target.elts)
    return False


def explain_inputs(checked: dict, analytical: dict, atol: float, rtol: float,
                   output_gradients: list = ()) -> dict:
    """{input position: words} for the inputs whose checked elements all fit one simple
    explanation. `checked[position]` is (indices, analytical, numerical) of every element
    checked one by one; `analytical[position]` the backward's whole gradient for that input,
    which lets a transpose or two swapped gradients be told from the checked elements alone;
    `output_gradients` the gradient each output was given, which tells a sum over the wrong
    axis (the analytical gradient is the output gradient summed over one axis, the true one
    the same summed over another)."""
    words = {}
    positions = [position for position, (indices, _, _) in checked.items() if len(indices)]
    for first in positions:
        for second in positions:
            if first < second and analytical[first].shape == analytical[second].shape and \
                    _fits(analytical[second], checked[first], atol, rtol) and \
                    _fits(analytical[first], checked[second], atol, rtol) and \
                    not _fits(analytical[first], checked[first], atol, rtol):
                for this, other in ((first, second), (second, first)):
                    words[this] = (f"it gets the gradient of input {other}, and input {other} "
                                   "gets its: the backward returns the two swapped")
    for position in positions:
        if position in words:
            continue
        full = analytical[position]
        if full.ndim == 2 and full.shape[0] == full.shape[1] > 1 and \
                _fits(full.T, checked[position], atol, rtol) and \
                not _fits(full, checked[position], atol, rtol):
            words[position] = "analytical is the transpose of numerical at every checked element"
            continue
        axes = _wrong_axis(full, checked[position], output_gradients, atol, rtol)
        if axes is not None:
            words[position] = (f"reduced over the wrong axis: the backward sums the output's "
                               f"gradient over axis {axes[0]}, the true gradient sums it over "
                               f"axis {axes[1]}")
            continue
        _, values, numerical = checked[position]
        text = explain_difference(np.asarray(values), np.asarray(numerical), atol, rtol,
                                  names=("analytical", "numerical"), entries="checked element")
        if text:
            words[position] = text
    return words


def _wrong_axis(gradient: np.ndarray, checked: tuple, output_gradients, atol: float,
                rtol: float) -> tuple | None:
    """(axis the backward summed over, axis the true gradient sums over) when the backward's
    whole gradient is an output's gradient summed over one axis and every checked numerical
    value is the same summed over another; else None."""
    for given in output_gradients:
        sums = {}
        for axis in range(given.ndim):
            for kept in (False, True):
                total = given.sum(axis=axis, keepdims=kept)
                if total.shape == gradient.shape:
                    sums[axis] = total
        used = [axis for axis, total in sums.items()
                if np.allclose(gradient, total, atol=atol, rtol=rtol)]
        right = [axis for axis, total in sums.items() if _fits(total, checked, atol, rtol)]
        if len(used) == 1 and len(right) == 1 and used[0] != right[0]:
            return used[0], right[0]
    return None


def _fits(gradient: np.ndarray, checked: tuple, atol: float, rtol: float) -> bool:
    """Whether `gradient`, read at the checked elements, matches their numerical values."""
    indices, _, numerical = checked
    taken = np.array([gradient[tuple(index)] for index in indices], dtype=np.float64)
    numerical = np.asarray(numerical, dtype=np.float64)
    return bool(np.all(np.abs(taken - numerical)
                       <= atol + rtol * np.maximum(np.abs(taken), np.abs(numerical))))


def _written_backward(function):
    """The `backward` its author wrote: under a decorator such as `@once_differentiable`
    (functools.wraps keeps it as `__wrapped__`), not the decorator's wrapper."""
    backward = getattr(function, "backward", None)
    return inspect.unwrap(backward) if callable(backward) else backward
