"""Padding layers: `F.pad` with fixed amounts, for 1, 2 or 3 trailing dims.

`padding` is one int (the same on every side) or a tuple of 2, 4 or 6 amounts, last dim
first, as `F.pad` takes them: (left, right[, top, bottom[, front, back]]).

>>> import genesis
>>> genesis.nn.ZeroPad2d((1, 0, 0, 1))(genesis.ones(1, 1, 2)).tolist()
[[[0.0, 1.0, 1.0], [0.0, 0.0, 0.0]]]
"""
from __future__ import annotations

from ..ops.pad import pad
from ..tensor import Tensor
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


class _Pad(Module):
    """Pads the last `dims` dims of its input by `padding` in `mode`."""

    dims = 1
    mode = "constant"

    def __init__(self, padding):
        super().__init__()
        expected = 2 * self.dims
        amounts = (padding,) * expected if isinstance(padding, int) else tuple(padding)
        if len(amounts) != expected or not all(isinstance(a, int) for a in amounts):
            raise ValueError(f"{type(self).__name__}: padding must be an int or {expected} ints "
                             f"(last dim first), got {padding!r}")
        self.padding = amounts

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return str(self.padding)


class _ConstantPad(_Pad):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _Reflection(_Pad):
    mode = "reflect"


class _Replication(_Pad):
    mode = "replicate"


class _Circular(_Pad):
    mode = "circular"


class ConstantPad1d(_ConstantPad):
    """`value` around the last dim."""

    dims = 1


class ConstantPad2d(_ConstantPad):
    """`value` around the last 2 dims."""

    dims = 2


class ConstantPad3d(_ConstantPad):
    """`value` around the last 3 dims."""

    dims = 3


class ZeroPad1d(_Pad):
    """Zeros around the last dim."""

    dims = 1


class ZeroPad2d(_Pad):
    """Zeros around the last 2 dims."""

    dims = 2


class ZeroPad3d(_Pad):
    """Zeros around the last 3 dims."""

    dims = 3


class ReflectionPad1d(_Reflection):
    """The last dim mirrored at their edges (edges not repeated)."""

    dims = 1


class ReflectionPad2d(_Reflection):
    """The last 2 dims mirrored at their edges (edges not repeated)."""

    dims = 2


class ReflectionPad3d(_Reflection):
    """The last 3 dims mirrored at their edges (edges not repeated)."""

    dims = 3


class ReplicationPad1d(_Replication):
    """The edge values of the last dim repeated."""

    dims = 1


class ReplicationPad2d(_Replication):
    """The edge values of the last 2 dims repeated."""

    dims = 2


class ReplicationPad3d(_Replication):
    """The edge values of the last 3 dims repeated."""

    dims = 3


class CircularPad1d(_Circular):
    """The last dim wrapped around."""

    dims = 1


class CircularPad2d(_Circular):
    """The last 2 dims wrapped around."""

    dims = 2


class CircularPad3d(_Circular):
    """The last 3 dims wrapped around."""

    dims = 3
