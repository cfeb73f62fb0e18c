"""The integer-valued and searching ops beside the composites (no gradient to check):
equal to PyTorch's results; and the composites' edges."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def both(torch, data, dtype=None):
    return genesis.tensor(data, dtype=dtype), torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None)


CALLS = [
    ("searchsorted", lambda m, a, b: m.searchsorted(a, b), ([[1, 3, 5, 7], [2, 4, 6, 8]], [[3, 6], [1, 9]])),
    ("searchsorted right", lambda m, a, b: m.searchsorted(a, b, right=True), ([1, 3, 5], [3, 4])),
    ("bucketize", lambda m, a, b: m.bucketize(a, b), ([1, 4, 7, 9], [1, 3, 5, 7])),
    ("count_nonzero", lambda m, a: m.count_nonzero(a), ([[0, 1, 2], [0, 0, 3]],)),
    ("count_nonzero dim", lambda m, a: m.count_nonzero(a, dim=1), ([[0, 1, 2], [0, 0, 3]],)),
    ("bincount", lambda m, a: m.bincount(a, minlength=6), ([0, 2, 2, 3],)),
    ("unique", lambda m, a: m.unique(a, return_inverse=True, return_counts=True), ([3, 1, 3, 2, 1],)),
    ("tril_indices", lambda m: m.tril_indices(3, 4, 1), ()),
    ("triu_indices", lambda m: m.triu_indices(4, 3, -1), ()),
    ("meshgrid xy", lambda m, a, b: m.meshgrid(a, b, indexing="xy"), ([1, 2, 3], [4, 5])),
    ("broadcast_tensors", lambda m, a, b: m.broadcast_tensors(a, b), ([[1], [2]], [3, 4, 5])),
    ("fliplr", lambda m, a: m.fliplr(a), ([[1, 2, 3], [4, 5, 6]],)),
    ("flipud", lambda m, a: m.flipud(a), ([[1, 2, 3], [4, 5, 6]],)),
    ("histc", lambda m, a: m.histc(a, bins=4, min=0, max=4), ([0.5, 1.5, 1.7, 3.9, 7.0],)),
    ("logspace", lambda m: m.logspace(-1, 2, 4), ()),
    ("repeat_interleave counts", lambda m, a: m.repeat_interleave(a), ([2, 0, 3],)),
    ("nanquantile", lambda m, a: m.nanquantile(a, 0.5), ([1.0, float("nan"), 3.0, 4.0],)),
    ("nanmean dim", lambda m, a: m.nanmean(a, 1), ([[1.0, float("nan")], [2.0, 4.0]],)),
    ("quantile q tensor", lambda m, a, q: m.quantile(a, q), ([1.0, 2.0, 3.0, 4.0, 10.0], [0.1, 0.5, 0.9])),
    ("mode", lambda m, a: m.mode(a, 1), ([[1, 2, 2, 3, 3, 1, 1], [5, 4, 4, 5, 0, 0, 0]],)),
    ("mode dim 0", lambda m, a: m.mode(a, 0, keepdim=True), ([[1.0, 2.0], [2.0, 1.0], [1.0, 1.0]],)),
    ("nanmedian dim", lambda m, a: m.nanmedian(a, 1), ([[1.0, float("nan"), 3.0], [4.0, 1.0, 2.0]],)),
    ("nanmedian all", lambda m, a: m.nanmedian(a), ([1.0, float("nan"), 3.0, 2.0],)),
]


def _plain(value):
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return np.asarray(value.tolist(), dtype=np.float64).tolist()


@pytest.mark.parametrize("name, call, data", CALLS, ids=[c[0] for c in CALLS])
def test_matches_pytorch(name, call, data):
    torch = torch_or_skip()
    mine = call(genesis, *[genesis.tensor(d) for d in data])
    theirs = call(torch, *[torch.tensor(d) for d in data])
    pairs = zip(mine, theirs) if isinstance(mine, tuple) else [(mine, theirs)]
    for a, b in pairs:
        np.testing.assert_allclose(np.asarray(_plain(a), dtype=np.float64),
                                   np.asarray(_plain(b), dtype=np.float64), rtol=1e-6, equal_nan=True)


def test_refusals_name_the_problem():
    with pytest.raises(RuntimeError, match="non-negative integral"):
        genesis.bincount(genesis.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="range \\[0, 1\\]"):
        genesis.quantile(genesis.tensor([1.0, 2.0]), 1.5)
    with pytest.raises(RuntimeError, match="length 3"):
        genesis.cross(genesis.zeros(2, 3), genesis.zeros(2, 3), dim=0)
    with pytest.raises(RuntimeError, match="2 or fewer dimensions"):
        genesis.block_diag(genesis.zeros(1, 1, 1))
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        genesis.broadcast_shapes((2, 3), (4,))


@pytest.mark.parametrize("name", ["expit", "erfc", "ndtr", "sinc", "entr"])
def test_special_functions_match_pytorch_and_their_gradients_are_right(name):
    torch = torch_or_skip()
    import genesis.special as special
    x = np.array([-1.5, -0.2, 0.3, 2.0, 0.7])
    mine = getattr(special, name)(genesis.tensor(x, dtype=genesis.float64))
    np.testing.assert_allclose(mine.numpy(), getattr(torch.special, name)(torch.tensor(x)).numpy(), rtol=1e-12)
    inputs = (genesis.tensor(np.abs(x) + 0.1 if name == "entr" else x, dtype=genesis.float64,
                             requires_grad=True),)
    assert genesis.autograd.gradcheck(getattr(special, name), inputs)


def test_special_xlog1py_and_edges():
    import genesis.special as special
    assert special.xlog1py(genesis.tensor([0.0]), genesis.tensor([-1.0])).tolist() == [0.0]
    assert special.sinc(genesis.tensor([0.0])).tolist() == [1.0]
    assert special.entr(genesis.tensor([0.0, -1.0])).tolist() == [0.0, float("-inf")]


def test_nanmedian_and_mode_values_carry_gradients():
    x = genesis.tensor([[3.0, 1.0, float("nan")], [2.0, 5.0, 4.0]], dtype=genesis.float64, requires_grad=True)
    genesis.nanmedian(x, 1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    y = genesis.tensor([2.0, 7.0, 2.0], requires_grad=True)
    genesis.mode(y).values.backward()
    assert y.grad.tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("name", ["median", "nanmedian", "max", "min"])
@pytest.mark.parametrize("values", [[1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [float("nan")] * 3,
                                    [float("nan"), 1.0, 2.0, 3.0], [3.0, 1.0, 2.0]])
def test_full_reductions_share_the_gradient_among_ties_as_torch(name, values):
    torch = torch_or_skip()
    results = []
    for library in (torch, genesis):
        x = library.tensor(values, dtype=library.float64, requires_grad=True)
        out = getattr(library, name)(x)
        out.backward()
        results.append((out.item(), x.grad.tolist()))
    np.testing.assert_array_equal(np.array(results[1][1]), np.array(results[0][1]))
    np.testing.assert_array_equal(results[1][0], results[0][0])


def test_median_along_a_dim_picks_the_nan_of_a_row_as_torch():
    torch = torch_or_skip()
    data = [[1.0, float("nan"), 2.0], [4.0, 3.0, 5.0]]
    expected = torch.median(torch.tensor(data), 1)
    got = genesis.median(genesis.tensor(data), 1)
    np.testing.assert_array_equal(got.values.numpy(), expected.values.numpy())
    assert got.indices.tolist() == expected.indices.tolist()


def _gradients_in_both(torch, function, *values):
    """function(library, *tensors)'s value and its inputs' gradients, genesis then torch."""
    results = []
    for library in (genesis, torch):
        inputs = [library.tensor(v, requires_grad=True) for v in values]
        function(library, *inputs).sum().backward()
        results.append([x.grad.numpy() for x in inputs])
    return results


@pytest.mark.parametrize("name, function, values", [
    ("logit", lambda L, x: L.logit(x), ([-0.5, 0.0, 0.25, 1.0, 1.5],)),
    ("logit eps", lambda L, x: L.logit(x, 0.1), ([-0.5, 0.0, 0.05, 0.25, 1.0],)),
    ("xlogy", lambda L, x, y: L.xlogy(x, y), ([0.0, 0.0, 2.0, 1.0, 0.0], [0.0, 2.0, 0.0, float("nan"), -1.0])),
])
def test_gradients_at_the_domain_edge_match_pytorch(name, function, values):
    """logit'(0) is inf (the quotient rule gave 0 * inf = nan), nan outside [0, 1]; xlogy's
    gradient in y at x = y = 0 is nan (0 / 0) and in x at x = 0 is log y (0 where y <= 0)."""
    torch = torch_or_skip()
    ours, theirs = _gradients_in_both(torch, function, *values)
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine, reference, rtol=1e-6)


GRADIENT_CASES = [
    ("1-d", (7,), {}),
    ("spacing", (3, 5), {"spacing": 0.5}),
    ("spacing per dim", (3, 5), {"spacing": [2.0, 0.25]}),
    ("one dim", (3, 4, 5), {"dim": 1}),
    ("dims", (3, 4, 5), {"dim": [2, 0], "spacing": [1.5, 3.0]}),
    ("edge order 2", (4, 6), {"edge_order": 2}),
    ("coordinates", (5, 4), {"spacing": ([0.0, 1.0, 3.0, 3.5, 6.0], [0.0, 0.5, 2.0, 4.0]),
                             "edge_order": 1}),
    ("coordinates edge order 2", (6,), {"spacing": ([0.0, 1.0, 1.5, 3.0, 3.2, 5.0],), "edge_order": 2}),
]


@pytest.mark.parametrize("name, shape, kwargs", GRADIENT_CASES, ids=[c[0] for c in GRADIENT_CASES])
def test_gradient_matches_pytorch_with_its_own_gradient(name, shape, kwargs):
    torch = torch_or_skip()
    values = np.random.default_rng(0).standard_normal(shape)
    outs, leaves = [], []
    for lib in (genesis, torch):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        spacing = kwargs.get("spacing", 1)
        if isinstance(spacing, tuple):  # coordinates
            spacing = tuple(lib.tensor(c, dtype=lib.float64) for c in spacing)
        result = lib.gradient(x, **{**kwargs, "spacing": spacing})
        weights = [np.random.default_rng(k + 1).standard_normal(tuple(r.shape)) for k, r in enumerate(result)]
        sum((r * lib.tensor(w, dtype=lib.float64)).sum() for r, w in zip(result, weights)).backward()
        outs.append(result)
        leaves.append(x)
    assert len(outs[0]) == len(outs[1])
    for mine, theirs in zip(*outs):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(leaves[0].grad.numpy(), leaves[1].grad.numpy(), rtol=1e-12, atol=1e-12)
    assert genesis.autograd.gradcheck(lambda x: genesis.gradient(x, **{**kwargs, "spacing": tuple(
        genesis.tensor(c, dtype=genesis.float64) for c in kwargs["spacing"])} if isinstance(
        kwargs.get("spacing"), tuple) else kwargs), (genesis.tensor(values, dtype=genesis.float64,
                                                                    requires_grad=True),))


def test_gradient_of_integers_is_float_and_refusals_match_pytorch():
    torch = torch_or_skip()
    assert genesis.gradient(genesis.arange(4))[0].dtype == genesis.float32
    for lib in (genesis, torch):
        with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
            lib.gradient(lib.ones(2), edge_order=2)
        with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
            lib.gradient(lib.ones(4), edge_order=3)
        with pytest.raises(RuntimeError, match="since dim argument was not given, but got a list of length 1"):
            lib.gradient(lib.ones(3, 3), spacing=[1.0])
