"""One direction of a recurrent layer over a PackedSequence: each sequence runs for its own
length only.

The packed rows of step t are the first `batch_sizes[t]` sequences (longest first), so the
hidden state of step t is the first `batch_sizes[t]` rows of the state: going forward, the
rows of the sequences that have ended are set aside (their final state) as the batch
shrinks; going backward, a sequence joins with its initial state at its own last step.
A state is a tensor, or a tuple of them (LSTM's (h, c)), cut and joined by rows alike.

>>> import genesis
>>> cumulative = lambda x, h: h + x                  # a "recurrence" that sums its inputs
>>> data = genesis.tensor([[1.], [10.], [2.], [20.], [3.]])   # lengths 3 and 2
>>> outputs, final = run_packed(data, genesis.zeros(2, 1), [2, 2, 1], cumulative, lambda h: h)
>>> final.flatten(), outputs.flatten()
(tensor([ 6., 30.]), tensor([ 1., 10.,  3., 30.,  6.]))
"""
from __future__ import annotations

from ..ops.join import cat

__all__ = ["run_packed"]


def run_packed(projected, state, batch_sizes: list, step, output_of, reverse: bool = False):
    """(packed outputs, final state of every sequence): `projected` holds each packed row's
    input to `step(input_rows, state) -> state`, `state` the initial state of the whole
    (sorted) batch, `output_of(state)` the rows a step outputs."""
    offsets = [0]
    for size in batch_sizes:
        offsets.append(offsets[-1] + size)
    outputs = [None] * len(batch_sizes)
    if not reverse:
        ended, running = [], batch_sizes[0] if batch_sizes else 0
        for t, size in enumerate(batch_sizes):
            if size < running:  # the sequences in rows size..running ended at step t - 1
                ended.append(_rows(state, size, running))
                state, running = _rows(state, 0, size), size
            state = step(projected[offsets[t]:offsets[t + 1]], state)
            outputs[t] = output_of(state)
        final = _joined([state] + ended[::-1])  # later ends are the shorter, lower rows
    else:
        initial, running, final = state, 0, state
        for t in range(len(batch_sizes) - 1, -1, -1):
            size = batch_sizes[t]
            if size > running:  # the sequences in rows running..size start (from their end) here
                fresh = _rows(initial, running, size)
                state = fresh if running == 0 else _joined([state, fresh])
                running = size
            state = final = step(projected[offsets[t]:offsets[t + 1]], state)
            outputs[t] = output_of(state)
    return cat(outputs), final


def _rows(state, start: int, stop: int):
    if isinstance(state, tuple):
        return tuple(part[start:stop] for part in state)
    return state[start:stop]


def _joined(states: list):
    if len(states) == 1:
        return states[0]
    if isinstance(states[0], tuple):
        return tuple(cat([state[index] for state in states]) for index in range(len(states[0])))
    return cat(states)
