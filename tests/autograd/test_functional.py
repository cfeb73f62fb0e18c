"""genesis.autograd.functional: closed forms, PyTorch's shapes and tuple structure, strict mode."""
import numpy as np
import pytest

import genesis
from genesis.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp
from tests.helpers import torch_or_skip


def double(values, requires_grad=False):
    return genesis.tensor(np.asarray(values, dtype=np.float64), dtype=genesis.float64,
                          requires_grad=requires_grad)


def rand(shape, seed=0):
    return double(np.random.default_rng(seed).uniform(-1, 1, shape))


def close(actual, expected):
    np.testing.assert_allclose(actual.detach().numpy(), np.asarray(expected), rtol=1e-12, atol=1e-12)


# -- closed forms ------------------------------------------------------------------------

def test_jacobian_of_elementwise_function_is_diagonal():
    x = rand((4,))
    tanh = np.tanh(x.numpy())
    close(jacobian(lambda x: x.tanh(), x), np.diag(1 - tanh ** 2))


def test_jacobian_of_matrix_vector_product_is_the_matrix():
    a, v = rand((3, 4), seed=1), rand((4,), seed=2)
    ja, jv = jacobian(lambda a, v: a @ v, (a, v))
    close(jv, a.numpy())
    assert ja.shape == (3, 3, 4)
    expected = np.zeros((3, 3, 4))
    for row in range(3):
        expected[row, row] = v.numpy()
    close(ja, expected)


def test_hessian_of_quadratic_form_is_symmetric_part():
    a = rand((3, 3), seed=3)
    x = rand((3,), seed=4)
    close(hessian(lambda x: x @ (a @ x), x), a.numpy() + a.numpy().T)


def test_hessian_of_sum_of_cubes_for_two_inputs():
    x, y = double([1.0, 2.0]), double([3.0])
    (hxx, hxy), (hyx, hyy) = hessian(lambda x, y: (x ** 3).sum() * y.sum(), (x, y))
    close(hxx, np.diag(6 * x.numpy() * 3.0))
    close(hxy, (3 * x.numpy() ** 2).reshape(2, 1))
    close(hyx, (3 * x.numpy() ** 2).reshape(1, 2))
    close(hyy, [[0.0]])


def test_vjp_and_jvp_match_the_jacobian():
    x = rand((2, 3), seed=5)
    v_out, v_in = rand((2, 3), seed=6), rand((2, 3), seed=7)
    func = lambda x: (x * 2 + 1).tanh() * x  # noqa: E731
    full = jacobian(func, x).numpy().reshape(6, 6)
    value, product = vjp(func, x, v_out)
    close(value, func(x).numpy())
    close(product, (v_out.numpy().reshape(-1) @ full).reshape(2, 3))
    _, product = jvp(func, x, v_in)
    close(product, (full @ v_in.numpy().reshape(-1)).reshape(2, 3))


def test_vhp_and_hvp_match_the_hessian():
    x, v = rand((3,), seed=8), rand((3,), seed=9)
    func = lambda x: (x.tanh() ** 3).sum()  # noqa: E731
    full = hessian(func, x).numpy()
    value, product = vhp(func, x, v)
    assert value.shape == ()
    close(product, v.numpy() @ full)
    _, product = hvp(func, x, v)
    close(product, full @ v.numpy())


def test_v_may_be_omitted_for_single_elements():
    x = double(2.0)
    _, gradient = vjp(lambda x: x ** 3, x)
    close(gradient, 12.0)
    _, tangent = jvp(lambda x: (x ** 3, x * 2), x)
    close(tangent[0], 12.0)
    close(tangent[1], 2.0)


# -- structure, graphs, errors ------------------------------------------------------------

def test_tuple_structure_follows_inputs_and_outputs():
    x, y = rand((2,)), rand((3,), seed=1)
    assert isinstance(jacobian(lambda x: x * 2, x), genesis.Tensor)
    assert jacobian(lambda x: (x * 2, x.sum()), x)[1].shape == (2,)
    both = jacobian(lambda x, y: (x * 2, y.sum() * x), (x, y))
    assert [[block.shape for block in row] for row in both] == [[(2, 2), (2, 3)], [(2, 2), (2, 3)]]
    single = jacobian(lambda x: (x * 2,), x)
    assert isinstance(single, tuple) and single[0].shape == (2, 2)


def test_unused_input_gets_zeros_or_a_strict_error():
    x, y = rand((2,)), rand((3,), seed=1)
    close(jacobian(lambda x, y: x * 2, (x, y))[1], np.zeros((2, 3)))
    close(vjp(lambda x, y: (x * 2).sum(), (x, y))[1][1], np.zeros(3))
    with pytest.raises(RuntimeError,
                       match="Output 0 of the user-provided function is independent of input 1"):
        jacobian(lambda x, y: x * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        vjp(lambda x, y: (x * 2).sum(), (x, y), strict=True)


def test_strict_hessian_of_a_linear_function_is_an_error():
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 "
                                           "is independent of the input"):
        hessian(lambda x: (x * 2).sum(), rand((2,)), strict=True)
    close(hessian(lambda x: (x * 2).sum(), rand((2,))), np.zeros((2, 2)))


def test_results_are_detached_unless_create_graph():
    x = rand((3,)).requires_grad_()
    plain = jacobian(lambda x: x.tanh(), x)
    assert not plain.requires_grad and x.grad is None
    graph = jacobian(lambda x: x.tanh(), x, create_graph=True)
    assert graph.requires_grad
    graph.sum().backward()  # d/dx sum(diag(1 - tanh^2)) = -2 tanh (1 - tanh^2)
    t = np.tanh(x.detach().numpy())
    close(x.grad, -2 * t * (1 - t ** 2))


def test_inputs_are_not_modified_and_need_not_require_grad():
    x = rand((3,))
    vjp(lambda x: x * 2, x, rand((3,), seed=1))
    assert not x.requires_grad and x.grad is None


@pytest.mark.parametrize("call, message", [
    (lambda: vjp(lambda x: x * 2, rand((3,))), "v can only be None if the user-provided function returns"),
    (lambda: jvp(lambda x: x * 2, rand((3,))), "v can only be None if the input"),
    (lambda: vjp(lambda x: x * 2, rand((3,)), rand((2,))),
     r"v has invalid size: should be \(3,\) but got \(2,\)"),
    (lambda: jvp(lambda x, y: x * y, (rand((2,)), rand((2,))), rand((2,))), "v is a tuple of invalid length"),
    (lambda: hessian(lambda x: x * 2, rand((3,))), "should contain a single element"),
    (lambda: vhp(lambda x: (x, x), rand((1,)), rand((1,))), "should return a single Tensor"),
])
def test_bad_arguments_have_clear_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_non_tensor_inputs_are_rejected():
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor or a tuple"):
        jacobian(lambda x: x, [1.0, 2.0])
    with pytest.raises(TypeError, match="outputs of the user-provided function given to vjp"):
        vjp(lambda x: 3.0, rand((1,)))


# -- against PyTorch ---------------------------------------------------------------------

def _torch_case(torch):
    a = np.random.default_rng(11).uniform(-1, 1, (2, 3))
    b = np.random.default_rng(12).uniform(-1, 1, (3,))
    v = np.random.default_rng(13).uniform(-1, 1, (2, 3))

    def func(x, y):
        return (x * y).tanh() * x, ((x @ y) ** 2).sum()

    def scalar(x, y):
        return ((x @ y).tanh() ** 2).sum() + (x * x).sum() * y.sum()

    return a, b, v, func, scalar


def _assert_same(ours, theirs):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for mine, reference in zip(ours, theirs):
            _assert_same(mine, reference)
        return
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"])
def test_matches_torch_autograd_functional(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as reference

    from genesis.autograd import functional

    a, b, v, func, scalar = _torch_case(torch)
    ours_in, theirs_in = (double(a), double(b)), (torch.tensor(a), torch.tensor(b))
    ours_v = (double(v), double(b))
    theirs_v = (torch.tensor(v), torch.tensor(b))
    if name == "jacobian":
        calls = [((func, ours_in), (func, theirs_in)),
                 ((lambda x: x.tanh(), ours_in[0]), (lambda x: x.tanh(), theirs_in[0]))]
    elif name == "hessian":
        calls = [((scalar, ours_in), (scalar, theirs_in))]
    elif name == "vjp":
        calls = [((func, ours_in, (ours_v[0], double(0.5))),
                  (func, theirs_in, (theirs_v[0], torch.tensor(0.5))))]
    elif name == "jvp":
        calls = [((func, ours_in, ours_v), (func, theirs_in, theirs_v))]
    else:
        calls = [((scalar, ours_in, ours_v), (scalar, theirs_in, theirs_v))]
    for ours_args, theirs_args in calls:
        _assert_same(getattr(functional, name)(*ours_args), getattr(reference, name)(*theirs_args))


def test_strategy_and_vectorize_arguments_follow_torchs_rules():
    torch = torch_or_skip()
    for library in (torch, genesis):
        functional = library.autograd.functional
        x = library.tensor([1.0, 2.0], dtype=library.float64)
        forward = functional.jacobian(lambda a: a ** 2, x, vectorize=True, strategy="forward-mode")
        assert forward.tolist() == [[2.0, 0.0], [0.0, 4.0]]
        outer = functional.hessian(lambda a: (a ** 3).sum(), x, vectorize=True,
                                   outer_jacobian_strategy="forward-mode")
        assert outer.tolist() == [[6.0, 0.0], [0.0, 12.0]]
        with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
            functional.jacobian(lambda a: a, x, strategy="forward-mode")
        with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True`"):
            functional.jacobian(lambda a: a, x, strict=True, vectorize=True)
        with pytest.raises(AssertionError, match="forward-mode"):
            functional.jacobian(lambda a: a, x, strategy="sideways")
