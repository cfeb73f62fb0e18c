"""`Windows`: where the windows of a sliding-window op (convolution, unfold, pooling) sit.

>>> geometry = Windows(kernel=(2,), stride=(2,), dilation=(1,), padding=((0, 0),))
>>> geometry.output_size((6,)), geometry.count
((3,), 2)
"""
from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

__all__ = ["Windows"]


@dataclass(frozen=True)
class Windows:
    """Where the windows of a sliding-window op sit, per spatial dim.

    `padding` holds (before, after) pairs; the windows start at the first
    padded position and step by `stride`, as many as fit entirely.
    """

    kernel: tuple
    stride: tuple
    dilation: tuple
    padding: tuple

    @property
    def span(self) -> tuple:
        """Extent of each dilated window."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilation))

    @property
    def count(self) -> int:
        """Positions in one window."""
        return math.prod(self.kernel)

    @functools.lru_cache(maxsize=256)  # noqa: B019
    def output_size(self, spatial: tuple) -> tuple:
        return tuple((size + before + after - span) // stride + 1 for size, (before, after), span,
                     stride in zip(spatial, self.padding, self.span, self.stride))

    def padded_size(self, spatial: tuple) -> tuple:
        return tuple(size + before + after for size, (before, after) in zip(spatial, self.padding))

    def offsets(self):
        """Each position inside a window: (flat number, its index per spatial dim)."""
        return enumerate(itertools.product(*(range(k) for k in self.kernel)))

    @functools.lru_cache(maxsize=256)  # noqa: B019 (a frozen geometry: a few per model)
    def inside(self, spatial: tuple, out_size: tuple) -> tuple:
        """For each position inside a window: (its number, the input cells it covers as a key
        into the unpadded input, the windows whose cell that is as a key into the windows'
        arrays). Cells in the padding are left out; a position with none inside is skipped.

        >>> geometry = Windows(kernel=(3,), stride=(1,), dilation=(1,), padding=((1, 1),))
        >>> geometry.inside((4,), (4,))[0]  # window 0's first cell is padding
        (0, (Ellipsis, slice(0, 3, 1)), (Ellipsis, slice(1, 4, None)))
        """
        return tuple(self._inside(tuple(spatial), tuple(out_size)))

    def _inside(self, spatial: tuple, out_size: tuple):
        for number, offset in self.offsets():
            input_key, window_key = [Ellipsis], [Ellipsis]
            for o, d, s, n, (before, _), size in zip(offset, self.dilation, self.stride, out_size,
                                                     self.padding, spatial):
                first = o * d - before  # the input cell of window 0 (negative: padding)
                low = max(0, -(first // s))  # the first window whose cell is inside
                high = min(n - 1, (size - 1 - first) // s)  # the last
                if high < low:
                    break
                input_key.append(slice(first + s * low, first + s * high + 1, s))
                window_key.append(slice(low, high + 1))
            else:
                yield number, tuple(input_key), tuple(window_key)

    def slices(self, offset: tuple, out_size: tuple) -> tuple:
        """Slices of the padded input that hold position `offset` of every window."""
        return tuple(slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in
                     zip(offset, self.dilation, self.stride, out_size))
