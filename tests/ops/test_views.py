"""Ops that return views (as in PyTorch) share storage and the version counter with their
input, and an in-place change through any of them reaches the input's gradient, except
where PyTorch forbids the change (the views of split, chunk and unbind, views made under
no_grad)."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip

VIEWS = {
    "transpose": lambda y: y.transpose(0, 1),
    "permute": lambda y: y.permute(1, 0, 2),
    "narrow": lambda y: y.narrow(1, 1, 2),
    "select": lambda y: y.select(2, 1),
    "slice": lambda y: y[:, ::2],
    "unflatten": lambda y: y.unflatten(2, (2, 1)),
    "view": lambda y: y.view(6, 2),
    "squeeze": lambda y: y.unsqueeze(0).squeeze(0),
    "movedim": lambda y: y.movedim(2, 0),
    "diagonal": lambda y: y.diagonal(0, 0, 1),
    "split": lambda y: y.split(2, dim=1)[1],
    "chunk": lambda y: y.chunk(3, dim=1)[0],
    "unbind": lambda y: y.unbind(2)[1],
}


@pytest.mark.parametrize("name", VIEWS)
def test_view_shares_storage_and_version(name):
    y = genesis.arange(12.0).reshape(2, 3, 2)
    view = VIEWS[name](y)
    assert view._version_counter is y._version_counter
    view.mul_(0)
    assert y._version == 1 and y.sum().item() < 66.0  # the zeros landed in y


MULTIPLE_VIEWS = ("split", "chunk", "unbind")  # ops returning several views


@pytest.mark.parametrize("name", [name for name in VIEWS if name not in MULTIPLE_VIEWS])
def test_in_place_through_the_view_gives_the_right_gradient(name):
    data = np.random.default_rng(0).standard_normal((2, 3, 2))
    x = genesis.tensor(data, dtype=genesis.float64, requires_grad=True)
    y = x * 1
    VIEWS[name](y).mul_(3)
    (y * y).sum().backward()
    # d/dx sum(y^2) with y = x * s, s = 3 inside the view and 1 outside: 2 * x * s^2
    scale = np.ones_like(data)
    marker = genesis.zeros(2, 3, 2)
    VIEWS[name](marker).fill_(1)
    scale[marker.numpy() == 1] = 3
    np.testing.assert_allclose(x.grad.numpy(), 2 * data * scale ** 2)


@pytest.mark.parametrize("op", [
    lambda y: y.flip(0), lambda y: y.roll(1, 0), lambda y: y.repeat(1, 1, 1),
    lambda y: genesis.cat([y, y]), lambda y: y.triu(), lambda y: y.diag() if y.ndim == 2 else y[0].diag(),
    lambda y: y.gather(0, genesis.zeros(1, 3, 2, dtype=genesis.int64)),
    lambda y: y.index_select(1, genesis.tensor([0])), lambda y: y.masked_select(y > 3),
])
def test_copies_do_not_alias_their_input(op):
    y = genesis.arange(12.0).reshape(2, 3, 2)
    out = op(y)
    out.fill_(-1)
    assert y.tolist() == genesis.arange(12.0).reshape(2, 3, 2).tolist()
    assert out._version_counter is not y._version_counter


def test_fill_with_a_one_element_tensor_gives_its_gradient_that_shape():
    value = genesis.tensor([2.0], requires_grad=True)
    filled = genesis.zeros(2, 3).fill_(value)
    filled.sum().backward()
    assert value.grad.shape == (1,) and value.grad.item() == 6.0


@pytest.mark.parametrize("name", MULTIPLE_VIEWS)
def test_pieces_of_multiple_view_ops_refuse_a_recorded_in_place_change_as_torch(name):
    torch = torch_or_skip()
    for library in (torch, genesis):
        y = library.ones(2, 3, 2, requires_grad=True) * 1
        with pytest.raises(RuntimeError, match="returns multiple views"):
            VIEWS[name](y).mul_(3)
        with library.no_grad():
            VIEWS[name](y).mul_(3)  # not recorded: allowed
        VIEWS[name](y).clone().mul_(3)  # a copy: allowed


@pytest.mark.parametrize("case", ["base requires grad", "other requires grad"])
def test_a_view_made_under_no_grad_refuses_a_recorded_in_place_change_as_torch(case):
    torch = torch_or_skip()
    for library in (torch, genesis):
        base = library.ones(3, requires_grad=case == "base requires grad") * 1
        other = library.ones(2, requires_grad=case == "other requires grad")
        with library.no_grad():
            view = base[:2]
        with pytest.raises(RuntimeError, match="created in no_grad mode"):
            view.mul_(other)
        with pytest.raises(RuntimeError, match="created in no_grad mode"):
            view[:1].mul_(other[:1])
        with library.no_grad():
            view.mul_(other)  # both under no_grad: allowed


def test_a_view_made_under_no_grad_of_a_tensor_without_grad_can_change():
    torch = torch_or_skip()
    for library in (torch, genesis):
        base = library.ones(3)
        with library.no_grad():
            view = base[:2]
        view.mul_(2)
        assert base.tolist() == [2.0, 2.0, 1.0]


@pytest.mark.parametrize("change", ["through another view", "through the base"])
def test_a_view_sees_in_place_changes_made_elsewhere_in_its_storage_as_torch(change):
    torch = torch_or_skip()
    results = []
    for library in (torch, genesis):
        x = library.tensor([1.0, 2.0, 3.0], dtype=library.float64, requires_grad=True)
        base = x.clone()
        view, other = base[:2], base[1:]
        if change == "through another view":
            other.mul_(3)
        else:
            base.mul_(5)
        (view * library.tensor([1.0, 10.0], dtype=library.float64)).sum().backward()
        results.append(x.grad.tolist())
    assert results[0] == results[1]


def test_retain_grad_follows_a_tensor_changed_in_place_as_torch():
    torch = torch_or_skip()
    for library in (torch, genesis):
        a = library.tensor([1.0], requires_grad=True).clone()
        a.retain_grad()
        a.mul_(2)
        a.sum().backward()
        assert a.grad.tolist() == [1.0]
        base = library.tensor([1.0], requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view + view2).sum().backward()
        assert view.grad.tolist() == view2.grad.tolist() == [1.0]
