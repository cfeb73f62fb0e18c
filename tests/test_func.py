"""genesis.func (torch.func): vmap as a loop, grad/vjp/jvp/jacrev/jacfwd/hessian on reverse
mode, functional_call and stack_module_state; values, gradients and exception types
compared with torch.func, and the per-sample-gradient and ensembling recipes of PyTorch's
tutorials."""
import numpy as np
import pytest

import genesis
from genesis import nn
from genesis.compat import serve_torch
from genesis.func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                          linearize, stack_module_state, vjp, vmap)
from tests.helpers import torch_or_skip


def arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape) for shape in shapes]


def both(*values, requires_grad=False):
    """Each array as a (genesis, torch) float64 pair."""
    torch = torch_or_skip()
    return [(genesis.tensor(value, dtype=genesis.float64, requires_grad=requires_grad),
             torch.tensor(value, dtype=torch.float64, requires_grad=requires_grad))
            for value in values]


def close(mine, theirs, rtol=1e-10, atol=1e-12):
    """Compare pytrees of genesis and torch tensors leaf by leaf (structure included)."""
    torch = torch_or_skip()
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, genesis.Tensor), type(mine)
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)
    elif isinstance(theirs, dict):
        assert isinstance(mine, dict) and set(mine) == set(theirs)
        for key in theirs:
            close(mine[key], theirs[key], rtol, atol)
    elif isinstance(theirs, (tuple, list)):
        assert type(mine) is type(theirs) and len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            close(a, b, rtol, atol)
    else:
        assert mine == theirs


def same_error(call, lib_pair):
    """`call(lib)` raises the same exception type for genesis and torch; returns genesis's."""
    torch = torch_or_skip()
    with pytest.raises(Exception) as theirs:
        call(torch, lib_pair[1])
    with pytest.raises(type(theirs.value)) as mine:
        call(genesis, lib_pair[0])
    return mine.value


# -- vmap ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    "sum", "in_dims_none", "negative_in_dim", "out_dims_1", "nested_in_dims", "tuple_outputs",
    "dict_outputs", "out_dims_tuple", "kwargs_unmapped", "nested_vmap", "out_dims_none"])
def test_vmap_values_and_gradients_match_torch(case):
    torch = torch_or_skip()
    (ga, ta), (gb, tb), (gc, tc) = both(*arrays((3, 4), (4,), (4, 3)), requires_grad=True)

    def run(lib, func_lib, a, b, c):
        v = func_lib.vmap
        if case == "sum":
            return v(lambda x: x.sum())(a)
        if case == "in_dims_none":
            return v(lambda x, y: x * y, in_dims=(0, None))(a, b)
        if case == "negative_in_dim":
            return v(lambda x: x.exp(), in_dims=-1)(c)
        if case == "out_dims_1":
            return v(lambda x, y: x * y, in_dims=(0, None), out_dims=1)(a, b)
        if case == "nested_in_dims":
            return v(lambda d, x: d["p"] * x + d["q"][0], in_dims=({"p": 0, "q": [1]}, None))(
                {"p": a, "q": [c]}, b)
        if case == "tuple_outputs":
            return v(lambda x: (x.sin(), [x.sum(), x * 2]))(a)
        if case == "dict_outputs":
            return v(lambda x: {"s": x.sum(), "t": x.tanh()}, out_dims={"s": 0, "t": 1})(a)
        if case == "out_dims_tuple":
            return v(lambda x: (x, x.cos()), out_dims=(1, 0))(a)
        if case == "kwargs_unmapped":
            return v(lambda x, scale: x * scale)(a, scale=b)
        if case == "nested_vmap":  # an outer product, row by row and column by column
            return v(v(lambda x, y: x * y, in_dims=(None, 0)), in_dims=(0, None))(a[:, 0], b)
        if case == "out_dims_none":
            return v(lambda x: (x * 2, 7), out_dims=(0, None))(a)

    mine, theirs = run(genesis, genesis.func, ga, gb, gc), run(torch, torch.func, ta, tb, tc)
    close(mine, theirs)
    total = lambda out, lib: sum((leaf * leaf).sum() for leaf in
                                 genesis.func.pytree.flatten(out)[0] if isinstance(leaf, lib.Tensor))
    total(mine, genesis).backward()
    total(theirs, torch).backward()
    for g, t in ((ga, ta), (gb, tb), (gc, tc)):
        if t.grad is None:
            assert g.grad is None
        else:
            close(g.grad, t.grad)


def test_torch_vmap_is_genesis_vmap_and_torch_func_is_served():
    assert genesis.vmap is vmap
    with serve_torch():
        import torch
        import torch.func
        from torch.func import functional_call as served_call

        assert torch.vmap is vmap and torch.func.grad is grad and served_call is functional_call


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.func.vmap(lambda a, b: a + b)(x, x[:2]),          # batch sizes differ
    lambda lib, x: lib.func.vmap(lambda a: a, in_dims=2)(x),             # in_dim out of range
    lambda lib, x: lib.func.vmap(lambda a: a, in_dims=(None,))(x),       # nothing mapped
    lambda lib, x: lib.func.vmap(lambda a: a, in_dims=None)(x),          # in_dims not int/tuple
    lambda lib, x: lib.func.vmap(lambda a: a, in_dims=[0])(x),           # a list at top level
    lambda lib, x: lib.func.vmap(lambda a: a, in_dims=(0, 0))(x),        # structure mismatch
    lambda lib, x: lib.func.vmap(lambda a, n: a * n)(x, 3),              # a number mapped
    lambda lib, x: lib.func.vmap(lambda a: a)(),                         # no inputs
    lambda lib, x: lib.func.vmap(lambda a: 3)(x),                        # a number returned
    lambda lib, x: lib.func.vmap(lambda a: a, out_dims=(0, 0))(x),       # out_dims mismatch
    lambda lib, x: lib.func.vmap(lambda a: a, out_dims=None)(x),         # batched, out_dim None
    lambda lib, x: lib.func.vmap(lambda a: a, randomness="sometimes")(x),
    lambda lib, x: lib.func.vmap(lambda a: a, chunk_size=0)(x),
    lambda lib, x: lib.func.vmap(lambda a: a + lib.rand(()))(x),         # random draw, 'error'
], ids=["batch_sizes", "in_dim_range", "nothing_mapped", "in_dims_none", "in_dims_list",
        "in_dims_structure", "number_mapped", "no_inputs", "number_returned", "out_dims_structure",
        "out_dims_none_batched", "randomness_value", "chunk_size", "random_in_error_mode"])
def test_vmap_errors_match_torch(call):
    x_pair = both(*arrays((3, 2)))[0]
    error = same_error(call, x_pair)
    assert str(error)


def test_vmap_batch_size_message_lists_the_sizes():
    with pytest.raises(ValueError, match=r"same size in the mapped dimension, got sizes \[3, 2\]"):
        vmap(lambda a, b: a + b)(genesis.ones(3), genesis.ones(2))


def test_vmap_randomness_error_leaves_the_generator_untouched():
    genesis.manual_seed(0)
    before = genesis.get_rng_state()
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda x: x + genesis.randn(()))(genesis.ones(3))
    assert genesis.get_rng_state().equal(before)


def test_vmap_randomness_same_and_different():
    genesis.manual_seed(0)
    same = vmap(lambda x: x + genesis.rand(2), randomness="same")(genesis.zeros(4, 2))
    assert np.all(same.numpy() == same.numpy()[0])
    different = vmap(lambda x: x + genesis.rand(2), randomness="different")(genesis.zeros(4, 2))
    assert len({tuple(row) for row in different.numpy().tolist()}) == 4
    # 'same' draws what one call outside vmap would have drawn
    genesis.manual_seed(3)
    expected = genesis.rand(2)
    genesis.manual_seed(3)
    same = vmap(lambda x: x + genesis.rand(2), randomness="same")(genesis.zeros(3, 2))
    np.testing.assert_array_equal(same.numpy(), np.stack([expected.numpy()] * 3))


def test_vmap_of_a_size_zero_batch_is_a_clear_error():
    with pytest.raises(ValueError, match="size 0"):
        vmap(lambda x: x)(genesis.ones(0, 2))


# -- grad, grad_and_value -----------------------------------------------------------------

def cubic(lib):
    return lambda x, y: ((x ** 3) * y.sin()).sum()


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_matches_torch(argnums):
    torch = torch_or_skip()
    (gx, tx), (gy, ty) = both(*arrays((3,), (3,)))
    close(grad(cubic(genesis), argnums)(gx, gy), torch.func.grad(cubic(torch), argnums)(tx, ty))
    close(grad_and_value(cubic(genesis), argnums)(gx, gy),
          torch.func.grad_and_value(cubic(torch), argnums)(tx, ty))


def test_grad_of_pytree_argument_and_has_aux_match_torch():
    torch = torch_or_skip()
    (ga, ta), (gb, tb) = both(*arrays((2, 2), (2,)))

    def f(params, lib):
        out = (params["w"] @ params["b"][0]).tanh()
        return out.sum(), {"out": out}

    mine = grad(lambda p: f(p, genesis), has_aux=True)({"w": ga, "b": [gb]})
    theirs = torch.func.grad(lambda p: f(p, torch), has_aux=True)({"w": ta, "b": [tb]})
    close(mine, theirs)
    assert not mine[1]["out"].requires_grad
    close(grad_and_value(lambda p: f(p, genesis), has_aux=True)({"w": ga, "b": [gb]}),
          torch.func.grad_and_value(lambda p: f(p, torch), has_aux=True)({"w": ta, "b": [tb]}))


def test_grad_of_grad_and_unused_input_match_torch():
    torch = torch_or_skip()
    (gx, tx), = both(np.array(0.7))
    third = lambda lib: lib.func.grad(lib.func.grad(lib.func.grad(lambda x: x.sin() * x ** 4)))
    close(third(genesis)(gx), third(torch)(tx))
    close(grad(lambda x, y: (x * 2).sum(), argnums=1)(gx, gx), torch.func.grad(
        lambda x, y: (x * 2).sum(), argnums=1)(tx, tx))


def test_grad_results_require_grad_exactly_when_torchs_do_and_backward_reaches_outside():
    torch = torch_or_skip()
    (gx, tx), = both(*arrays((3,)), requires_grad=True)
    (gw, tw), = both(*arrays((3,), seed=1), requires_grad=True)
    (gz, tz), = both(*arrays((3,), seed=2))
    f = lambda x, w: ((x * w).sin() ** 2).sum()
    mine, theirs = grad(f)(gx, gw), torch.func.grad(f)(tx, tw)
    assert mine.requires_grad == theirs.requires_grad
    mine.sum().backward()
    theirs.sum().backward()
    close(gx.grad, tx.grad)
    close(gw.grad, tw.grad)
    plain, plain_theirs = grad(lambda z: (z ** 3).sum())(gz), torch.func.grad(lambda z: (z ** 3).sum())(tz)
    assert plain.requires_grad == plain_theirs.requires_grad == False  # noqa: E712
    with genesis.no_grad():
        inside = grad(f)(gx, gw)
    with torch.no_grad():
        inside_theirs = torch.func.grad(f)(tx, tw)
    close(inside, inside_theirs)
    assert inside.requires_grad == inside_theirs.requires_grad


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.func.grad(lambda a: a * 2)(x),                      # not a scalar
    lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=1)(x),         # argnum out of range
    lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=())(x),        # empty argnums
    lambda lib, x: lib.func.grad(lambda a: (a.sum(), 1))(x),               # a tuple returned
    lambda lib, x: lib.func.grad(lambda a: a.sum(), has_aux=True)(x),      # aux missing
    lambda lib, x: lib.func.grad(lambda a: 3.0)(x),                        # a float returned
    lambda lib, x: lib.func.grad(lambda a: a.sum())(3.0),                  # a float input
], ids=["not_scalar", "argnum_range", "empty_argnums", "tuple_output", "aux_missing",
        "float_output", "float_input"])
def test_grad_errors_match_torch(call):
    same_error(call, both(*arrays((3,)))[0])


# -- vjp, jvp ------------------------------------------------------------------------------

def two_outputs(lib):
    return lambda x, y: (x.sin() * y, {"s": (x * y).sum()})


def test_vjp_matches_torch_and_can_be_called_twice():
    torch = torch_or_skip()
    (gx, tx), (gy, ty), (gu, tu) = both(*arrays((3,), (3,), (3,)))
    mine_out, mine_fn = vjp(two_outputs(genesis), gx, gy)
    theirs_out, theirs_fn = torch.func.vjp(two_outputs(torch), tx, ty)
    close(mine_out, theirs_out)
    for scale in (1.0, 2.0):
        close(mine_fn((gu * scale, {"s": genesis.tensor(scale, dtype=genesis.float64)})),
              theirs_fn((tu * scale, {"s": torch.tensor(scale, dtype=torch.float64)})))
    close(vjp(lambda x: (x.exp(), x.sum()), gx, has_aux=True)[2],
          torch.func.vjp(lambda x: (x.exp(), x.sum()), tx, has_aux=True)[2])


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.func.vjp(lambda a: a * 2, x)[1](x[:2]),
    lambda lib, x: lib.func.vjp(lambda a: a * 2, x)[1]((x,)),
    lambda lib, x: lib.func.vjp(lambda a: 2, x),
    lambda lib, x: lib.func.jvp(lambda a: a * 2, x, x),
    lambda lib, x: lib.func.jvp(lambda a: a * 2, (x,), (x[:2],)),
    lambda lib, x: lib.func.jvp(lambda a: a * 2, (x,), (x, x)),
], ids=["vjp_shape", "vjp_structure", "vjp_number_output", "jvp_not_tuple", "jvp_shape",
        "jvp_structure"])
def test_vjp_and_jvp_errors_match_torch(call):
    same_error(call, both(*arrays((3,)))[0])


def test_jvp_matches_torch():
    torch = torch_or_skip()
    (gx, tx), (gy, ty), (gu, tu), (gv, tv) = both(*arrays((3,), (3,), (3,), (3,)))
    close(jvp(two_outputs(genesis), (gx, gy), (gu, gv)),
          torch.func.jvp(two_outputs(torch), (tx, ty), (tu, tv)))
    close(jvp(lambda x: (x.exp() * 3, x.sum()), (gx,), (gu,), has_aux=True),
          torch.func.jvp(lambda x: (x.exp() * 3, x.sum()), (tx,), (tu,), has_aux=True))
    close(jvp(lambda x: x * 0 + 1, (gx,), (gu,)), torch.func.jvp(lambda x: x * 0 + 1, (tx,), (tu,)))


def test_jvp_result_is_differentiable_like_torchs():
    torch = torch_or_skip()
    (gx, tx), = both(*arrays((3,)), requires_grad=True)
    (gu, tu), = both(*arrays((3,), seed=1))
    mine = jvp(lambda x: x.sin() * x, (gx,), (gu,))[1]
    theirs = torch.func.jvp(lambda x: x.sin() * x, (tx,), (tu,))[1]
    mine.sum().backward()
    theirs.sum().backward()
    close(gx.grad, tx.grad)


def test_linearize_matches_torch_and_its_jvp_fn_can_be_called_again():
    torch = torch_or_skip()
    (gx, tx), (gy, ty) = both(*arrays((3,), (3,)), requires_grad=True)
    (gu, tu), (gv, tv) = both(*arrays((3,), (3,), seed=1))
    mine, mine_fn = linearize(two_outputs(genesis), gx, gy)
    theirs, theirs_fn = torch.func.linearize(two_outputs(torch), tx, ty)
    close(mine, theirs)
    for _ in range(2):
        close(mine_fn(gu, gv), theirs_fn(tu, tv))
    close(mine_fn(gv, gu), theirs_fn(tv, tu))
    with pytest.raises(RuntimeError):
        mine_fn(gu)


# -- jacrev, jacfwd, hessian ---------------------------------------------------------------

@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_match_torch(transform):
    torch = torch_or_skip()
    (ga, ta), (gb, tb) = both(*arrays((2, 3), (3,)))
    f = lambda a, b: ((a @ b).tanh(), {"m": a * b})
    mine, theirs = getattr(genesis.func, transform), getattr(torch.func, transform)
    close(mine(f)(ga, gb), theirs(f)(ta, tb))
    close(mine(f, argnums=(0, 1))(ga, gb), theirs(f, argnums=(0, 1))(ta, tb))
    close(mine(lambda d: (d["a"] @ d["b"]).exp())({"a": ga, "b": gb}),
          theirs(lambda d: (d["a"] @ d["b"]).exp())({"a": ta, "b": tb}))
    close(mine(lambda b: (b.sin(), b.sum()), has_aux=True)(gb),
          theirs(lambda b: (b.sin(), b.sum()), has_aux=True)(tb))


def test_second_derivatives_compose_and_match_torch():
    torch = torch_or_skip()
    (gx, tx), (gy, ty) = both(*arrays((3,), (3,)))
    f = lambda x, y: (x.sin() * y ** 2).sum() + (x ** 3).prod()
    expected = torch.func.hessian(f)(tx, ty)
    close(hessian(f)(gx, gy), expected)
    close(jacrev(jacrev(f))(gx, gy), expected)
    close(jacfwd(jacrev(f))(gx, gy), expected)
    close(hessian(f, argnums=(0, 1))(gx, gy), torch.func.hessian(f, argnums=(0, 1))(tx, ty))
    vector = lambda x: x.sin() * x.sum()
    close(jacrev(jacrev(vector))(gx), torch.func.jacrev(torch.func.jacrev(vector))(tx))


def test_jacrev_errors_match_torch():
    same_error(lambda lib, x: lib.func.jacrev(lambda a: a * 2, argnums=2)(x), both(*arrays((3,)))[0])
    same_error(lambda lib, x: lib.func.jacrev(lambda a: a, has_aux=True)(x), both(*arrays((3,)))[0])


# -- functional_call, stack_module_state --------------------------------------------------

class Net:
    """The same small network in genesis and torch, with the same weights."""

    classes = {}

    @staticmethod
    def build(lib):
        if lib.__name__ not in Net.classes:
            Net.classes[lib.__name__] = Net.model_class(lib)
        return Net.classes[lib.__name__]()

    @staticmethod
    def model_class(lib):
        class Model(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = lib.nn.Linear(4, 5)
                self.fc2 = lib.nn.Linear(5, 3)

            def forward(self, x):
                return self.fc2(lib.nn.functional.relu(self.fc1(x)))

        return Model

    @staticmethod
    def pair(seed=0):
        torch = torch_or_skip()
        theirs = Net.build(torch)
        mine = Net.build(genesis)
        rng = np.random.default_rng(seed)
        with torch.no_grad():
            for (_, t), (_, g) in zip(theirs.named_parameters(), mine.named_parameters()):
                value = rng.uniform(-0.5, 0.5, tuple(t.shape))
                t.copy_(torch.tensor(value))
                g.data = genesis.tensor(value, dtype=genesis.float32)
        return mine, theirs


def test_functional_call_matches_torch_and_gradients_reach_the_given_tensors():
    torch = torch_or_skip()
    mine, theirs = Net.pair()
    (gx, tx), = both(*arrays((2, 4)))
    values = arrays((5, 4), (5,), seed=3)
    g_params = {"fc1.weight": genesis.tensor(values[0], dtype=genesis.float32, requires_grad=True),
                "fc1.bias": genesis.tensor(values[1], dtype=genesis.float32, requires_grad=True)}
    t_params = {"fc1.weight": torch.tensor(values[0], dtype=torch.float32, requires_grad=True),
                "fc1.bias": torch.tensor(values[1], dtype=torch.float32, requires_grad=True)}
    original = mine.fc1.weight
    out_mine = functional_call(mine, g_params, (gx.float(),))
    out_theirs = torch.func.functional_call(theirs, t_params, (tx.float(),))
    close(out_mine, out_theirs, rtol=1e-5, atol=1e-6)
    out_mine.sum().backward()
    out_theirs.sum().backward()
    for name in g_params:
        close(g_params[name].grad, t_params[name].grad, rtol=1e-5, atol=1e-6)
    assert mine.fc1.weight is original and original.grad is None
    close(functional_call(mine, [{"fc1.weight": g_params["fc1.weight"]}, {"fc2.bias": genesis.zeros(3)}],
                          gx.float()),
          torch.func.functional_call(theirs, [{"fc1.weight": t_params["fc1.weight"]},
                                              {"fc2.bias": torch.zeros(3)}], tx.float()),
          rtol=1e-5, atol=1e-6)


def test_functional_call_puts_the_parameters_back_when_the_call_raises():
    model = nn.Linear(2, 2)
    weight, bias = model.weight, model.bias
    with pytest.raises(RuntimeError):
        functional_call(model, {"weight": genesis.ones(3, 3), "bias": genesis.ones(3)}, genesis.ones(2))
    assert model.weight is weight and model.bias is bias
    assert set(dict(model.named_parameters())) == {"weight", "bias"}


def test_functional_call_swaps_buffers_and_sets_unknown_names_for_the_call():
    model = nn.BatchNorm1d(2).eval()
    out = functional_call(model, {"running_mean": genesis.tensor([1., 2.])}, genesis.tensor([[1., 2.]]))
    np.testing.assert_allclose(out.detach().numpy(), [[0., 0.]], atol=1e-6)
    assert model.running_mean.tolist() == [0., 0.]
    functional_call(model, {"extra": genesis.ones(1)}, genesis.ones(1, 2))
    assert not hasattr(model, "extra")


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.func.functional_call(lib.nn.Linear(3, 2), {"weight": lib.ones(2, 3)}, x, strict=True),
    lambda lib, x: lib.func.functional_call(lib.nn.Linear(3, 2), [{"weight": lib.ones(2, 3)},
                                                                  {"weight": lib.ones(2, 3)}], x),
], ids=["strict_missing", "repeated_key"])
def test_functional_call_errors_match_torch(call):
    error = same_error(lambda lib, x: call(lib, x.float()), both(*arrays((3,)))[0])
    assert "bias" in str(error) or "multiple dictionaries" in str(error)


def test_functional_call_ties_weights_as_torch_does():
    torch = torch_or_skip()

    def tied(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2, bias=False)
                self.b = lib.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))
        return Tied()

    eye = np.eye(2) * 2
    close(functional_call(tied(genesis), {"a.weight": genesis.tensor(eye, dtype=genesis.float32)},
                          genesis.ones(2)),
          torch.func.functional_call(tied(torch), {"a.weight": torch.tensor(eye, dtype=torch.float32)},
                                     torch.ones(2)), rtol=1e-6, atol=1e-6)
    untied = tied(genesis)  # without tying, b keeps the module's own weight
    np.testing.assert_allclose(
        functional_call(untied, {"a.weight": genesis.tensor(eye, dtype=genesis.float32)},
                        genesis.ones(2), tie_weights=False).detach().numpy(),
        untied.b.weight.detach().numpy() @ np.array([2., 2.]), rtol=1e-6)
    same_error(lambda lib, x: lib.func.functional_call(
        tied(lib), {"a.weight": lib.eye(2), "b.weight": lib.eye(2) * 2}, x), both(np.ones(2))[0])


def test_stack_module_state_matches_torch_and_checks_the_models():
    torch = torch_or_skip()
    pairs = [Net.pair(seed) for seed in range(3)]
    mine = stack_module_state([m for m, _ in pairs])
    theirs = torch.func.stack_module_state([t for _, t in pairs])
    close(mine, theirs, rtol=1e-6, atol=1e-7)
    assert all(p.requires_grad and p.grad_fn is None for p in mine[0].values())
    same_error(lambda lib, _: lib.func.stack_module_state([]), (None, None))
    same_error(lambda lib, _: lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()]),
               (None, None))
    same_error(lambda lib, _: lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Tanh()]), (None, None))


# -- PyTorch's tutorials: per-sample gradients, model ensembling ----------------------------

def per_sample_grads(torch, model, data, targets):
    """As in PyTorch's per-sample-gradients tutorial (`torch` is torch or genesis)."""
    from_func = torch.func
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = from_func.functional_call(model, (params, buffers), (batch,))
        return torch.nn.functional.cross_entropy(predictions, targets)

    ft_compute_grad = from_func.grad(compute_loss)
    ft_compute_sample_grad = from_func.vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    return ft_compute_sample_grad(params, buffers, data, targets)


def test_per_sample_gradients_as_in_pytorchs_tutorial():
    torch = torch_or_skip()
    mine, theirs = Net.pair()
    data = np.random.default_rng(5).uniform(-1, 1, (6, 4))
    targets = np.array([0, 2, 1, 1, 0, 2])
    got = per_sample_grads(genesis, mine, genesis.tensor(data, dtype=genesis.float32),
                           genesis.tensor(targets))
    expected = per_sample_grads(torch, theirs, torch.tensor(data, dtype=torch.float32),
                                torch.tensor(targets))
    close(got, expected, rtol=1e-5, atol=1e-6)
    # the same as one backward per sample, done by hand in genesis
    for index in range(len(targets)):
        mine.zero_grad()
        out = mine(genesis.tensor(data[index:index + 1], dtype=genesis.float32))
        genesis.nn.functional.cross_entropy(out, genesis.tensor(targets[index:index + 1])).backward()
        for name, param in mine.named_parameters():
            np.testing.assert_allclose(got[name][index].numpy(), param.grad.numpy(), rtol=1e-5, atol=1e-6)


def ensemble(torch, models, minibatches):
    """As in PyTorch's model-ensembling tutorial (the base model is the first one: genesis
    has no 'meta' device, and its weights are swapped out anyway)."""
    params, buffers = torch.func.stack_module_state(models)
    base_model = models[0]

    def fmodel(params, buffers, x):
        return torch.func.functional_call(base_model, (params, buffers), (x,))

    same = torch.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatches[0])
    different = torch.func.vmap(fmodel)(params, buffers, minibatches)
    return same, different, params


def test_model_ensembling_as_in_pytorchs_tutorial():
    torch = torch_or_skip()
    pairs = [Net.pair(seed) for seed in range(3)]
    batches = np.random.default_rng(1).uniform(-1, 1, (3, 5, 4))
    mine = ensemble(genesis, [m for m, _ in pairs], genesis.tensor(batches, dtype=genesis.float32))
    theirs = ensemble(torch, [t for _, t in pairs], torch.tensor(batches, dtype=torch.float32))
    close(mine[:2], theirs[:2], rtol=1e-5, atol=1e-6)
    for index, (model, _) in enumerate(pairs):
        alone = model(genesis.tensor(batches[index], dtype=genesis.float32))
        np.testing.assert_allclose(mine[1][index].detach().numpy(), alone.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    # the stacked parameters are leaves the ensemble's loss trains
    mine[1].sum().backward()
    theirs[1].sum().backward()
    close({k: v.grad for k, v in mine[2].items()}, {k: v.grad for k, v in theirs[2].items()},
          rtol=1e-5, atol=1e-6)


def test_transforms_compose_like_torchs():
    torch = torch_or_skip()
    (gx, tx), (gw, tw) = both(*arrays((4, 3), (3,)))
    f = lambda w, x: ((x * w).sin().sum()) ** 2
    for build in (lambda F: F.vmap(F.jacrev(f, argnums=1), in_dims=(None, 0)),
                  lambda F: F.vmap(F.hessian(f), in_dims=(None, 0)),
                  lambda F: F.grad(lambda w, x: F.vmap(f, in_dims=(None, 0))(w, x).sum()),
                  lambda F: F.vmap(F.vmap(F.grad(f, argnums=1), in_dims=(None, 0)), in_dims=(None, 0))):
        close(build(genesis.func)(gw, gx), build(torch.func)(tw, tx))
    close(grad(lambda w: jvp(lambda v: f(v, gx[0]), (w,), (gw,))[1])(gw),
          torch.func.grad(lambda w: torch.func.jvp(lambda v: f(v, tx[0]), (w,), (tw,))[1])(tw))
