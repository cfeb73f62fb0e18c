"""gather / scatter / scatter_add / index_* / take_along_dim: in-place variants, repeated
indices, errors; and the single scatter-add helper."""
import pathlib

import numpy as np
import pytest

import genesis
from genesis.ops._scatter import add_at
from tests.helpers import torch_or_skip


def leaf(values):
    return genesis.tensor(values, dtype=genesis.float64, requires_grad=True)


def test_gather_gradient_accumulates_repeated_indices():
    x = leaf([[1.0, 2.0, 3.0]])
    x.gather(1, genesis.tensor([[2, 2, 0, 2]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 3.0]]


def test_scatter_from_a_larger_src_reads_only_the_index_corner():
    src = leaf(np.arange(12.0).reshape(3, 4))
    out = genesis.zeros(3, 3, dtype=genesis.float64).scatter(0, genesis.tensor([[0, 1, 2]]), src)
    assert out.tolist() == [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]
    out.sum().backward()
    expected = np.zeros((3, 4))
    expected[0, :3] = 1.0
    assert src.grad.tolist() == expected.tolist()


def test_index_fill_with_repeated_indices_counts_each_filled_element_once():
    x, value = leaf(np.ones((3, 4))), leaf(2.0)
    x.index_fill(0, genesis.tensor([0, 0]), value).sum().backward()
    assert value.grad.item() == 4.0
    assert x.grad[0].tolist() == [0.0] * 4 and x.grad[1].tolist() == [1.0] * 4


IN_PLACE = {
    "scatter_": (lambda y, s: y.scatter_(1, genesis.tensor([[2, 0], [1, 2]]), s),
                 lambda y, s, torch: y.scatter_(1, torch.tensor([[2, 0], [1, 2]]), s)),
    "scatter_ value": (lambda y, s: y.scatter_(0, genesis.tensor([[1, 0, 1]]), 7.0),
                       lambda y, s, torch: y.scatter_(0, torch.tensor([[1, 0, 1]]), 7.0)),
    "scatter_add_": (lambda y, s: y.scatter_add_(1, genesis.tensor([[2, 2], [0, 2]]), s),
                     lambda y, s, torch: y.scatter_add_(1, torch.tensor([[2, 2], [0, 2]]), s)),
    "index_add_": (lambda y, s: y.index_add_(1, genesis.tensor([2, 2]), s, alpha=3),
                   lambda y, s, torch: y.index_add_(1, torch.tensor([2, 2]), s, alpha=3)),
    "index_fill_": (lambda y, s: y.index_fill_(1, genesis.tensor([0, 2]), -1.0),
                    lambda y, s, torch: y.index_fill_(1, torch.tensor([0, 2]), -1.0)),
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_variants_match_torch_with_gradients(name):
    torch = torch_or_skip()
    ours_op, torch_op = IN_PLACE[name]
    rng = np.random.default_rng(0)
    data, src = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))
    x, s = leaf(data), leaf(src)
    t, ts = torch.tensor(data, requires_grad=True), torch.tensor(src, requires_grad=True)
    y, ty = x * 1, t * 1
    assert ours_op(y, s) is y
    torch_op(ty, ts, torch)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    weights = rng.standard_normal((2, 3))
    (y * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
    if ts.grad is not None:
        np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy())


def test_in_place_variants_without_graph_write_into_the_tensor():
    x = genesis.zeros(2, 3)
    x.scatter_add_(1, genesis.tensor([[0, 0]]), genesis.ones(1, 2))
    x.index_fill_(0, genesis.tensor([1]), 5.0)
    assert x.tolist() == [[2.0, 0.0, 0.0], [5.0, 5.0, 5.0]] and x._version == 2


def test_take_along_dim_with_argmax_and_negative_indices():
    torch = torch_or_skip()
    data = np.array([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    x, t = genesis.tensor(data), torch.tensor(data)
    picked = genesis.take_along_dim(x, x.argmax(dim=1, keepdim=True), dim=1)
    assert picked.tolist() == [[30.0], [60.0]]
    ours = x.take_along_dim(genesis.tensor([[-1], [0]]), 1)
    np.testing.assert_array_equal(ours.numpy(), torch.take_along_dim(t, torch.tensor([[-1], [0]]), 1).numpy())


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.gather(1, genesis.tensor([[3]])), IndexError,
     r"gather: index 3 is out of bounds for dim 1 with size 3 \(allowed: \[0, 2\]\)"),
    (lambda x: x.gather(1, genesis.tensor([[-1]])), IndexError, "gather: index -1 is out of bounds"),
    (lambda x: x.gather(0, genesis.tensor([0, 1])), RuntimeError,
     "gather: the index must have as many dims as the input"),
    (lambda x: x.gather(1, genesis.tensor([[0], [1], [0]])), RuntimeError,
     r"gather: index shape \(3, 1\) is larger than input shape \(2, 3\) in dim 0"),
    (lambda x: x.gather(1, genesis.tensor([[0.0]])), RuntimeError, "gather: index must be an integer tensor"),
    (lambda x: x.gather(2, genesis.tensor([[0]])), IndexError, "gather: dim 2 is out of range"),
    (lambda x: x.scatter(1, genesis.tensor([[0, 1]]), genesis.ones(1, 1)), RuntimeError,
     "scatter: index shape .* must not be larger than src shape"),
    (lambda x: x.scatter(1, genesis.tensor([[0]])), TypeError, "scatter: pass exactly one of src"),
    (lambda x: x.scatter_add(1, genesis.tensor([[0]]), 1.0), TypeError, "scatter_add: src must be a Tensor"),
    (lambda x: x.index_select(0, genesis.tensor([[0]])), IndexError, "index_select: index must be a vector"),
    (lambda x: x.index_select(0, genesis.tensor([2])), IndexError, "index_select: index 2 is out of bounds"),
    (lambda x: x.index_add(1, genesis.tensor([0]), genesis.ones(2, 2)), RuntimeError,
     r"index_add: source has shape \(2, 2\), but .* needs \(2, 1\)"),
    (lambda x: x.index_fill(1, genesis.tensor([0]), genesis.ones(2)), RuntimeError,
     "index_fill: the value must be a number or a 0-d tensor"),
    (lambda x: x.take_along_dim(genesis.tensor([[3]]), 1), IndexError, "take_along_dim: index 3"),
    (lambda x: x.take_along_dim(genesis.tensor([[[0]]]), 1), RuntimeError,
     "take_along_dim: input and indices must have the same number of dims"),
])
def test_errors_name_the_op(call, error, message):
    with pytest.raises(error, match=message):
        call(genesis.zeros(2, 3))


def test_add_at_accumulates_repeated_positions():
    target = np.zeros((2, 3))
    add_at(np, target, (np.array([0, 0, 1]), np.array([2, 2, 0])), np.array([1.0, 2.0, 5.0]))
    assert target.tolist() == [[0.0, 0.0, 3.0], [5.0, 0.0, 0.0]]


@pytest.mark.parametrize("key, value_shape", [
    ((np.array([1, -2, 0]), Ellipsis), (3, 4)),       # distinct rows: the plain += path
    ((np.array([4, -1]), Ellipsis), (2, 4)),          # -1 is row 4 again: must accumulate
    ((slice(None), np.array([[0], [3], [3]])), (5, 3, 1)),
    ((np.eye(5, 4, dtype=bool),), (4,)),
    ((np.array([0, 1, 1]), np.array([1, 1, 1])), (3,)),
    ((2, np.array([1, 3])), (2,)),
])
def test_add_at_matches_numpy_add_at(key, value_shape):
    values = np.random.default_rng(0).standard_normal(value_shape)
    expected, target = np.zeros((5, 4)), np.zeros((5, 4))
    np.add.at(expected, key, values)
    add_at(np, target, key, values)
    np.testing.assert_allclose(target, expected, rtol=1e-12)


def test_every_scatter_add_goes_through_the_one_helper():
    """NumPy and CuPy spell unbuffered scatter-add differently: only _scatter.py may know."""
    root = pathlib.Path(genesis.__file__).parent
    offenders = [str(path.relative_to(root)) for path in root.rglob("*.py")
                 if path.name != "_scatter.py"
                 and any(spelling in path.read_text() for spelling in ("add.at(", "cupyx.scatter_add"))]
    assert offenders == []


@pytest.mark.parametrize("op", ["scatter", "scatter_", "scatter_add", "scatter_add_"])
def test_scatter_refuses_a_src_of_another_dtype_as_pytorch(op):
    torch = torch_or_skip()
    for library in (torch, genesis):
        with pytest.raises(RuntimeError) as caught:
            getattr(library.zeros(3), op)(0, library.tensor([0]), library.tensor([1.0], dtype=library.float64))
    assert "float32" in str(caught.value) and "float64" in str(caught.value)
    assert genesis.zeros(3).scatter_(0, genesis.tensor([0]), 2).tolist() == [2.0, 0.0, 0.0]  # a number casts


SCATTER_REDUCE_CASES = [("add", "tensor"), ("multiply", "tensor"), ("add", "number"),
                        ("multiply", "number")]


@pytest.mark.parametrize("reduce, source", SCATTER_REDUCE_CASES)
@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
def test_scatter_with_reduce_matches_torch(reduce, source):
    torch = torch_or_skip()
    data = np.arange(1.0, 13.0).reshape(3, 4)
    index = np.array([[0, 2, 0, 1], [0, 0, 2, 2]])  # repeats within columns combine
    src = np.array([[2.0, -1.5, 0.5, 3.0], [4.0, 2.0, -2.0, 0.25]])
    results = []
    for lib in (genesis, torch):
        value = lib.from_numpy(src) if source == "tensor" else 1.5
        out = lib.from_numpy(data).scatter(0, lib.from_numpy(index), value, reduce=reduce)
        in_place = lib.from_numpy(data.copy())
        in_place.scatter_(0, lib.from_numpy(index), value, reduce=reduce)
        integers = lib.ones(3, 4, dtype=lib.int64).scatter(0, lib.from_numpy(index), 3, reduce=reduce)
        results.append((out.tolist(), in_place.tolist(), integers.tolist(), str(integers.dtype)[-5:]))
    assert results[0] == results[1]


def test_scatter_with_reduce_warns_and_refuses_others_as_torch():
    x, index = genesis.ones(3), genesis.tensor([0, 0])
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src"):
        x.scatter(0, index, genesis.ones(2), reduce="add")
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.scatter(0, index, 2.0, reduce="sum")
    with pytest.raises(RuntimeError, match="leaf"):
        genesis.ones(3, requires_grad=True).scatter_(0, index, 2.0, reduce="add")


@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
def test_scatter_with_reduce_gradients_pass_gradcheck(reduce):
    """PyTorch has no derivative for it; genesis's is that of scatter_reduce ("sum", "prod")."""
    rng = np.random.default_rng(0)
    index = genesis.tensor([[0, 2, 0, 1], [0, 0, 2, 2]])
    x, src = leaf(rng.standard_normal((3, 4))), leaf(rng.standard_normal((2, 4)))
    frozen = src.detach()

    def both(x, src):
        return x.scatter(0, index, src, reduce=reduce)

    assert genesis.autograd.gradcheck(both, (x, src))
    assert genesis.autograd.gradcheck(both, (x, frozen))  # src needs no grad
    assert genesis.autograd.gradcheck(lambda src: genesis.ones(3, 4, dtype=genesis.float64).scatter(
        0, index, src, reduce=reduce), (src,))
    assert genesis.autograd.gradgradcheck(both, (x, src))

    def in_place(x, src):
        out = x * 1.0
        out.scatter_(0, index, src, reduce=reduce)
        return out

    assert genesis.autograd.gradcheck(in_place, (x, src))
