"""In-place ops: version counters, leaf rules, correct gradients through y *= 3 and views."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def test_multiply_in_place_on_non_leaf_gives_right_gradient():
    """The original Genesis silently got this wrong."""
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y *= 3
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    assert repr(y.grad_fn) == "<MulBackward>"


def test_in_place_returns_self_and_bumps_version():
    x = genesis.tensor([1.0, 2.0])
    assert x._version == 0
    assert x.add_(1) is x and x._version == 1
    x.mul_(2).clamp_(max=5).zero_()
    assert x._version == 4 and x.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("update", [
    lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.sub_(1), lambda t: t.div_(2),
    lambda t: t.clamp_(0, 1), lambda t: t.zero_(), lambda t: t.exp_(), lambda t: t.fill_(3),
    lambda t: t.copy_(genesis.ones(2)),
])
def test_in_place_on_leaf_requiring_grad_is_refused(update):
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad.*no_grad"):
        update(x)


def test_in_place_on_leaf_allowed_under_no_grad():
    w = genesis.tensor([1.0, 2.0], requires_grad=True)
    with genesis.no_grad():
        w.copy_(genesis.tensor([5.0, 6.0]))
        w.sub_(genesis.tensor([1.0, 1.0]), alpha=2)
    assert w.tolist() == [3.0, 4.0] and w.is_leaf and w.requires_grad


def test_modified_saved_tensor_is_detected_with_the_op_named():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = (y * y).sum()  # MulBackward saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="MulBackward.*modified by an in-place operation"):
        z.backward()


def test_modified_saved_output_is_detected():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # ExpBackward saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match="ExpBackward.*version"):
        y.sum().backward()


def test_in_place_op_that_needs_its_old_value():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x + 0
    y.mul_(y)  # y <- y^2: backward needs the old y, kept as a copy
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_exp_in_place_gradient():
    x = genesis.tensor([0.0, 1.0], requires_grad=True)
    y = x * 1
    y.exp_()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


def test_in_place_with_grad_requiring_argument():
    w = genesis.tensor([2.0, 3.0], requires_grad=True)
    buf = genesis.zeros(2)
    buf.add_(w)
    buf.mul_(w)
    assert not buf.is_leaf
    buf.sum().backward()
    assert w.grad.tolist() == [4.0, 6.0]


def test_setitem_is_differentiable_for_value_and_kept_part():
    x = genesis.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = genesis.tensor(10.0, requires_grad=True)
    y = x * 1
    y[1] = v * 2
    (y * genesis.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 3.0]
    assert v.grad.item() == 4.0


def test_in_place_through_a_view_updates_base_gradient():
    x = genesis.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    row = y[0]
    row.mul_(10)  # changes y's storage: y's gradient must see it
    assert y.tolist() == [[10.0, 20.0], [3.0, 4.0]]
    (y * y).sum().backward()
    expected = 2 * np.array([[10.0, 20.0], [3.0, 4.0]]) * np.array([[10.0, 10.0], [1.0, 1.0]])
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_augmented_assignment_on_slice():
    x = genesis.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y[1:] += 5
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 7.0, 8.0]))


def test_view_of_leaf_in_place_is_refused():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf"):
        x[0].mul_(2)


def test_views_share_version_counter():
    x = genesis.tensor([[1.0, 2.0], [3.0, 4.0]])
    row = x[0]
    t = x.transpose(0, 1)
    row.add_(1)
    assert x._version == row._version == t._version == 1
    assert x.tolist() == [[2.0, 3.0], [3.0, 4.0]]


def test_in_place_dtype_and_shape_errors_are_clear():
    x = genesis.tensor([1, 2])
    with pytest.raises(RuntimeError, match="add_.*int64"):
        x.add_(1.5)
    y = genesis.zeros(3)
    with pytest.raises(RuntimeError, match="add_"):
        y.add_(genesis.ones(2, 3))


def test_detach_shares_version_counter():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = (y * y).sum()
    y.detach().add_(1)
    with pytest.raises(RuntimeError, match="in-place"):
        z.backward()


def test_double_backward_through_in_place():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(y)
    (g,) = genesis.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = genesis.autograd.grad(g.sum(), x)
    assert g.tolist() == [2.0, 4.0] and h.tolist() == [2.0, 2.0]


def _overwrite_gradients(lib) -> dict:
    """Gradients through zero_/fill_/copy_ of a non-leaf, whole and through a view."""
    weights = lib.tensor([[1.0, 3.0], [5.0, 7.0]])
    found = {}
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = a * 1
    x.zero_()
    x.sum().backward()
    found["zero_"] = a.grad.tolist()
    a, source = (lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True),
                 lib.tensor([5.0, 6.0], requires_grad=True))
    x = a * 1
    x.copy_(source * 2)  # broadcast over the rows
    (x * weights).sum().backward()
    found["copy_"] = a.grad.tolist(), source.grad.tolist()
    a, value = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True), lib.tensor(
        3.0, requires_grad=True)
    x = a * 1
    x.fill_(value)
    (x * weights).sum().backward()
    found["fill_"] = a.grad.tolist(), value.grad.item()
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = a * 1
    x[0].zero_()
    (x * weights).sum().backward()
    found["view zero_"] = a.grad.tolist()
    a, value = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True), lib.tensor(
        2.0, requires_grad=True)
    x = a * 1
    x[:, 1].fill_(value)
    (x * weights).sum().backward()
    found["view fill_"] = a.grad.tolist(), value.grad.item()
    return found


def test_overwriting_a_non_leaf_keeps_its_inputs_in_the_graph_with_zero_gradient():
    """zero_/fill_/copy_ on a non-leaf: the tensors behind it get zeros (not None), the
    value or source gets the gradient, as PyTorch's ZeroBackward0/FillBackward/CopyBackwards."""
    assert _overwrite_gradients(genesis) == {
        "zero_": [[0.0, 0.0], [0.0, 0.0]],
        "copy_": ([[0.0, 0.0], [0.0, 0.0]], [12.0, 20.0]),
        "fill_": ([[0.0, 0.0], [0.0, 0.0]], 16.0),
        "view zero_": [[0.0, 0.0], [5.0, 7.0]],
        "view fill_": ([[1.0, 0.0], [5.0, 0.0]], 10.0)}


def test_overwriting_a_non_leaf_matches_pytorch():
    torch = torch_or_skip()
    assert _overwrite_gradients(genesis) == _overwrite_gradients(torch)
