"""genesis.autograd.graph: saved-tensor hooks, Node, multi-grad hooks, gradient edges; each
behaviour compared with torch.autograd.graph where PyTorch is installed."""
import threading

import numpy as np
import pytest

import genesis
from genesis.autograd import graph
from tests.helpers import torch_or_skip

VALUES = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]


def both(torch):
    """(library, its graph module) for genesis and torch."""
    return [(genesis, graph), (torch, torch.autograd.graph)]


def leaf(lib, values=VALUES, dtype="float64"):
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


def to_numpy(tensor):
    return np.asarray(tensor.detach().tolist())


# -- saved_tensors_hooks ------------------------------------------------------------------

def record_calls(lib, module, build):
    """The pack/unpack calls (with the shape each saw) while `build(x)` runs forward under the
    hooks and its sum runs backward, and x's gradient."""
    calls = []

    def pack(t):
        calls.append(("pack", tuple(t.shape)))
        return t

    def unpack(t):
        calls.append(("unpack", tuple(t.shape)))
        return t

    x = leaf(lib)
    with module.saved_tensors_hooks(pack, unpack):
        out = build(lib, x)
    out.sum().backward()
    return calls, to_numpy(x.grad)


@pytest.mark.parametrize("build", [
    lambda lib, x: x.exp(),
    lambda lib, x: x.sin() * x,
    lambda lib, x: (x * lib.ones(3, dtype=x.dtype)).tanh(),
], ids=["exp", "sin_mul", "mul_by_constant_tanh"])
def test_pack_and_unpack_calls_match_torch(build):
    """Ops that save what PyTorch's save (some genesis ops save more, e.g. pow its output:
    each is packed, so the counts differ there)."""
    torch = torch_or_skip()
    (ours, our_grad), (theirs, their_grad) = (record_calls(lib, module, build)
                                              for lib, module in both(torch))
    assert sorted(ours) == sorted(theirs)
    assert [kind for kind, _ in ours].count("pack") == [kind for kind, _ in theirs].count("pack")
    np.testing.assert_allclose(our_grad, their_grad)


def test_what_the_pack_hook_returns_is_what_backward_reads():
    torch = torch_or_skip()
    grads = []
    for lib, module in both(torch):
        a = leaf(lib)
        with module.saved_tensors_hooks(lambda t: 2 * t, lambda t: t):
            y = a * a
        y.sum().backward()
        grads.append(to_numpy(a.grad))
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], 4 * np.asarray(VALUES))


def test_innermost_hooks_win_and_leaving_restores_the_outer():
    torch = torch_or_skip()
    results = []
    for lib, module in both(torch):
        a, b = leaf(lib), leaf(lib)
        with module.saved_tensors_hooks(lambda t: 3 * t, lambda t: 3 * t):
            with module.saved_tensors_hooks(lambda t: 5 * t, lambda t: 5 * t):
                y = a * a
            z = b * b
        w = (a * b).sum()  # saved with no hooks
        (y.sum() + z.sum() + w).backward()
        results.append((to_numpy(a.grad), to_numpy(b.grad)))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs)
    x = np.asarray(VALUES)
    np.testing.assert_allclose(results[0][0], 2 * 25 * x + x)


def test_pack_hook_keeping_a_copy_hides_later_in_place_changes():
    """With hooks the saved value is whatever the hook kept: no version check, as in PyTorch."""
    torch = torch_or_skip()
    grads = []
    for lib, module in both(torch):
        a = leaf(lib)
        b = a.clone()
        with module.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = b * b
        with lib.no_grad():
            b.mul_(10)
        y.sum().backward()
        grads.append(to_numpy(a.grad))
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], 2 * np.asarray(VALUES))


def test_unpacked_tensor_has_its_own_version_counter():
    torch = torch_or_skip()
    for lib, module in both(torch):
        a = lib.tensor(1.0, requires_grad=True)
        replacement = a.detach().clone()
        versions = []

        class Save(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.sin()

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                before = a._version, replacement._version
                x.add_(1)
                versions.append((a._version - before[0], replacement._version - before[1]))
                return grad

        with module.saved_tensors_hooks(lambda t: replacement, lambda t: t):
            out = Save.apply(a)
        out.backward()
        assert versions == [(0, 1)], lib.__name__  # shares the unpack result's counter


def test_double_backward_through_hooked_saves_matches_torch():
    torch = torch_or_skip()
    results = []
    for lib, module in both(torch):
        a = leaf(lib)
        with module.saved_tensors_hooks(lambda t: 2 * t, lambda t: t):
            s = (a ** 3).sum()
            (g,) = lib.autograd.grad(s, (a,), create_graph=True)
            g.sum().backward()
        results.append(to_numpy(a.grad))
    np.testing.assert_allclose(results[0], results[1])


def test_gradcheck_through_hooks_in_float64():
    def f(x):
        with graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            return (x.sin() * x).exp()
    x = leaf(genesis)
    assert genesis.autograd.gradcheck(f, (x,))
    assert genesis.autograd.gradgradcheck(f, (x,))


def test_save_on_cpu_gives_the_same_gradients():
    torch = torch_or_skip()
    grads = []
    for lib, module in both(torch):
        a = leaf(lib)
        with module.save_on_cpu():
            y = (a.pow(2) * a.exp()).sum()
        y.backward()
        grads.append(to_numpy(a.grad))
    np.testing.assert_allclose(grads[0], grads[1])


def test_save_on_cpu_inside_checkpoint():
    torch = torch_or_skip()
    grads = []
    for lib, module in both(torch):
        a = leaf(lib)
        with module.save_on_cpu():
            h = a.pow(2)
            h = lib.utils.checkpoint.checkpoint(lambda t: t.pow(2).sin(), h, use_reentrant=False)
        h.sum().backward()
        grads.append(to_numpy(a.grad))
    np.testing.assert_allclose(grads[0], grads[1])


def test_pack_hook_changing_its_input_in_place_is_refused():
    torch = torch_or_skip()

    def bump(t):
        t += 1
        return t
    for lib, module in both(torch):
        a = leaf(lib)
        with module.saved_tensors_hooks(bump, lambda t: t):
            with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
                a.exp()


def test_unpack_hook_must_return_a_tensor():
    torch = torch_or_skip()
    errors = []
    for lib, module in both(torch):
        a = leaf(lib)
        with module.saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
            y = a.exp()
        with pytest.raises(Exception) as error:
            y.sum().backward()
        errors.append(type(error.value))
    assert errors[0] is errors[1]
    assert "unpack_hook expected to be a Tensor" in str(error.value)


def test_errors_raised_by_hooks_reach_the_caller():
    torch = torch_or_skip()

    class HookFailed(Exception):
        pass

    def fail(_):
        raise HookFailed("from the hook")
    for lib, module in both(torch):
        a = lib.tensor(1.0, requires_grad=True)
        with module.saved_tensors_hooks(fail, lambda t: t):
            with pytest.raises(HookFailed):
                a.sin()
        with module.saved_tensors_hooks(lambda t: t, fail):
            y = a.sin()
            with pytest.raises(HookFailed):
                y.backward()


def test_disable_saved_tensors_hooks():
    torch = torch_or_skip()
    for lib, module in both(torch):
        with module.disable_saved_tensors_hooks("not here"):
            with pytest.raises(RuntimeError, match="not here"):
                with module.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with module.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError, match="hooks are on"):
                with module.disable_saved_tensors_hooks("hooks are on"):
                    pass
        with module.disable_saved_tensors_hooks("outer"):
            with module.disable_saved_tensors_hooks("inner"):
                with pytest.raises(RuntimeError, match="inner"):
                    module.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
            with pytest.raises(RuntimeError, match="outer"):
                module.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
        with module.saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again
            pass


def test_hooks_entered_or_left_inside_backward_end_with_it():
    calls = []
    outer = graph.saved_tensors_hooks(lambda t: t, lambda t: t)

    def unpack(t):
        outer.__exit__()  # pops the copy backward runs with
        graph.saved_tensors_hooks(lambda t: calls.append("leaked") or t, lambda t: t).__enter__()
        return t
    x = leaf(genesis)
    with outer:
        with graph.saved_tensors_hooks(lambda t: t, unpack):
            y = x.exp()
        y.sum().backward()
        assert len(genesis.autograd.saved_hooks.state.stack) == 1
    assert genesis.autograd.saved_hooks.state.stack == []
    x.exp()
    assert calls == []


def test_hooks_are_per_thread():
    torch = torch_or_skip()
    for lib, module in both(torch):
        packs = []
        x = leaf(lib)
        with module.saved_tensors_hooks(lambda t: packs.append(1) or t, lambda t: t):
            worker = threading.Thread(target=lambda: x.exp())
            worker.start()
            worker.join()
        assert packs == [], lib.__name__


def test_numbers_are_not_packed():
    torch = torch_or_skip()

    def refuse(_):
        raise AssertionError("a number was packed")
    for lib, module in both(torch):
        a = leaf(lib)
        with module.saved_tensors_hooks(refuse, refuse):
            lib.autograd.grad((a * 3).sum(), (a,))


# -- Node -------------------------------------------------------------------------------

def test_node_is_a_virtual_base_of_every_node():
    torch = torch_or_skip()
    for lib, module in both(torch):
        a = lib.ones(2, 2, requires_grad=True)
        b = a.exp()
        node_type = module.Node
        assert isinstance(b.grad_fn, node_type)
        assert issubclass(type(b.grad_fn), node_type)
        assert node_type not in type(b.grad_fn).mro()
        assert isinstance(b.grad_fn.next_functions[0][0], node_type)
        assert not isinstance(None, node_type) and not isinstance(1, node_type)
        assert not isinstance(node_type, node_type) and issubclass(node_type, node_type)

        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2
        assert isinstance(Twice.apply(a).grad_fn, node_type)
    assert issubclass(genesis.autograd.AccumulateGrad, graph.Node)
    assert not isinstance(genesis.autograd.AccumulateGrad, graph.Node)


def test_node_api():
    torch = torch_or_skip()
    for lib, module in both(torch):
        a = lib.ones(2, requires_grad=True)
        node = a.exp().grad_fn
        assert node.name() == "ExpBackward0" if lib is torch else node.name() == "ExpBackward0"
        node.metadata["tag"] = 1
        assert node.metadata == {"tag": 1}
        seen = []
        node.register_prehook(lambda grad_outputs: seen.append("pre"))
        node.register_hook(lambda grad_inputs, grad_outputs: seen.append("post"))
        b = a.exp()
        del b
        out = a.exp()
        out.grad_fn.register_prehook(lambda grad_outputs: seen.append("pre"))
        out.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append("post"))
        out.sum().backward()
        assert seen == ["pre", "post"], lib.__name__


# -- register_multi_grad_hook ------------------------------------------------------------

def multi_grad_history(lib, module, mode):
    """What a multi-grad hook on four leaves sees over several backward passes."""
    t1, t2, t3, t4 = (lib.ones(2, requires_grad=True) for _ in range(4))
    seen = []
    if mode == "all":
        hook = lambda grads: seen.append([g is not None for g in grads])  # noqa: E731
    else:
        hook = lambda grad: seen.append(to_numpy(grad).tolist())  # noqa: E731
    handle = module.register_multi_grad_hook((t1, t2, t3, t4), hook, mode=mode)
    out = (t2 * 3) * t3
    out.sum().backward(inputs=(t2, t3), retain_graph=True)
    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    out.sum().backward(retain_graph=True)
    (t1 * t4).sum().backward()
    handle.remove()
    (t1 * t2).sum().backward()
    return seen


@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hook_matches_torch(mode):
    torch = torch_or_skip()
    ours, theirs = (multi_grad_history(lib, module, mode) for lib, module in both(torch))
    assert ours == theirs
    assert len(ours) == 4


def test_multi_grad_hook_any_runs_before_the_tensors_own_hooks():
    torch = torch_or_skip()
    orders = []
    for lib, module in both(torch):
        order = []
        z = lib.ones(2, requires_grad=True) * 2
        z.register_hook(lambda g: order.append("z"))
        outs = (z.sin(), z.cos())
        module.register_multi_grad_hook(outs, lambda g: order.append("any"), mode="any")
        (outs[0] + outs[1]).sum().backward()
        orders.append(order)
    assert orders[0] == orders[1] == ["any", "z"]


def test_multi_grad_hook_counts_passes_on_threads_apart():
    counts = []
    lock = threading.Lock()
    a, b = genesis.ones(2, requires_grad=True), genesis.ones(2, requires_grad=True)

    def hook(grads):
        with lock:
            counts.append([g is not None for g in grads])
    graph.register_multi_grad_hook((a, b), hook)

    def run():
        (a * b).sum().backward(inputs=(a, b))
    workers = [threading.Thread(target=run) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert counts == [[True, True]] * 4


def test_multi_grad_hook_bad_mode():
    torch = torch_or_skip()
    for lib, module in both(torch):
        with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got x"):
            module.register_multi_grad_hook((lib.ones(1, requires_grad=True),), print, mode="x")


# -- gradient edges -----------------------------------------------------------------------

def test_grad_to_an_edge_taken_before_an_in_place_change():
    torch = torch_or_skip()
    results = []
    for lib, module in both(torch):
        x = leaf(lib).clone()
        edge = module.get_gradient_edge(x)
        x *= 2
        old, new = lib.autograd.grad(x.sum(), (edge, x))
        results.append((to_numpy(old), to_numpy(new)))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs)
    np.testing.assert_allclose(results[0][0], 2 * np.ones((2, 3)))


def test_edges_as_outputs_and_inputs():
    torch = torch_or_skip()
    results = []
    for lib, module in both(torch):
        x = leaf(lib)
        middle = x.sin().cos().sum()
        out = middle.exp().sin()
        middle_edge = module.get_gradient_edge(middle)
        (middle_grad,) = lib.autograd.grad(out, (middle_edge,), retain_graph=True)
        (x_grad,) = lib.autograd.grad(middle_edge, (x,), grad_outputs=(middle_grad,),
                                      retain_graph=True)
        (reference,) = lib.autograd.grad(out, (x,), retain_graph=True)
        lib.autograd.backward(middle_edge, inputs=(module.get_gradient_edge(x),))
        results.append((to_numpy(x_grad), to_numpy(reference), to_numpy(x.grad)))
        assert isinstance(middle_edge, module.GradientEdge)
        assert module.GradientEdge(middle.grad_fn, 0) == middle_edge
    np.testing.assert_allclose(results[0][0], results[0][1])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs)


def test_edge_input_that_gets_no_gradient():
    torch = torch_or_skip()
    for lib, module in both(torch):
        x = leaf(lib).clone()
        y = leaf(lib).clone()
        edge_y = module.GradientEdge(y.grad_fn, y.output_nr)
        out = x.clone().sum()
        _, none = lib.autograd.grad(out, (x, edge_y), allow_unused=True, retain_graph=True)
        assert none is None
        with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given "
                                               "input is a GradientEdge"):
            lib.autograd.grad(out, (x, edge_y), allow_unused=True, materialize_grads=True)


def test_gradient_edge_of_tensor_without_grad():
    torch = torch_or_skip()
    for lib, module in both(torch):
        with pytest.raises(RuntimeError, match="does not require gradients"):
            module.get_gradient_edge(lib.ones(2))


# -- versions and view tracking ----------------------------------------------------------

def test_increment_version():
    torch = torch_or_skip()
    for lib, module in both(torch):
        for tensor in (lib.ones(3, requires_grad=True), lib.zeros(3, dtype=lib.int32)):
            before = tensor._version
            module.increment_version(tensor)
            assert tensor._version == before + 1
        with lib.inference_mode():
            inside = lib.ones(2)
            module.increment_version(inside)
        module.increment_version(inside)


def test_unsafe_preserve_version_counter_and_view_tracking_switch():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        x = lib.ones(2)
        with lib.autograd._unsafe_preserve_version_counter(x):
            x.add_(1)
        assert x._version == 0
        lib.autograd._force_original_view_tracking(False)
        with lib.autograd._force_original_view_tracking(True):
            pass
        with pytest.raises(RuntimeError, match="SavedTensor object from Python is forbidden"):
            lib.autograd.SavedTensor()


def test_served_as_torch_autograd_graph():
    from genesis import compat
    with compat.serve_torch():
        import torch
        assert torch.autograd.graph.saved_tensors_hooks is graph.saved_tensors_hooks
        assert torch.autograd.graph.Node is graph.Node


# -- allow_mutation_on_saved_tensors ------------------------------------------------------

@pytest.mark.parametrize("change", ["saved_itself", "through_a_view", "base_of_saved_view"])
def test_allow_mutation_on_saved_tensors_matches_torch(change):
    torch = torch_or_skip()
    grads = []
    for lib, module in both(torch):
        a = leaf(lib)
        with module.allow_mutation_on_saved_tensors():
            b = a.clone()
            if change == "base_of_saved_view":
                out = (b[:1] ** 2).sum()
                b.mul_(3)
            else:
                out = (b ** 2).sum()
                (b if change == "saved_itself" else b.view_as(b)).sin_()
            out.backward()
        grads.append(to_numpy(a.grad))
    np.testing.assert_allclose(grads[0], grads[1])
    assert grads[0][0] == pytest.approx(2 * np.asarray(VALUES)[0])


def test_without_allow_mutation_the_change_is_caught():
    torch = torch_or_skip()
    for lib, _ in both(torch):
        b = leaf(lib).clone()
        out = (b ** 2).sum()
        b.sin_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


def test_allow_mutation_errors():
    torch = torch_or_skip()
    for lib, module in both(torch):
        with module.allow_mutation_on_saved_tensors():
            with pytest.raises(RuntimeError, match="cannot be nested"):
                with module.allow_mutation_on_saved_tensors():
                    pass
        with module.allow_mutation_on_saved_tensors():
            out = (leaf(lib) ** 2).sum()
        with pytest.raises(AssertionError, match="backward outside of the "
                                                 "'allow_mutation_on_saved_tensors' context"):
            out.backward()
        with module.allow_mutation_on_saved_tensors():
            out = (leaf(lib) ** 2).sum()
        with module.allow_mutation_on_saved_tensors():
            with pytest.raises(AssertionError, match="backward outside"):
                out.backward()


def test_allow_mutation_double_backward():
    torch = torch_or_skip()
    results = []
    for lib, module in both(torch):
        a = leaf(lib)
        with module.allow_mutation_on_saved_tensors():
            b = a.clone()
            out = (b ** 3).sum()
            b.sin_()
            (da,) = lib.autograd.grad(out, a, create_graph=True)
            (d2a,) = lib.autograd.grad(da.sum(), a)
        results.append(to_numpy(d2a))
    np.testing.assert_allclose(results[0], results[1])
