"""`ChannelShuffle`: interleave the channels of `groups` groups (ShuffleNet)."""
from __future__ import annotations

from ..tensor import Tensor
from ._channel_shuffle import channel_shuffle
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Split the C channels of (N, C, *) into `groups` groups and interleave them.

    >>> import genesis
    >>> genesis.nn.ChannelShuffle(2)(genesis.arange(4.).reshape(1, 4, 1)).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
