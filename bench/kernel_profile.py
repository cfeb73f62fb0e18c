"""Where a GPU step's time goes: which kernels run, how long, and how long the GPU sits idle.

PyTorch's profiler records kernels through CUPTI, which sees every kernel the process
launches on the device, CuPy's (genesis) as well as PyTorch's, so one tool measures both
frameworks the same way. Alongside the kernel table it reports how busy the GPU was over
the profiled steps (the union of kernel and copy intervals over the wall time): a step at
20 % busy is paying for the host (Python, launches), not for kernels, and faster kernels
would not help it. The host's own time is shown by cProfile's top functions.

Used by `python bench/cuda_benchmarks.py --profile`; not a benchmark on its own.
"""
from __future__ import annotations

import cProfile
import io
import pstats
import time


def kernel_table(torch, step, synchronize, steps: int = 5, top: int = 10) -> str:
    """Profile `steps` calls of `step` and return a table of the `top` kernels by time."""
    from torch.profiler import ProfilerActivity, profile

    step()
    synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as recorder:
        start = time.perf_counter()
        for _ in range(steps):
            step()
        synchronize()
        wall_us = (time.perf_counter() - start) * 1e6
    device_events = [event for event in recorder.events()
                     if event.device_type == torch.autograd.DeviceType.CUDA]
    if not device_events:
        return "  (the profiler recorded no device activity: CUPTI unavailable here)"
    by_name: dict[str, list] = {}
    for event in device_events:
        totals = by_name.setdefault(event.name, [0.0, 0])
        totals[0] += event.time_range.elapsed_us()
        totals[1] += 1
    busy_us = _union_us(sorted((event.time_range.start, event.time_range.end)
                               for event in device_events))
    kernel_us = sum(total for total, _ in by_name.values())
    lines = [f"  GPU busy {busy_us / steps / 1e3:.3f} ms of {wall_us / steps / 1e3:.3f} ms "
             f"per step ({100 * busy_us / wall_us:.0f} %), "
             f"{len(device_events) / steps:.0f} kernels and copies per step",
             f"  {'share':>6} {'ms/step':>8} {'calls/step':>10}  kernel"]
    ranked = sorted(by_name.items(), key=lambda item: -item[1][0])
    for name, (total, count) in ranked[:top]:
        lines.append(f"  {100 * total / kernel_us:5.1f}% {total / steps / 1e3:8.3f} "
                     f"{count / steps:10.1f}  {_short(name)}")
    return "\n".join(lines)


def host_table(step, synchronize, steps: int = 5, top: int = 12, save_to=None) -> str:
    """cProfile's `top` functions by own time over `steps` calls of `step` (host side);
    the whole profile is also saved to the file `save_to` when given (pstats format)."""
    step()
    synchronize()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        step()
    synchronize()
    profiler.disable()
    if save_to is not None:
        profiler.dump_stats(save_to)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(top)
    body = text.getvalue()
    table = body[body.find("   ncalls"):] if "   ncalls" in body else body
    return "\n".join("  " + line for line in table.rstrip().splitlines())


def _union_us(intervals) -> float:
    """Total length covered by sorted (start, end) intervals, overlaps counted once."""
    covered, current_start, current_end = 0.0, None, None
    for start, end in intervals:
        if current_end is None or start > current_end:
            if current_end is not None:
                covered += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None:
        covered += current_end - current_start
    return covered


def _short(name: str, width: int = 90) -> str:
    return name if len(name) <= width else name[:width - 3] + "..."
