"""Storage and complex-part attributes of real tensors, legacy methods, and in-place shape
changes (t_, transpose_, squeeze_, unsqueeze_, ...), compared with PyTorch."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def _both(torch, make):
    return make(torch), make(genesis)


def test_storage_offsets_and_dim_order_match_torch():
    torch = torch_or_skip()
    for make in (lambda lib: lib.arange(12.).view(3, 4)[1:, 2:],
                 lambda lib: lib.arange(24.).view(2, 3, 4).permute(2, 0, 1),
                 lambda lib: lib.arange(6.)[::2]):
        expected, got = _both(torch, make)
        assert got.storage_offset() == expected.storage_offset()
        assert got.dim_order() == expected.dim_order()


def test_data_ptr_and_is_set_to_follow_the_storage():
    base = genesis.arange(6.)
    assert base[2:].data_ptr() == base.data_ptr() + 2 * base.element_size()
    assert base.view(2, 3).is_set_to(base.view(2, 3)) and not base.is_set_to(base.clone())


@pytest.mark.parametrize("name", ["is_xpu", "is_mps", "is_meta", "is_sparse", "is_quantized",
                                  "is_nested", "is_mkldnn", "is_vulkan", "is_xla"])
def test_other_backends_are_never_claimed(name):
    assert getattr(genesis.zeros(1), name) is False


def test_complex_parts_of_real_tensors_as_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        x = library.randn(2, 3, requires_grad=True)
        assert x.conj() is x and x.resolve_conj() is x and x.resolve_neg() is x and x.real is x
        assert library.real(x) is x and not x.is_conj() and not library.is_neg(x)
        assert tuple(x.H.shape) == (3, 2) and tuple(library.randn(4, 2, 3).mH.shape) == (4, 3, 2)
        assert tuple(library.adjoint(library.randn(4, 2, 3)).shape) == (4, 3, 2)
        with pytest.raises(RuntimeError, match="imag is not implemented"):
            x.imag
        with pytest.raises(RuntimeError, match="only supported on matrices"):
            library.randn(2, 2, 2).H


def test_legacy_new_as_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        x = library.zeros(1, dtype=library.float64)
        assert tuple(x.new(2, 3).shape) == (2, 3) and x.new(2, 3).dtype == library.float64
        assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new([1, 2]).dtype == library.float64
        assert tuple(x.new().shape) == (0,)
        assert x.char().dtype == library.int8


def test_apply_and_map_as_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        x = library.tensor([[1., 2.], [3., 4.]])
        x.t().apply_(lambda v: v * 10)  # a non-contiguous view writes through
        assert x.tolist() == [[10., 20.], [30., 40.]]
        x.map_(library.tensor([1., 2.]), lambda a, b: a + b)
        assert x.tolist() == [[11., 22.], [31., 42.]]
        with pytest.raises(RuntimeError, match="requires grad"):
            library.ones(2, requires_grad=True).apply_(abs)


@pytest.mark.parametrize("name, args", [("t_", ()), ("transpose_", (0, 1)), ("swapaxes_", (1, 0)),
                                        ("swapdims_", (0, 1)), ("unsqueeze_", (1,)),
                                        ("squeeze_", ())])
def test_in_place_shape_changes_match_torch(name, args):
    torch = torch_or_skip()
    results = []
    for library in (torch, genesis):
        leaf = library.tensor(np.arange(6.).reshape(2, 3), requires_grad=True)
        y = leaf * library.tensor([1., 2., 3.], dtype=library.float64)
        assert getattr(y, name)(*args) is y
        (y * library.arange(float(y.numel()), dtype=library.float64).view(y.shape)).sum().backward()
        results.append((tuple(y.shape), y.detach().numpy(), leaf.grad.numpy()))
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(leaf, name)(*args)
    (shape_t, value_t, grad_t), (shape_g, value_g, grad_g) = results
    assert shape_g == shape_t
    np.testing.assert_array_equal(value_g, value_t)
    np.testing.assert_array_equal(grad_g, grad_t)


def test_in_place_shape_change_without_grad_and_of_a_view():
    x = genesis.zeros(1, 3)
    assert x.squeeze_().shape == (3,) and x.unsqueeze_(0).t_().shape == (3, 1)
    base = genesis.zeros(2, 3)
    view = base[0]
    view.unsqueeze_(0)[0, 1] = 5.0
    assert base[0, 1].item() == 5.0


@pytest.mark.parametrize("name, call", [
    ("greater_", lambda x: x.greater_(0.0)), ("less_equal_", lambda x: x.less_equal_(0.0)),
    ("not_equal_", lambda x: x.not_equal_(x.clone().fill_(0.5))),
    ("addmm_", lambda x: x.addmm_(x.clone(), x.t().contiguous(), alpha=0.5)),
    ("deg2rad_", lambda x: x.deg2rad_()), ("rad2deg_", lambda x: x.rad2deg_())])
def test_more_in_place_forms_match_torch(name, call):
    torch = torch_or_skip()
    values = np.random.default_rng(0).normal(size=(3, 3))
    expected = call(torch.tensor(values)).numpy()
    got = call(genesis.tensor(values, dtype=genesis.float64)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)
