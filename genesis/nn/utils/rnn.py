"""Variable-length sequences for the recurrent layers, as `torch.nn.utils.rnn`.

A batch of sequences of different lengths is either *padded*, a (T, B, *) tensor
((B, T, *) with `batch_first`) whose rows past each sequence's length hold a padding value,
or *packed*, a `PackedSequence`: the steps of every sequence interleaved time step by time
step, longest sequence first, without padding. `batch_sizes[t]` is how many sequences are
still running at step t. `RNN`, `LSTM` and `GRU` take a PackedSequence and run each
sequence for its own length only, so the padding never reaches the hidden state.

Packing and padding are one gather each (`index_select`), so gradients flow back to the
padded input, and their nodes do not grow with the sequence length.

>>> import genesis
>>> from genesis.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
>>> padded = genesis.tensor([[1., 4.], [2., 5.], [3., 0.]])      # 3 steps, 2 sequences
>>> packed = pack_padded_sequence(padded, [3, 2])
>>> packed.data, packed.batch_sizes
(tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
>>> pad_packed_sequence(packed)
(tensor([[1., 4.],
        [2., 5.],
        [3., 0.]]), tensor([3, 2]))
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...creation import full, tensor
from ...dtypes import float16, float32, float64, int8, int16, int32, int64, uint8
from ...ops.join import cat
from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """Sequences of different lengths packed step by step (see the module docstring).

    `data` is (total steps, *), `batch_sizes` an int64 CPU tensor of the number of
    sequences at each step; `sorted_indices` (None when the batch came sorted by length)
    gives, for each packed row, the sequence's position in the original batch, and
    `unsorted_indices` is its inverse. Make one with `pack_padded_sequence` or
    `pack_sequence` rather than by hand.

    >>> import genesis
    >>> packed = pack_sequence([genesis.tensor([1., 2.]), genesis.tensor([3.])])
    >>> packed
    PackedSequence(data=tensor([1., 3., 2.]), batch_sizes=tensor([2, 1]), sorted_indices=None, unsorted_indices=None)
    >>> packed.double().data.dtype
    genesis.float64
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), as torch allows
            if not (isinstance(data, tuple | list) and len(data) == 2):
                raise TypeError("PackedSequence: give data and batch_sizes, or one pair of them")
            data, batch_sizes = data
        if not isinstance(batch_sizes, Tensor):
            raise TypeError(f"PackedSequence: batch_sizes must be a 1-D int64 CPU tensor, got "
                            f"{type(batch_sizes).__name__}")
        if batch_sizes.device.type != "cpu":
            raise ValueError("PackedSequence: batch_sizes should always be on CPU; instances of "
                             "PackedSequence should not be created manually: use "
                             "pack_padded_sequence or pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """The same sequences with `data` moved or cast as `Tensor.to` would (the indices
        follow it to its device; batch_sizes stays on the CPU)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        sorted_indices, unsorted_indices = (None if index is None else index.to(device)
                                            for index in (self.sorted_indices, self.unsorted_indices))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs) -> "PackedSequence":
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self) -> "PackedSequence":
        return self.to("cpu")

    def double(self) -> "PackedSequence":
        return self.to(dtype=float64)

    def float(self) -> "PackedSequence":
        return self.to(dtype=float32)

    def half(self) -> "PackedSequence":
        return self.to(dtype=float16)

    def long(self) -> "PackedSequence":
        return self.to(dtype=int64)

    def int(self) -> "PackedSequence":
        return self.to(dtype=int32)

    def short(self) -> "PackedSequence":
        return self.to(dtype=int16)

    def char(self) -> "PackedSequence":
        return self.to(dtype=int8)

    def byte(self) -> "PackedSequence":
        return self.to(dtype=uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()

    def pin_memory(self) -> "PackedSequence":
        return type(self)(self.data.pin_memory(), self.batch_sizes, self.sorted_indices,
                          self.unsorted_indices)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes `permutation` (None stays None).

    >>> import genesis
    >>> invert_permutation(genesis.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    order = permutation.detach().cpu().numpy()
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=order.dtype)
    return tensor(inverse, device=permutation.device)


# -- padded -> packed ------------------------------------------------------------------------
def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch: `input` is (T, B, *) ((B, T, *) with `batch_first`) and
    `lengths` the B sequence lengths (a list or a 1-D CPU int64 tensor). With
    `enforce_sorted` they must come longest first; otherwise the batch is sorted here and
    `sorted_indices` records how, so unpacking restores the original order.

    >>> import genesis
    >>> batch = genesis.tensor([[1., 2., 0.], [3., 4., 5.]])   # batch_first: 2 sequences
    >>> packed = pack_padded_sequence(batch, [2, 3], batch_first=True, enforce_sorted=False)
    >>> packed.data, packed.batch_sizes, packed.sorted_indices
    (tensor([3., 1., 4., 2., 5.]), tensor([2, 2, 1]), tensor([1, 0]))
    """
    counts = _lengths(lengths)
    if input.ndim < 2:
        raise ValueError(f"pack_padded_sequence: input must have a time and a batch dimension, "
                         f"got shape {tuple(input.shape)}")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if counts.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{counts.size} (batch_size={batch})")
    if enforce_sorted:
        if np.any(counts[1:] > counts[:-1]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                "to sidestep this requirement if you do not need ONNX exportability.")
        order = np.arange(batch)
    else:
        order = np.argsort(-counts, kind="stable")
        counts = counts[order]
    if batch and counts[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if batch and counts[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a sequence of length {counts[0]} is longer than "
                           f"the input's {steps} time steps (dim {1 if batch_first else 0} of "
                           f"shape {tuple(input.shape)})")
    batch_sizes = _batch_sizes(counts)
    times, rows = _packed_positions(batch_sizes)
    sequences = order[rows]
    flat = sequences * steps + times if batch_first else times * batch + sequences
    data = input.reshape((steps * batch,) + tuple(input.shape[2:])).index_select(
        0, tensor(flat, device=input.device))
    sorted_indices = None if enforce_sorted else tensor(order, device=input.device)
    return PackedSequence(data, tensor(batch_sizes), sorted_indices)


def _lengths(lengths) -> np.ndarray:
    """`lengths` as a 1-D int64 NumPy array (torch accepts a list or a 1-D CPU tensor)."""
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1 or lengths.device.type != "cpu":
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.ndim}D {lengths.device} {lengths.dtype} tensor")
        return lengths.detach().numpy().astype(np.int64)
    counts = np.asarray(lengths)
    if counts.ndim != 1 or counts.dtype.kind not in "iuf":
        raise RuntimeError(f"'lengths' argument should be a 1D list of integers or a 1D CPU "
                           f"int64 tensor, got {lengths!r}")
    return counts.astype(np.int64)


def _batch_sizes(sorted_lengths: np.ndarray) -> np.ndarray:
    """How many of the (longest first) sequences run at each step."""
    longest = int(sorted_lengths[0]) if sorted_lengths.size else 0
    return (sorted_lengths[None, :] > np.arange(longest)[:, None]).sum(1).astype(np.int64)


def _packed_positions(batch_sizes: np.ndarray) -> tuple:
    """(time step, sorted row) of each row of packed data, in packed order."""
    times = np.repeat(np.arange(batch_sizes.size), batch_sizes)
    starts = np.repeat(np.cumsum(batch_sizes) - batch_sizes, batch_sizes)
    return times, np.arange(times.size) - starts


# -- packed -> padded ------------------------------------------------------------------------
def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None) -> tuple:
    """Undo `pack_padded_sequence`: (padded, lengths), padded (T, B, *) ((B, T, *) with
    `batch_first`) in the original batch order, T the longest length or `total_length`,
    and lengths an int64 tensor.

    >>> import genesis
    >>> packed = pack_sequence([genesis.tensor([1., 2.]), genesis.tensor([3.])])
    >>> pad_packed_sequence(packed, batch_first=True, padding_value=-1.)
    (tensor([[ 1.,  2.],
            [ 3., -1.]]), tensor([2, 1]))
    """
    data, batch_sizes, sorted_indices, unsorted_indices = sequence
    sizes = batch_sizes.numpy().astype(np.int64)
    longest, batch = sizes.size, int(sizes[0]) if sizes.size else 0
    steps = longest
    if total_length is not None:
        if total_length < longest:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {longest}")
        steps = total_length
    order = np.arange(batch) if sorted_indices is None else sorted_indices.detach().cpu().numpy()
    times, rows = _packed_positions(sizes)
    sequences = order[rows]
    flat = sequences * steps + times if batch_first else times * batch + sequences
    source = np.full(steps * batch, data.shape[0], dtype=np.int64)  # the padding row
    source[flat] = np.arange(data.shape[0])
    rest = tuple(data.shape[1:])
    padding = full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)
    padded = cat([data, padding]).index_select(0, tensor(source, device=data.device))
    shape = (batch, steps) if batch_first else (steps, batch)
    lengths = np.zeros(batch, dtype=np.int64)
    lengths[order] = (sizes[None, :] > np.arange(batch)[:, None]).sum(1)
    return padded.reshape(shape + rest), tensor(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shapes (L_i, *) into one (T, B, *) tensor ((B, T, *) with
    `batch_first`), T the longest L_i, the rest filled with `padding_value` on the right
    (or on the left with `padding_side="left"`).

    >>> import genesis
    >>> pad_sequence([genesis.tensor([1, 2, 3]), genesis.tensor([4])], batch_first=True)
    tensor([[1, 2, 3],
            [4, 0, 0]])
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"padding_side must be 'left' or 'right', but got {padding_side!r}")
    sequences = list(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    rest = tuple(sequences[0].shape[1:])
    for index, item in enumerate(sequences):
        if not isinstance(item, Tensor) or item.ndim == 0 or tuple(item.shape[1:]) != rest:
            shape = tuple(item.shape) if isinstance(item, Tensor) else type(item).__name__
            raise RuntimeError(f"pad_sequence: sequence {index} has shape {shape}; every sequence "
                               f"must be (length, *{rest}) like sequence 0, of shape "
                               f"{tuple(sequences[0].shape)}")
    lengths = np.array([item.shape[0] for item in sequences], dtype=np.int64)
    steps, batch = int(lengths.max()), len(sequences)
    starts = np.cumsum(lengths) - lengths
    time = np.arange(steps)[:, None]
    if padding_side == "left":
        time = time - (steps - lengths)[None, :]
    inside = (time >= 0) & (time < lengths[None, :])
    total = int(lengths.sum())
    source = np.where(inside, starts[None, :] + time, total)  # (steps, batch); total: padding
    if batch_first:
        source = source.T
    first = sequences[0]
    padding = full((1,) + rest, padding_value, dtype=first.dtype, device=first.device)
    gathered = cat(sequences + [padding]).index_select(
        0, tensor(np.ascontiguousarray(source).reshape(-1), device=first.device))
    return gathered.reshape(source.shape + rest)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack tensors of shapes (L_i, *) (longest first unless `enforce_sorted` is False).

    >>> import genesis
    >>> pack_sequence([genesis.tensor([1, 2]), genesis.tensor([3, 4, 5])], enforce_sorted=False).data
    tensor([3, 1, 4, 2, 5])
    """
    lengths = [item.shape[0] for item in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of sequences of a padded batch, each cut to its length.

    >>> import genesis
    >>> unpad_sequence(genesis.tensor([[1, 2], [3, 0]]), genesis.tensor([2, 1]), batch_first=True)
    [tensor([1, 2]), tensor([3])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    counts = _lengths(lengths)
    return [padded_sequences[index, :int(length)] for index, length in enumerate(counts)]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences of a PackedSequence, in their original order.

    >>> import genesis
    >>> unpack_sequence(pack_sequence([genesis.tensor([1, 2]), genesis.tensor([3])]))
    [tensor([1, 2]), tensor([3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

