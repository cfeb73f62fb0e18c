"""scatter_reduce / index_reduce / index_copy / index_put / masked_scatter / put / *_scatter /
fill_diagonal_: ties and zeros in the gradients, in-place forms, errors, compared with PyTorch."""
import numpy as np
import pytest

import genesis
from genesis.autograd import gradcheck, gradgradcheck
from tests.helpers import torch_or_skip


def leaf(values):
    return genesis.tensor(values, dtype=genesis.float64, requires_grad=True)


def _compare(ours_fn, torch_fn, *arrays, weights_shape=None):
    """Values and gradients of ours_fn(*leaves) and torch_fn(torch, *leaves)."""
    torch = torch_or_skip()
    ours = [leaf(a) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, expected = ours_fn(*ours), torch_fn(torch, *theirs)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    weights = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    (out * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), atol=1e-12)


TIES_INPUT = np.array([[1.0, 3.0, 2.0], [0.5, 0.5, 4.0]])
TIES_SRC = np.array([[3.0, 3.0, 1.0], [0.5, 4.0, 4.0]])
TIES_INDEX = [[1, 1, 0], [0, 2, 2]]


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_extreme_gradients_are_shared_among_ties_as_torch(reduce, include_self):
    _compare(lambda a, s: a.scatter_reduce(1, genesis.tensor(TIES_INDEX), s, reduce,
                                           include_self=include_self),
             lambda torch, a, s: a.scatter_reduce(1, torch.tensor(TIES_INDEX), s, reduce,
                                                  include_self=include_self),
             TIES_INPUT, TIES_SRC)


@pytest.mark.parametrize("src", [[[2.0, 0.0, 3.0, 5.0]], [[0.0, 0.0, 3.0, 5.0]],
                                 [[2.0, 4.0, 3.0, 0.0]]],
                         ids=["one zero", "two zeros", "zero alone"])
@pytest.mark.parametrize("include_self", [True, False])
def test_prod_gradient_is_exact_at_zeros(src, include_self):
    index = [[0, 0, 0, 2]]
    _compare(lambda a, s: a.scatter_reduce(1, genesis.tensor(index), s, "prod",
                                           include_self=include_self),
             lambda torch, a, s: a.scatter_reduce(1, torch.tensor(index), s, "prod",
                                                  include_self=include_self),
             np.array([[1.5, -2.0, 0.0]]), np.array(src))


def test_prod_and_mean_have_second_derivatives():
    index = genesis.tensor([[0, 0, 1], [2, 1, 1]])
    for reduce in ("prod", "mean", "amax"):
        x, s = leaf(np.array([[1.5, -2.0, 0.7], [0.3, 1.1, -0.9]])), leaf(
            np.array([[0.8, 1.2, -1.3], [2.0, 0.6, 1.7]]))
        call = (lambda a, b, reduce=reduce: a.scatter_reduce(1, index, b, reduce))
        assert gradcheck(call, (x, s)) and gradgradcheck(call, (x, s))


def test_integer_mean_floors_as_torch():
    torch = torch_or_skip()
    ours = genesis.tensor([4, 5, 6]).scatter_reduce(0, genesis.tensor([0, 0, 1]),
                                                    genesis.tensor([1, 2, 8]), "mean")
    expected = torch.tensor([4, 5, 6]).scatter_reduce(0, torch.tensor([0, 0, 1]),
                                                      torch.tensor([1, 2, 8]), "mean")
    assert ours.tolist() == expected.tolist()


IN_PLACE = {
    "scatter_reduce_": (
        lambda y, s, g: y.scatter_reduce_(1, g.tensor([[2, 0], [2, 2]]), s, "amax"),
        lambda y, s, g: y.scatter_reduce_(1, g.tensor([[2, 0], [2, 2]]), s, "amax")),
    "index_reduce_": (lambda y, s, g: y.index_reduce_(1, g.tensor([2, 2]), s, "prod"),
                      lambda y, s, g: y.index_reduce_(1, g.tensor([2, 2]), s, "prod")),
    "index_copy_": (lambda y, s, g: y.index_copy_(1, g.tensor([2, 0]), s),
                    lambda y, s, g: y.index_copy_(1, g.tensor([2, 0]), s)),
    "index_put_": (lambda y, s, g: y.index_put_((g.tensor([1, 1]),), s[:, :1], accumulate=True),
                   lambda y, s, g: y.index_put_((g.tensor([1, 1]),), s[:, :1], accumulate=True)),
    "masked_scatter_": (lambda y, s, g: y.masked_scatter_(g.tensor([True, False, True]), s),
                        lambda y, s, g: y.masked_scatter_(g.tensor([True, False, True]), s)),
    "put_": (lambda y, s, g: y.put_(g.tensor([5, 0, 5]), s[0, :1].expand(3), accumulate=True),
             lambda y, s, g: y.put_(g.tensor([5, 0, 5]), s[0, :1].expand(3), accumulate=True)),
    "fill_diagonal_": (lambda y, s, g: y.fill_diagonal_(-1.0),
                       lambda y, s, g: y.fill_diagonal_(-1.0)),
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_forms_match_torch_with_gradients(name):
    torch = torch_or_skip()
    ours_op, torch_op = IN_PLACE[name]
    rng = np.random.default_rng(0)
    data, src = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))
    x, s = leaf(data), leaf(src)
    t, ts = torch.tensor(data, requires_grad=True), torch.tensor(src, requires_grad=True)
    y, ty = x * 1, t * 1
    assert ours_op(y, s, genesis) is y
    torch_op(ty, ts, torch)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    weights = rng.standard_normal((2, 3))
    (y * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
    np.testing.assert_allclose(s.grad.numpy() if s.grad is not None else np.zeros((2, 2)),
                               ts.grad.numpy() if ts.grad is not None else np.zeros((2, 2)))


def test_in_place_forms_without_graph_write_into_the_tensor():
    x = genesis.zeros(3, 3)
    x.fill_diagonal_(2.0)
    x.index_copy_(0, genesis.tensor([2]), genesis.ones(1, 3))
    x.scatter_reduce_(1, genesis.tensor([[0, 0]]), genesis.tensor([[5.0, 7.0]]), "sum")
    assert x.tolist() == [[14.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 1.0]]


@pytest.mark.parametrize("shape, wrap", [((7, 3), True), ((7, 3), False), ((3, 5), True),
                                         ((4, 4, 4), False)])
def test_fill_diagonal_wraps_as_torch(shape, wrap):
    torch = torch_or_skip()
    ours = genesis.zeros(*shape).fill_diagonal_(1.0, wrap=wrap)
    assert ours.tolist() == torch.zeros(*shape).fill_diagonal_(1.0, wrap=wrap).tolist()


@pytest.mark.parametrize("offset, dim1, dim2", [(0, 0, 1), (2, 1, 0), (-1, 0, 2), (1, 2, 1)])
def test_diagonal_scatter_matches_torch(offset, dim1, dim2):
    torch = torch_or_skip()
    data = np.arange(24.0).reshape(2, 3, 4)
    diagonal = torch.tensor(data).diagonal(offset, dim1, dim2)
    src = np.arange(diagonal.numel(), dtype=float).reshape(tuple(diagonal.shape)) + 100
    _compare(lambda a, s: genesis.diagonal_scatter(a, s, offset, dim1, dim2),
             lambda torch, a, s: torch.diagonal_scatter(a, s, offset, dim1, dim2), data, src)


def test_index_put_accumulates_repeats_and_gradchecks():
    x, v = leaf(np.zeros((3, 2))), leaf(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    index = (genesis.tensor([0, 2, 0]),)
    out = x.index_put(index, v, accumulate=True)
    assert out.tolist() == [[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]]
    assert gradcheck(lambda a, b: a.index_put(index, b, accumulate=True), (x, v))


ERRORS = [
    (lambda g, x: x.scatter_reduce(0, g.tensor([0]), g.ones(1), "median"), RuntimeError,
     "reduce"),
    (lambda g, x: x.scatter_reduce(0, g.tensor([3]), g.ones(1), "sum"), (IndexError, RuntimeError),
     "index"),
    (lambda g, x: x.scatter_reduce(0, g.tensor([0]), g.ones(1, dtype=g.float64), "sum"),
     RuntimeError, "dtype"),
    (lambda g, x: x.index_reduce(0, g.tensor([0]), g.ones(1), "sum"), RuntimeError, "reduce"),
    (lambda g, x: x.index_copy(0, g.tensor([0, 1]), g.ones(3)), IndexError, "source"),
    (lambda g, x: x.masked_scatter(g.tensor([True, True, False]), g.ones(1)), RuntimeError,
     "source"),
    (lambda g, x: x.put(g.tensor([0, 1]), g.ones(3)), IndexError, "elements"),
    (lambda g, x: x.put(g.tensor([5]), g.ones(1)), (IndexError, RuntimeError), "index"),
    (lambda g, x: x.select_scatter(g.ones(2), 0, 0), RuntimeError, "shape"),
    (lambda g, x: x.slice_scatter(g.ones(3), 0, 0, 2), RuntimeError, "shape"),
    (lambda g, x: x.diagonal_scatter(g.ones(2)), IndexError, "out of range"),
    (lambda g, x: x.fill_diagonal_(1.0), RuntimeError, "dimensions"),
]


@pytest.mark.parametrize("call, error, message", ERRORS)
def test_errors_are_torchs_types_and_name_the_op(call, error, message):
    torch = torch_or_skip()
    with pytest.raises(error, match=message):
        call(genesis, genesis.zeros(3))
    with pytest.raises(error):
        call(torch, torch.zeros(3))
