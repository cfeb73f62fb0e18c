"""gradcheck's PyTorch surface: the served `torch.autograd.gradcheck` module, the deprecated
Jacobian helpers, the errors and phrases PyTorch's gradcheck raises, the undefined-gradient and
forward-mode checks, and double backward refused where it would be wrong."""
import importlib
import warnings

import numpy as np
import pytest

import genesis
from genesis.autograd import GradcheckError, forward_ad, gradcheck, gradgradcheck
from genesis.autograd.gradcheck import get_analytical_jacobian, get_numerical_jacobian
from genesis.compat import serve_torch
from tests.helpers import torch_or_skip


def double(values, requires_grad=True):
    return genesis.tensor(np.asarray(values, dtype=np.float64), dtype=genesis.float64,
                          requires_grad=requires_grad)


def _torch_gradcheck_module():
    """PyTorch's gradcheck module (`torch.autograd.gradcheck` is the function there too)."""
    return importlib.import_module("torch.autograd.gradcheck")


def _torch_double(torch, values):
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


# -- the served module -------------------------------------------------------------------

def test_served_gradcheck_module_keeps_torch_autograd_gradcheck_the_function():
    with serve_torch():
        import torch
        from torch.autograd.gradcheck import GradcheckError as Served, get_numerical_jacobian as served
        import torch.autograd.gradcheck  # noqa: F401  (binding the submodule must not replace it)
        assert torch.autograd.gradcheck is genesis.autograd.gradcheck
        assert Served is GradcheckError and issubclass(Served, RuntimeError)
        assert served is get_numerical_jacobian
        assert torch.autograd.torch is torch


def test_mismatch_names_the_pair_as_pytorch_does():
    torch = torch_or_skip()

    def shifted(lib):
        def fn(x):
            y = x.clone()
            y.register_hook(lambda g: g + 1e-2)
            return y
        return fn

    phrase = "Jacobian mismatch for output 0 with respect to input 0"
    for fast_mode in (False, True):
        with pytest.raises(GradcheckError, match=phrase):
            gradcheck(shifted(genesis), (genesis.ones(2, 2, requires_grad=True),), fast_mode=fast_mode)
        with pytest.raises(RuntimeError, match=phrase):
            torch.autograd.gradcheck(shifted(torch), (torch.ones(2, 2, requires_grad=True),),
                                     fast_mode=fast_mode)
        assert gradcheck(shifted(genesis), (genesis.ones(2, 2, requires_grad=True),),
                         raise_exception=False, fast_mode=fast_mode) is False


def test_an_error_of_the_function_itself_is_not_swallowed():
    def broken(x):
        raise RuntimeError("not a gradcheck failure")

    with pytest.raises(RuntimeError, match="not a gradcheck failure"):
        gradcheck(broken, (double([1.0]),), raise_exception=False)


# -- the deprecated Jacobian helpers -------------------------------------------------------

def test_get_numerical_jacobian_matches_pytorch_and_warns():
    torch = torch_or_skip()
    a_values = np.arange(4.0).reshape(2, 2)
    b_values = np.ones((2, 2))

    def fn(inputs):
        return inputs[0] ** 2 + 3 * inputs[1], inputs[0] - inputs[1]

    a, b = double(a_values), double(b_values)
    ta, tb = _torch_double(torch, a_values), _torch_double(torch, b_values)
    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` was part of PyTorch's private API"):
        ours = get_numerical_jacobian(fn, (a, b), eps=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = _torch_gradcheck_module().get_numerical_jacobian(fn, (ta, tb), eps=1e-6)
        only_a = get_numerical_jacobian(fn, (a, b), target=a, eps=1e-6)
    assert len(ours) == len(theirs) == 2 and len(only_a) == 1
    for mine, reference in zip(ours, theirs):
        assert mine.dtype == genesis.float64
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), atol=1e-6)
    np.testing.assert_allclose(only_a[0].numpy(), theirs[0].numpy(), atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError, match="Expected grad_out to be 1.0"):
            get_numerical_jacobian(fn, (a, b), grad_out=2.0)
        with pytest.raises(ValueError, match="Expected grad_out to be 1.0"):
            _torch_gradcheck_module().get_numerical_jacobian(fn, (ta, tb), grad_out=2.0)


def test_get_analytical_jacobian_matches_pytorch_and_reports_reentrancy():
    torch = torch_or_skip()
    values = np.array([[1.0, -2.0], [0.5, 3.0]])
    a, ta = double(values), _torch_double(torch, values)
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` was part of PyTorch's private API"):
        jacobians, reentrant, sizes_ok, types_ok = get_analytical_jacobian((a,), (a * a).sum(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        expected = _torch_gradcheck_module().get_analytical_jacobian((ta,), (ta * ta).sum(1))
    np.testing.assert_allclose(jacobians[0].numpy(), expected[0][0].numpy())
    assert (reentrant, sizes_ok, types_ok) == (True, True, True) == tuple(expected[1:])

    class Jittery(genesis.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad * (1 + genesis.rand(*grad.shape, dtype=grad.dtype) * 1e-6)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert get_analytical_jacobian((a,), Jittery.apply(a))[1] is False
        with pytest.raises(ValueError, match="Expected grad_out to be 1.0"):
            get_analytical_jacobian((a,), a * 2, grad_out=2.0)


# -- what gradcheck raises -----------------------------------------------------------------

class Jitter(genesis.Function):
    """The identity whose backward multiplies by (1 + jitter * noise), itself differentiable."""

    @staticmethod
    def forward(ctx, x, jitter):
        ctx.jitter = jitter
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        noise = genesis.rand(*grad.shape, dtype=grad.dtype)
        return Jitter.apply(grad, ctx.jitter) * (1 + noise * ctx.jitter), None


def test_a_nondeterministic_backward_is_not_reentrant_in_gradgradcheck_too():
    x = double(np.random.default_rng(0).normal(size=(3, 3)))
    for fast_mode in (False, True):
        with pytest.raises(GradcheckError, match="Backward is not reentrant"):
            gradcheck(lambda t: Jitter.apply(t, 1e-6), x, fast_mode=fast_mode)
        with pytest.raises(GradcheckError, match="Backward is not reentrant") as caught:
            gradgradcheck(lambda t: Jitter.apply(t, 1e-12), x, fast_mode=fast_mode)
        assert caught.value.result.failed_check == "reentrant"
        assert gradgradcheck(lambda t: Jitter.apply(t, 1e-12), x, nondet_tol=1e-5, fast_mode=fast_mode)


def test_outputs_whose_shape_or_dtype_depend_on_the_values_raise_assertion_error():
    torch = torch_or_skip()

    def grows(lib):
        return lambda x: lib.cat([x, x]) if bool((x >= 1).all()) else x

    def narrows(lib):
        return lambda x: x.to(lib.float32) if bool((x >= 1).all()) else x

    cases = [(grows, "return outputs with the same shape when inputs are perturbed"),
             (narrows, "return outputs with the same dtype when inputs are perturbed")]
    for make, phrase in cases:
        for fast_mode in (False, True):
            with pytest.raises(AssertionError, match=phrase):
                gradcheck(make(genesis), (double([1.0]),), fast_mode=fast_mode)
            with pytest.raises(AssertionError, match=phrase):
                torch.autograd.gradcheck(make(torch), (_torch_double(torch, [1.0]),), fast_mode=fast_mode)


# -- undefined gradients ---------------------------------------------------------------------

def _hooked(lib, hook):
    def fn(x):
        y = x.clone()
        y.register_hook(hook)
        return y * 2
    return fn


def _refuse_none(grad):
    if grad is None:
        raise RuntimeError("x is undefined")


def test_a_hook_that_cannot_take_an_undefined_gradient_fails_as_in_pytorch():
    torch = torch_or_skip()
    phrase = "Expected backward function to handle undefined output grads"
    for fast_mode in (False, True):
        with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient"):
            with pytest.raises(GradcheckError, match=phrase) as caught:
                gradcheck(_hooked(genesis, _refuse_none), (double([1.0]),), fast_mode=fast_mode)
        assert "x is undefined" in str(caught.value)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            assert gradcheck(_hooked(genesis, _refuse_none), (double([1.0]),), raise_exception=False,
                             fast_mode=fast_mode) is False
            with pytest.raises(RuntimeError, match=phrase):
                torch.autograd.gradcheck(_hooked(torch, _refuse_none), (_torch_double(torch, [1.0]),),
                                         fast_mode=fast_mode)
    assert gradcheck(_hooked(genesis, _refuse_none), (double([1.0]),), check_undefined_grad=False)


def test_hooks_anywhere_in_the_graph_and_on_leaves_see_the_undefined_gradient():
    torch = torch_or_skip()
    for lib, make in ((genesis, lambda: double([1.0, 2.0])),
                      (torch, lambda: _torch_double(torch, [1.0, 2.0]))):
        seen = []
        x = make()
        x.register_hook(lambda g: seen.append(("leaf", g is None)))

        def fn(t):
            y = t.clone()
            y.register_hook(lambda g: seen.append(("inner", g is None)))
            return (y * 3).exp()

        assert lib.autograd.gradcheck(fn, (x,))
        assert ("leaf", True) in seen and ("inner", True) in seen, lib.__name__


class NoMaterialize(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class HandlesNone(NoMaterialize):
    @staticmethod
    def backward(ctx, grad):
        return None if grad is None else grad * 2


def test_a_backward_given_none_raises_its_own_error_type():
    torch = torch_or_skip()

    class TorchNoMaterialize(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with pytest.raises(TypeError):
        torch.autograd.gradcheck(TorchNoMaterialize.apply, (_torch_double(torch, [1.0]),))
    with pytest.raises(TypeError) as caught:
        gradcheck(NoMaterialize.apply, (double([1.0]),))
    assert "undefined-gradient check" in "\n".join(caught.value.__notes__)
    assert gradcheck(HandlesNone.apply, (double([1.0, 2.0]),))


# -- forward mode ----------------------------------------------------------------------------

def _counting_function(counter: list):
    class Pair(genesis.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def backward(ctx, gx, gy):
            return gx, gy

        @staticmethod
        def jvp(ctx, tx, ty):
            counter[0] += 1
            return tx, ty

    return Pair


def test_forward_checks_call_jvp_as_often_as_pytorch():
    torch = torch_or_skip()
    options = [dict(check_undefined_grad=False, check_batched_forward_grad=False),
               dict(check_undefined_grad=True, check_batched_forward_grad=False),
               dict(check_undefined_grad=True, check_batched_forward_grad=True)]

    class TorchPair(torch.autograd.Function):
        count = [0]

        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, tx, ty):
            TorchPair.count[0] += 1
            return tx, ty

    for y_requires_grad in (True, False):
        for option in options:
            counter = [0]
            gradcheck(_counting_function(counter).apply,
                      (double([0.3]), double([0.6], requires_grad=y_requires_grad)),
                      check_forward_ad=True, check_backward_ad=False, **option)
            TorchPair.count[0] = 0
            torch.autograd.gradcheck(
                TorchPair.apply, (_torch_double(torch, [0.3]),
                                  torch.tensor([0.6], dtype=torch.float64, requires_grad=y_requires_grad)),
                check_forward_ad=True, check_backward_ad=False, check_batched_grad=False, **option)
            assert counter[0] == TorchPair.count[0], (y_requires_grad, option)


def test_a_jvp_drawing_random_numbers_cannot_be_batched():
    class Doubled(genesis.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

        @staticmethod
        def jvp(ctx, tangent):
            genesis.randn(*tangent.shape)
            return tangent * 2

    x = double([0.5, 1.5])
    assert gradcheck(Doubled.apply, (x,), check_forward_ad=True)
    with pytest.raises(GradcheckError, match="vmap: We do not yet support calling random operations"):
        gradcheck(Doubled.apply, (x,), check_forward_ad=True, check_batched_forward_grad=True)


def test_a_zero_tangent_treated_unlike_none_fails_the_undefined_tangent_check():
    def add(x, y):
        primal, tangent = forward_ad.unpack_dual(y)
        if tangent is not None and not bool(tangent.any()):  # wrong: a zero tangent becomes one
            y = forward_ad.make_dual(primal, tangent + 1)
        return x + y

    args = (double([0.5, 0.25]), double([1.0, 2.0]))
    options = dict(check_forward_ad=True, check_backward_ad=False)
    assert gradcheck(add, args, check_undefined_grad=False, **options)  # the Jacobian is right
    with pytest.raises(GradcheckError, match="Mismatch in tangent values for output with index: 0") as caught:
        gradcheck(add, args, **options)
    assert caught.value.result.failed_check == "undefined_tangent"


# -- double backward refused where it would be wrong ---------------------------------------------

@pytest.mark.parametrize("name", ["scatter_reduce", "index_reduce"])
def test_prod_double_backward_with_meeting_zeros_is_refused_as_in_pytorch(name):
    torch = torch_or_skip()

    def arguments(lib, values):
        return (lib.tensor([1.0], dtype=lib.float64, requires_grad=True), 0,
                lib.tensor([0, 0]), lib.tensor(values, dtype=lib.float64, requires_grad=True), "prod")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: index_reduce is in beta
        for lib in (genesis, torch):
            assert lib.autograd.gradcheck(getattr(lib, name), arguments(lib, [0.0, 0.0]))
            with pytest.raises(RuntimeError, match="Double backward is unsupported for"):
                lib.autograd.gradgradcheck(getattr(lib, name), arguments(lib, [0.0, 0.0]))
            # one zero at a place: the second derivative is right, and checked
            assert lib.autograd.gradgradcheck(getattr(lib, name), arguments(lib, [0.0, 2.0]))
