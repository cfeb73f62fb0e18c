"""Variable-length sequences (genesis.nn.utils.rnn) and the recurrent layers over them,
against PyTorch's torch.nn.utils.rnn: packed layouts, padding, values, gradients, errors."""
import numpy as np
import pytest

import genesis
from genesis import nn
from genesis.autograd import gradcheck
from genesis.nn.utils.rnn import (PackedSequence, invert_permutation, pack_padded_sequence,
                                  pack_sequence, pad_packed_sequence, pad_sequence,
                                  unpack_sequence, unpad_sequence)
from tests.helpers import torch_or_skip
from tests.nn.test_rnn import CONFIGS, _pair

LENGTHS = [[5, 3, 3, 1], [2, 5, 1, 4], [4, 4, 4, 4], [1]]


def _ours(array):
    """A float64 genesis tensor of a float64 array (genesis.tensor would make it float32)."""
    return genesis.from_numpy(np.array(array, dtype=np.float64))


def _padded(steps, batch, width=3, seed=0):
    return np.random.default_rng(seed).standard_normal((steps, batch, width))


def _same_packed(ours, theirs):
    np.testing.assert_allclose(ours.data.detach().numpy(), theirs.data.detach().numpy(),
                               rtol=1e-12, atol=1e-12)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert ours.batch_sizes.dtype is genesis.int64
    for mine, reference in ((ours.sorted_indices, theirs.sorted_indices),
                            (ours.unsorted_indices, theirs.unsorted_indices)):
        assert (mine is None) == (reference is None)
        if mine is not None:
            assert mine.tolist() == reference.tolist()


@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_match_pytorch_values_and_gradients(lengths, batch_first):
    torch = torch_or_skip()
    array = _padded(max(lengths), len(lengths))
    if batch_first:
        array = array.transpose(1, 0, 2).copy()
    ours = _ours(array).requires_grad_()
    theirs = torch.tensor(array, requires_grad=True)
    packed = pack_padded_sequence(ours, lengths, batch_first=batch_first, enforce_sorted=False)
    their_packed = torch.nn.utils.rnn.pack_padded_sequence(theirs, lengths, batch_first=batch_first,
                                                           enforce_sorted=False)
    _same_packed(packed, their_packed)
    padded, out_lengths = pad_packed_sequence(packed, batch_first=batch_first, padding_value=-2.0,
                                              total_length=max(lengths) + 1)
    their_padded, their_lengths = torch.nn.utils.rnn.pad_packed_sequence(
        their_packed, batch_first=batch_first, padding_value=-2.0, total_length=max(lengths) + 1)
    np.testing.assert_array_equal(padded.detach().numpy(), their_padded.detach().numpy())
    assert out_lengths.tolist() == their_lengths.tolist() and out_lengths.dtype is genesis.int64
    weights = np.random.default_rng(1).standard_normal(tuple(padded.shape))
    (padded * _ours(weights)).sum().backward()
    (their_padded * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_sorted_batches_keep_no_indices_and_ties_keep_their_order():
    torch = torch_or_skip()
    array = _padded(4, 3)
    packed = pack_padded_sequence(_ours(array), [4, 2, 2])
    _same_packed(packed, torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(array), [4, 2, 2]))
    for lengths in ([2, 4, 2], [3, 3, 3]):  # ties: the same stable order as torch's sort
        mine = pack_padded_sequence(_ours(array), genesis.tensor(lengths), enforce_sorted=False)
        theirs = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(array), torch.tensor(lengths),
                                                         enforce_sorted=False)
        _same_packed(mine, theirs)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_matches_pytorch(side, batch_first):
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((length, 2)) for length in (2, 5, 1)]
    ours = [_ours(a).requires_grad_() for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    padded = pad_sequence(ours, batch_first=batch_first, padding_value=7.0, padding_side=side)
    their_padded = torch.nn.utils.rnn.pad_sequence(theirs, batch_first=batch_first,
                                                   padding_value=7.0, padding_side=side)
    np.testing.assert_array_equal(padded.detach().numpy(), their_padded.detach().numpy())
    weights = rng.standard_normal(tuple(padded.shape))
    (padded * _ours(weights)).sum().backward()
    (their_padded * torch.tensor(weights)).sum().backward()
    for mine, reference in zip(ours, theirs):
        np.testing.assert_array_equal(mine.grad.numpy(), reference.grad.numpy())
    integers = pad_sequence([genesis.tensor([1, 2]), genesis.tensor([3])], batch_first=batch_first)
    assert integers.dtype is genesis.int64


def test_pack_sequence_unpack_unpad_and_invert():
    torch = torch_or_skip()
    arrays = [np.arange(n, dtype=np.float64) + 10 * n for n in (2, 4, 3)]
    packed = pack_sequence([_ours(a) for a in arrays], enforce_sorted=False)
    theirs = torch.nn.utils.rnn.pack_sequence([torch.tensor(a) for a in arrays], enforce_sorted=False)
    _same_packed(packed, theirs)
    assert [t.tolist() for t in unpack_sequence(packed)] == [a.tolist() for a in arrays]
    padded, lengths = pad_packed_sequence(packed)
    assert [t.tolist() for t in unpad_sequence(padded, lengths)] == [a.tolist() for a in arrays]
    assert invert_permutation(genesis.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert invert_permutation(None) is None
    assert repr(pack_sequence([genesis.tensor([1., 2.]), genesis.tensor([3.])])) == repr(
        torch.nn.utils.rnn.pack_sequence([torch.tensor([1., 2.]), torch.tensor([3.])])).replace(
        "torch.", "genesis.")


def test_packed_sequence_fields_and_conversions():
    packed = pack_sequence([genesis.tensor([1., 2.]), genesis.tensor([3.])])
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert packed.double().data.dtype is genesis.float64
    assert packed.to(genesis.float64).batch_sizes is batch_sizes
    assert packed.to(genesis.float32) is packed
    assert packed.long().data.tolist() == [1, 3, 2] and not packed.is_cuda
    again = PackedSequence(data, batch_sizes, genesis.tensor([1, 0]))
    assert again.unsorted_indices.tolist() == [1, 0]
    assert PackedSequence((data, batch_sizes)).batch_sizes is batch_sizes


@pytest.mark.parametrize("name, options", CONFIGS, ids=[f"{n}-{o}" for n, o in CONFIGS])
def test_recurrent_layers_over_packed_sequences_match_pytorch(name, options):
    torch = torch_or_skip()
    ours, theirs = _pair(torch, name, options)
    lengths = [2, 5, 1, 4]
    array = _padded(5, 4)
    if options.get("batch_first"):
        array = array.transpose(1, 0, 2).copy()
    x, their_x = _ours(array).requires_grad_(), torch.tensor(array, requires_grad=True)
    first = options.get("batch_first", False)
    packed = pack_padded_sequence(x, lengths, batch_first=first, enforce_sorted=False)
    their_packed = torch.nn.utils.rnn.pack_padded_sequence(their_x, lengths, batch_first=first,
                                                           enforce_sorted=False)
    directions = 2 if options.get("bidirectional") else 1
    layers = options.get("num_layers", 1)
    width = options.get("proj_size") or 4
    rng = np.random.default_rng(5)
    h0 = rng.standard_normal((layers * directions, 4, width))
    state = (_ours(h0), _ours(rng.standard_normal((layers * directions, 4, 4)))) \
        if name == "LSTM" else _ours(h0)
    their_state = tuple(torch.tensor(s.numpy()) for s in state) if name == "LSTM" \
        else torch.tensor(h0)
    output, final = ours(packed, state)
    their_output, their_final = theirs(their_packed, their_state)
    assert isinstance(output, PackedSequence)
    _same_packed_close = output.data.detach().numpy(), their_output.data.detach().numpy()
    np.testing.assert_allclose(*_same_packed_close, rtol=1e-10, atol=1e-12)
    assert output.batch_sizes.tolist() == their_output.batch_sizes.tolist()
    finals = list(final) if name == "LSTM" else [final]
    their_finals = list(their_final) if name == "LSTM" else [their_final]
    total, their_total = 0, 0
    for mine, reference in zip([output.data] + finals, [their_output.data] + their_finals):
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(),
                                   rtol=1e-10, atol=1e-12)
        weights = rng.standard_normal(tuple(mine.shape))
        total = total + (mine * _ours(weights)).sum()
        their_total = their_total + (reference * torch.tensor(weights)).sum()
    total.backward()
    their_total.backward()
    for mine, reference in zip([x] + list(ours.parameters()), [their_x] + list(theirs.parameters())):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_packed_lstm_gradients_against_finite_differences():
    lstm = nn.LSTM(2, 3, bidirectional=True, dtype=genesis.float64)
    lengths = [3, 1, 2]

    def run(x, h0):
        packed = pack_padded_sequence(x, lengths, enforce_sorted=False)
        output, (h, c) = lstm(packed, (h0, h0 * 0.5))
        return pad_packed_sequence(output)[0].sum() + h.sum() + c.sum()

    x = genesis.randn(3, 3, 2, dtype=genesis.float64, requires_grad=True)
    h0 = genesis.randn(2, 3, 3, dtype=genesis.float64, requires_grad=True)
    assert gradcheck(run, (x, h0))


def test_padding_does_not_reach_the_state():
    gru = nn.GRU(2, 3)
    x = genesis.randn(4, 2, 2)
    noisy = x.clone()
    noisy[2:, 1] = 1e6  # padding of the second sequence (length 2)
    _, clean = gru(pack_padded_sequence(x, [4, 2]))
    _, padded = gru(pack_padded_sequence(noisy, [4, 2]))
    np.testing.assert_array_equal(clean.detach().numpy(), padded.detach().numpy())
    alone = gru(x[:2, 1:])[1]
    np.testing.assert_allclose(clean[:, 1:].detach().numpy(), alone.detach().numpy(), rtol=1e-6)


def test_errors_name_the_problem_and_match_pytorch_types():
    torch = torch_or_skip()
    array = _padded(4, 3)
    cases = [([4, 2, 3], {}), ([4, 2], {}), ([4, 1, 0], {}), ([[4, 2, 1]], {})]
    for lengths, options in cases:
        with pytest.raises(RuntimeError) as mine:
            pack_padded_sequence(_ours(array), lengths, **options)
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(array), lengths, **options)
        if "2D" not in str(theirs.value):
            assert str(mine.value) == str(theirs.value)
    with pytest.raises(RuntimeError, match="sequence of length 5 is longer than the input's 4 time steps"):
        pack_padded_sequence(_ours(array), [5, 2, 1])
    packed = pack_padded_sequence(_ours(array), [4, 2, 1])
    with pytest.raises(ValueError, match="total_length=3 and max sequence length being 4"):
        pad_packed_sequence(packed, total_length=3)
    with pytest.raises(RuntimeError, match="empty list"):
        pad_sequence([])
    with pytest.raises(RuntimeError, match="sequence 1 has shape"):
        pad_sequence([genesis.ones(2, 3), genesis.ones(4, 2)])
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence([genesis.ones(2)], padding_side="middle")
    with pytest.raises(ValueError, match=r"expected h_0 of shape \(1, 3, 5\)"):
        nn.GRU(3, 5)(packed.float(), genesis.zeros(1, 2, 5))
    with pytest.raises(ValueError, match="packed data of shape"):
        nn.GRU(2, 5)(packed.float())
