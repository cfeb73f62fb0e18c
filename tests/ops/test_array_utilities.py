"""Tensor.unfold, as_strided, unique_consecutive, combinations, isin, aminmax, unravel_index,
trapezoid family, vander, histogram, renorm, vdot, dtype rules and window functions, compared
with PyTorch."""
import numpy as np
import pytest

import genesis
from genesis.autograd import gradcheck
from tests.helpers import torch_or_skip


def leaf(values):
    return genesis.tensor(values, dtype=genesis.float64, requires_grad=True)


def test_unfold_is_a_copy_with_accumulated_gradients():
    torch = torch_or_skip()
    data = np.arange(10.0).reshape(2, 5)
    x, t = leaf(data), torch.tensor(data, requires_grad=True)
    ours, theirs = x.unfold(1, 3, 1), t.unfold(1, 3, 1)
    assert ours.tolist() == theirs.tolist()
    ours.sum().backward()
    theirs.sum().backward()
    assert x.grad.tolist() == t.grad.tolist()  # the middle elements are read three times
    assert genesis.tensor(3.0).unfold(0, 1, 1).tolist() == [3.0]


def test_as_strided_overlapping_reads_add_their_gradients():
    torch = torch_or_skip()
    data = np.arange(6.0)
    x, t = leaf(data), torch.tensor(data, requires_grad=True)
    ours, theirs = x.as_strided((3, 3), (1, 1), 1), t.as_strided((3, 3), (1, 1), 1)
    assert ours.tolist() == theirs.tolist()
    ours.sum().backward()
    theirs.sum().backward()
    assert x.grad.tolist() == t.grad.tolist()
    assert gradcheck(lambda a: a.as_strided((2, 2), (2, 1)), (leaf(data),))


@pytest.mark.parametrize("kwargs", [{}, {"return_inverse": True}, {"return_counts": True},
                                    {"return_inverse": True, "return_counts": True, "dim": 0},
                                    {"return_counts": True, "dim": 1}])
def test_unique_consecutive_matches_torch(kwargs):
    torch = torch_or_skip()
    data = np.array([[1, 1, 2], [1, 1, 2], [3, 1, 2], [3, 1, 2]])
    ours = genesis.unique_consecutive(genesis.tensor(data), **kwargs)
    theirs = torch.unique_consecutive(torch.tensor(data), **kwargs)
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    assert [o.tolist() for o in ours] == [t.tolist() for t in theirs]


@pytest.mark.parametrize("n, r, replace", [(4, 2, False), (3, 3, True), (3, 4, False),
                                           (3, 0, False), (1, 2, False)])
def test_combinations_shapes_match_torch(n, r, replace):
    torch = torch_or_skip()
    data = np.arange(1.0, n + 1)
    ours = genesis.combinations(genesis.tensor(data), r, replace)
    theirs = torch.combinations(torch.tensor(data), r, replace)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.tolist() == theirs.tolist()


def test_isin_with_numbers_and_invert():
    torch = torch_or_skip()
    ours = genesis.isin(genesis.tensor([[1, 2], [3, 4]]), genesis.tensor([4, 1]), invert=True)
    theirs = torch.isin(torch.tensor([[1, 2], [3, 4]]), torch.tensor([4, 1]), invert=True)
    assert ours.tolist() == theirs.tolist()
    expected = torch.isin(torch.tensor([1, 5]), 5).tolist()
    assert genesis.isin(genesis.tensor([1, 5]), 5).tolist() == expected
    assert genesis.isin(2, genesis.tensor([1, 2])).item() is True


def test_aminmax_shares_gradients_among_ties_as_torch():
    torch = torch_or_skip()
    data = np.array([[1.0, 3.0, 3.0], [0.0, 0.0, 2.0]])
    x, t = leaf(data), torch.tensor(data, requires_grad=True)
    ours, theirs = x.aminmax(dim=1), t.aminmax(dim=1)
    assert ours.min.tolist() == theirs.min.tolist() and ours.max.tolist() == theirs.max.tolist()
    (ours.min * 2 + ours.max).sum().backward()
    (theirs.min * 2 + theirs.max).sum().backward()
    assert x.grad.tolist() == t.grad.tolist()


def test_unravel_index_matches_torch_and_checks_bounds():
    torch = torch_or_skip()
    ours = genesis.unravel_index(genesis.tensor([[0, 5], [-1, 23]]), (2, 3, 4))
    theirs = torch.unravel_index(torch.tensor([[0, 5], [-1, 23]]), (2, 3, 4))
    assert [o.tolist() for o in ours] == [t.tolist() for t in theirs]
    with pytest.raises(RuntimeError, match="out of bounds"):
        genesis.unravel_index(genesis.tensor([24]), (2, 3, 4))
    with pytest.raises(TypeError):
        genesis.unravel_index(genesis.tensor([1.0]), (2,))


@pytest.mark.parametrize("fn", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid_family_with_x_and_dx(fn):
    torch = torch_or_skip()
    y, x = np.array([[1.0, 4.0, 2.0, 5.0], [0.5, 1.0, -1.0, 2.0]]), np.array([0.0, 0.5, 2.0, 2.5])
    ours, theirs = getattr(genesis, fn), getattr(torch, fn)
    np.testing.assert_allclose(ours(genesis.tensor(y), genesis.tensor(x)).numpy(),
                               theirs(torch.tensor(y), torch.tensor(x)).numpy())
    np.testing.assert_allclose(ours(genesis.tensor(y), dx=0.3, dim=0).numpy(),
                               theirs(torch.tensor(y), dx=0.3, dim=0).numpy())
    assert gradcheck(lambda a, b: ours(a, b), (leaf(y), leaf(x)))


def test_vander_of_integers_is_int64_and_gradients_match_numpy():
    torch = torch_or_skip()
    ours = genesis.vander(genesis.tensor([1, 2, 3], dtype=genesis.int32), N=4)
    theirs = torch.vander(torch.tensor([1, 2, 3], dtype=torch.int32), N=4)
    assert ours.dtype == genesis.int64 and ours.tolist() == theirs.tolist()
    assert genesis.vander(genesis.tensor([1.0, 2.0]), N=0).shape == (2, 0)
    x = leaf([0.5, -1.5, 2.0])
    genesis.vander(x, increasing=True).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 + 2 * np.array([0.5, -1.5, 2.0]))


@pytest.mark.parametrize("bins, kwargs", [(4, {}), (3, {"range": (0.0, 2.0)}),
                                          (3, {"density": True}), ("edges", {}),
                                          (2, {"weight": True})])
def test_histogram_matches_torch(bins, kwargs):
    torch = torch_or_skip()
    data = np.array([0.1, 0.5, 0.5, 1.7, 2.5, 3.0])
    weight = np.linspace(0.5, 1.0, 6)

    def call(lib):
        kw = dict(kwargs)
        if kw.get("weight"):
            kw["weight"] = lib.tensor(weight, dtype=lib.float64)
        edges = lib.tensor([0.0, 1.0, 1.5, 4.0], dtype=lib.float64) if bins == "edges" else bins
        return lib.histogram(lib.tensor(data, dtype=lib.float64), edges, **kw)

    ours, theirs = call(genesis), call(torch)
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy())
    np.testing.assert_allclose(ours.bin_edges.numpy(), theirs.bin_edges.numpy())


def test_histogram_refuses_integer_input():
    with pytest.raises(RuntimeError, match="floating"):
        genesis.histogram(genesis.tensor([1, 2]), 2)


def test_renorm_in_place_matches_torch():
    torch = torch_or_skip()
    data = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    x, t = leaf(data), torch.tensor(data, requires_grad=True)
    y, ty = x * 1, t * 1
    y.renorm_(2, 0, 1.0)
    ty.renorm_(2, 0, 1.0)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    (y * genesis.tensor(data)).sum().backward()
    (ty * torch.tensor(data)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("a, b", [((2, 2), (2,)), ((3,), (4,))])
def test_vdot_errors_are_runtime_errors_as_torch(a, b):
    torch = torch_or_skip()
    with pytest.raises(RuntimeError, match="vdot"):
        genesis.vdot(genesis.ones(*a), genesis.ones(*b))
    with pytest.raises(RuntimeError):
        torch.vdot(torch.ones(*a), torch.ones(*b))


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def test_dtype_rules_match_torch():
    torch = torch_or_skip()
    for first in DTYPES:
        for second in DTYPES:
            ours = genesis.promote_types(getattr(genesis, first), getattr(genesis, second))
            assert ours.name == str(torch.promote_types(getattr(torch, first),
                                                        getattr(torch, second))).split(".")[-1]
            assert genesis.can_cast(getattr(genesis, first), getattr(genesis, second)) == \
                torch.can_cast(getattr(torch, first), getattr(torch, second)), (first, second)
    pairs = [(genesis.tensor([1], dtype=genesis.int32), 2.5), (genesis.tensor([1.0]), 2),
             (genesis.tensor([1], dtype=genesis.uint8), genesis.tensor(5))]
    for a, b in pairs:
        ta = torch.tensor(a.tolist(), dtype=getattr(torch, a.dtype.name))
        tb = torch.tensor(b.tolist(), dtype=getattr(torch, b.dtype.name)) \
            if isinstance(b, genesis.Tensor) else b
        assert genesis.result_type(a, b).name == str(torch.result_type(ta, tb)).split(".")[-1]


WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(name, length, periodic):
    torch = torch_or_skip()
    ours = getattr(genesis, name)(length, periodic, dtype=genesis.float64, requires_grad=True)
    theirs = getattr(torch, name)(length, periodic, dtype=torch.float64)
    assert ours.requires_grad and ours.is_leaf and ours.dtype == genesis.float64
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), atol=1e-12)


def test_windows_default_dtype_and_keywords():
    torch = torch_or_skip()
    assert genesis.hann_window(4).dtype == genesis.get_default_dtype()
    np.testing.assert_allclose(genesis.kaiser_window(6, True, 5.0).numpy(),
                               torch.kaiser_window(6, True, 5.0).numpy(), rtol=1e-6)
    np.testing.assert_allclose(genesis.hamming_window(6, False, 0.5, 0.5).numpy(),
                               torch.hamming_window(6, False, 0.5, 0.5).numpy(), atol=1e-7)
    with pytest.raises(RuntimeError, match="floating point"):
        genesis.hann_window(4, dtype=genesis.int64)
    with pytest.raises(RuntimeError):
        torch.hann_window(4, dtype=torch.int64)


@pytest.mark.parametrize("call, error", [
    (lambda lib: lib.ones(3).unfold(0, 4, 1), RuntimeError),
    (lambda lib: lib.ones(3).unfold(0, 2, 0), RuntimeError),
    (lambda lib: lib.as_strided(lib.ones(3), (2, 2), (1, 2)), RuntimeError),
    (lambda lib: lib.combinations(lib.ones(2, 2)), RuntimeError),
    (lambda lib: lib.renorm(lib.ones(2, 2), 0, 0, 1.0), RuntimeError),
])
def test_errors_are_torchs_types(call, error):
    torch = torch_or_skip()
    with pytest.raises(error):
        call(genesis)
    with pytest.raises(error):
        call(torch)
