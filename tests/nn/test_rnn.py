"""RNN, LSTM, GRU and their cells against PyTorch: parameters, values, gradients, options."""
import numpy as np
import pytest

import genesis
from genesis import nn
from genesis.autograd import gradcheck
from tests.helpers import torch_or_skip

CONFIGS = [
    ("LSTM", {}), ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(bias=False)), ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True)),
    ("GRU", {}), ("GRU", dict(num_layers=3, batch_first=True)), ("GRU", dict(bidirectional=True, bias=False)),
    ("RNN", {}), ("RNN", dict(nonlinearity="relu", num_layers=2)), ("RNN", dict(bidirectional=True)),
]


def _pair(torch, name, options, cell=False):
    torch.manual_seed(0)
    sizes = (3, 4)
    theirs = getattr(torch.nn, name + ("Cell" if cell else ""))(*sizes, dtype=torch.float64, **options)
    ours = getattr(nn, name + ("Cell" if cell else ""))(*sizes, dtype=genesis.float64, **options)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for (_, mine), (_, reference) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert mine.shape == tuple(reference.shape)
    ours.load_state_dict({key: genesis.from_numpy(value.detach().numpy().copy())
                          for key, value in theirs.state_dict().items()})
    return ours, theirs


def _leaf(torch, array):
    return genesis.from_numpy(array.copy()).requires_grad_(), torch.from_numpy(array.copy()).requires_grad_()


def _outputs(result):
    output, state = result
    return [output] + (list(state) if isinstance(state, tuple) else [state])


def _check(torch, ours, theirs, our_args, their_args, our_leaves, their_leaves):
    mine, reference = _outputs(ours(*our_args)), _outputs(theirs(*their_args))
    rng = np.random.default_rng(3)
    total, their_total = 0, 0
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
        weights = rng.standard_normal(a.shape)
        total = total + (a * genesis.from_numpy(weights)).sum()
        their_total = their_total + (b * torch.from_numpy(weights)).sum()
    total.backward()
    their_total.backward()
    for a, b in zip(list(our_leaves) + list(ours.parameters()),
                    list(their_leaves) + list(theirs.parameters())):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name, options", CONFIGS, ids=[f"{n}-{o}" for n, o in CONFIGS])
def test_sequence_layers_match_pytorch(name, options):
    torch = torch_or_skip()
    ours, theirs = _pair(torch, name, options)
    shape = (2, 5, 3) if options.get("batch_first") else (5, 2, 3)
    x, tx = _leaf(torch, np.random.default_rng(0).standard_normal(shape))
    _check(torch, ours, theirs, (x,), (tx,), [x], [tx])


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_given_initial_state_and_unbatched_input(name):
    torch = torch_or_skip()
    ours, theirs = _pair(torch, name, dict(num_layers=2))
    rng = np.random.default_rng(1)
    x, tx = _leaf(torch, rng.standard_normal((4, 3)))            # unbatched: (L, H_in)
    h, th = _leaf(torch, rng.standard_normal((2, 4)))
    if name == "LSTM":
        c, tc = _leaf(torch, rng.standard_normal((2, 4)))
        _check(torch, ours, theirs, (x, (h, c)), (tx, (th, tc)), [x, h, c], [tx, th, tc])
    else:
        _check(torch, ours, theirs, (x, h), (tx, th), [x, h], [tx, th])


@pytest.mark.parametrize("name, options", [("LSTM", {}), ("GRU", {}), ("RNN", {}),
                                           ("RNN", dict(nonlinearity="relu")), ("GRU", dict(bias=False))])
def test_cells_match_pytorch(name, options):
    torch = torch_or_skip()
    ours, theirs = _pair(torch, name, options, cell=True)
    rng = np.random.default_rng(2)
    x, tx = _leaf(torch, rng.standard_normal((5, 3)))
    h, th = _leaf(torch, rng.standard_normal((5, 4)))
    state, their_state = ((h, genesis.from_numpy(h.detach().numpy() * 0.5)), (th, th.detach() * 0.5)) \
        if name == "LSTM" else (h, th)
    mine, reference = ours(x, state), theirs(tx, their_state)
    mine, reference = (mine if name == "LSTM" else (mine,)), (reference if name == "LSTM" else (reference,))
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    sum(a.sum() for a in mine).backward()
    sum(b.sum() for b in reference).backward()
    for a, b in zip([x, h, *ours.parameters()], [tx, th, *theirs.parameters()]):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    unbatched = ours(x[0])
    assert (unbatched[0] if name == "LSTM" else unbatched).shape == (4,)


def test_gradcheck_through_a_bidirectional_lstm():
    lstm = nn.LSTM(2, 3, bidirectional=True, dtype=genesis.float64)
    x = genesis.from_numpy(np.random.default_rng(4).standard_normal((3, 1, 2))).requires_grad_()
    assert gradcheck(lambda t: lstm(t)[0], (x,))


def test_dropout_between_layers_only_in_training():
    gru = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = genesis.randn(6, 2, 3)
    assert not genesis.allclose(gru(x)[0], gru(x)[0])  # a new dropout mask each call
    gru.eval()
    assert genesis.allclose(gru(x)[0], gru(x)[0])


def test_errors_name_the_problem():
    lstm = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match=r"expected input_size 3 in the last dim, got shape \(5, 2, 2\)"):
        lstm(genesis.randn(5, 2, 2))
    with pytest.raises(ValueError, match=r"expected h_0 of shape \(1, 2, 4\), got \(1, 3, 4\)"):
        lstm(genesis.randn(5, 2, 3), (genesis.zeros(1, 3, 4), genesis.zeros(1, 2, 4)))
    with pytest.raises(ValueError, match=r"hx must be a tuple \(h_0, c_0\)"):
        lstm(genesis.randn(5, 2, 3), genesis.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="proj_size must be 0"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="unknown nonlinearity 'gelu'"):
        nn.RNN(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match=r"expected an input of shape \(N, 3\)"):
        nn.GRUCell(3, 4)(genesis.randn(2, 5))
