"""Fuzzing Tensor methods with wrong types and out-of-range dims, sizes and indices.

Refusals must be PyTorch's exception type and name the op and the culprit. Indexing
follows NumPy where NumPy and PyTorch differ (a string or a float index, two ellipses):
there genesis is compared with NumPy instead, and the test says so.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import genesis
from genesis.dtypes import DTypeOverflowError

from .compare import FUZZ, Outcome, genesis_error, same_outcome, torch

SHAPES = st.lists(st.integers(1, 3), max_size=3).map(tuple)
DIMS = st.one_of(st.integers(-4, 4), st.sampled_from([1.0, "a", True, np.int64(1), [0], (0, 1), (0, 0)]))
# -1 and 0 included; nothing large, so an expand never makes a view of 2**62 elements
EXTENTS = st.one_of(st.integers(-2, 4), st.sampled_from([2.0, "2", True, None, [1]]))


def _pair(shape: tuple):
    """The same values as a genesis and as a torch tensor (torch is None without PyTorch)."""
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return genesis.tensor(values), (torch.tensor(values) if torch is not None else None)


def _named(outcome: Outcome, op: str, culprit) -> None:
    if outcome.raised:
        message = str(outcome.error)
        assert op in message, outcome.describe()
        assert repr(culprit)[:20] in message or str(culprit) in message, outcome.describe()


ONE_DIM_METHODS = ["unsqueeze", "sum", "mean", "softmax", "cumsum", "flatten", "argmax", "size"]


@FUZZ
@given(shape=SHAPES, method=st.sampled_from(ONE_DIM_METHODS), dim=DIMS)
def test_a_dim_is_an_int_in_range(shape, method, dim):
    if isinstance(dim, tuple | list) and method not in ("sum", "mean"):
        return  # only reductions take several dims
    x, tx = _pair(shape)
    outcome = same_outcome(lambda: getattr(x, method)(dim), lambda: getattr(tx, method)(dim))
    if outcome.raised and not isinstance(dim, tuple | list):
        _named(outcome, method, dim)
    elif not outcome.raised and torch is not None:
        assert tuple(np.shape(outcome.result)) == tuple(np.shape(getattr(tx, method)(dim)))


@FUZZ
@given(shape=SHAPES, dim0=DIMS, dim1=DIMS)
def test_transpose_dims(shape, dim0, dim1):
    assume(not isinstance(dim0, tuple | list) and not isinstance(dim1, tuple | list))
    x, tx = _pair(shape)
    outcome = same_outcome(lambda: x.transpose(dim0, dim1), lambda: tx.transpose(dim0, dim1))
    if outcome.raised:
        assert str(outcome.error).startswith("transpose: "), outcome.describe()


@FUZZ
@given(shape=SHAPES, dims=st.lists(DIMS.filter(lambda d: not isinstance(d, tuple | list)), max_size=4))
def test_permute_dims(shape, dims):
    x, tx = _pair(shape)
    if any(isinstance(dim, bool) for dim in dims[1:]):
        # PyTorch reads True as 1 after the first dim; genesis refuses a bool dim anywhere
        culprit = next(dim for dim in dims
                       if isinstance(dim, bool) or not isinstance(dim, int | np.integer))
        genesis_error(lambda: x.permute(*dims), culprits=["permute", repr(culprit)])
        return
    outcome = same_outcome(lambda: x.permute(*dims), lambda: tx.permute(*dims))
    if outcome.raised:
        assert str(outcome.error).startswith("permute: "), outcome.describe()


@FUZZ
@given(shape=SHAPES, method=st.sampled_from(["view", "reshape", "expand", "repeat"]),
       sizes=st.lists(EXTENTS, min_size=1, max_size=4), as_tuple=st.booleans())
def test_sizes_of_shape_methods(shape, method, sizes, as_tuple):
    x, tx = _pair(shape)
    arguments = (tuple(sizes),) if as_tuple else tuple(sizes)
    if any(isinstance(extent, bool) for extent in sizes):
        # PyTorch refuses True as the first of several sizes and reads it as 1 after that;
        # genesis refuses a bool anywhere in a size
        error = genesis_error(lambda: getattr(x, method)(*arguments), culprits=[method])
        assert isinstance(error, TypeError)
        return
    if method == "expand" and all(type(extent) is int for extent in sizes) \
            and any(extent < 0 for extent in sizes[:max(len(sizes) - len(shape), 0)]):
        # a negative extent for a new leading dim: PyTorch may return a tensor "of shape
        # (0, -1)"; genesis refuses it (-1 keeps an existing extent, and a new dim has none)
        genesis_error(lambda: x.expand(*arguments), culprits=["expand: "])
        return
    outcome = same_outcome(lambda: getattr(x, method)(*arguments),
                           lambda: getattr(tx, method)(*arguments))
    if outcome.raised:
        assert str(outcome.error).startswith(f"{method}: "), outcome.describe()
    elif torch is not None:
        assert outcome.result.shape == tuple(getattr(tx, method)(*arguments).shape)


INDEX_ITEMS = st.one_of(
    st.integers(-4, 4), st.none(), st.just(Ellipsis),
    st.builds(slice, st.one_of(st.none(), st.integers(-4, 4)), st.one_of(st.none(), st.integers(-4, 4)),
              st.one_of(st.none(), st.integers(-2, 2))),
    st.lists(st.integers(-4, 4), min_size=1, max_size=3), st.lists(st.booleans(), min_size=1, max_size=3),
    st.sampled_from([1.0, "a", [1.5], {0}]))
KEYS = st.one_of(INDEX_ITEMS, st.lists(INDEX_ITEMS, max_size=3).map(tuple))


def _items(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def _follows_numpy(key) -> bool:
    """Keys where genesis indexes as NumPy does, not as PyTorch: text and float-valued
    indices (NumPy: IndexError; PyTorch: TypeError, or floats truncated), several ellipses
    (NumPy: IndexError; PyTorch allows them), negative slice steps (NumPy reverses;
    PyTorch: ValueError)."""
    items = _items(key)
    return sum(item is Ellipsis for item in items) > 1 or any(
        isinstance(item, slice) and item.step is not None and item.step < 0 for item in items) or any(
        isinstance(item, str | float | set) or isinstance(item, list) and any(
            isinstance(value, float) for value in item) for item in items)


def _torch_key(key):
    items = tuple(torch.tensor(item) if isinstance(item, list) else item for item in _items(key))
    return items if isinstance(key, tuple) else items[0]


def _numpy_key(key):
    items = tuple(np.array(item) if isinstance(item, list) else item for item in _items(key))
    return items if isinstance(key, tuple) else items[0]


@FUZZ
@given(shape=SHAPES, key=KEYS)
def test_indexing(shape, key):
    x, tx = _pair(shape)
    if any(isinstance(item, slice) and item.step == 0 for item in _items(key)):
        # a zero step is reported first, before any other fault of the key (too many
        # indices, a float...), which NumPy or PyTorch may report first
        error = genesis_error(lambda: x[key])
        assert isinstance(error, ValueError) and "step" in str(error), error
        return
    if _follows_numpy(key):
        array = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        ours, numpys = Outcome(lambda: x[key]), Outcome(lambda: array[_numpy_key(key)])
        assert ours.raised == numpys.raised, f"genesis {ours.describe()}, NumPy {numpys.describe()}"
        if ours.raised:
            assert isinstance(ours.error, type(numpys.error)) and "getitem" in str(ours.error)
        return
    outcome = same_outcome(lambda: x[key], lambda: tx[_torch_key(key)])
    if not outcome.raised and torch is not None:
        np.testing.assert_array_equal(outcome.result.numpy(), tx[_torch_key(key)].numpy())


NUMBERS = st.one_of(st.integers(-300, 300), st.integers(-2 ** 70, 2 ** 70), st.floats(width=64),
                    st.booleans())
VALUES = st.one_of(NUMBERS, st.sampled_from([None, "a", b"x", object()]))


@FUZZ
@given(dtype=st.sampled_from(["float16", "float32", "int8", "uint8", "int64", "bool"]), value=VALUES,
       index=st.integers(-2, 1))
def test_assigned_values_must_fit(dtype, value, index):
    """(Indices out of range are test_indexing's: PyTorch checks the index first, genesis
    the value.)"""
    x = genesis.zeros(2, dtype=getattr(genesis, dtype))
    largest = genesis.dtypes.value_range(x.dtype)[1] if dtype.startswith("float") else None

    def assign(target, value):
        target[index] = value
        return target

    if dtype == "uint8" and isinstance(value, int) and not isinstance(value, bool) and -256 < value < 0:
        # PyTorch wraps -1..-255 into uint8 (a legacy rule); genesis refuses them
        assert isinstance(genesis_error(lambda: assign(x, value)), DTypeOverflowError)
        return
    if isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 63:
        # PyTorch refuses every int beyond int64 (ValueError) while genesis stores one in a
        # floating tensor where it fits, and in a bool one as True; both refuse it for ints
        outcome = Outcome(lambda: assign(x, value))
        assert outcome.raised != (dtype == "bool" or largest is not None and abs(value) <= largest)
        return
    outcome = same_outcome(lambda: assign(x, value),
                           lambda: assign(torch.zeros(2, dtype=getattr(torch, dtype)), value))
    if outcome.raised and isinstance(outcome.error, DTypeOverflowError):
        assert dtype in str(outcome.error)


@pytest.mark.parametrize("value, error_type, culprit", [
    (None, TypeError, "None"), ("a", TypeError, "'a'"), (300, OverflowError, "300"),
    (-1, OverflowError, "-1"), ([1, 300], OverflowError, "300")])
def test_assigning_what_a_uint8_tensor_cannot_hold(value, error_type, culprit):
    x = genesis.zeros(2, dtype=genesis.uint8)

    def assign():
        x[:] = value

    error = genesis_error(assign, culprits=[culprit])
    assert isinstance(error, error_type)
    assert x.tolist() == [0, 0]  # nothing was written


def test_lists_are_assignable_as_in_numpy():
    """PyTorch refuses x[0] = [1, 2] (TypeError); genesis takes it, as NumPy does, and checks
    the values against the dtype and the shape."""
    x = genesis.zeros(2, 2, dtype=genesis.float64)
    x[0] = [0.1, 0.2]
    assert x[0].tolist() == [0.1, 0.2]
    error = genesis_error(lambda: x.__setitem__(0, [1, 2, 3]), culprits=["(3,)"])
    assert isinstance(error, RuntimeError)


def test_a_zero_slice_step_is_a_value_error():
    x, tx = _pair((3,))
    genesis_error(lambda: x[::0], culprits=["step"], like=lambda: tx[::0])


@pytest.mark.parametrize("argument", ["a", "cuda:x", "float99"])
def test_to_refuses_what_is_neither_a_device_nor_a_dtype(argument):
    x, tx = _pair((2,))
    genesis_error(lambda: x.to(argument), culprits=[repr(argument)], like=lambda: tx.to(argument))


def test_to_takes_dtype_names():
    """PyTorch reads every string given to .to() as a device; genesis also takes dtype names
    (as everywhere else), trying them first."""
    assert genesis.zeros(2).to("float64").dtype == genesis.float64


@pytest.mark.parametrize("value", ["a", 1, None, 0.0])
def test_requires_grad_takes_a_bool(value):
    x, tx = _pair((2,))
    genesis_error(lambda: x.requires_grad_(value), culprits=["requires_grad", repr(value)],
                  like=lambda: tx.requires_grad_(value))


@pytest.mark.parametrize("shape", [(2,), (0,), (2, 3)])
def test_item_needs_one_element(shape):
    x, tx = _pair(shape) if shape != (0,) else (genesis.zeros(0), torch.zeros(0) if torch else None)
    genesis_error(lambda: x.item(), culprits=[str(int(np.prod(shape)))], like=lambda: tx.item())


@pytest.mark.parametrize("other", ["a", None, [1, 2], object()])
@pytest.mark.parametrize("op", ["__add__", "__mul__", "__pow__", "__matmul__", "__lt__"])
def test_operands_of_the_wrong_type(op, other):
    x, tx = _pair((2,))
    if op == "__add__" and isinstance(other, list):
        return  # a list operand is converted as NumPy would (genesis), refused by PyTorch
    outcome = same_outcome(lambda: _binary(x, op, other), lambda: _binary(tx, op, other))
    assert outcome.raised


def _binary(tensor, op, other):
    result = getattr(tensor, op)(other)
    if result is NotImplemented:
        raise TypeError(f"unsupported operand type(s) for {op}: {type(other).__name__}")
    return result


@pytest.mark.parametrize("value", ["a", None, [1.0, 2.0], genesis.ones(2)])
def test_fill_takes_a_number_or_a_one_element_tensor(value):
    x, tx = _pair((2,))
    torch_value = torch.ones(2) if isinstance(value, genesis.Tensor) and torch else value
    genesis_error(lambda: x.fill_(value), culprits=["fill_"], like=lambda: tx.fill_(torch_value))
