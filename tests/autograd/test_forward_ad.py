"""Forward-mode AD (genesis.autograd.forward_ad): tangents through ops compared with
torch.autograd.forward_ad, custom Functions with jvp, views and in-place ops, errors."""
from __future__ import annotations

import numpy as np
import pytest

import genesis
import genesis.autograd.forward_ad as fwAD
import genesis.nn.functional as F
from tests.helpers import torch_or_skip


@pytest.fixture(autouse=True)
def _no_level_left_open():
    yield
    while fwAD._current_level >= 0:
        fwAD.exit_dual_level()


def _pair(rng, *shape):
    return rng.standard_normal(shape), rng.standard_normal(shape)


# (name, genesis fn, torch fn, input shapes); each input gets a random primal and tangent.
CASES = [
    ("mul_add", lambda a, b: a * b + a, lambda a, b: a * b + a, [(3, 4), (4,)]),
    ("div_pow", lambda a, b: a / (b * b + 1) ** 1.5, lambda a, b: a / (b * b + 1) ** 1.5,
     [(2, 3), (2, 3)]),
    ("exp_sin_tanh", lambda a: a.exp().sin() + a.tanh(), lambda a: a.exp().sin() + a.tanh(),
     [(5,)]),
    ("sum_mean", lambda a: a.sum(0) * a.mean(), lambda a: a.sum(0) * a.mean(), [(3, 4)]),
    ("max_dim", lambda a: a.max(dim=1)[0], lambda a: a.max(dim=1)[0], [(3, 4)]),
    ("matmul", lambda a, b: a @ b, lambda a, b: a @ b, [(3, 4), (4, 2)]),
    ("transpose_reshape", lambda a: a.t().reshape(12) * 2, lambda a: a.t().reshape(12) * 2,
     [(3, 4)]),
    ("index", lambda a: a[1:, ::2], lambda a: a[1:, ::2], [(3, 4)]),
    ("cat", lambda a, b: genesis.cat([a, b], dim=0), lambda a, b: __import__("torch").cat(
        [a, b], dim=0), [(2, 3), (1, 3)]),
    ("softmax", lambda a: F.softmax(a, dim=-1), None, [(2, 5)]),
    ("log_softmax", lambda a: F.log_softmax(a, dim=0), None, [(4, 3)]),
    ("layer_norm", lambda a, w: F.layer_norm(a, (4,), w), None, [(3, 4), (4,)]),
    ("conv2d", lambda a, w: F.conv2d(a, w, padding=1), None, [(1, 2, 5, 5), (3, 2, 3, 3)]),
    ("relu_mse", lambda a, b: F.mse_loss(F.relu(a), b), None, [(6,), (6,)]),
]


@pytest.mark.parametrize("name, fn, torch_fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_tangents_match_torch(name, fn, torch_fn, shapes):
    torch = torch_or_skip()
    import torch.autograd.forward_ad as tfwAD
    import torch.nn.functional as TF

    torch_fns = {"softmax": lambda a: TF.softmax(a, dim=-1),
                 "log_softmax": lambda a: TF.log_softmax(a, dim=0),
                 "layer_norm": lambda a, w: TF.layer_norm(a, (4,), w),
                 "conv2d": lambda a, w: TF.conv2d(a, w, padding=1),
                 "relu_mse": lambda a, b: TF.mse_loss(TF.relu(a), b)}
    torch_fn = torch_fn or torch_fns[name]
    rng = np.random.default_rng(0)
    pairs = [_pair(rng, *shape) for shape in shapes]
    with fwAD.dual_level():
        out = fn(*[fwAD.make_dual(genesis.tensor(p, dtype=genesis.float64),
                               genesis.tensor(t, dtype=genesis.float64)) for p, t in pairs])
        primal, tangent = fwAD.unpack_dual(out)
    with tfwAD.dual_level():
        expected = torch_fn(*[tfwAD.make_dual(torch.tensor(p), torch.tensor(t)) for p, t in pairs])
        expected_primal, expected_tangent = tfwAD.unpack_dual(expected)
    np.testing.assert_allclose(primal.numpy(), expected_primal.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), expected_tangent.numpy(), rtol=1e-8, atol=1e-10)


def test_tangent_equals_jacobian_times_vector():
    x = genesis.tensor(np.linspace(0.1, 1.0, 4), dtype=genesis.float64)
    v = genesis.tensor([1.0, -2.0, 0.5, 3.0], dtype=genesis.float64)
    fn = lambda a: (a.sin() * a).cumsum(0)  # noqa: E731
    jacobian = genesis.autograd.functional.jacobian(fn, x)
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fn(fwAD.make_dual(x, v))).tangent
    np.testing.assert_allclose(tangent.numpy(), jacobian.numpy() @ v.numpy(), rtol=1e-12)


def test_inputs_without_tangent_and_no_grad():
    with fwAD.dual_level():
        x = fwAD.make_dual(genesis.tensor([1.0, 2.0]), genesis.tensor([1.0, 1.0]))
        y = genesis.tensor([3.0, 4.0])
        assert fwAD.unpack_dual(y * 2).tangent is None
        with genesis.no_grad():
            out = x * y
        primal, tangent = fwAD.unpack_dual(out)
        assert not tangent.requires_grad
        assert tangent.tolist() == [3.0, 4.0]
        assert fwAD.unpack_dual(x.detach() * 2).tangent is None
        assert fwAD.unpack_dual(x == y).tangent is None


def test_levels_and_cleanup():
    foo, bar = genesis.rand(2), genesis.rand(2)
    with fwAD.dual_level() as level:
        assert level == 0 and fwAD._current_level == 0
        dual = fwAD.make_dual(foo, bar)
        assert fwAD.unpack_dual(dual).tangent is bar
        assert fwAD.unpack_dual(foo).tangent is None
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
    assert fwAD._current_level == -1
    assert fwAD.unpack_dual(dual).tangent is None
    assert fwAD.unpack_dual(dual).primal is dual


def test_dual_does_not_keep_tangent_alive():
    import weakref

    with fwAD.dual_level():
        tangent = genesis.rand(2)
        ref = weakref.ref(tangent)
        dual = fwAD.make_dual(genesis.rand(2), tangent)
        del tangent
        assert ref() is not None
        del dual
        assert ref() is None


def test_fwd_grad_enabled_switch():
    assert fwAD._is_fwd_grad_enabled()
    with fwAD.dual_level():
        x = fwAD.make_dual(genesis.tensor([1.0]), genesis.tensor([1.0]))
        with fwAD._set_fwd_grad_enabled(False):
            assert not fwAD._is_fwd_grad_enabled()
            assert fwAD.unpack_dual(x * 2).tangent is None
        assert fwAD.unpack_dual(x * 2).tangent.tolist() == [2.0]
    assert fwAD._is_fwd_grad_enabled()


def test_errors_match_torch_types():
    torch = torch_or_skip()
    import torch.autograd.forward_ad as tfwAD

    def raised(module, lib, call):
        with pytest.raises(Exception) as info:
            with module.dual_level():
                call(module, lib)
        return type(info.value)

    calls = [
        lambda m, lib: m.make_dual(lib.ones(2, dtype=lib.int64), lib.ones(2)),
        lambda m, lib: m.make_dual(lib.ones(2), lib.ones(2, dtype=lib.int64)),
        lambda m, lib: m.make_dual(lib.ones(2), lib.ones(3)),
        lambda m, lib: m.make_dual(lib.ones(2), m.make_dual(lib.ones(2), lib.ones(2))),
        lambda m, lib: m.enter_dual_level(),
    ]
    for call in calls:
        assert raised(fwAD, genesis, call) is raised(tfwAD, torch, call)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(genesis.ones(2), genesis.ones(2))
    with pytest.raises(RuntimeError, match="different size"):
        with fwAD.dual_level():
            fwAD.make_dual(genesis.ones(2), genesis.ones(3))


def test_backward_through_primal_and_tangent():
    foo = genesis.rand(2, requires_grad=True)
    bar = genesis.rand(2, requires_grad=True)
    with fwAD.dual_level():
        primal, tangent = fwAD.unpack_dual(fwAD.make_dual(foo, bar))
        (gfoo,) = genesis.autograd.grad(primal.sum(), foo)
        (gbar,) = genesis.autograd.grad((fwAD.unpack_dual(
            fwAD.make_dual(foo, bar) * 3).tangent).sum(), bar)
    assert gfoo.tolist() == [1.0, 1.0]
    assert gbar.tolist() == [3.0, 3.0]


def _tangent_gradients(lib, forward_ad, primal_values, tangent_values):
    """Gradients of sum(tangent of f) with f(x, w) = sin(x * x) * w + exp(x) + x * x (the
    last in place): through the primal x (a non-leaf), the tangent and the other argument w,
    none of them a dual."""
    leaf = lib.tensor(primal_values, dtype=lib.float64, requires_grad=True)
    tangent = lib.tensor(tangent_values, dtype=lib.float64, requires_grad=True)
    other = lib.tensor([0.5, -2.0], dtype=lib.float64, requires_grad=True)
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(leaf * 1, tangent)
        result = forward_ad.unpack_dual((dual * dual).sin() * other + dual.exp()).tangent
        changed = dual * 1
        changed.mul_(dual)  # an in-place op updates the tangent it had, recorded too
        result = result + forward_ad.unpack_dual(changed).tangent
        result.sum().backward()
    return [t.grad.tolist() for t in (leaf, tangent, other)]


def test_tangents_are_differentiable_through_the_primals_as_in_torch():
    """The tangent J(x) t depends on x (and on the other arguments), not only on t:
    double backward through forward AD (forward-over-reverse) needs that gradient."""
    torch = torch_or_skip()
    import torch.autograd.forward_ad as torch_fwAD
    got = _tangent_gradients(genesis, fwAD, [1.0, 2.0], [1.0, 3.0])
    expected = _tangent_gradients(torch, torch_fwAD, [1.0, 2.0], [1.0, 3.0])
    for ours, theirs in zip(got, expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_a_tangent_changed_in_place_keeps_its_gradient_as_in_torch():
    """An in-place op on a dual updates its tangent; the gradient of that tangent w.r.t. a
    tangent that requires grad sees the values before the change (the primal here does
    not require grad)."""
    torch = torch_or_skip()
    import torch.autograd.forward_ad as torch_fwAD
    results = []
    for lib, forward_ad in ((genesis, fwAD), (torch, torch_fwAD)):
        tangent = lib.tensor([1.0, 3.0], dtype=lib.float64, requires_grad=True)
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(lib.tensor([1.0, 2.0], dtype=lib.float64), tangent)
            changed = dual * 1
            changed.mul_(dual)
            changed.add_(changed.exp() * dual)
            forward_ad.unpack_dual(changed).tangent.sum().backward()
        results.append(tangent.grad.tolist())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_tangent_made_under_no_grad_records_nothing():
    weight = genesis.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level(), genesis.no_grad():
        dual = fwAD.make_dual(weight, genesis.tensor([1.0, 1.0]))
        tangent = fwAD.unpack_dual(dual * dual).tangent
    assert not tangent.requires_grad and tangent.tolist() == [2.0, 4.0]


def test_inplace_updates_tangent_and_views():
    foo, bar = genesis.rand(2, dtype=genesis.float64), genesis.ones(2, dtype=genesis.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        dual *= 2
        assert bar.tolist() == [2.0, 2.0]  # the tangent itself is updated in place
        assert fwAD.unpack_dual(foo).tangent is None
        view = dual.narrow(0, 0, 1)
        view *= 2
        assert fwAD.unpack_dual(dual).tangent.tolist() == [4.0, 2.0]
        baz = genesis.rand(2, dtype=genesis.float64)
        baz[0] = dual[0]
        assert fwAD.unpack_dual(baz).tangent.tolist() == [4.0, 0.0]
        base = genesis.randn(2, 2)
        base.t().add_(fwAD.make_dual(genesis.randn(2, 2), genesis.ones(2, 2)))
        assert fwAD.unpack_dual(base).tangent.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_inplace_matches_torch():
    torch = torch_or_skip()
    import torch.autograd.forward_ad as tfwAD

    rng = np.random.default_rng(1)
    (p, t), (q, s) = _pair(rng, 3), _pair(rng, 3)

    def run(module, lib):
        with module.dual_level():
            x = module.make_dual(lib.tensor(p, dtype=lib.float64),
                                 lib.tensor(t, dtype=lib.float64)).clone()
            y = module.make_dual(lib.tensor(q, dtype=lib.float64), lib.tensor(s, dtype=lib.float64))
            x.mul_(y).add_(y.exp()).clamp_(max=1.0)
            return module.unpack_dual(x).tangent.numpy().copy()

    np.testing.assert_allclose(run(fwAD, genesis), run(tfwAD, torch), rtol=1e-10)


class _Scale(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.save_for_forward(x)
        ctx.factor = factor
        return x * factor * x

    @staticmethod
    def backward(ctx, grad):
        raise AssertionError("not used")

    @staticmethod
    def jvp(ctx, x_tangent, _):
        (x,) = ctx.saved_tensors
        return 2 * ctx.factor * x * x_tangent


def test_custom_function_jvp():
    with fwAD.dual_level():
        x = fwAD.make_dual(genesis.tensor([1.0, 2.0]), genesis.tensor([1.0, 1.0]))
        assert fwAD.unpack_dual(_Scale.apply(x, 3.0)).tangent.tolist() == [6.0, 12.0]


def test_custom_function_without_jvp_raises():
    class NoJvp(genesis.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad

    with fwAD.dual_level():
        x = fwAD.make_dual(genesis.ones(1), genesis.ones(1))
        with pytest.raises(NotImplementedError, match="must implement the jvp function"):
            NoJvp.apply(x)


def test_custom_function_tangent_for_non_differentiable_output():
    class Wrong(genesis.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_tangent):
            return x_tangent, x_tangent.clone()

    with fwAD.dual_level():
        x = fwAD.make_dual(genesis.ones(1), genesis.ones(1))
        with pytest.raises(RuntimeError, match="return None at that position"):
            Wrong.apply(x)


def test_forward_over_reverse_hessian_vector_product():
    torch = torch_or_skip()
    import torch.autograd.forward_ad as tfwAD

    point, direction = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])

    def hvp(module, lib):
        x = lib.tensor(point, dtype=lib.float64, requires_grad=True)
        with module.dual_level():
            dual = module.make_dual(x, lib.tensor(direction, dtype=lib.float64))
            (gradient,) = lib.autograd.grad((dual.sin() * dual * dual).sum(), dual,
                                            create_graph=True)
            return module.unpack_dual(gradient).tangent.detach().numpy().copy()

    np.testing.assert_allclose(hvp(fwAD, genesis), hvp(tfwAD, torch), rtol=1e-12)


def test_repr_shows_tangent_only_on_duals():
    with fwAD.dual_level():
        a = genesis.rand(3)
        dual = fwAD.make_dual(a, genesis.rand(3))
        assert "tangent=" in repr(dual)
        assert "tangent=" not in repr(a)
        assert "tangent=" not in repr(fwAD.unpack_dual(dual).primal)


def test_gradcheck_forward_ad():
    x = genesis.tensor([0.5, -1.0, 2.0], dtype=genesis.float64, requires_grad=True)
    assert genesis.autograd.gradcheck(lambda a: F.softmax(a.tanh() * a, dim=0), x,
                                      check_forward_ad=True)

    class WrongJvp(genesis.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * a

        @staticmethod
        def backward(ctx, grad):
            raise AssertionError("backward is not checked here")

        @staticmethod
        def jvp(ctx, tangent):
            return tangent

    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch"):
        genesis.autograd.gradcheck(WrongJvp.apply, x, check_forward_ad=True,
                                   check_backward_ad=False)
    with pytest.raises(AssertionError, match="Expected at least one of"):
        genesis.autograd.gradcheck(WrongJvp.apply, x, check_backward_ad=False)


def test_custom_function_view_output_needs_view_tangent():
    class Narrow(genesis.autograd.Function):
        @staticmethod
        def forward(ctx, a, make_view):
            ctx.make_view = make_view
            return a.narrow(0, 0, 2)

        @staticmethod
        def backward(ctx, grad):
            raise AssertionError("not used")

        @staticmethod
        def jvp(ctx, tangent, _):
            result = tangent.narrow(0, 0, 2)
            return result if ctx.make_view else result.clone()

    with fwAD.dual_level():
        x = fwAD.make_dual(genesis.rand(4), genesis.rand(4))
        out = Narrow.apply(x, True)
        assert fwAD.unpack_dual(out).tangent._base is fwAD.unpack_dual(x).tangent
        with pytest.raises(RuntimeError, match="jvp is not returning a view"):
            Narrow.apply(x, False)


def test_random_op_is_refused():
    with fwAD.dual_level():
        x = fwAD.make_dual(genesis.rand(4), genesis.rand(4))
        with pytest.raises(NotImplementedError, match="random op"):
            F.dropout(x, 0.5, training=True)
