"""`channel_shuffle`: the channels of (N, C, *) split into `groups` groups and interleaved
(ShuffleNet's shuffle), a reshape, a transpose and a reshape, so its gradient is theirs.
`OPS` registers it for the registry's gradchecks and PyTorch comparison."""
from __future__ import annotations

from ..ops.registry import OpInfo, Sample
from ..ops.samples import values
from ..tensor import Tensor

__all__ = ["channel_shuffle", "native_channel_shuffle"]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Channel c = g * (C / groups) + k of the input becomes channel k * groups + g.

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.channel_shuffle(genesis.arange(4.).reshape(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input of shape "
                           f"{tuple(input.shape)}")
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(f"channel_shuffle: the number of groups to divide channels in must be "
                           f"a positive integer, got groups={groups!r}")
    channels = input.shape[1]
    if channels % groups:
        raise RuntimeError(f"channel_shuffle: number of channels must be divisible by groups. "
                           f"Got {channels} channels and {groups} groups.")
    batch, rest = input.shape[0], tuple(input.shape[2:])
    grouped = input.reshape(batch, groups, channels // groups, *rest)
    return grouped.transpose(1, 2).reshape(batch, channels, *rest)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """`channel_shuffle` (PyTorch's native kernel of it; one implementation here).

    >>> import genesis
    >>> import genesis.nn.functional as F
    >>> F.native_channel_shuffle(genesis.arange(4.).reshape(1, 4, 1), 2).flatten().tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    return channel_shuffle(input, groups)


def _channel_shuffle_samples(rng):
    return [
        Sample((values(rng, (2, 6, 3)), 3), note="1-D spatial"),
        Sample((values(rng, (2, 4, 3, 2)), 2), note="2-D spatial"),
        Sample((values(rng, (1, 6, 2, 2, 2)), 6), note="one channel per group"),
        Sample((values(rng, (2, 4, 3)), 2), layout="transposed", note="transposed"),
        Sample((values(rng, (2, 4, 3)), 1), layout="strided", note="one group, strided"),
    ]


OPS = [
    OpInfo("channel_shuffle", channel_shuffle, _channel_shuffle_samples,
           torch=lambda torch, *args: torch.nn.functional.channel_shuffle(*args)),
]
