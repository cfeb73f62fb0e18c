"""`StopSignals`: while a traced script runs, SIGTERM and SIGHUP (a job scheduler's stop, a
closed terminal) first call `before_ending()`, then end the process by that signal, as they
would have: its exit status still says it was killed. SIGINT raises KeyboardInterrupt as
python's own handler does, once: a second SIGINT within `DUPLICATE_S` of the first is the
same interrupt, which reached this process twice (a whole process group signalled without
a terminal: `genesis trace`, in the group, passes on what it gets), and is dropped, so the
script's cleanup and the trace's writing are not interrupted again.

Only signals whose handling is the default are taken: a script that sets its own handler
keeps it (and wins, set later), and a signal the process was started ignoring (`nohup`)
stays ignored. A process the script forks (a DataLoader's or a Pool's workers) gets the
default handling back as it starts, as it would have had: the signals are held back across
the fork (a Python handler would lose one that came before the child's interpreter was
ready, and the worker would not stop), so they are delivered there with their default
action, at once.

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

__all__ = ["StopSignals", "DUPLICATE_S"]

# each signal taken, and the handling that is its default
DEFAULTS = {signal.SIGTERM: signal.SIG_DFL, signal.SIGHUP: signal.SIG_DFL,
            signal.SIGINT: signal.default_int_handler}
DUPLICATE_S = 0.25  # a SIGINT this soon after another is the same one, come twice


class StopSignals:
    """A context: SIGTERM/SIGHUP call `before_ending` in this process, then end it."""

    def __init__(self, before_ending):
        self.before_ending = before_ending
        self.taken = {}  # signal number -> our handler
        self.pid = os.getpid()
        self.interrupted_at = None  # when the last SIGINT came (time.monotonic)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():  # (handlers can't be set elsewhere)
            for number, default in DEFAULTS.items():
                if signal.getsignal(number) is default:
                    ours = self.interrupt if number == signal.SIGINT else self.handle
                    signal.signal(number, ours)
                    self.taken[number] = ours
        if self.taken:
            _active.append(self)
        return self

    def __exit__(self, *exc_info) -> None:
        if self in _active:
            _active.remove(self)
        for number in self._ours():  # (not the script's own)
            signal.signal(number, DEFAULTS[number])

    def handle(self, number: int, frame) -> None:
        """The handler: `before_ending()` (in this process only, not in a forked copy), then
        the default action of `number`."""
        try:
            if os.getpid() == self.pid:
                self.before_ending()
        finally:
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)

    def interrupt(self, number: int, frame) -> None:
        """The SIGINT handler: KeyboardInterrupt, as python's, unless it is the last one
        come again."""
        now = time.monotonic()
        again = self.interrupted_at is not None and now - self.interrupted_at < DUPLICATE_S
        self.interrupted_at = now
        if not again:
            raise KeyboardInterrupt

    def _ours(self) -> list:
        return [number for number, ours in self.taken.items() if signal.getsignal(number) == ours]


_active: list = []  # the StopSignals in force (one, while a script runs)
_held = threading.local()  # the forking thread's signal mask before the fork


def _hold_back() -> None:
    ours = [number for stops in _active for number in stops._ours()]
    _held.mask = signal.pthread_sigmask(signal.SIG_BLOCK, ours) if ours else None


def _release_in_parent() -> None:
    if getattr(_held, "mask", None) is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, _held.mask)


def _default_in_child() -> None:
    for stops in _active:
        for number in stops._ours():
            signal.signal(number, DEFAULTS[number])
    _active.clear()
    _release_in_parent()  # the mask as it was: a signal held back ends this process now


os.register_at_fork(before=_hold_back, after_in_parent=_release_in_parent,
                    after_in_child=_default_in_child)
