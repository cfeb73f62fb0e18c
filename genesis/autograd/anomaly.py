"""Anomaly detection: find the line of code where a NaN or Inf was born.

While on, every op records where it was called from (the user's file, line
and code; errors raised inside a backward then name that line), and:

- `check_nan`: a backward that returns NaN/Inf raises `AnomalyError` naming
  the node (e.g. `LogBackward`), the input, the forward line that created the
  node, and the chain of nodes the gradient flowed through from the root.
- `check_forward` (beyond PyTorch): the first op whose output has NaN/Inf
  although all its inputs were finite raises `AnomalyError` right there, with
  its source line. Non-finite inputs (a deliberate `-inf` mask, say) are not
  flagged. Turn it off with `check_forward=False` if an op is meant to
  produce them.

Off by default, and then free: no observer is registered, so no frame is
inspected. Works as a context manager, a decorator, or (with
`set_detect_anomaly`) a plain call; nesting and exceptions restore the
previous state.

>>> import genesis, numpy
>>> x = genesis.tensor([0.0, 1.0], requires_grad=True)
>>> with detect_anomaly(), numpy.errstate(invalid="ignore"):
...     y = x / x
Traceback (most recent call last):
  ...
genesis.autograd.anomaly.AnomalyError: anomaly detected in forward: Div produced NaN from finite inputs...
This is where the non-finite value was born:
...
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

from ..tensor import Tensor
from . import engine, function
from .source import SourceLocation

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "AnomalyError", "forward_anomaly", "backward_anomaly",
           "forward_message", "backward_message", "input_shapes", "Census", "all_finite"]


class AnomalyError(RuntimeError):
    """A NaN or Inf appeared: the message says where (op, source line, gradient chain)."""


@dataclass(frozen=True)
class _Mode:
    enabled: bool = False
    check_nan: bool = True
    check_forward: bool = True


_mode = _Mode()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on.

    >>> is_anomaly_enabled()
    False
    """
    return _mode.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward results for NaN/Inf.

    >>> with detect_anomaly():
    ...     is_anomaly_check_nan_enabled()
    True
    """
    return _mode.enabled and _mode.check_nan


def _apply(mode: _Mode) -> None:
    """Make `mode` current: register exactly the hooks it needs, remove the others."""
    global _mode
    _mode = mode
    _set_registered(function.observers, _record_forward, mode.enabled)
    _set_registered(engine.node_checkers, _check_backward, mode.enabled and mode.check_nan)


def _set_registered(hooks: list, hook, wanted: bool) -> None:
    if wanted and hook not in hooks:
        hooks.append(hook)
    elif not wanted and hook in hooks:
        hooks.remove(hook)


class _ModeContext:
    """Base of the two public switches: restores the previous mode on exit; a decorator too."""

    _target: _Mode

    def __enter__(self):
        self._previous = _mode
        _apply(self._target)
        return self

    def __exit__(self, *exc_info):
        _apply(self._previous)
        return False

    def __call__(self, func):
        target = self._target

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            previous = _mode
            _apply(target)
            try:
                return func(*args, **kwargs)
            finally:
                _apply(previous)

        return wrapper


class detect_anomaly(_ModeContext):
    """Turn anomaly detection on inside a `with` block or a decorated function.

    >>> import genesis
    >>> with genesis.autograd.detect_anomaly():
    ...     genesis.autograd.is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan: bool = True, check_forward: bool = True):
        self._target = _Mode(True, bool(check_nan), bool(check_forward))


class set_detect_anomaly(_ModeContext):
    """Turn anomaly detection on or off; takes effect at once, so it works as a plain call.
    As a context manager, the previous mode comes back on exit.

    >>> import genesis
    >>> with genesis.autograd.set_detect_anomaly(True, check_nan=False):
    ...     genesis.autograd.is_anomaly_check_nan_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True, check_forward: bool = True):
        self._previous = _mode
        self._target = _Mode(bool(mode), bool(check_nan), bool(check_forward))
        _apply(self._target)

    def __enter__(self):
        return self

    def __call__(self, func):
        raise TypeError("set_detect_anomaly is not a decorator; use @genesis.autograd.detect_anomaly()")


# -- forward: remember the call site; catch the op where a NaN/Inf is born ----------

def _record_forward(node, args, outputs) -> None:
    node._source = SourceLocation.capture()
    if _mode.check_forward:
        message = forward_anomaly(node, args, outputs)
        if message is not None:
            raise AnomalyError(message)


def forward_anomaly(node, args, outputs) -> str | None:
    """A report if an output of this op call is NaN/Inf although all its inputs are finite
    (the place a non-finite value is born), else None. Used by anomaly mode and by
    `genesis trace`, which records it instead of raising."""
    for output_nr, output in enumerate(outputs):
        if output is not None and not all_finite(output) and _inputs_finite(args):
            return forward_message(node, input_shapes(args), Census.of(output), output_nr,
                                   len(outputs))
    return None


class Census(NamedTuple):
    """How many of an array's `size` entries are NaN and how many are Inf."""

    size: int
    nan: int
    inf: int

    @classmethod
    def of(cls, tensor: Tensor) -> "Census":
        xp, data = tensor._device.xp, tensor._data
        if data.dtype.kind != "f":
            return cls(data.size, 0, 0)
        return cls(data.size, int(xp.isnan(data).sum()), int(xp.isinf(data).sum()))

    @property
    def finite(self) -> bool:
        return not (self.nan or self.inf)

    def kinds(self) -> str:
        """ "NaN", "Inf" or "NaN and Inf": what the non-finite entries are."""
        return " and ".join(kind for kind, count in (("NaN", self.nan), ("Inf", self.inf)) if count)


def all_finite(tensor: Tensor) -> bool:
    """Whether every entry of `tensor` is finite (always, for a non-float one)."""
    data = tensor._data
    return data.dtype.kind != "f" or bool(tensor._device.xp.isfinite(data).all())


def _inputs_finite(args) -> bool:
    for arg in args:
        if isinstance(arg, Tensor):
            if not all_finite(arg):
                return False
        elif isinstance(arg, float):
            if not math.isfinite(arg):
                return False
        elif isinstance(arg, (list, tuple)) and not _inputs_finite(arg):
            return False
    return True


def input_shapes(args) -> str:
    """The shapes and dtypes of an op call's tensor arguments, for a report."""
    return ", ".join(f"{tuple(arg.shape)} {arg.dtype.name}" for arg in args if isinstance(arg, Tensor))


def forward_message(node, shapes: str, census: Census, output_nr: int, outputs: int) -> str:
    """The report of a NaN/Inf born in the forward of `node`'s op, in output `output_nr` of
    `outputs`, whose entries `census` counts; `shapes`: its inputs' (`input_shapes`)."""
    name = type(node).__name__.removesuffix("Backward")
    which = f" (output {output_nr})" if outputs > 1 else ""
    lines = [f"anomaly detected in forward: {name} produced {census.kinds()} from "
             f"finite inputs{which}: {census.nan + census.inf} of {census.size} values",
             "This is where the non-finite value was born:",
             _describe(node._source)]
    if shapes:
        lines.append(f"inputs: {shapes}")
    lines.append("If non-finite values are expected here, pass check_forward=False to detect_anomaly.")
    return "\n".join(lines)


# -- backward: catch the node whose backward returns NaN/Inf ----------------------------

def _check_backward(node, grad_outputs, grad_inputs, flowed_from) -> None:
    message = backward_anomaly(node, grad_outputs, grad_inputs, flowed_from)
    if message is not None:
        raise AnomalyError(message)


def backward_anomaly(node, grad_outputs, grad_inputs, flowed_from, *, born_only=False) -> str | None:
    """A report if this node's backward returned a NaN/Inf gradient, else None. With
    `born_only`, only when the gradient it received was finite (so this backward made it)."""
    for index, gradient in enumerate(grad_inputs):
        if isinstance(gradient, Tensor) and not all_finite(gradient):
            incoming = all(g is None or all_finite(g) for g in grad_outputs)
            if born_only and not incoming:
                return None
            return backward_message(node, incoming, index, Census.of(gradient), flowed_from)
    return None


def backward_message(node, incoming_finite: bool, index: int, census: Census,
                     flowed_from) -> str:
    """The report of a NaN/Inf in the gradient `node`'s backward returned for input `index`
    (entries counted by `census`); `incoming_finite`: whether the gradient it received was."""
    name = type(node).__name__
    origin = "the gradient it received was finite, so this backward produced it" \
        if incoming_finite else "the gradient it received was already non-finite"
    lines = [f"anomaly detected in backward: {name} returned {census.kinds()} in its "
             f"gradient for input {index}: {census.nan + census.inf} of {census.size} "
             f"values ({origin})",
             f"The forward call that created {name}:",
             _describe(node._source),
             "The gradient flowed from the root through:"]
    lines.extend(f"  {step}" for step in _chain(node, flowed_from))
    lines.append("If non-finite gradients are expected here, pass check_nan=False to detect_anomaly.")
    return "\n".join(lines)


def _chain(node, flowed_from) -> list:
    """The nodes from the root to `node`, each with the line of its forward call."""
    path = [node]
    while path[-1] in flowed_from and len(path) <= len(flowed_from):
        path.append(flowed_from[path[-1]])
    steps = []
    previous = None
    for step in reversed(path):
        source = step._source
        if source is None:
            where = ""
        elif previous is not None and str(source) == str(previous):
            where = "  (same line)"
        else:
            where = f"  ({source}: {source.code})"
        previous = source
        steps.append(f"{type(step).__name__}{where}")
    return steps


def _describe(source) -> str:
    if source is None:
        return "  (unknown: the op ran before anomaly detection was turned on, or inside backward)"
    return source.describe()
