"""maximum/minimum/fmax/fmin: PyTorch's conventions at ties and nan, pinned literally."""
import math

import genesis
from tests.helpers import grads, leaf


def test_maximum_and_minimum_split_ties_evenly():
    a, b = leaf([1.0, 2.0, 3.0]), leaf([1.0, 3.0, 2.0])
    assert grads(genesis.maximum(a, b), [a, b]) == [[0.5, 0.0, 1.0], [0.5, 1.0, 0.0]]
    assert grads(genesis.minimum(a, b), [a, b]) == [[0.5, 1.0, 0.0], [0.5, 0.0, 1.0]]


def test_maximum_with_a_number_and_broadcasting():
    a = leaf([[1.0, 5.0], [2.0, 0.0]])
    out = genesis.maximum(a, 2.0)
    assert out.tolist() == [[2.0, 5.0], [2.0, 2.0]]
    assert grads(out, [a]) == [[[0.0, 1.0], [0.5, 0.0]]]
    b = leaf([3.0, 1.0])
    assert grads(genesis.maximum(a, b), [a, b])[1] == [2.0, 1.0]


def test_nan_propagates_in_maximum_but_not_in_fmax():
    a, b = leaf([math.nan, 1.0]), leaf([1.0, math.nan])
    assert all(math.isnan(v) for v in genesis.maximum(a, b).tolist())
    assert grads(genesis.maximum(a, b), [a, b]) == [[1.0, 1.0], [1.0, 1.0]]  # PyTorch: no mask
    assert genesis.fmax(a, b).tolist() == [1.0, 1.0] and genesis.fmin(a, b).tolist() == [1.0, 1.0]
    assert grads(genesis.fmax(a, b), [a, b]) == [[0.0, 1.0], [1.0, 0.0]]


def test_gradients_at_nan_follow_pytorch():
    x = leaf([math.nan])
    assert grads(x.clamp(-1.0, 1.0), [x]) == [[0.0]]
    assert grads(genesis.maximum(x, 0.0), [x]) == [[1.0]]
    assert grads(genesis.fmax(x, 0.0), [x]) == [[0.0]]


def test_maximum_promotes():
    out = genesis.maximum(genesis.tensor([1, 4]), genesis.tensor([2.5, 3.0]))
    assert out.dtype is genesis.float32 and out.tolist() == [2.5, 4.0]
