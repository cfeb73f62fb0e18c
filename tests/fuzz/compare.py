"""What the fuzz tests share: one hypothesis profile, and running a call on genesis and on
PyTorch to compare what each raises.

The rule checked everywhere: where genesis refuses a call, the error is an instance of
the built-in exception type PyTorch raises for the same call (TypeError, ValueError,
RuntimeError, IndexError, ...), so `except` clauses written for PyTorch catch it, and its
message names the culprit. Without PyTorch the comparison is skipped and the rest of the
test still runs. Where genesis deliberately differs from PyTorch, the test says so and why.
"""
from __future__ import annotations

import builtins
import os
import signal
from contextlib import contextmanager

from hypothesis import HealthCheck, settings

try:
    import torch
except ImportError:  # the comparisons are skipped, the genesis checks still run
    torch = None

# Reproducible in CI (the same examples every run), no example database written, no
# per-example deadline (the box is shared and noisy); few examples, so the whole folder
# runs in well under 30 s on 2 cores. GENESIS_FUZZ_EXAMPLES=2000 fuzzes deeper on demand.
FUZZ = settings(max_examples=int(os.environ.get("GENESIS_FUZZ_EXAMPLES", "40")), deadline=None,
                derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


class Outcome:
    """What a call did: its result, or the exception it raised."""

    def __init__(self, call):
        self.result = self.error = None
        try:
            self.result = call()
        except Exception as error:  # whatever it raises is the outcome
            self.error = error

    @property
    def raised(self) -> bool:
        return self.error is not None

    def describe(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {self.error}"
        shape = getattr(self.result, "shape", None)
        if shape is not None:  # never the repr: a broadcast view may be huge
            return f"returned a {type(self.result).__name__} of shape {tuple(shape)}"
        return f"returned {self.result!r:.80}"


def message_of(error: BaseException) -> str:
    """The text of an error (str() of a KeyError is the repr of its message)."""
    return str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)


def builtin_type(error: BaseException) -> type:
    """The nearest built-in exception class of `error` (torch raises its own subclasses,
    such as torch.OutOfMemoryError, of built-in ones)."""
    for cls in type(error).__mro__:
        if getattr(builtins, cls.__name__, None) is cls:
            return cls
    return Exception


def genesis_error(call, *, culprits=(), like=None) -> BaseException:
    """The exception `call()` raises (it must raise). Its message must contain each of
    `culprits`; with `like` (the same call on PyTorch) and PyTorch importable, PyTorch must
    raise too, and genesis's error must be an instance of PyTorch's built-in type."""
    ours = Outcome(call)
    assert ours.raised, f"expected an error, but the call {ours.describe()}"
    message = message_of(ours.error)
    for culprit in culprits:
        assert str(culprit) in message, f"{culprit!r} is not named in: {message}"
    if like is not None and torch is not None:
        theirs = Outcome(like)
        assert theirs.raised, (f"genesis raised {type(ours.error).__name__}: {message}, but "
                               f"PyTorch {theirs.describe()}")
        expected = builtin_type(theirs.error)
        assert isinstance(ours.error, expected), (
            f"PyTorch raises {expected.__name__} ({theirs.error}); genesis raised "
            f"{type(ours.error).__name__}: {message}")
    return ours.error


def same_outcome(ours_call, theirs_call) -> Outcome:
    """Run both; both must succeed or both must raise, with genesis's error an instance of
    PyTorch's built-in type. Without PyTorch, only genesis's outcome is returned."""
    ours = Outcome(ours_call)
    if torch is None:
        return ours
    theirs = Outcome(theirs_call)
    assert ours.raised == theirs.raised, f"genesis {ours.describe()}, but PyTorch {theirs.describe()}"
    if ours.raised:
        expected = builtin_type(theirs.error)
        assert isinstance(ours.error, expected), (
            f"PyTorch raises {expected.__name__} ({theirs.error}); genesis "
            f"{ours.describe()}")
    return ours


@contextmanager
def finishes(seconds: int = 20):
    """Fail (instead of hanging the run) if the block has not finished after `seconds`: a
    guard for code that used to loop forever, not a timing assertion."""
    def give_up(*_):
        raise AssertionError(f"still running after {seconds} s: an endless loop?")

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
