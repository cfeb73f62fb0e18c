"""Shape and rearranging ops: semantics PyTorch users expect, and errors that name the op."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def test_unflatten_movedim_narrow_select_match_torch():
    torch = torch_or_skip()
    data = np.arange(24.0).reshape(2, 3, 4)
    x, t = genesis.tensor(data), torch.tensor(data)
    pairs = [
        (x.unflatten(2, (2, -1)), t.unflatten(2, (2, -1))),
        (x.unflatten(-2, [3, 1]), t.unflatten(-2, [3, 1])),
        (x.movedim(0, 2), t.movedim(0, 2)), (x.movedim((0, 1), (2, 0)), t.movedim((0, 1), (2, 0))),
        (genesis.moveaxis(x, -1, 0), torch.moveaxis(t, -1, 0)),
        (x.narrow(2, 1, 2), t.narrow(2, 1, 2)), (x.narrow(1, -2, 2), t.narrow(1, -2, 2)),
        (x.narrow(0, 2, 0), t.narrow(0, 2, 0)), (x.select(1, -1), t.select(1, -1)),
        (x.swapdims(0, 2), t.swapdims(0, 2)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_flip_roll_repeat_tile_match_torch():
    torch = torch_or_skip()
    data = np.arange(6.0).reshape(2, 3)
    x, t = genesis.tensor(data), torch.tensor(data)
    pairs = [
        (x.flip(0), t.flip(0)), (x.flip((0, 1)), t.flip((0, 1))), (x.roll(2), t.roll(2)),
        (x.roll(-1, 1), t.roll(-1, 1)), (x.roll((1, 1), (0, 1)), t.roll((1, 1), (0, 1))),
        (x.repeat(2, 1, 2), t.repeat(2, 1, 2)), (x.repeat((1, 3)), t.repeat((1, 3))),
        (x.tile((2,)), t.tile((2,))), (x.tile((2, 1, 1)), t.tile((2, 1, 1))),
    ]
    for ours, theirs in pairs:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_triangles_and_diagonals_match_torch():
    torch = torch_or_skip()
    data = np.arange(24.0).reshape(2, 3, 4)
    x, t = genesis.tensor(data), torch.tensor(data)
    pairs = [
        (x.triu(), t.triu()), (x.tril(-1), t.tril(-1)), (x.triu(2), t.triu(2)),
        (x.diagonal(), t.diagonal()), (x.diagonal(1, 1, 2), t.diagonal(1, 1, 2)),
        (x.diagonal(-1, -1, 0), t.diagonal(-1, -1, 0)),
        (x[0].diag(), t[0].diag()), (x[0].diag(-1), t[0].diag(-1)),
        (genesis.diag(x[0, 0]), torch.diag(t[0, 0])), (genesis.diag(x[0, 0], 2), torch.diag(t[0, 0], 2)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_repeat_gradient_sums_the_copies():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    x.repeat(3, 2).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.narrow(1, 2, 2), RuntimeError, r"narrow: start 2 \+ length 2 exceeds dim 1 of size 3"),
    (lambda x: x.narrow(1, 5, 0), IndexError, "narrow: start 5 is out of range"),
    (lambda x: x.select(0, 2), IndexError, r"select: index 2 is out of range .*\[-2, 1\]"),
    (lambda x: x.unflatten(1, (2, 2)), RuntimeError, r"unflatten: shape \(2, 2\) is invalid .* 3"),
    (lambda x: x.movedim((0, 1), 0), RuntimeError, "movedim: source .* same number of dims"),
    (lambda x: x.repeat(2), RuntimeError, r"repeat: the number of repeats \(1\) can't be smaller"),
    (lambda x: x.flip((0, 0)), RuntimeError, "flip: dims .* more than once"),
    (lambda x: x.flip(2), IndexError, "flip: dim 2 is out of range"),
    (lambda x: x.roll((1, 2), 0), RuntimeError, "roll: shifts .* same length"),
    (lambda x: x[0].triu(), RuntimeError, r"triu: input must have at least 2 dims, got shape \(3,\)"),
    (lambda x: x.diagonal(0, 1, -1), RuntimeError, "diagonal: dim1 and dim2 can't be the same"),
    (lambda x: x.unsqueeze(0).diag(), RuntimeError, "diag: input must be 1-D or 2-D"),
    (lambda x: x.sum().narrow(0, 0, 1), RuntimeError, "narrow: can't be applied to a 0-d tensor"),
])
def test_errors_name_the_op(call, error, message):
    with pytest.raises(error, match=message):
        call(genesis.zeros(2, 3))


@pytest.mark.parametrize("change", [lambda x: x.unsqueeze(0), lambda x: x.unsqueeze(-1),
                                    lambda x: x.squeeze(), lambda x: x.view(6), lambda x: x[None],
                                    lambda x: x.reshape(6), lambda x: x.reshape(3, 2),
                                    lambda x: x.flatten(), lambda x: x.flatten(1),
                                    lambda x: x.flatten(0, 1), lambda x: x.view(6).flatten()])
def test_reshaping_nodes_are_named_as_pytorch_names_them(change):
    """unsqueeze/squeeze, and reshape/flatten where the layout makes them views, show in graphs
    under PyTorch's node names (PyTorch's overload digit aside: squeeze(dim) is its
    SqueezeBackward1); a flatten with nothing to merge is the tensor itself, as in PyTorch."""
    torch = torch_or_skip()
    ours = change(genesis.randn(2, 3, 1, requires_grad=True) * 1).grad_fn.name()
    theirs = change(torch.randn(2, 3, 1, requires_grad=True) * 1).grad_fn.name()
    assert ours == theirs


def test_shape_errors_count_in_the_singular_for_one():
    with pytest.raises(RuntimeError, match=r"invalid for a tensor of 1 element$"):
        genesis.ones(1).reshape(2)
    with pytest.raises(RuntimeError, match=r"dims \(0,\) has 1 entry for a tensor with 2"):
        genesis.ones(2, 3).permute(0)
