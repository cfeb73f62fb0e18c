"""t[key] and t[key] = value against PyTorch: values, gradients, which keys give views,
and errors that name the key and shape."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip

KEYS = [
    1, -1, (slice(1, 3), slice(None, None, 2)), (Ellipsis, None, 2), (slice(None), 0),
    np.array([0, 2, 2]), (np.array([0, 3]), np.array([1, 4])), np.array([True, False, True, False]),
    True, False, (slice(None), np.array([0, 1]), np.array([1, 2])),
    (np.array([0, 1]), slice(None), np.array([1, 2])), (np.array([[0], [1]]), np.array([1, 2])),
    [0, 1], (1, np.array([0, 2])), (np.array([0, 1]), Ellipsis, 0), (None, np.array([0, 1]), None),
    np.eye(4, 5, dtype=bool), (0, np.array([True, False, True, True, False])), slice(3, None),
    np.array([], dtype=np.int64), (np.array(1), np.array([0, 1])), (slice(None), [True, False] * 2 + [False]),
    (Ellipsis,), (), (None,), (0, 0, 0), (slice(None, None, 3), -2, slice(-1, None)),
    slice(None), slice(0, 9), (slice(None), slice(0, 9)), (slice(None), slice(-5, None)),
    (slice(1, None), None), (None, slice(None)), (slice(None), None, slice(None)), (Ellipsis, 0),
]


def _genesis_key(key):
    if isinstance(key, tuple):
        return tuple(_genesis_key(item) for item in key)
    if isinstance(key, np.ndarray):
        return genesis.from_numpy(key)
    return key


def _torch_key(torch, key):
    if isinstance(key, tuple):
        return tuple(_torch_key(torch, item) for item in key)
    if isinstance(key, np.ndarray):
        return torch.as_tensor(key)
    return key


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
def test_getitem_matches_torch(key):
    torch = torch_or_skip()
    data = np.random.default_rng(0).standard_normal((4, 5, 3))
    x = genesis.tensor(data, dtype=genesis.float64, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    ours, theirs = x[_genesis_key(key)], t[_torch_key(torch, key)]
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    assert (ours._version_counter is x._version_counter) == (theirs._base is not None)
    assert ours.grad_fn.name() == theirs.grad_fn.name()  # PyTorch's last step, for a chain
    weights = np.random.default_rng(1).standard_normal(ours.shape)
    ours.backward(genesis.tensor(weights, dtype=genesis.float64))
    theirs.backward(torch.tensor(weights))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("make", [lambda t: t.narrow(1, 1, 2), lambda t: t.select(2, 0),
                                  lambda t: t.split(2, 1)[1], lambda t: t.unbind(0)[1]],
                         ids=["narrow", "select", "split", "unbind"])
def test_view_ops_name_their_nodes_as_torch(make):
    torch = torch_or_skip()
    ours, theirs = make(genesis.zeros(4, 5, 3, requires_grad=True)), make(torch.zeros(4, 5, 3, requires_grad=True))
    assert ours.grad_fn.name() == theirs.grad_fn.name()


def test_zero_dim_index_tensors_act_as_numbers():
    x = genesis.arange(6.0).reshape(2, 3)
    row = x[genesis.tensor(1)]
    assert row.tolist() == [3.0, 4.0, 5.0] and row._version_counter is x._version_counter
    assert x[genesis.tensor(True)].shape == (1, 2, 3)
    assert x[genesis.tensor(False)].shape == (0, 2, 3)


SET_CASES = [
    (1, (5,)), (1, (1,)), (1, ()), ((slice(1, 3), slice(None, None, 2)), (2, 3)),
    ((slice(1, 3), slice(None, None, 2)), (3,)), (np.array([0, 2]), (5,)), (np.array([0, 2]), (2, 5)),
    ((np.array([0, 3]), np.array([1, 4])), (2,)), ((np.array([0, 3]), np.array([1, 4])), ()),
    (np.array([True, False, True, False]), (5,)), (np.array([True, False, True, False]), (2, 5)),
    (np.eye(4, 5, dtype=bool), (4,)), ((slice(None), np.array([1, 3])), (4, 1)), ((Ellipsis, 0), (4,)),
    (None, (4, 5)), (np.array([1, 1]), (5,)),
]


@pytest.mark.parametrize("key, value_shape", SET_CASES, ids=[f"{k!r:.30} {s}" for k, s in SET_CASES])
@pytest.mark.parametrize("needs", [(True, True), (False, True), (True, False)])
def test_setitem_matches_torch(key, value_shape, needs):
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    data, value = rng.standard_normal((4, 5)), rng.standard_normal(value_shape)
    x = genesis.tensor(data, dtype=genesis.float64, requires_grad=needs[0])
    v = genesis.tensor(value, dtype=genesis.float64, requires_grad=needs[1])
    t, tv = torch.tensor(data, requires_grad=needs[0]), torch.tensor(value, requires_grad=needs[1])
    y, ty = x * 1, t * 1
    y[_genesis_key(key)] = v
    ty[_torch_key(torch, key)] = tv
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    weights = rng.standard_normal((4, 5))
    (y * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    for ours, theirs, needed in ((x, t, needs[0]), (v, tv, needs[1])):
        if needed:
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


def test_setitem_casts_the_value_to_the_tensor_dtype():
    x = genesis.zeros(3, dtype=genesis.int64)
    x[0] = 2.7
    x[1:] = genesis.tensor([5.0, 6.0], dtype=genesis.float64)
    assert x.tolist() == [2, 5, 6] and x.dtype == genesis.int64


SETITEM_DTYPE_CASES = [
    ("index tensor, int64 value", lambda L: L.tensor([0]), lambda L: L.tensor([1])),
    ("index tensor, float64 value", lambda L: L.tensor([0, 2]), lambda L: L.tensor([1.0, 2.0], dtype=L.float64)),
    ("index tensor, 0-d int64 value", lambda L: L.tensor([0]), lambda L: L.tensor(1)),
    ("list, int64 value", lambda L: [0, 1], lambda L: L.tensor([1, 2])),
    ("bool mask, two int64 values", lambda L: L.tensor([True, True, False]), lambda L: L.tensor([1, 2])),
    ("bool mask, one int64 value", lambda L: L.tensor([True, False, True]), lambda L: L.tensor([1])),
    ("index tensor, number", lambda L: L.tensor([0]), lambda L: 0.5),
    ("slice, int64 value", lambda L: slice(0, 2), lambda L: L.tensor([1, 2])),
    ("0-d index, int64 value", lambda L: L.tensor(1), lambda L: L.tensor(3)),
]


@pytest.mark.parametrize("name, key, value", SETITEM_DTYPE_CASES, ids=[c[0] for c in SETITEM_DTYPE_CASES])
def test_setitem_refuses_another_dtype_where_pytorch_index_puts(name, key, value):
    """An index array (PyTorch's index_put) takes only the destination's dtype; a number, a
    view's copy_ (slices, 0-d indices) and a bool mask given one value cast, as in PyTorch."""
    torch = torch_or_skip()
    outcomes = []
    for library in (genesis, torch):
        x = library.zeros(3)
        try:
            x[key(library)] = value(library)
            outcomes.append(x.tolist())
        except RuntimeError as error:
            outcomes.append("RuntimeError")
            if library is genesis:
                assert "float32 for the destination and" in str(error) and ".to(" in str(error)
    assert outcomes[0] == outcomes[1]


def test_getitem_second_derivative():
    x = genesis.tensor(np.random.default_rng(0).standard_normal((4, 3)), dtype=genesis.float64,
                       requires_grad=True)
    index = genesis.tensor([0, 2, 2])
    assert genesis.autograd.gradgradcheck(lambda x: x[index] * x[index], (x,))


@pytest.mark.parametrize("key, message", [
    (5, r"getitem: index \[5\] is invalid for a tensor of shape \(3, 4\): index 5 is out of bounds"),
    ((0, 9), r"getitem: index \[0, 9\] is invalid .* out of bounds for axis 1 with size 4"),
    (1.5, r"getitem: index \[1.5\] is invalid .* only integers, slices"),
    ((0, 0, 0), r"getitem: index \[0, 0, 0\] is invalid .* too many indices"),
    (genesis.tensor([7]), r"getitem: index \[tensor\(\[7\]\)\] is invalid"),
    ((slice(0, 2), Ellipsis, 9), r"getitem: index \[0:2, \.\.\., 9\] is invalid"),
    (genesis.tensor([True, False]), "boolean index did not match"),
])
def test_bad_index_errors_name_the_index_and_shape(key, message):
    with pytest.raises(IndexError, match=message):
        genesis.zeros(3, 4)[key]


def test_non_integer_index_tensor_is_refused():
    with pytest.raises(IndexError, match="tensors used as indices must be integer or bool"):
        genesis.zeros(3)[genesis.tensor([1.0])]


def test_setitem_errors():
    x = genesis.zeros(3, 4)
    with pytest.raises(IndexError, match=r"setitem: index \[7\] is invalid for a tensor of shape"):
        x[7] = 1.0
    with pytest.raises(RuntimeError, match=r"setitem: can't assign a value of shape \(5,\)"):
        x[:, 1] = genesis.ones(5)
