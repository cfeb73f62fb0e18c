"""How the process that runs a traced script takes the signals that stop it.

- `StopSignals`: while the script runs, SIGTERM and SIGHUP (a job scheduler's stop, a
  closed terminal) first call `before_ending()`, then end the process by that signal, as
  they would have: its exit status still says it was killed. Only signals whose handling is
  the default are taken: a script that sets its own handler keeps it (and wins, set later),
  and a signal the process was started ignoring (`nohup`) stays ignored.
- `take_interrupts_once()`: for the rest of the process, SIGINT raises KeyboardInterrupt as
  python's own handler does, but a second SIGINT within `DUPLICATE_S` of the one before is
  that one come again, and is dropped. A whole process group signalled without a terminal
  reaches the script's process twice, directly and through `genesis trace` (which passes on
  a SIGINT no terminal sent, see `genesis_cli.supervise`), possibly after the script ended;
  taken twice, the second would break into the script's cleanup or the trace's writing.

A process the script forks (a DataLoader's or a Pool's workers) gets the default handling of
these signals back as it starts, as it would have had: they are held back across the fork
(a Python handler would lose one that came before the child's interpreter was ready, and
the worker would not stop), so they are delivered there with their default action.

>>> import os, signal
>>> with StopSignals(lambda: print("written")) as stops:
...     signal.getsignal(signal.SIGTERM) == stops.handle
True
>>> signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
True
"""
from __future__ import annotations

import os
import signal
import threading
import time

__all__ = ["StopSignals", "take_interrupts_once", "DUPLICATE_S"]

STOPS = (signal.SIGTERM, signal.SIGHUP)
DUPLICATE_S = 1.0  # a SIGINT this soon after another is the same one, come twice


class StopSignals:
    """A context: SIGTERM/SIGHUP call `before_ending` in this process, then end it."""

    def __init__(self, before_ending):
        self.before_ending = before_ending
        self.taken = []  # the signal numbers it set its handler for
        self.pid = os.getpid()

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():  # (handlers can't be set elsewhere)
            for number in STOPS:
                if signal.getsignal(number) is signal.SIG_DFL:
                    signal.signal(number, self.handle)
                    self.taken.append(number)
        if self.taken:
            _stops.append(self)
        return self

    def __exit__(self, *exc_info) -> None:
        if self in _stops:
            _stops.remove(self)
        for number in self._ours():  # (not the script's own)
            signal.signal(number, signal.SIG_DFL)

    def handle(self, number: int, frame) -> None:
        """The handler: `before_ending()` (in this process only, not in a forked copy), then
        the default action of `number`."""
        try:
            if os.getpid() == self.pid:
                self.before_ending()
        finally:
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)

    def _ours(self) -> list:
        return [number for number in self.taken if signal.getsignal(number) == self.handle]


class _InterruptOnce:
    """The SIGINT handler of `take_interrupts_once`."""

    def __init__(self):
        self.last = None  # when the last SIGINT came (time.monotonic)

    def __call__(self, number: int, frame) -> None:
        now = time.monotonic()
        again = self.last is not None and now - self.last < DUPLICATE_S
        self.last = now
        if not again:
            raise KeyboardInterrupt


_interrupt_once = _InterruptOnce()


def take_interrupts_once() -> None:
    """From now on in this process (its main thread), a SIGINT that comes twice at once is
    one KeyboardInterrupt; left as it is where something set its own SIGINT handling."""
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt_once)


_stops: list = []  # the StopSignals in force (one, while a script runs)
_held = threading.local()  # the forking thread's signal mask before the fork


def _ours() -> list:
    numbers = [number for stops in _stops for number in stops._ours()]
    if signal.getsignal(signal.SIGINT) is _interrupt_once:
        numbers.append(signal.SIGINT)
    return numbers


def _hold_back() -> None:
    ours = _ours()
    _held.mask = signal.pthread_sigmask(signal.SIG_BLOCK, ours) if ours else None


def _release_in_parent() -> None:
    if getattr(_held, "mask", None) is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, _held.mask)


def _default_in_child() -> None:
    for number in _ours():
        signal.signal(number, signal.default_int_handler if number == signal.SIGINT
                      else signal.SIG_DFL)
    _stops.clear()
    _release_in_parent()  # the mask as it was: a signal held back is delivered now


os.register_at_fork(before=_hold_back, after_in_parent=_release_in_parent,
                    after_in_child=_default_in_child)
