"""View semantics PyTorch's autograd tests check: hooks around an in-place change through a
view, the errors for views that can't be rebased (also when the change came through the
base), replaying a view's ops on a new base (`_view_func`, `slice_inverse`), `as_strided` as
a view of the storage, and forward-mode tangents of views and detached tensors."""
import numpy as np
import pytest

import genesis
import genesis.autograd.forward_ad as fwAD
from tests.helpers import torch_or_skip


def _lib(name):
    return genesis if name == "genesis" else torch_or_skip()


LIBS = ["genesis", "torch"]


# -- hooks and an in-place change through a view ----------------------------------------------

@pytest.mark.parametrize("name", LIBS)
def test_hooks_of_a_view_changed_in_place_are_left_behind(name):
    lib = _lib(name)
    fired = []
    base = lib.tensor([1.0, 2.0], requires_grad=True).clone()
    view, other = base[:], base[:]
    view.register_hook(lambda grad: fired.append("view, before"))
    other.register_hook(lambda grad: fired.append("other, before"))
    view.mul_(3)
    other.grad_fn  # PyTorch rebuilds a stale view's grad_fn here (genesis: at register_hook)
    other.register_hook(lambda grad: fired.append(("other, after", grad.tolist())))
    (view + other).sum().backward()
    assert fired == [("other, after", [1.0, 1.0])]


def test_register_hook_on_a_stale_view_goes_to_its_rebuilt_grad_fn():
    base = genesis.tensor([1.0, 2.0], requires_grad=True).clone()
    view, other = base[:], base[:]
    view.mul_(3)
    fired = []
    other.register_hook(lambda grad: fired.append(grad.tolist()))
    (view + other).sum().backward()
    assert fired == [[1.0, 1.0]]


@pytest.mark.parametrize("name", LIBS)
def test_gradient_through_a_view_changed_in_place(name):
    lib = _lib(name)
    leaf = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    base = leaf * 1
    view = base.t()[1:]
    view.mul_(view.detach() + 1)
    (base * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    assert leaf.grad.tolist() == [[1.0, 6.0, 12.0], [4.0, 30.0, 42.0]]


# -- views that can't be rebased --------------------------------------------------------------

class _OneView(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.select(0, 1)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_zeros(2).index_put((genesis.tensor([1]),), grad.reshape(1))


class _TwoViews(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.select(0, 0), x.select(0, 1)

    @staticmethod
    def backward(ctx, first, second):
        return genesis.stack([first, second])


def test_custom_function_view_changed_in_place_names_its_output():
    torch = torch_or_skip()
    out = _OneView.apply(genesis.ones(2, requires_grad=True).clone())
    with pytest.raises(RuntimeError, match="Output 0 of _OneViewBackward is a view and is "
                                           "being modified inplace.*custom Function"):
        out += 1

    class TorchOneView(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.select(0, 1)

        @staticmethod
        def backward(ctx, grad):
            return None

    with pytest.raises(RuntimeError, match="Output 0 of TorchOneView is a view"):
        TorchOneView.apply(torch.ones(2, requires_grad=True).clone()).add_(1)


def test_views_of_a_custom_function_with_several_outputs_are_multi_output_views():
    torch = torch_or_skip()
    first, second = _TwoViews.apply(genesis.ones(2, requires_grad=True).clone())
    with pytest.raises(RuntimeError, match="Output 1 of _TwoViewsBackward is a view.*returns "
                                           "multiple views"):
        second.add_(1)

    class TorchTwoViews(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.select(0, 0), x.select(0, 1)

        @staticmethod
        def backward(ctx, first, second):
            return None

    with pytest.raises(RuntimeError, match="returns multiple views"):
        TorchTwoViews.apply(torch.ones(2, requires_grad=True).clone())[1].add_(1)


def test_input_returned_as_is_is_a_view_that_refuses_in_place_changes():
    torch = torch_or_skip()
    results = {}
    for name, lib in (("genesis", genesis), ("torch", torch)):
        class Same(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        x = lib.ones(2, requires_grad=True) * 1
        out = Same.apply(x)
        results[name] = (out._is_view(), out._base is x, out._version == x._version)
        with pytest.raises(RuntimeError, match="Output 0 of Same(Backward)? is a view and is "
                                               "being modified inplace"):
            out.mul_(3)
    assert results["genesis"] == results["torch"] == (True, True, True)


MAKERS = {
    "inference_mode": lambda lib, base: _made_under(lib.inference_mode, base),
    "no_grad": lambda lib, base: _made_under(lib.no_grad, base),
    "split": lambda lib, base: base.split(3)[0],
}


def _made_under(mode, base):
    with mode():
        return base.view(-1)


@pytest.mark.parametrize("kind", MAKERS)
@pytest.mark.parametrize("name", LIBS)
def test_using_such_a_view_after_its_base_changed_in_place_raises(name, kind):
    lib = _lib(name)
    base = lib.ones(6, requires_grad=True).clone()
    view = MAKERS[kind](lib, base)
    base.add_(2)
    assert view.requires_grad
    with pytest.raises(RuntimeError, match="its base or another view of its base has been "
                                           "modified inplace"):
        view * 2
    assert "grad_fn=<Invalid>" in repr(view)


@pytest.mark.parametrize("name", LIBS)
def test_such_a_view_of_a_base_without_grad_stays_usable(name):
    lib = _lib(name)
    base = lib.ones(6).clone()
    with lib.inference_mode():
        view = base.view(-1)
    base.add_(2)
    assert (view * 2).tolist() == [6.0] * 6


# -- replaying a view's ops -------------------------------------------------------------------

@pytest.mark.parametrize("name", LIBS)
def test_view_func_replays_the_view_ops_on_a_new_base(name):
    lib = _lib(name)
    with lib.autograd._force_original_view_tracking(True):  # PyTorch: else one as_strided
        _check_view_func(lib)


def _check_view_func(lib):
    base = lib.arange(60.0).reshape(3, 4, 5).clone()
    view = base.transpose(0, 2)[1:3].select(2, 1)
    new_base = -base
    assert view._view_func(new_base).tolist() == (-view).tolist()
    shifted = view._view_func(new_base, symint_visitor_fn=lambda n: n + 1)
    assert shifted.tolist() == new_base.transpose(0, 2)[2:4:2].select(2, 2).tolist()
    assert view._view_func(new_base).tolist() == (-view).tolist()  # the ops are unchanged


def test_view_func_is_differentiable_and_refuses_a_tensor_that_is_no_view():
    base = genesis.arange(6.0).reshape(2, 3).clone()
    view = base[:, 1]
    leaf = genesis.ones(2, 3, requires_grad=True)
    view._view_func(leaf * 2).sum().backward()
    assert leaf.grad.tolist() == [[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]]
    with pytest.raises(RuntimeError, match="not a view"):
        base._view_func(base)


@pytest.mark.parametrize("name", LIBS)
def test_slice_inverse_reads_the_base_and_replays_with_a_new_tensor(name):
    lib = _lib(name)
    with lib.autograd._force_original_view_tracking(True):
        _check_slice_inverse(lib)


def _check_slice_inverse(lib):
    base = lib.arange(60.0).reshape(3, 4, 5)
    sliced = base[:, 2:3, :].detach()
    view = lib.slice_inverse(sliced, base, 1, 2, 3, 1)
    assert view.tolist() == base.tolist()
    assert view.data_ptr() == base.data_ptr()
    new_sliced = lib.arange(60.0).reshape(3, 4, 5)[:, 2:3, :].detach()
    replayed = view._view_func(new_sliced, tensor_visitor_fn=lambda t: lib.zeros(1, 2, 3))
    assert tuple(replayed.shape) == (1, 2, 3)
    # laid out as the new tensor: its strides and its storage offset (0)
    assert replayed.tolist() == new_sliced.as_strided((1, 2, 3), (6, 3, 1), 0).tolist()


# -- as_strided -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", LIBS)
def test_as_strided_is_a_view_of_the_storage(name):
    lib = _lib(name)
    storage = lib.arange(6.0)
    part = storage[1:5]
    window = part.as_strided((2, 2), (1, 3))  # from the part's own offset, past its end
    assert window.tolist() == [[1.0, 4.0], [2.0, 5.0]]
    assert window._is_view() and window._base is storage
    assert part.as_strided((3,), (2,), 0).tolist() == [0.0, 2.0, 4.0]
    window.mul_(10)
    assert storage.tolist() == [0.0, 10.0, 20.0, 3.0, 40.0, 50.0]
    with pytest.raises(RuntimeError, match="out of bounds for storage of size"):
        part.as_strided((7,), (1,), 0)


@pytest.mark.parametrize("name", LIBS)
def test_as_strided_gradient_reaches_the_elements_read(name):
    lib = _lib(name)
    leaf = lib.tensor(np.arange(6.0), requires_grad=True)
    leaf.as_strided((3, 3), (1, 1), 1).sum().backward()
    assert leaf.grad.tolist() == [0.0, 1.0, 2.0, 3.0, 2.0, 1.0]


# -- forward mode -----------------------------------------------------------------------------

def _forward_ad(name):
    return fwAD if name == "genesis" else torch_or_skip().autograd.forward_ad


@pytest.mark.parametrize("name", LIBS)
def test_detach_in_place_drops_the_tangent(name):
    lib, ad = _lib(name), _forward_ad(name)
    with ad.dual_level():
        dual = ad.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])).clone()
        assert ad.unpack_dual(dual.detach() * 2).tangent is None
        assert ad.unpack_dual(dual * 2).tangent.tolist() == [6.0, 8.0]
        dual.detach_()
        assert ad.unpack_dual(dual * 2).tangent is None


@pytest.mark.parametrize("name", LIBS)
def test_tangent_of_a_view_written_in_place(name):
    lib, ad = _lib(name), _forward_ad(name)
    tangent = lib.arange(4.0).reshape(2, 2)
    same_base = lib.zeros(2, 2)
    same = same_base.view_as(same_base)
    transposed = lib.zeros(2, 2).transpose(0, 1)
    with ad.dual_level():
        x = ad.make_dual(lib.zeros(2, 2), tangent)
        same.copy_(x)
        transposed.copy_(x)
        same_tangent = ad.unpack_dual(same).tangent
        assert same_tangent is ad.unpack_dual(same_base).tangent  # the base's, shared
        assert not same_tangent._is_view()
        view_tangent = ad.unpack_dual(transposed).tangent
        assert view_tangent._base is ad.unpack_dual(transposed._base).tangent
        assert view_tangent.tolist() == tangent.tolist()
        assert ad.unpack_dual(transposed._base).tangent.tolist() == [[0.0, 2.0], [1.0, 3.0]]


@pytest.mark.parametrize("name", LIBS)
def test_tangent_of_a_primal_with_a_larger_storage_follows_as_strided(name):
    lib, ad = _lib(name), _forward_ad(name)
    primal = lib.arange(5.0)[:4].detach()
    tangent = lib.ones(4)
    with ad.dual_level():
        dual = ad.make_dual(primal, tangent)
        unpacked = ad.unpack_dual(dual).tangent
        assert unpacked is not tangent and len(unpacked.untyped_storage()) == 5 * 4
        unpacked *= 2
        assert tangent.tolist() == [1.0] * 4
        out = dual.as_strided((5,), (1,), 0)
        assert ad.unpack_dual(out).primal.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert ad.unpack_dual(out).tangent.tolist()[:4] == [2.0] * 4
