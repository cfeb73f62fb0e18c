"""Which steps of a run the costlier watches sample (update ratios, value distributions,
activation statistics): every one of the first few, then one in ten, one in a hundred
from step 10,000 on, one in a thousand from step 100,000 on, one in ten thousand from
1,000,000 on. From step 1,000 on that is 900 samples per decade of steps: the cost per
step falls as a run grows, and a late change is still sampled within a hundredth of its
step number.

>>> [step for step in range(60) if sampled(step)]
[0, 1, 2, 3, 10, 20, 30, 40, 50]
>>> sampled(12_345), sampled(12_300), sampled(1_234_000), sampled(1_230_000)
(False, True, False, True)
"""
from __future__ import annotations

__all__ = ["sampled", "FIRST"]

FIRST = 4  # steps sampled one by one at the start


def sampled(step: int) -> bool:
    """Whether `step` (a backward call, from 0) is one the sampling watches measure."""
    if step < FIRST:
        return True
    interval = 10 if step < 10_000 else 10 ** (len(str(step)) - 3)
    return step % interval == 0
