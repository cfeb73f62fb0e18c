"""checkpoint's two variants, its warnings and errors, determinism checks and selective
checkpointing, compared with torch.utils.checkpoint where PyTorch is installed."""
import functools
import warnings
import weakref

import numpy as np
import pytest

import genesis
from genesis.utils.checkpoint import (CheckpointError, CheckpointPolicy, checkpoint,
                                      checkpoint_sequential, create_selective_checkpoint_contexts,
                                      set_checkpoint_debug_enabled, set_checkpoint_early_stop)
from genesis.utils._python_dispatch import aten
from tests.helpers import torch_or_skip


def _values(seed=0, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


def _leaves(module, arrays):
    return [module.tensor(array, dtype=module.float64, requires_grad=True) for array in arrays]


# -- use_reentrant must be passed ------------------------------------------------------

@pytest.mark.parametrize("library", ["genesis", "torch"])
def test_leaving_out_use_reentrant_warns_once_and_passing_it_does_not(library):
    lib = genesis if library == "genesis" else torch_or_skip()
    run = checkpoint if library == "genesis" else lib.utils.checkpoint.checkpoint
    x = lib.ones(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(lambda a: a.sin(), x, use_reentrant=False)
        run(lambda a: a.sin(), x, use_reentrant=True)
    assert [w for w in caught if "use_reentrant" in str(w.message)] == []
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        run(lambda a: a.sin(), x)


@pytest.mark.parametrize("library", ["genesis", "torch"])
def test_checkpoint_sequential_warns_without_use_reentrant(library):
    lib = genesis if library == "genesis" else torch_or_skip()
    run = checkpoint_sequential if library == "genesis" else lib.utils.checkpoint.checkpoint_sequential
    layers = [lib.nn.Linear(3, 3) for _ in range(3)]
    x = lib.ones(2, 3, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        run(layers, 3, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(layers, 3, x, use_reentrant=False)


# -- gradients equal the plain run, with autograd.grad, kwargs and non-tensors -----------------

def _block(lib, weight, x, scale=1.0, note="ignored"):
    return {"out": (x @ weight).tanh() * scale, "note": note, "pair": (x.exp(), 3)}


@pytest.mark.parametrize("library", ["genesis", "torch"])
def test_non_reentrant_autograd_grad_reaches_closure_tensors_and_keyword_tensors(library):
    lib = genesis if library == "genesis" else torch_or_skip()
    run = checkpoint if library == "genesis" else lib.utils.checkpoint.checkpoint
    weight, x, scale = _leaves(lib, _values(1, (3, 3), (2, 3), ()))

    def fn(a, scale=None, note=None):
        result = _block(lib, weight, a, scale, note)
        assert result["note"] == "kept"
        return result

    plain = fn(x, scale=scale, note="kept")
    wrapped = run(fn, x, scale=scale, note="kept", use_reentrant=False)
    assert wrapped["note"] == "kept" and wrapped["pair"][1] == 3
    expected = lib.autograd.grad((plain["out"].sum() + plain["pair"][0].sum()), (weight, x, scale))
    got = lib.autograd.grad((wrapped["out"].sum() + wrapped["pair"][0].sum()), (weight, x, scale))
    for a, b in zip(expected, got):
        np.testing.assert_allclose(np.asarray(b.detach().numpy()), np.asarray(a.detach().numpy()),
                                   rtol=1e-12)


def test_gradients_match_torch_for_an_input_that_needs_no_grad():
    torch = torch_or_skip()
    w_array, x_array = _values(2, (4, 4), (3, 4))
    results = []
    for lib, run in ((genesis, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        weight = lib.tensor(w_array, dtype=lib.float64, requires_grad=True)
        x = lib.tensor(x_array, dtype=lib.float64)  # needs no grad: the weight still gets its gradient
        out = run(lambda a: (a @ weight).sin() @ weight, x, use_reentrant=False)
        out.pow(2).sum().backward()
        results.append((out.detach().numpy(), weight.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_the_function_runs_once_in_forward_and_once_per_backward(use_reentrant):
    calls = []
    layer = genesis.nn.Linear(3, 3).double()
    x = genesis.randn(2, 3, dtype=genesis.float64, requires_grad=True)

    def fn(a):
        calls.append(1)
        return layer(a).tanh()

    out = checkpoint(fn, x, use_reentrant=use_reentrant)
    assert len(calls) == 1
    out.sum().backward(retain_graph=True)
    assert len(calls) == 2
    out.sum().backward()
    assert len(calls) == 3
    expected = genesis.autograd.grad(fn(x).sum(), layer.weight)[0] * 2
    np.testing.assert_allclose(layer.weight.grad.numpy(), expected.numpy(), rtol=1e-12)


def test_nested_checkpoints_give_plain_first_and_second_derivatives():
    def inner(a):
        return a.sin().exp()

    def outer(a):
        return checkpoint(inner, a.cos(), use_reentrant=False).sin() * a

    x = genesis.tensor([0.3, -1.2, 2.0], dtype=genesis.float64, requires_grad=True)
    derivatives = []
    for fn in (lambda a: inner(a.cos()).sin() * a, lambda a: checkpoint(outer, a, use_reentrant=False)):
        (first,) = genesis.autograd.grad(fn(x).sum(), x, create_graph=True)
        (second,) = genesis.autograd.grad(first.sum(), x)
        derivatives.append((first.detach().numpy(), second.numpy()))
    for plain, checkpointed in zip(*derivatives):
        np.testing.assert_allclose(checkpointed, plain, rtol=1e-12)


def test_gradcheck_through_a_checkpoint_with_a_closure_weight_and_keyword_input():
    weight = genesis.randn(3, 3, dtype=genesis.float64, requires_grad=True)

    def fn(x, shift):
        return checkpoint(lambda a, shift=None: (a @ weight + shift).tanh(), x, shift=shift,
                          use_reentrant=False)

    x = genesis.randn(2, 3, dtype=genesis.float64, requires_grad=True)
    shift = genesis.randn(3, dtype=genesis.float64, requires_grad=True)
    assert genesis.autograd.gradcheck(fn, (x, shift))
    assert genesis.autograd.gradcheck(lambda w: checkpoint(lambda a: (a @ w).sin(), x,
                                                           use_reentrant=False), (weight,))


def test_a_parameter_used_inside_and_outside_gets_one_gradient():
    w = genesis.randn(4, dtype=genesis.float64, requires_grad=True)
    x = genesis.randn(4, dtype=genesis.float64, requires_grad=True)
    out = checkpoint(lambda h: w * h, w * x, use_reentrant=False)
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), (2 * w * x).detach().numpy(), rtol=1e-12)


# -- bad arguments ------------------------------------------------------------------------

@pytest.mark.parametrize("library", ["genesis", "torch"])
def test_reentrant_refuses_keyword_arguments_context_fn_and_debug(library):
    lib = genesis if library == "genesis" else torch_or_skip()
    run = checkpoint if library == "genesis" else lib.utils.checkpoint.checkpoint
    x = lib.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        run(lambda a, b=None: a, x, b=1, use_reentrant=True)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        run(lambda a: a, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check"):
        run(lambda a: a, x, use_reentrant=False, determinism_check="sometimes")


# -- the recomputation must match the forward -------------------------------------------------

def _changing(first, then):
    runs = []

    def fn(a):
        runs.append(1)
        return first(a) if len(runs) == 1 else then(a)

    return fn


def _three_ops(a):
    return a.sin().exp().sin()


def _two_ops(a):
    return a.sin().exp()


def _two_ops_wider(a):
    return a.sin() * a.new_ones(2)  # (1,) * (2,): an output of another shape


@pytest.mark.parametrize("library", ["genesis", "torch"])
def test_a_recomputation_that_differs_raises_checkpoint_error(library):
    lib = genesis if library == "genesis" else torch_or_skip()
    module = genesis.utils.checkpoint if library == "genesis" else lib.utils.checkpoint
    x = lib.ones(1, requires_grad=True)
    with pytest.raises(module.CheckpointError, match="A different number of tensors was saved"):
        module.checkpoint(_changing(_three_ops, _two_ops), x, use_reentrant=False).sum().backward()
    with pytest.raises(module.CheckpointError, match="tensors have different metadata"):
        module.checkpoint(_changing(_two_ops, _two_ops_wider), x,
                          use_reentrant=False).sum().backward()
    with set_checkpoint_early_stop(False), module.set_checkpoint_early_stop(False), \
            pytest.raises(module.CheckpointError, match="more tensors during recomputation"):
        module.checkpoint(_changing(_two_ops, _three_ops), x, use_reentrant=False).sum().backward()
    with pytest.raises(RuntimeError, match="passed `debug=True` to checkpoint"):
        module.checkpoint(_changing(_two_ops, _two_ops_wider), x, use_reentrant=False,
                          debug=True).sum().backward()
    with module.set_checkpoint_debug_enabled(True), \
            pytest.raises(RuntimeError, match="passed `debug=True` to checkpoint"):
        module.checkpoint(_changing(_two_ops, _two_ops_wider), x, use_reentrant=False).sum().backward()
    assert issubclass(module.CheckpointError, RuntimeError)


def _exp_in_float64(a):
    return a.double().exp().float()  # saves one tensor, as a.exp() does, but a float64 one


@pytest.mark.parametrize("library", ["genesis", "torch"])
def test_determinism_check_none_skips_the_metadata_check_only(library):
    lib = genesis if library == "genesis" else torch_or_skip()
    module = genesis.utils.checkpoint if library == "genesis" else lib.utils.checkpoint
    x = lib.ones(2, requires_grad=True)
    with pytest.raises(module.CheckpointError, match="tensors have different metadata"):
        module.checkpoint(_changing(lambda a: a.exp(), _exp_in_float64), x,
                          use_reentrant=False).sum().backward()
    module.checkpoint(_changing(lambda a: a.exp(), _exp_in_float64), x, use_reentrant=False,
                      determinism_check="none").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(2, np.e), rtol=1e-6)
    with pytest.raises(module.CheckpointError, match="A different number of tensors was saved"):
        module.checkpoint(_changing(_three_ops, _two_ops), x, use_reentrant=False,
                          determinism_check="none").sum().backward()


def test_the_context_managers_restore_the_previous_setting():
    with set_checkpoint_debug_enabled(True):
        with set_checkpoint_debug_enabled(None):
            x = genesis.ones(1, requires_grad=True)
            with pytest.raises(CheckpointError) as error:
                checkpoint(_changing(_two_ops, _two_ops_wider), x,
                           use_reentrant=False).sum().backward()
            assert "debug=True" in str(error.value)  # the hint only
            assert "Ops of the forward" not in str(error.value)


# -- checkpoint_sequential --------------------------------------------------------------------

def test_checkpoint_sequential_recomputes_all_but_the_last_segment():
    calls = []

    def counted(index):
        def step(value):
            calls.append(index)
            return value.sin()
        return step

    x = genesis.randn(3, requires_grad=True)
    checkpoint_sequential([counted(i) for i in range(4)], 2, x, use_reentrant=False).sum().backward()
    assert calls == [0, 1, 2, 3, 0, 1]
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        checkpoint_sequential([counted(0)], 1, x, use_reentrant=False, scale=2)


# -- selective activation checkpointing -------------------------------------------------------

def test_policy_names_match_pytorch():
    torch = torch_or_skip()
    ours = [(policy.name, policy.value) for policy in CheckpointPolicy]
    assert ours == [(policy.name, policy.value) for policy in torch.utils.checkpoint.CheckpointPolicy]


def test_bad_policies_raise_the_types_pytorch_raises():
    with pytest.raises(ValueError, match="Expected op in `op_list` to be an OpOverload"):
        create_selective_checkpoint_contexts([2])
    with pytest.raises(ValueError, match="update the OpOverloadPacket to a specific OpOverload"):
        create_selective_checkpoint_contexts([aten.sin])
    with pytest.raises(TypeError, match="either a function or a list of ops"):
        create_selective_checkpoint_contexts(2)
    torch = torch_or_skip()
    with pytest.raises(ValueError, match="update the OpOverloadPacket"):
        torch.utils.checkpoint.create_selective_checkpoint_contexts([torch.ops.aten.sin])


def test_the_policy_is_asked_per_op_in_forward_and_recomputation():
    asked = []

    def policy(ctx, op, *args, **kwargs):
        asked.append((ctx.is_recompute, str(op)))
        return CheckpointPolicy.MUST_SAVE if op is aten.mm.default else CheckpointPolicy.PREFER_RECOMPUTE

    w = genesis.randn(3, 3, dtype=genesis.float64, requires_grad=True)
    x = genesis.randn(2, 3, dtype=genesis.float64, requires_grad=True)
    out = checkpoint(lambda a: (a @ w).sin(), x, use_reentrant=False,
                     context_fn=functools.partial(create_selective_checkpoint_contexts, policy))
    assert asked == [(False, "aten.mm.default"), (False, "aten.sin.default")]
    out.sum().backward()
    # the last tensor saved is sin's input: with early stop, the recomputation ends before sin
    assert asked[2:] == [(True, "aten.mm.default")]
    plain_w, plain_x = genesis.autograd.grad((x @ w).sin().sum(), (w, x))
    np.testing.assert_allclose(w.grad.numpy(), plain_w.numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), plain_x.numpy(), rtol=1e-12)


@pytest.mark.parametrize("saved", [True, False])
def test_a_saved_op_gives_its_forward_value_to_the_recomputation(saved):
    # without the random state restored, dropout draws another mask in the recomputation;
    # a saved dropout's output takes the forward's value again
    x = genesis.ones(400, dtype=genesis.float64, requires_grad=True)
    policy = [aten.native_dropout.default] if saved else []
    masks = []

    def fn(a):
        out = genesis.nn.functional.dropout(a, 0.5)
        masks.append((out != 0).numpy())
        return out * a

    out = checkpoint(fn, x, use_reentrant=False, preserve_rng_state=False,
                     determinism_check="none",
                     context_fn=functools.partial(create_selective_checkpoint_contexts, policy))
    out.sum().backward()
    assert (masks[0] == masks[1]).all() == saved


def test_a_saved_output_changed_in_place_is_an_error_unless_allowed():
    for allow in (False, True):
        x = genesis.randn(3, requires_grad=True)
        kept = []

        def fn(a):
            y = a.exp()
            kept.append(y)
            return y.sin()

        contexts = functools.partial(create_selective_checkpoint_contexts, [aten.exp.default],
                                     allow_cache_entry_mutation=allow)
        out = checkpoint(fn, x, use_reentrant=False, context_fn=contexts)
        with genesis.no_grad():
            kept[0].mul_(2)
        if allow:
            out.sum().backward()
        else:
            with pytest.raises(RuntimeError, match="has been mutated"):
                out.sum().backward()


def test_a_kept_value_serves_one_backward():
    x = genesis.randn(3, requires_grad=True)
    contexts = functools.partial(create_selective_checkpoint_contexts, [aten.sin.default])
    out = checkpoint(lambda a: a.sin().cos().exp(), x, use_reentrant=False, context_fn=contexts)
    out.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="Trying to backward an extra time"):
        out.sum().backward()


def test_kept_values_are_detached_and_let_go_with_the_graph():
    x = genesis.randn(3, requires_grad=True)
    modes = create_selective_checkpoint_contexts(lambda ctx, op, *args, **kwargs: True)
    out = checkpoint(lambda a: a.cos().exp().sin(), x, use_reentrant=False, context_fn=lambda: modes)
    storage = modes[0].storage
    kept = storage[aten.exp.default][0].val
    assert not kept.requires_grad
    reference = weakref.ref(kept)
    del kept, modes
    out.sum().backward(retain_graph=True)
    # the recomputation took the values of cos and exp; it stopped before sin (early stop)
    assert reference() is None and not storage[aten.exp.default] and not storage[aten.cos.default]


def test_a_view_of_an_integer_tensor_can_be_saved():
    torch = torch_or_skip()
    grads = {}
    for lib in (genesis, torch):
        contexts = functools.partial(lib.utils.checkpoint.create_selective_checkpoint_contexts,
                                     [lib.ops.aten.view.default] if lib is torch
                                     else [aten.view.default])
        y = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda a, b: (a.view(-1), b.sin().cos()),
                                              lib.tensor([1, 2, 3]), y, use_reentrant=False,
                                              context_fn=contexts)
        out[1].sum().backward()
        grads[lib] = y.grad.numpy()
    np.testing.assert_allclose(grads[torch], grads[genesis], rtol=1e-6)


# -- edge cases PyTorch's own tests check --------------------------------------------------------

def test_reentrant_checkpoint_refuses_autograd_grad_and_recovers():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        a = lib.randn(2, 2, requires_grad=True)
        with pytest.raises(RuntimeError, match="torch.utils.checkpoint is incompatible"):
            lib.autograd.grad(lib.utils.checkpoint.checkpoint(lib.exp, a, use_reentrant=True).sum(), (a,))
        lib.utils.checkpoint.checkpoint(lib.exp, a, use_reentrant=True).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), np.exp(a.detach().numpy()), rtol=1e-6)


class _SavesSecond(genesis.autograd.Function):
    seen = None

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(y)
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        (_SavesSecond.seen,) = ctx.saved_tensors
        return grad, None


def test_an_input_needing_no_grad_reaches_the_recomputation_itself():
    a, b = genesis.tensor(1.0, requires_grad=True), genesis.tensor(2.0)
    checkpoint(_SavesSecond.apply, a, b, use_reentrant=False).backward()
    assert _SavesSecond.seen is b


def test_a_tensor_used_inside_and_outside_runs_its_hook_once():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        w = lib.randn(4, 4, requires_grad=True)
        calls = []
        w.register_hook(lambda grad: calls.append(grad.shape))
        h = w * lib.rand(4, 4, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda x: w * x, h, use_reentrant=False)
        out.sum().backward()
        assert len(calls) == 1, lib.__name__


def test_each_output_of_a_checkpoint_has_a_node_of_its_own():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        def fn(a):
            x = a.sin().cos()
            return x, x.sin()

        a = lib.tensor(1.0, requires_grad=True)
        x, out = lib.utils.checkpoint.checkpoint(fn, a, use_reentrant=False)
        assert x.grad_fn is not out.grad_fn
        calls = []

        def hook(*_):  # a backward from the other output does not reach this node again
            calls.append(1)
            x.backward(retain_graph=True)

        out.grad_fn.register_hook(hook)
        out.backward(retain_graph=True)
        assert len(calls) == 1
        inner = -np.sin(np.sin(1.0)) * np.cos(1.0)  # d cos(sin a) / da
        expected = inner * (1 + np.cos(np.cos(np.sin(1.0))))  # from x, then from out
        assert a.grad.item() == pytest.approx(expected), lib.__name__


def test_a_non_leaf_used_inside_runs_its_hooks_and_retains_its_grad_once():
    w0 = genesis.randn(3, requires_grad=True)
    w = w0 * 2
    calls = []
    w.register_hook(lambda grad: calls.append(1))
    w.retain_grad()
    out = checkpoint(lambda x: (w * x).sum(), genesis.ones(3, requires_grad=True), use_reentrant=False)
    out.backward()
    assert len(calls) == 1
    np.testing.assert_allclose(w.grad.numpy(), np.ones(3))


def test_a_reentrant_checkpoint_inside_a_non_reentrant_one():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        def nested(a):
            return lib.utils.checkpoint.checkpoint(lambda b: b.sin().exp(), a, use_reentrant=True)

        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        lib.utils.checkpoint.checkpoint(nested, x, use_reentrant=False).sum().backward()
        expected = np.exp(np.sin(x.detach().numpy())) * np.cos(x.detach().numpy())
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
        out = lib.utils.checkpoint.checkpoint(nested, x, use_reentrant=False).sum()
        with pytest.raises(RuntimeError, match="torch.utils.checkpoint is incompatible"):
            lib.autograd.grad(out, x)
