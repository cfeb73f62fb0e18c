"""Anomaly detection: find the line of code where a NaN or Inf was born.

While on, every op records where it was called from (the user's file, line
and code; errors raised inside a backward then name that line), and:

- `check_nan`: a backward that returns NaN/Inf raises `AnomalyError` naming
  the node (e.g. `LogBackward`), the input, the forward line that created the
  node, and the chain of nodes the gradient flowed through from the root.
- `check_forward` (beyond PyTorch; with `check_nan` only, as `check_nan=False` turns every
  NaN/Inf check off, leaving the source lines): every op's non-finite outputs are followed
  (`genesis.autograd.nonfinite`). The first op whose output holds NaN although
  none of its inputs did raises `AnomalyError` right there, with its source line
  (and, for 0 * inf, where the Inf came from): a mode that raises cannot wait to
  see whether the NaN does harm, as `genesis trace` does. An Inf born in forward
  raises only once it does harm: when backward starts from a loss holding it
  (with `check_nan`), or a NaN is born from it. An intended `-inf` mask that
  softmax consumes never raises. Turn it off with `check_forward=False` if an op
  is meant to produce NaN (`where(x > 0, x.log(), 0)`).

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
import sys
import warnings
from dataclasses import dataclass

from ..listeners import Listeners
from ..tensor import cut_listeners
from . import engine, function
from .grad_mode import grad_state
from .nonfinite import NonFiniteTracker
from .nonfinite_report import Defect, Wording
from .source import SourceLocation

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "AnomalyError"]


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
    """The `check_nan` flag of the anomaly mode last set: whether anomaly detection, when
    on, checks backward results for NaN/Inf. As PyTorch's, True outside anomaly mode (the
    default) and False only after check_nan=False.

    >>> with detect_anomaly(check_nan=False):
    ...     is_anomaly_check_nan_enabled()
    False
    >>> is_anomaly_check_nan_enabled()
    True
    """
    return _mode.check_nan


def _apply(mode: _Mode) -> None:
    """Make `mode` current: register exactly the hooks it needs, remove the others."""
    global _mode
    _mode = mode
    _set_registered(function.observers, _record_forward, mode.enabled)
    _set_registered(engine.node_checkers, _check_backward, mode.enabled and mode.check_nan)
    _set_registered(engine.failure_listeners, _report_failure, mode.enabled)
    _set_registered(cut_listeners, _tracker.aliased, mode.enabled and mode.check_nan)


def _set_registered(hooks: Listeners, hook, wanted: bool) -> None:
    if wanted and hook not in hooks:
        hooks.add(hook)
    elif not wanted:
        hooks.discard(hook)


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
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)
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


# -- raise at the first defect the shared rule finds -------------------------------------

def _raise(defect: Defect):
    raise AnomalyError(defect.message)


_tracker = NonFiniteTracker(_raise, received_non_finite=True, nan_at_birth=True,
                            gradient_at_birth=True, wording=Wording(
    forward_advice="If non-finite values are expected here, pass check_forward=False to detect_anomaly.",
    backward_advice="If non-finite gradients are expected here, pass check_nan=False to detect_anomaly.",
    unknown_source="(unknown: the op ran before anomaly detection was turned on, or inside backward)"))


def _record_forward(node, args, outputs) -> None:
    node._source = SourceLocation.capture()
    if grad_state.in_backward:  # a node of a gradient's graph: note whose backward made it
        parent = engine.running_node()
        if parent is not None:
            node.__dict__["_anomaly_parent"] = parent
    elif _mode.check_forward and _mode.check_nan:
        _tracker.forward(node, args, outputs)


_record_forward.sees_backward = True  # (function.OpObserver)


def _report_failure(node, error: BaseException) -> None:
    """As PyTorch does when a backward fails in anomaly mode: warn with the forward call that
    made the failing node and, for a node made inside a backward, the calls behind that one
    (printed to stderr when warnings are errors, so that the error itself comes through)."""
    for text in _failure_texts(node):
        try:
            warnings.warn(text, UserWarning, stacklevel=2)
        except Warning:
            print(f"UserWarning: {text}", file=sys.stderr)


def _failure_texts(node) -> list:
    texts = [f"Error detected in {node.name()}. " + _forward_call(node, "caused the error")]
    seen = {node}
    parent = node.__dict__.get("_anomaly_parent")
    while parent is not None and parent not in seen:
        seen.add(parent)
        texts.append(f"Previous calculation was induced by {type(parent).__name__}. "
                     + _forward_call(parent, "induced the previous calculation"))
        parent = parent.__dict__.get("_anomaly_parent")
    return texts


def _forward_call(node, what: str) -> str:
    source = node._source
    if source is None:
        return ("No forward pass information available. Enable detect anomaly during forward "
                "pass for more information.")
    return f"Traceback of forward call that {what}:\n{source.describe()}"


def _check_backward(node, grad_outputs, grad_inputs, flowed_from) -> None:
    _tracker.backward(node, grad_outputs, grad_inputs, flowed_from)


_check_backward.keeps_gradients = False  # counts NaN/Inf during the call (engine.NodeChecker)
