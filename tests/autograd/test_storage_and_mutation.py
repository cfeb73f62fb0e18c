"""Storage-level tensor API (storage objects, resize_, set_), out= arguments, _foreach_* ops,
and allow_mutation_on_saved_tensors, each checked against PyTorch where it is installed."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import genesis
import genesis.autograd.forward_ad as fwAD
from genesis.autograd.graph import allow_mutation_on_saved_tensors
from tests.helpers import torch_or_skip


def _both(torch, values, requires_grad=False):
    """The same float64 values as a genesis and a torch tensor."""
    array = np.asarray(values, dtype=np.float64)
    return (genesis.tensor(array, dtype=genesis.float64, requires_grad=requires_grad),
            torch.tensor(array, dtype=torch.float64, requires_grad=requires_grad))


# -- allow_mutation_on_saved_tensors ------------------------------------------------------------

def test_mutation_after_save_gives_the_saved_value_gradient():
    torch = torch_or_skip()
    values = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
    grads = []
    for lib, (a, _) in ((genesis, _both(torch, values, True)),
                        (torch, _both(torch, values, True)[::-1])):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.backward()
            assert len(ctx.cloned) == 0  # backward freed the node, and its copy with it
        grads.append(a.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], 2 * np.asarray(values))


def test_without_the_context_the_mutation_is_an_error():
    a = genesis.ones(2, 3, requires_grad=True)
    b = a.clone()
    out = (b ** 2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_copies_are_made_lazily_once_per_saved_version_and_dropped_with_the_graph():
    torch = torch_or_skip()
    counts = []
    for lib in (genesis, torch):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = lib.ones(2, 3, requires_grad=True).clone()
            b = a ** 2
            c = a ** 2
            saved = len(ctx.tid_to_weakhandle)
            before = len(ctx.cloned)
            a.sin_()  # one copy for both nodes: same tensor, same version
            once = len(ctx.cloned)
            d = a ** 2
            a.sin_()  # a second saved version
            twice = len(ctx.cloned)
            del b, c
            gc.collect()
            after_first = len(ctx.cloned)
            del d
            gc.collect()
            counts.append((saved, before, once, twice, after_first, len(ctx.cloned)))
    assert counts[0] == counts[1] == (1, 0, 1, 2, 1, 0)


def test_writes_through_a_view_copy_the_saved_base():
    torch = torch_or_skip()
    results = []
    for lib in (genesis, torch):
        a = lib.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            b = a.clone()
            out = (b ** 2).sum()
            view = b[:1]
            view *= 10  # into the saved tensor's storage, through a view
            out.backward()
        results.append(a.grad.numpy())
    np.testing.assert_allclose(results[0], results[1])


def test_writes_into_the_base_copy_a_saved_view():
    # PyTorch 2.x gets this one wrong for a strided view (its backward reads the changed
    # values); genesis gives the gradient of the values that were saved
    a = genesis.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=genesis.float64, requires_grad=True)
    with allow_mutation_on_saved_tensors():
        c = a.clone()
        part = c[:, 1:]
        out = (part ** 3).sum()
        c.mul_(2)
        out.backward()
    expected = np.zeros((2, 3))
    expected[:, 1:] = 3 * a.detach().numpy()[:, 1:] ** 2
    np.testing.assert_allclose(a.grad.numpy(), expected)


def test_double_backward_inside_the_context():
    torch = torch_or_skip()
    results = []
    for lib in (genesis, torch):
        a = lib.tensor([0.5, -2.0], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            b = a.clone()
            out = (b ** 3).sum()
            b.exp_()
            (da,) = lib.autograd.grad(out, a, create_graph=True)
            (d2a,) = lib.autograd.grad(da.sum(), a)
        assert len(ctx.cloned) == 0  # cleared when the context is left
        results.append((da.detach().numpy(), d2a.numpy()))
    for mine, theirs in zip(results[0], results[1]):
        np.testing.assert_allclose(mine, theirs)


def test_out_argument_and_foreach_writes_are_seen():
    torch = torch_or_skip()
    seen = []
    for lib in (genesis, torch):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = lib.tensor([1.5], requires_grad=True)
            b = lib.tensor([2.0])
            out = a * b  # saves b only
            assert len(ctx.tid_to_weakhandle) == 1
            lib.sin(lib.tensor([0.0]), out=b)
            copied = len(ctx.cloned)
            out.backward()
            xs = [lib.tensor(1.0, requires_grad=True), lib.tensor(2.0, requires_grad=True)]
            ys = lib._foreach_exp(xs)
            lib._foreach_add_(ys, 1)  # exp saved its outputs: they are copied first
            (ys[0] + ys[1]).backward()
        seen.append((copied, a.grad.item(), xs[0].grad.item(), xs[1].grad.item()))
    assert seen[0][0] == seen[1][0] == 1
    np.testing.assert_allclose(seen[0][1:], seen[1][1:], rtol=1e-6)


def test_backward_outside_the_context_and_nesting_are_refused():
    with allow_mutation_on_saved_tensors():
        a = genesis.ones(2, requires_grad=True)
        out = (a ** 2).sum()
    with pytest.raises(AssertionError, match="Trying to backward outside of the "
                                             "'allow_mutation_on_saved_tensors' context"):
        out.backward()
    with allow_mutation_on_saved_tensors():
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with allow_mutation_on_saved_tensors():
                pass


# -- out= ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_out_argument_writes_the_result_and_bumps_the_version(name):
    torch = torch_or_skip()
    results = []
    for lib in (genesis, torch):
        out = lib.zeros(2, 2, dtype=lib.float64)
        x = lib.tensor([[1., 2.], [3., 4.]], dtype=lib.float64)
        returned = getattr(lib, name)(x, 2.0, out=out)
        assert returned is out
        results.append((out.numpy().copy(), out._version))
    np.testing.assert_allclose(results[0][0], results[1][0])
    assert results[0][1] == results[1][1] == 1


def test_out_argument_is_refused_when_an_argument_requires_grad():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        a = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="out=... arguments don't support automatic "
                                               "differentiation, but one of the arguments "
                                               "requires grad"):
            lib.mul(a, a, out=lib.zeros(2))
        with pytest.raises(RuntimeError, match="out="):
            lib.mul(lib.ones(2), lib.ones(2), out=lib.zeros(2, requires_grad=True))
        with lib.no_grad():
            out = lib.zeros(2)
            lib.mul(a, 3, out=out)
        assert out.tolist() == [3.0, 3.0]


def test_out_argument_is_refused_for_dual_tensors():
    with fwAD.dual_level():
        dual = fwAD.make_dual(genesis.ones(2), genesis.ones(2))
        with pytest.raises(RuntimeError, match="out= function"):
            genesis.add(genesis.ones(2), genesis.ones(2), out=dual)
        with pytest.raises(RuntimeError, match="out= function"):
            genesis.add(dual, genesis.ones(2), out=genesis.zeros(2))


def test_out_argument_into_an_inference_tensor_outside_inference_mode():
    with genesis.inference_mode():
        target = genesis.ones(2)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode"):
        genesis.mul(genesis.ones(2), 2, out=target)


# -- _foreach_* ---------------------------------------------------------------------------------

def test_foreach_ops_match_torch():
    torch = torch_or_skip()
    values = [[0.5, 1.5], [2.0]]
    results = []
    for lib in (genesis, torch):
        xs = [lib.tensor(v, dtype=lib.float64) for v in values]
        exp = lib._foreach_exp(xs)
        added = lib._foreach_add(xs, [1.0, 2.0])
        ones = [lib.ones(2, dtype=lib.float64), lib.ones(1, dtype=lib.float64)]
        scaled = lib._foreach_sub(xs, ones, alpha=2)
        lib._foreach_mul_(xs, 3.0)
        results.append([value for t in [*exp, *added, *scaled, *xs] for value in t.tolist()])
    assert results[0] == pytest.approx(results[1])


def test_foreach_lerp_zero_and_copy_match_torch():
    """The EMA updates scripts write (timm's ModelEmaV3: _foreach_lerp_ of the EMA weights
    towards the live ones), with a number, a tensor and a list of tensors as the weight."""
    torch = torch_or_skip()
    results = []
    for lib in (genesis, torch):
        ema = [lib.zeros(2, dtype=lib.float64), lib.ones(1, dtype=lib.float64)]
        live = [lib.tensor([1.0, 3.0], dtype=lib.float64), lib.tensor([5.0], dtype=lib.float64)]
        lib._foreach_lerp_(ema, live, 0.25)
        lib._foreach_lerp_(ema, live, lib.tensor(0.5, dtype=lib.float64))
        lib._foreach_lerp_(ema, live, [lib.tensor(0.1, dtype=lib.float64)] * 2)
        made = lib._foreach_lerp(ema, live, 0.5)
        copies = [lib.empty(2, dtype=lib.float64), lib.empty(1, dtype=lib.float64)]
        lib._foreach_copy_(copies, ema)
        lib._foreach_zero_(ema)
        results.append([value for t in [*made, *copies, *ema] for value in t.tolist()])
    assert results[0] == pytest.approx(results[1])


def test_foreach_gradients_flow_to_each_tensor():
    torch = torch_or_skip()
    grads = []
    for lib in (genesis, torch):
        xs = [lib.tensor([0.3, -0.2], dtype=lib.float64, requires_grad=True),
              lib.tensor([1.1], dtype=lib.float64, requires_grad=True)]
        ys = lib._foreach_mul(lib._foreach_sin(xs), xs)
        (ys[0].sum() + ys[1].sum()).backward()
        grads.append(xs[0].grad.tolist() + xs[1].grad.tolist())
    assert grads[0] == pytest.approx(grads[1])


# -- storage objects ----------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_storage_is_shared_by_a_view_and_its_base():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        base = lib.zeros(6)
        view = base[2:].view(2, 2)
        assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        assert base.untyped_storage().nbytes() == 24
        assert view.untyped_storage().size() == 24
        assert len(view.storage()) == 6
        assert view.storage().data_ptr() == base.data_ptr()


# -- resize_ / set_ -----------------------------------------------------------------------------

def test_resize_bumps_the_version_only_when_the_shape_changes():
    torch = torch_or_skip()
    versions = []
    for lib in (genesis, torch):
        x = lib.tensor([1.0, 2.0, 3.0])
        seen = []
        x.resize_((1, 2))
        seen.append((tuple(x.shape), x._version, x.flatten().tolist()))
        x.resize_as_(lib.ones(3))
        seen.append((tuple(x.shape), x._version, x.flatten().tolist()))
        x.resize_(3)
        seen.append((tuple(x.shape), x._version))
        versions.append(seen)
    assert versions[0] == versions[1]


def test_resize_is_refused_on_a_tensor_that_requires_grad():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            lib.ones(2, requires_grad=True).resize_(3)
    with genesis.inference_mode():  # allowed inside inference mode, as in PyTorch
        inside = genesis.ones(1, 2, 3, requires_grad=True)
        assert inside.resize_(1, 2).shape == (1, 2)


def test_set_makes_a_parameter_a_window_on_other_memory():
    torch = torch_or_skip()
    grads = []
    for lib in (genesis, torch):
        p = lib.nn.Parameter(lib.ones(6, dtype=lib.float64))
        for _ in range(2):
            with lib.no_grad():
                p.set_(p[1:])
                p.grad = None
            lib.cat((p, p * 2)).sum().backward()
        grads.append((tuple(p.shape), p.grad.tolist(), p._version))
    assert grads[0] == grads[1]


def test_set_leaves_the_old_gradient_edge_behind():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        x = lib.rand(2, requires_grad=True)
        edge = lib.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with lib.no_grad():
            x.set_(lib.rand(2))
        with pytest.raises(RuntimeError, match="to not have been used in the graph"):
            lib.autograd.grad(out.sum(), x)
        (grad,) = lib.autograd.grad(out.sum(), edge)
        assert grad.tolist() == [1.0, 1.0]


def test_set_on_a_leaf_that_requires_grad_is_refused_with_grad_enabled():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.ones(2, requires_grad=True).set_(lib.zeros(3))


# -- views and inference mode -------------------------------------------------------------------

def test_a_view_of_an_inference_tensor_is_an_inference_leaf():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        with lib.inference_mode():
            c = lib.ones(1, 2, 3, requires_grad=True)
        out = c.view(-1)
        assert lib.is_inference(out) and not out.requires_grad
        assert out.is_leaf and not out._is_view()


def test_messages_of_views_modified_in_place():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        pieces = lib.rand(2, requires_grad=True).clone().unbind()
        with pytest.raises(RuntimeError, match="Output 1 of Unbind(Backward0)? is a view and is "
                                               "being modified inplace"):
            pieces[1].add_(1)
        base = lib.rand(2, requires_grad=True).clone()
        with lib.no_grad():
            pieces = base.unbind()
        with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is "
                                               "being modified inplace"):
            pieces[0].add_(1)
        x = lib.zeros(2)
        with lib.inference_mode():
            y = x.view(2)
        y.requires_grad_(True)
        with pytest.raises(RuntimeError, match="a view of a view .* is being .* inside the "
                                               "inference_mode"):
            y.view(2).div_(2)


def test_make_dual_copies_a_tangent_laid_out_unlike_the_primal():
    primal = genesis.randn(5)[:4].detach()
    tangent = genesis.randn(4)
    kept = tangent.clone()
    with fwAD.dual_level():
        _, unpacked = fwAD.unpack_dual(fwAD.make_dual(primal, tangent))
        unpacked *= 2
        assert genesis.equal(tangent, kept)
        same = genesis.randn(4)
        assert fwAD.unpack_dual(fwAD.make_dual(genesis.zeros(4), same)).tangent is same


def test_a_write_the_context_did_not_see_is_an_error_not_a_wrong_gradient():
    with allow_mutation_on_saved_tensors():
        a = genesis.ones(2, requires_grad=True).clone()
        out = (a ** 2).sum()
        a._data[...] = 5.0  # behind the ops' back, as code writing arrays directly does
        genesis.autograd.graph.increment_version(a)
        with pytest.raises(RuntimeError, match="did not see"):
            out.backward()


# -- in-place view ops --------------------------------------------------------------------------

def test_as_strided_in_place_values_and_gradients():
    torch = torch_or_skip()
    results = []
    for lib in (genesis, torch):
        x = lib.arange(12.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
        y = x.clone()
        y.as_strided_((2, 3), (4, 1), 1)
        (y * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        base = lib.arange(6.0, dtype=lib.float64)
        window = base[1:].as_strided_((2, 2), (1, 2))  # its own offset by default
        results.append((y.tolist(), x.grad.tolist(), window.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("op", ["t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_"])
def test_in_place_view_ops_keep_how_the_view_was_made(op):
    torch = torch_or_skip()
    calls = {"t_": lambda v: v.t_(), "transpose_": lambda v: v.transpose_(0, 0),
             "squeeze_": lambda v: v.squeeze_(0), "unsqueeze_": lambda v: v.unsqueeze_(0),
             "as_strided_": lambda v: v.as_strided_((1, 0), (2, 2))}
    outcomes = []
    for lib in (genesis, torch):
        seen = []
        for made_with_grad, changed_with_grad in ((True, False), (False, True), (False, False)):
            base = lib.rand(2, 3, requires_grad=True).clone()
            with lib.set_grad_enabled(made_with_grad):
                view = base.view_as(base)
            step = "view op"
            try:
                with lib.set_grad_enabled(changed_with_grad):
                    calls[op](view)
                step = "add_"
                view.add_(1)
                seen.append("ok")
            except RuntimeError as error:
                seen.append((step, "no_grad mode" in str(error)))
        outcomes.append(seen)
    assert outcomes[0] == outcomes[1]


def test_view_replay_names_the_grad_fn_of_a_rebuilt_view():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        x = lib.ones(2, 2, requires_grad=True)
        out = x.clone().view(-1)
        out.add_(1)
        assert "AsStridedBackward" in out.grad_fn.name()
        with lib.autograd._force_original_view_tracking(True):
            assert lib.autograd.is_view_replay_enabled()
            out = x.clone().view(-1)
            out.add_(1)
            assert "ViewBackward" in out.grad_fn.name()
            out.sum().backward()
        assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
        assert not lib.autograd.is_view_replay_enabled()


def test_in_place_ops_under_saved_tensor_hooks_pack_the_value_before_the_change():
    # an identity pack hook must not see the target that the op is about to overwrite
    torch = torch_or_skip()
    grads = []
    for lib in (genesis, torch):
        a = lib.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            b = a.clone()
            view = b[:, 1:]
            b.mul_(3)  # the view is now stale
            view.sin_()  # saves its input (the view's value before the change)
            b[0].exp_()  # saves its output
            (b * b).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
