"""matmul family (mm, bmm, dot, outer) and einsum: shapes, dtypes, errors, second order."""
import numpy as np
import pytest

import genesis
from genesis.autograd import gradcheck
from tests.helpers import torch_or_skip


def test_outer_and_dot_values_and_gradients():
    a = genesis.tensor([1.0, 2.0], requires_grad=True)
    b = genesis.tensor([3.0, 4.0, 5.0], requires_grad=True)
    genesis.outer(a, b).sum().backward()
    assert a.grad.tolist() == [12.0, 12.0] and b.grad.tolist() == [3.0, 3.0, 3.0]
    c = genesis.tensor([1.0, -1.0], requires_grad=True)
    d = a.dot(c)
    assert d.shape == () and d.item() == -1.0
    d.backward()
    assert c.grad.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("call, message", [
    (lambda: genesis.bmm(genesis.ones(2, 3), genesis.ones(2, 3, 4)), r"bmm: expected two 3-D tensors"),
    (lambda: genesis.bmm(genesis.ones(2, 3, 4), genesis.ones(3, 4, 5)), "bmm: the batch sizes differ"),
    (lambda: genesis.bmm(genesis.ones(2, 3, 4), genesis.ones(2, 3, 5)), "matmul: shapes .* inner dimensions"),
    (lambda: genesis.dot(genesis.ones(2), genesis.ones(3)), r"dot: .* same length, got shapes \(2,\) and \(3,\)"),
    (lambda: genesis.dot(genesis.ones(2, 2), genesis.ones(2)), "dot: expected two 1-D tensors"),
    (lambda: genesis.outer(genesis.ones(2, 1), genesis.ones(2)), "outer: expected two 1-D tensors"),
    (lambda: genesis.mm(genesis.ones(2), genesis.ones(2, 2)), "mm: expected two 2-D tensors"),
])
def test_shape_errors_name_the_op_and_shapes(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij,jk", [(2, 3), (3, 2)]), ("ba", [(2, 3)]), ("aB", [(2, 3)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]), ("...i->i", [(2, 3)]), ("i...->...", [(2, 3, 4)]),
    ("b i j , b j k -> b i k", [(1, 3, 4), (2, 4, 5)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("iij->ji", [(3, 3, 2)]), ("ij,ij->ij", [(1, 3), (2, 3)]), ("ii->", [(0, 0)]),
]


@pytest.mark.parametrize("equation, shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_matches_torch(equation, shapes):
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in shapes]
    ours = [genesis.tensor(a, dtype=genesis.float64, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, reference = genesis.einsum(equation, *ours), torch.einsum(equation, *theirs)
    assert out.shape == tuple(reference.shape)
    np.testing.assert_allclose(out.detach().numpy(), reference.detach().numpy(), rtol=1e-12, atol=1e-12)
    weights = rng.standard_normal(out.shape)
    out.backward(genesis.tensor(weights, dtype=genesis.float64))
    reference.backward(torch.tensor(weights))
    for mine, expected in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), expected.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 2)]), ("ii->i", [(3, 3)]), ("bi,bi->b", [(2, 3), (2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]), ("ij->", [(2, 3)]),
])
def test_einsum_second_derivatives(equation, shapes):
    rng = np.random.default_rng(1)
    operands = tuple(genesis.tensor(rng.standard_normal(shape), dtype=genesis.float64,
                                    requires_grad=True) for shape in shapes)
    assert genesis.autograd.gradgradcheck(lambda *ops: genesis.einsum(equation, *ops) ** 2, operands)


def test_einsum_accepts_a_list_and_returns_owned_data():
    x = genesis.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert genesis.einsum("ij,jk->ik", [x, x]).tolist() == (x @ x).tolist()
    transposed = genesis.einsum("ij->ji", x)
    transposed.fill_(0.0)
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert genesis.einsum("i,i->", genesis.tensor([1, 2]), genesis.tensor([3, 4])).item() == 11


@pytest.mark.parametrize("equation, shapes, message", [
    ("ij,jk->ik", [(2, 3), (4, 5)], "einsum: subscript 'j' has size 3 in operand 0 but 4 in operand 1"),
    ("ij,jk->ik", [(2, 3)], r"einsum: the equation 'ij,jk->ik' names 2 operand\(s\), but 1 were given"),
    ("ij->iq", [(2, 3)], "einsum: output subscript 'q' does not appear in any input"),
    ("ij->ii", [(2, 2)], "einsum: output subscript 'i' appears more than once"),
    ("ii->i", [(2, 3)], "einsum: subscript 'i' is repeated in operand 0 .* different sizes, 2 and 3"),
    ("ijk->i", [(2, 3)], r"einsum: operand 0 has 2 dim\(s\) .* its subscripts 'ijk' name 3"),
    ("i1->i", [(2, 3)], "einsum: invalid character '1'"),
    ("...i...->i", [(2, 3)], "einsum: operand 0's subscripts '...i...' use '...' more than once"),
])
def test_einsum_errors(equation, shapes, message):
    with pytest.raises(RuntimeError, match=message):
        genesis.einsum(equation, *[genesis.ones(*shape) for shape in shapes])


@pytest.mark.parametrize("arguments, equation", [
    (((2, 3), [0, 1], (3, 4), [1, 2], [0, 2]), "ab,bc->ac"),
    (((5, 2, 3), [Ellipsis, 0, 1], [Ellipsis, 1]), "...ab->...b"),
    (((3, 3), [7, 7]), "hh"),
    (((2, 3), [0, 1], (2, 3), [0, 1], (3,), [1], [0]), "ab,ab,b->a"),
])
def test_einsum_sublist_form_is_the_equation_form(arguments, equation):
    rng = np.random.default_rng(0)
    tensors = [genesis.from_numpy(rng.standard_normal(item)).requires_grad_()
               for item in arguments if isinstance(item, tuple)]

    def sublist_call(*operands):
        given = iter(operands)
        return genesis.einsum(*[next(given) if isinstance(item, tuple) else item for item in arguments])

    np.testing.assert_allclose(sublist_call(*tensors).detach().numpy(),
                               genesis.einsum(equation, *tensors).detach().numpy())
    assert gradcheck(sublist_call, tuple(tensors))


def test_einsum_sublist_errors():
    a = genesis.ones(2, 2)
    with pytest.raises(RuntimeError, match=r"ints in \[0, 52\) or Ellipsis, got 52"):
        genesis.einsum(a, [0, 52])
    with pytest.raises(RuntimeError, match="operand, sublist pairs"):
        genesis.einsum(a, [0, 1], a)


MIXED_DTYPE_PRODUCTS = {
    "matmul": lambda L, a, b: a @ b, "mm": lambda L, a, b: L.mm(a, b),
    "bmm": lambda L, a, b: L.bmm(a.unsqueeze(0), b.unsqueeze(0)),
    "dot": lambda L, a, b: L.dot(a[0], b[0]), "mv": lambda L, a, b: L.mv(a, b[0]),
    "batched matmul": lambda L, a, b: L.matmul(a.expand(3, 2, 2), b),
    "linear": lambda L, a, b: L.nn.functional.linear(a, b),
}


@pytest.mark.parametrize("other", ["float32", "int64"])
@pytest.mark.parametrize("name", list(MIXED_DTYPE_PRODUCTS))
def test_matrix_products_refuse_mixed_dtypes_as_pytorch(name, other):
    """PyTorch does not promote in a matrix product: f64 @ f32 is a RuntimeError."""
    torch = torch_or_skip()
    for library in (torch, genesis):
        a = library.ones(2, 2, dtype=library.float64)
        b = library.ones(2, 2, dtype=getattr(library, other))
        with pytest.raises(RuntimeError) as caught:
            MIXED_DTYPE_PRODUCTS[name](library, a, b)
    assert "float64" in str(caught.value) and other in str(caught.value)


def test_autocast_still_casts_mixed_matmul_operands():
    a, b = genesis.ones(2, 2), genesis.ones(2, 2, dtype=genesis.bfloat16)
    with genesis.autocast("cpu", dtype=genesis.bfloat16):
        assert (a @ b).dtype == genesis.bfloat16
