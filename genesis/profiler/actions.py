"""What a profiler watches (`ProfilerActivity`) and what it does at each step
(`ProfilerAction`, given by a `schedule`), with PyTorch's names and semantics.

>>> step_actions = schedule(wait=1, warmup=1, active=2, repeat=1)
>>> [step_actions(step).name for step in range(5)]
['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
"""
from __future__ import annotations

import enum
import warnings
from typing import Callable

__all__ = ["ProfilerActivity", "ProfilerAction", "schedule", "supported_activities"]


class ProfilerActivity(enum.Enum):
    """The kinds of work a profiler can time: ops on the CPU, and on a CUDA GPU (timed
    with CUDA events around each op that runs on one)."""

    CPU = 0
    CUDA = 2
    XPU = 1
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during a step: nothing, warm up (ready, not recording),
    record, or record and then hand the trace to `on_trace_ready` at the step's end."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """The activities genesis profiles: the CPU, and CUDA (ops on a CuPy GPU are timed on
    the device; without one, nothing is timed there and the table says so)."""
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """The action of each step: skip `skip_first` steps, then cycles of `wait` steps doing
    nothing, `warmup` steps warming up and `active` steps recording (the last one
    RECORD_AND_SAVE), `repeat` cycles (0: until the profiler stops). A non-zero
    `skip_first_wait` leaves out the first cycle's wait. As torch.profiler.schedule.

    >>> [schedule(wait=0, warmup=1, active=1)(step).name for step in range(4)]
    ['WARMUP', 'RECORD_AND_SAVE', 'WARMUP', 'RECORD_AND_SAVE']
    >>> schedule(wait=0, warmup=0, active=0)
    Traceback (most recent call last):
    ...
    AssertionError: Invalid profiler schedule arguments. Got wait=0 (need >= 0), warmup=0 (need >= 0), active=0 (need > 0), repeat=0 (need >= 0), skip_first=0 (need >= 0).
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active

    def action_of(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        in_cycle = step % cycle
        if in_cycle < wait:
            return ProfilerAction.NONE
        if in_cycle < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if in_cycle < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action_of
