"""The `*_copy` forms of view ops, in-place ops at the top level, bit shifts and the other
PyTorch spellings of genesis ops, compared with PyTorch."""
import warnings

import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip

pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated:UserWarning")  # torch's own

CALLS = {
    "transpose_copy": lambda lib, x: lib.transpose_copy(x, 0, 1),
    "permute_copy": lambda lib, x: lib.permute_copy(x, (1, 0)),
    "diagonal_copy": lambda lib, x: lib.diagonal_copy(x),
    "select_copy": lambda lib, x: lib.select_copy(x, 1, 2),
    "slice_copy": lambda lib, x: lib.slice_copy(x, 1, 1, 3),
    "narrow_copy": lambda lib, x: lib.narrow_copy(x, 0, 1, 2),
    "unsqueeze_copy": lambda lib, x: lib.unsqueeze_copy(x, 0),
    "view_copy": lambda lib, x: lib.view_copy(x, (4, 3)),
    "expand_copy": lambda lib, x: lib.expand_copy(x[:1], (2, 4)),
    "t_copy": lambda lib, x: lib.t_copy(x),
    "alias_copy": lambda lib, x: lib.alias_copy(x),
    "unbind_copy": lambda lib, x: lib.unbind_copy(x, 1)[2],
    "split_copy": lambda lib, x: lib.split_copy(x, 2, 1)[1],
    "unsafe_chunk": lambda lib, x: lib.unsafe_chunk(x, 2, 1)[1],
    "unsafe_split": lambda lib, x: lib.unsafe_split(x, 3, 1)[0],
    "rsub": lambda lib, x: lib.rsub(x, 2.0, alpha=3),
    "fill": lambda lib, x: lib.fill(x, 1.5),
    "chain_matmul": lambda lib, x: lib.chain_matmul(x, x.t(), x),
    "frobenius_norm": lambda lib, x: lib.frobenius_norm(x, (0, 1)),
    "exp_": lambda lib, x: lib.exp_(x.clone()),
    "clamp_": lambda lib, x: lib.clamp_(x.clone(), -0.5, 0.5),
    "sigmoid_": lambda lib, x: lib.sigmoid_(x.clone()),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_gradients_match_torch(name):
    torch = torch_or_skip()
    values = np.random.default_rng(1).normal(size=(3, 4))
    results = []
    for library in (torch, genesis):
        x = library.tensor(values, dtype=library.float64, requires_grad=True)
        out = CALLS[name](library, x)
        if out.requires_grad:
            (out * library.arange(float(out.numel()), dtype=library.float64).view(
                out.shape)).sum().backward()
        grad = None if x.grad is None else x.grad.numpy()
        results.append((out.detach().numpy(), grad))
    (expected, expected_grad), (got, got_grad) = results
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert (got_grad is None) == (expected_grad is None)
    if got_grad is not None:
        np.testing.assert_allclose(got_grad, expected_grad, rtol=1e-12)


def test_detach_copy_leaves_the_graph():
    x = genesis.ones(2, requires_grad=True)
    assert not genesis.detach_copy(x * 2).requires_grad


def test_copies_do_not_share_storage():
    x = genesis.arange(6.).view(2, 3)
    copy = genesis.transpose_copy(x, 0, 1)
    copy[0, 0] = 100.0
    assert x[0, 0].item() == 0.0 and copy.is_contiguous()


def test_range_nonzero_static_and_empty_strided_as_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert library.range(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75, 2.0]
        assert caught and "deprecated" in str(caught[0].message)
        x = library.tensor([0., 3., 0., 4.])
        assert library.nonzero_static(x, size=3, fill_value=-7).tolist() == [[1], [3], [-7]]
        assert library.nonzero_static(x, size=1).tolist() == [[1]]
        assert tuple(library.empty_strided((2, 3), (1, 2)).shape) == (2, 3)
        assert tuple(library.empty_permuted((2, 3, 4), (0, 2, 1)).shape) == (2, 3, 4)
        assert library.get_device(x) == -1 and not library.is_inference(x)


def test_top_level_in_place_forms_change_their_input():
    x = genesis.tensor([-1.0, 2.0])
    assert genesis.abs_(x) is x and x.tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="must be a Tensor"):
        genesis.exp_([1.0])


@pytest.mark.parametrize("shift", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shifts_match_torch_on_every_integer_dtype_and_edge_amount(shift):
    torch = torch_or_skip()
    amounts = [-1, 0, 1, 3, 7, 8, 15, 31, 63, 64, 100]
    for dtype in ("int8", "uint8", "int16", "int32", "int64"):
        values = [-100, -5, -1, 0, 1, 5, 100] if dtype != "uint8" else [0, 1, 5, 100, 255]
        grid = np.array([[v] * len(amounts) for v in values])
        by = np.array([amounts] * len(values))
        expected = getattr(torch, shift)(torch.tensor(grid, dtype=getattr(torch, dtype)),
                                         torch.tensor(by))
        got = getattr(genesis, shift)(genesis.tensor(grid, dtype=getattr(genesis, dtype)),
                                      genesis.tensor(by))
        assert got.dtype.name == str(expected.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_shift_operators_and_in_place_forms():
    x = genesis.tensor([3, -8])
    assert (x << 2).tolist() == [12, -32] and (x >> 1).tolist() == [1, -4]
    assert (1 << genesis.tensor([4])).tolist() == [16] and (256 >> genesis.tensor([4])).tolist() == [16]
    x <<= 1
    x >>= 2
    assert x.tolist() == [1, -4] and x.bitwise_not_().tolist() == [-2, 3]
    with pytest.raises(RuntimeError, match="integer"):
        genesis.tensor([1.5]) << 1
