"""clamp: PyTorch's conventions at the boundaries, pinned literally."""
import pytest

import genesis
from tests.helpers import grads, leaf


def test_clamp_passes_the_gradient_on_the_boundary():
    x = leaf([0.0, 1.0, 2.0, 3.0, 4.0])
    out = x.clamp(1.0, 3.0)
    assert out.tolist() == [1.0, 1.0, 2.0, 3.0, 3.0]
    assert grads(out, [x]) == [[0.0, 1.0, 1.0, 1.0, 0.0]]
    assert grads(x.clamp(min=1.0), [x]) == [[0.0, 1.0, 1.0, 1.0, 1.0]]
    assert grads(x.clamp_max(3.0), [x]) == [[1.0, 1.0, 1.0, 1.0, 0.0]]


def test_clamp_with_min_above_max_gives_max_and_no_input_gradient():
    x = leaf([0.0, 2.0, 4.0])
    out = x.clamp(3.0, 1.0)
    assert out.tolist() == [1.0, 1.0, 1.0] and grads(out, [x]) == [[0.0, 0.0, 0.0]]


def test_clamp_with_tensor_bounds_matches_pytorch_literally():
    x = leaf([0.0, 1.0, 2.0, 3.0, 4.0, 2.5])
    low = leaf([1.0, 1.0, 1.0, 1.0, 1.0, 3.0])
    high = leaf([3.0, 3.0, 3.0, 3.0, 3.0, 2.0])
    weights = genesis.arange(1.0, 7.0, dtype=genesis.float64)
    out = genesis.clamp(x, low, high)
    assert out.tolist() == [1.0, 1.0, 2.0, 3.0, 3.0, 2.0]
    assert grads(out, [x, low, high], weights) == [
        [0.0, 2.0, 3.0, 4.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 5.0, 6.0]]
    only_low = genesis.clamp(x, min=low)
    assert grads(only_low, [x, low], weights) == [
        [0.0, 2.0, 3.0, 4.0, 5.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0, 6.0]]


def test_clamp_broadcasts_tensor_bounds():
    x = leaf([[0.0, 5.0], [2.0, -1.0]])
    high = leaf([1.0, 4.0])
    out = x.clamp(max=high)
    assert out.tolist() == [[0.0, 4.0], [1.0, -1.0]]
    assert grads(out, [high]) == [[1.0, 1.0]]


def test_clamp_dtypes_and_errors():
    assert genesis.tensor([1, 2, 3]).clamp(1.5).dtype is genesis.float32
    assert genesis.tensor([True, False]).clamp(0).dtype is genesis.int64
    with pytest.raises(RuntimeError, match="clamp: at least one of min and max"):
        genesis.ones(2).clamp()
    with pytest.raises(RuntimeError, match="clamp_: can't update .* int64 in place"):
        genesis.tensor([1, 2]).clamp_(1.5)


def test_clamp_in_place():
    x = genesis.tensor([-2.0, 0.5, 3.0])
    assert x.clamp_(-1, 1) is x and x.tolist() == [-1.0, 0.5, 1.0] and x._version == 1
    assert x.clamp_min_(0.0).tolist() == [0.0, 0.5, 1.0]
    assert x.clamp_max_(genesis.tensor([1.0, 0.25, 0.75])).tolist() == [0.0, 0.25, 0.75]
    y = leaf([-2.0, 0.5])
    z = y * 1
    z.clip_(-1, 1)
    assert grads(z, [y]) == [[0.0, 1.0]]
