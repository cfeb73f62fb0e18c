"""F.embedding_bag and nn.EmbeddingBag against PyTorch: values, gradients (weights copied
over), exception types, gradcheck in float64.

With scale_grad_by_freq, PyTorch 2.13's CPU kernel divides a row's gradient by the count of
another index where counts differ (pytorch/pytorch#190063, fixed upstream; its CUDA kernel
and its docs divide by the row's own count, as genesis does): the direct comparisons use
EVEN, where every index occurs twice, and mixed counts are checked against PyTorch's
unscaled gradient divided row by row."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from tests.helpers import torch_or_skip

WEIGHT = np.random.default_rng(0).standard_normal((8, 3))
FLAT = np.array([1, 2, 4, 5, 4, 3, 2, 7])
OFFSETS = np.array([0, 2, 2, 5])
EVEN = np.array([1, 2, 4, 1, 4, 2, 7, 7])  # every index twice
SCALED = {"scale_grad_by_freq": True}

CASES = [
    ({"mode": "sum"}, FLAT, OFFSETS),
    ({"mode": "mean"}, FLAT, OFFSETS),
    ({"mode": "max"}, FLAT, OFFSETS),
    ({"mode": "mean", "padding_idx": 4}, FLAT, OFFSETS),
    ({"mode": "sum", "padding_idx": 2}, FLAT, OFFSETS),
    ({"mode": "max", "padding_idx": 2}, FLAT, OFFSETS),
    ({"mode": "sum", "include_last_offset": True}, FLAT, np.array([0, 3, 3, 8])),
    ({"mode": "mean"}, FLAT.reshape(2, 4), None),
    ({"mode": "max"}, FLAT.reshape(4, 2), None),
    ({"mode": "sum", **SCALED}, EVEN, OFFSETS),
    ({"mode": "mean", **SCALED}, EVEN, OFFSETS),
    ({"mode": "mean", "padding_idx": 4, **SCALED}, EVEN, OFFSETS),
    ({"mode": "sum", "include_last_offset": True, **SCALED}, EVEN, np.array([0, 3, 3, 8])),
    ({"mode": "mean", **SCALED}, EVEN.reshape(2, 4), None),
]


def _run(library, kwargs, indices, offsets, per_sample_weights=None):
    make = library.tensor
    weight = make(WEIGHT, requires_grad=True) if library is not genesis else \
        genesis.tensor(WEIGHT, dtype=genesis.float64, requires_grad=True)
    out = library.nn.functional.embedding_bag(
        make(indices), weight, None if offsets is None else make(offsets),
        per_sample_weights=per_sample_weights, **kwargs)
    return out, weight


@pytest.mark.parametrize("kwargs, indices, offsets", CASES, ids=[str(c[0]) for c in CASES])
def test_values_and_weight_gradients_match_pytorch(kwargs, indices, offsets):
    torch = torch_or_skip()
    mine, mine_weight = _run(genesis, kwargs, indices, offsets)
    theirs, their_weight = _run(torch, kwargs, indices, offsets)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    upstream = np.random.default_rng(1).standard_normal(tuple(theirs.shape))
    mine.backward(genesis.tensor(upstream, dtype=genesis.float64))
    theirs.backward(torch.tensor(upstream))
    np.testing.assert_allclose(mine_weight.grad.numpy(), their_weight.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("indices, kwargs", [(FLAT, {}), (EVEN, SCALED)], ids=["", "scaled"])
def test_per_sample_weights_gradient_matches_pytorch(indices, kwargs):
    torch = torch_or_skip()
    scales = np.random.default_rng(2).standard_normal(indices.shape)
    mine_scales = genesis.tensor(scales, requires_grad=True)
    their_scales = torch.tensor(scales, requires_grad=True)
    mine, mine_weight = _run(genesis, {"mode": "sum", **kwargs}, indices, OFFSETS, mine_scales)
    theirs, their_weight = _run(torch, {"mode": "sum", **kwargs}, indices, OFFSETS, their_scales)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=1e-12)
    mine.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(mine_scales.grad.numpy(), their_scales.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(mine_weight.grad.numpy(), their_weight.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_gradcheck(mode):
    weight = genesis.tensor(WEIGHT, dtype=genesis.float64, requires_grad=True)
    indices = genesis.tensor(np.array([0, 1, 2, 3, 6, 7, 5]))
    offsets = genesis.tensor(np.array([0, 3, 3, 5]))
    assert genesis.autograd.gradcheck(lambda w: F.embedding_bag(indices, w, offsets, mode=mode), (weight,))


@pytest.mark.parametrize("kwargs", [{"mode": "sum"}, {"mode": "mean", "padding_idx": 4}],
                         ids=str)
def test_scale_grad_by_freq_divides_each_rows_gradient_by_its_own_count(kwargs):
    """Mixed counts (FLAT: 2 and 4 twice, the others once): PyTorch's unscaled gradient,
    each row divided by how often its index occurs."""
    torch = torch_or_skip()
    mine, mine_weight = _run(genesis, {**kwargs, **SCALED}, FLAT, OFFSETS)
    theirs, their_weight = _run(torch, kwargs, FLAT, OFFSETS)
    upstream = np.random.default_rng(1).standard_normal(tuple(theirs.shape))
    mine.backward(genesis.tensor(upstream, dtype=genesis.float64))
    theirs.backward(torch.tensor(upstream))
    counts = np.maximum(np.bincount(FLAT, minlength=len(WEIGHT)), 1)[:, None]
    np.testing.assert_allclose(mine_weight.grad.numpy(), their_weight.grad.numpy() / counts,
                               atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_gradcheck_with_scale_grad_by_freq(mode):
    """Indices that each occur once: the scaled gradient is the derivative, checked against
    finite differences. Repeated ones: it is a definition, not the derivative, so what is
    checked is its own derivative in the output gradient (recorded by a create_graph
    backward), and the per-sample weights' gradient, which is not scaled."""
    rng = np.random.default_rng(3)
    weight = genesis.tensor(WEIGHT, dtype=genesis.float64, requires_grad=True)
    distinct, offsets = genesis.tensor(np.array([0, 1, 2, 3, 6, 7, 5])), genesis.tensor(OFFSETS)
    assert genesis.autograd.gradcheck(
        lambda w: F.embedding_bag(distinct, w, offsets, mode=mode, **SCALED), (weight,))
    repeated = genesis.tensor(FLAT)

    def scaled_gradient(seed):
        out = F.embedding_bag(repeated, weight, offsets, mode=mode, **SCALED)
        return genesis.autograd.grad(out, weight, seed, create_graph=True)[0]

    seed = genesis.tensor(rng.standard_normal((4, 3)), dtype=genesis.float64, requires_grad=True)
    assert genesis.autograd.gradcheck(scaled_gradient, (seed,))
    if mode == "sum":
        scales = genesis.tensor(rng.standard_normal(FLAT.shape), dtype=genesis.float64,
                                requires_grad=True)
        assert genesis.autograd.gradcheck(
            lambda s: F.embedding_bag(repeated, weight, offsets, mode="sum",
                                      per_sample_weights=s, **SCALED), (scales,))


BAD = [
    ({"input": np.array([1, 2]), "offsets": None}, ValueError),
    ({"input": np.array([[1, 2]]), "offsets": np.array([0])}, ValueError),
    ({"input": np.array([1, 2]), "offsets": np.array([1])}, RuntimeError),
    ({"input": np.array([1, 9]), "offsets": np.array([0])}, RuntimeError),
    ({"input": np.array([1.0, 2.0]), "offsets": np.array([0])}, RuntimeError),
    ({"input": np.array([1, 2]), "offsets": np.array([0]), "mode": "median"}, ValueError),
    ({"input": np.array([1, 2]), "offsets": np.array([0]), "mode": "mean",
      "per_sample_weights": np.ones(2)}, NotImplementedError),
    ({"input": np.array([1, 2]), "offsets": np.array([0]), "mode": "sum",
      "per_sample_weights": np.ones(3)}, ValueError),
    ({"input": np.array([1, 2]), "offsets": np.array([0]), "mode": "max", **SCALED}, ValueError),
]


@pytest.mark.parametrize("kwargs, error", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input_raises_what_pytorch_raises(kwargs, error):
    torch = torch_or_skip()
    for library in (genesis, torch):
        call = {key: (library.tensor(value) if isinstance(value, np.ndarray) else value)
                for key, value in kwargs.items()}
        with pytest.raises(error):
            library.nn.functional.embedding_bag(weight=library.tensor(WEIGHT), **call)


def test_module_matches_pytorch_with_the_same_weights():
    torch = torch_or_skip()
    mine = nn.EmbeddingBag(8, 3, mode="sum", padding_idx=2, dtype=genesis.float64)
    theirs = torch.nn.EmbeddingBag(8, 3, mode="sum", padding_idx=2, dtype=torch.float64)
    assert mine.weight[2].abs().sum().item() == 0
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(mine.weight.detach().numpy()))
    out = mine(genesis.tensor(FLAT), genesis.tensor(OFFSETS))
    expected = theirs(torch.tensor(FLAT), torch.tensor(OFFSETS))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), atol=1e-12)
    assert repr(mine) == repr(theirs)


def test_module_scales_gradients_by_frequency_as_pytorch_does():
    torch = torch_or_skip()
    mine = nn.EmbeddingBag(8, 3, scale_grad_by_freq=True, dtype=genesis.float64)
    theirs = torch.nn.EmbeddingBag(8, 3, scale_grad_by_freq=True, dtype=torch.float64)
    assert repr(mine) == repr(theirs)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(mine.weight.detach().numpy()))
    mine(genesis.tensor(EVEN), genesis.tensor(OFFSETS)).sum().backward()
    theirs(torch.tensor(EVEN), torch.tensor(OFFSETS)).sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), atol=1e-12)


def test_from_pretrained_freezes_by_default():
    bag = nn.EmbeddingBag.from_pretrained(genesis.tensor(WEIGHT), mode="max")
    assert not bag.weight.requires_grad and bag.mode == "max"
    np.testing.assert_allclose(bag(genesis.tensor([[0, 1]])).numpy(), WEIGHT[:2].max(0, keepdims=True),
                               rtol=1e-6)
    assert nn.EmbeddingBag.from_pretrained(genesis.tensor(WEIGHT), freeze=False).weight.requires_grad
    with pytest.raises(AssertionError):
        nn.EmbeddingBag.from_pretrained(genesis.zeros(3))
