"""Fuzzing the creation functions: sizes that are floats, bools, strings, None, negative or
huge; wrong dtypes; values that overflow their dtype; ragged and foreign data.

Each refusal must be the exception type PyTorch raises for the same call, with a message
naming the culprit; calls PyTorch accepts must work and give the same shape.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import genesis
from genesis.dtypes import DTypeOverflowError

from .compare import FUZZ, Outcome, genesis_error, same_outcome, torch

# Huge extents overflow the byte count on their own (2**62 float32 elements are 2**64
# bytes), so no test ever asks the machine for a real multi-terabyte allocation.
HUGE = st.sampled_from([2 ** 62, 2 ** 63 - 1])
EXTENT = st.one_of(
    st.integers(-2, 4), HUGE,
    st.sampled_from([2.0, 2.5, -1.0, math.nan, math.inf]), st.booleans(), st.none(),
    st.text(max_size=2), st.just(np.int64(3)), st.just(np.float64(2.0)),
    st.lists(st.integers(0, 2), max_size=2))
SIZES = st.lists(EXTENT, max_size=3)
FORMS = st.sampled_from(["varargs", "tuple", "list"])

CREATORS = ["zeros", "ones", "empty", "randn", "rand"]


def _arguments(sizes: list, form: str) -> tuple:
    """The call's arguments; no sizes at all is given as () (genesis.zeros() is a 0-d tensor,
    as zeros(()), where PyTorch insists on a size)."""
    if form == "tuple" or not sizes:
        return (tuple(sizes),)
    if form == "list":
        return (list(sizes),)
    return tuple(sizes)


def _is_int(extent) -> bool:
    return isinstance(extent, int | np.integer) and not isinstance(extent, bool)


def _empty_but_huge(sizes: list) -> bool:
    """An empty shape with an extent of 2**62 beside the 0: PyTorch makes it, NumPy (so
    genesis) can't hold it (it multiplies the other extents first, past the address space),
    and genesis says the size is too large."""
    flat = [extent for extent in sizes if _is_int(extent)]
    return len(flat) == len(sizes) and 0 in flat and any(extent >= 2 ** 62 for extent in flat) \
        and not any(extent < 0 for extent in flat)


def _culprit(sizes: list, form: str) -> str:
    """What the error must name: the first extent that is not an int, else the first
    negative one, else (a product beyond the address space) the size itself."""
    flat = sizes[0] if form == "varargs" and len(sizes) == 1 and isinstance(sizes[0], list) \
        else sizes
    for extent in flat:
        if not _is_int(extent):
            return repr(extent)[:30]
    negative = [extent for extent in flat if extent < 0]
    return str(negative[0]) if negative else "too large"


@FUZZ
@given(name=st.sampled_from(CREATORS), sizes=SIZES, form=FORMS)
def test_sizes_are_checked_as_pytorch_checks_them(name, sizes, form):
    arguments = _arguments(sizes, form)
    if any(isinstance(extent, bool) for extent in sizes):
        # PyTorch refuses a bool as the first extent and takes True/False as 1/0 after it;
        # genesis refuses a bool anywhere in a size
        genesis_error(lambda: getattr(genesis, name)(*arguments),
                      culprits=[name, _culprit(sizes, form)])
        return
    if _empty_but_huge(sizes):
        genesis_error(lambda: getattr(genesis, name)(*arguments), culprits=[name, "too large"])
        return
    outcome = same_outcome(lambda: getattr(genesis, name)(*arguments),
                           lambda: getattr(torch, name)(*arguments))
    if outcome.raised:
        message = str(outcome.error)
        assert message.startswith(f"{name}: "), message
        assert _culprit(sizes, form) in message, message
    else:
        assert all(_is_int(extent) and extent >= 0 for extent in
                   (arguments[0] if len(arguments) == 1 and isinstance(arguments[0], tuple | list)
                    else arguments))
        assert outcome.result.shape == tuple(int(extent) for extent in (
            arguments[0] if len(arguments) == 1 and isinstance(arguments[0], tuple | list)
            else arguments))


@pytest.mark.parametrize("name", CREATORS)
@pytest.mark.parametrize("size, culprit", [(2.5, "2.5"), (2.0, "pass int(2.0)"), (True, "bool"),
                                           ("3", "'3'"), (None, "None")])
def test_a_size_that_is_not_an_int_is_never_truncated(name, size, culprit):
    error = genesis_error(lambda: getattr(genesis, name)(size, 2), culprits=[name, culprit],
                          like=lambda: getattr(torch, name)(size, 2))
    assert isinstance(error, TypeError)


def _torch_dtype(dtype):
    return getattr(torch, dtype.name) if isinstance(dtype, genesis.dtypes.DType) else dtype


DTYPES = [genesis.float16, genesis.float32, genesis.float64, genesis.int8, genesis.int16,
          genesis.int32, genesis.int64, genesis.uint8, genesis.bool]
NOT_DTYPES = st.sampled_from([5, 2.5, "bogus", object(), np.complex64, [genesis.float32]])


@FUZZ
@given(name=st.sampled_from(CREATORS + ["full", "arange", "eye", "linspace"]),
       dtype=st.one_of(st.sampled_from(DTYPES), NOT_DTYPES))
def test_dtypes_are_checked(name, dtype):
    def call(module):
        make = getattr(module, name)
        chosen = _torch_dtype(dtype) if module is torch else dtype
        if name == "full":
            return make((2,), 1, dtype=chosen)
        if name == "linspace":
            return make(0, 1, 3, dtype=chosen)
        return make(3, dtype=chosen)

    outcome = same_outcome(lambda: call(genesis), lambda: call(torch))
    if outcome.raised and not isinstance(dtype, genesis.dtypes.DType):
        assert repr(dtype)[:20] in str(outcome.error) or "dtype" in str(outcome.error)


def test_dtype_names_are_a_genesis_extension():
    """genesis takes dtype names ("float64") where PyTorch wants a torch.dtype: deliberate,
    so code can name dtypes in configs. Unknown names are a TypeError, as in PyTorch."""
    assert genesis.zeros(2, dtype="float64").dtype == genesis.float64
    genesis_error(lambda: genesis.zeros(2, dtype="float99"), culprits=["'float99'"],
                  like=lambda: torch.zeros(2, dtype="float99"))


INTEGER_DTYPES = [genesis.int8, genesis.uint8, genesis.int16, genesis.int32, genesis.int64]
VALUES = st.one_of(st.integers(-2 ** 70, 2 ** 70), st.integers(-300, 300),
                   st.floats(allow_nan=True, allow_infinity=True, width=64),
                   st.floats(-300, 300), st.booleans())


def _wraps_in_pytorch(value, dtype) -> bool:
    """PyTorch turns -1..-255 into uint8 by wrapping around (a legacy rule); genesis refuses
    them as it refuses 256: a negative number has no uint8 value."""
    return dtype is genesis.uint8 and isinstance(value, int) and not isinstance(value, bool) \
        and -256 < value < 0


@FUZZ
@given(value=VALUES, dtype=st.sampled_from(DTYPES))
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_values_that_do_not_fit_the_dtype_are_refused_as_pytorch_refuses_them(value, dtype):
    """(A float beyond a floating dtype becomes inf, as in PyTorch; NumPy's warning about
    it is let through: see the test after the next.)"""
    if _wraps_in_pytorch(value, dtype):
        error = genesis_error(lambda: genesis.tensor([value], dtype=dtype), culprits=[str(value)])
        assert isinstance(error, DTypeOverflowError)
        return
    outcome = same_outcome(lambda: genesis.tensor([value], dtype=dtype),
                           lambda: torch.tensor([value], dtype=_torch_dtype(dtype)))
    if outcome.raised:
        assert isinstance(outcome.error, DTypeOverflowError | TypeError), outcome.describe()
        assert dtype.name in str(outcome.error) or "int64" in str(outcome.error)
    elif torch is not None:
        expected = torch.tensor([value], dtype=_torch_dtype(dtype))
        np.testing.assert_array_equal(outcome.result.numpy().astype(np.float64),
                                      expected.numpy().astype(np.float64))


@FUZZ
@given(value=VALUES, dtype=st.sampled_from(DTYPES))
def test_full_refuses_a_fill_value_beyond_the_dtype(value, dtype):
    """Unlike tensor(), full() checks a float too: PyTorch refuses full((2,), 1e40,
    dtype=float16) where tensor([1e40], dtype=float16) is inf."""
    if _wraps_in_pytorch(value, dtype):
        return
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63 and (
            dtype.is_floating_point or dtype is genesis.bool):
        # PyTorch refuses most ints beyond int64 in full() (OverflowError); genesis fills a
        # floating tensor with one where it fits (2**70 is a fine float32, not a float16),
        # and a bool tensor with True
        fits = dtype is genesis.bool or abs(value) <= genesis.dtypes.value_range(dtype)[1]
        assert Outcome(lambda: genesis.full((2,), value, dtype=dtype)).raised != fits
        return
    outcome = same_outcome(lambda: genesis.full((2,), value, dtype=dtype),
                           lambda: torch.full((2,), value, dtype=_torch_dtype(dtype)))
    if outcome.raised:
        assert "full: the value" in str(outcome.error), outcome.describe()


@pytest.mark.parametrize("call, torch_call, culprits", [
    (lambda: genesis.tensor([300], dtype=genesis.uint8), lambda: torch.tensor([300], dtype=torch.uint8),
     ["300", "uint8", "[0, 255]"]),
    (lambda: genesis.tensor([300], dtype=genesis.int8), lambda: torch.tensor([300], dtype=torch.int8),
     ["300", "int8"]),
    (lambda: genesis.tensor([2 ** 70]), lambda: torch.tensor([2 ** 70]), ["1180591620717411303424", "int64"]),
    (lambda: genesis.tensor([2 ** 70], dtype=genesis.int64), lambda: torch.tensor([2 ** 70], dtype=torch.int64),
     ["int64"]),
    (lambda: genesis.full((2,), 1e40, dtype=genesis.float16),
     lambda: torch.full((2,), 1e40, dtype=torch.float16), ["1e+40", "float16"]),
    (lambda: genesis.full((2,), 1e40), lambda: torch.full((2,), 1e40), ["1e+40", "float32"]),
    (lambda: genesis.zeros(2, dtype=genesis.uint8).fill_(256),
     lambda: torch.zeros(2, dtype=torch.uint8).fill_(256), ["256", "uint8"]),
])
def test_overflow_is_an_overflow_error_and_what_pytorch_raises(call, torch_call, culprits):
    error = genesis_error(call, culprits=culprits, like=torch_call)
    assert isinstance(error, OverflowError)  # as NumPy raises it


def test_floats_too_big_for_the_dtype_become_inf_in_tensor_with_numpys_warning():
    """inf, as PyTorch gives silently; genesis lets NumPy's RuntimeWarning through (it is
    true, and silencing it would cost every tensor() call a few microseconds)."""
    with pytest.warns(RuntimeWarning, match="overflow encountered in cast"):
        assert genesis.tensor([1e40], dtype=genesis.float16).tolist() == [math.inf]
    with pytest.warns(RuntimeWarning, match="overflow encountered in cast"):
        assert genesis.tensor([-1e40]).tolist() == [-math.inf]


RAGGED = st.recursive(st.integers(0, 3), lambda children: st.lists(children, max_size=3),
                      max_leaves=8)


def _empty_by_its_first_entries(data) -> bool:
    """[[], [0]] or [[[]], 0]: PyTorch reads the shape along the first entries and, that
    shape holding no element, never looks at the others (it returns an empty tensor,
    dropping the 0); genesis checks them, as PyTorch does when the shape is not empty."""
    item = data
    while isinstance(item, list):
        if not item:
            return True
        item = item[0]
    return False


@FUZZ
@given(data=RAGGED)
def test_nested_lists_are_rectangular_or_a_value_error_naming_the_row(data):
    if _empty_by_its_first_entries(data) and Outcome(lambda: genesis.tensor(data)).raised:
        genesis_error(lambda: genesis.tensor(data), culprits=["nested lists must be rectangular"])
        return
    outcome = same_outcome(lambda: genesis.tensor(data), lambda: torch.tensor(data))
    if outcome.raised:  # ValueError for rows of different lengths, TypeError for a number
        assert isinstance(outcome.error, ValueError | TypeError)  # where a row should be
        assert "data[" in str(outcome.error) and "dim" in str(outcome.error), outcome.describe()


@pytest.mark.parametrize("data, error_type, culprit", [
    ([None], RuntimeError, "NoneType"), ({"a": 1}, RuntimeError, "dict"),
    (object(), RuntimeError, "object"), ("abc", TypeError, "'abc'"),
    ([[1, 2], [3]], ValueError, "data[1]"), ([[1, 2], 3], TypeError, "data[1]"),
])
def test_data_that_is_not_numbers_names_what_it_is(data, error_type, culprit):
    error = genesis_error(lambda: genesis.tensor(data), culprits=[culprit],
                          like=lambda: torch.tensor(data))
    assert isinstance(error, error_type)


def test_text_inside_a_list_is_a_type_error():
    """PyTorch says ValueError "too many dimensions 'str'" for ['a'] (and TypeError for
    'a'): genesis raises TypeError for both, text being the wrong type of data."""
    genesis_error(lambda: genesis.tensor(["a"]), culprits=["'a'", "text"])


ARANGE_VALUES = st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.sampled_from(
    [math.inf, -math.inf, math.nan, None, "3", 2 ** 62]))


@FUZZ
@given(start=ARANGE_VALUES, end=ARANGE_VALUES.filter(lambda end: end is not None),
       step=st.one_of(st.sampled_from([1, -1, 0, 0.5, -2.5]),
                      ARANGE_VALUES.filter(lambda step: step not in (math.inf, -math.inf))))
def test_arange_arguments(start, end, step):
    """(end=None is left out: genesis.arange(5, None) is arange(5), as Python can't tell the
    two calls apart, where PyTorch refuses an explicit None. An infinite step is below.)"""
    integers = all(type(value) is int for value in (start, end, step))
    if integers and step and max(map(abs, (start, end, step))) >= 2 ** 62:
        # ranges near int64's end: PyTorch says "invalid size, possible overflow?" for some
        # it could make; genesis makes them exactly (NumPy alone would miscount them)
        outcome = Outcome(lambda: genesis.arange(start, end, step))
        if not outcome.raised:
            expected = range(start, end, step)
            assert outcome.result.shape == (len(expected),)
            assert outcome.result[:3].tolist() == list(expected[:3])
        return
    outcome = same_outcome(lambda: genesis.arange(start, end, step),
                           lambda: torch.arange(start, end, step))
    if outcome.raised:
        assert str(outcome.error).startswith("arange: "), outcome.describe()
    elif torch is not None:
        assert outcome.result.shape == tuple(torch.arange(start, end, step).shape)


def test_an_infinite_arange_step_is_refused():
    """PyTorch returns an empty tensor for arange(0, 5, inf) and NumPy [0.]: genesis says
    the step must be finite rather than pick one."""
    genesis_error(lambda: genesis.arange(0, 5, math.inf), culprits=["inf", "finite"])


@FUZZ
@given(steps=st.one_of(st.integers(-3, 5), st.sampled_from([2.5, 3.0, "3", None, True, 2 ** 62])),
       start=st.one_of(st.floats(-2, 2), st.sampled_from(["a", None])))
def test_linspace_arguments(steps, start):
    outcome = same_outcome(lambda: genesis.linspace(start, 1, steps),
                           lambda: torch.linspace(start, 1, steps))
    if outcome.raised:
        assert str(outcome.error).startswith("linspace: "), outcome.describe()


@FUZZ
@given(n=st.one_of(st.integers(-2, 4), st.sampled_from([2.5, "3", None, 2 ** 62])),
       m=st.one_of(st.none(), st.integers(-2, 4), st.sampled_from([2.0, "3"])))
def test_eye_arguments(n, m):
    if _empty_but_huge([n, n if m is None else m]):
        genesis_error(lambda: genesis.eye(n, m), culprits=["eye", "too large"])
        return
    outcome = same_outcome(lambda: genesis.eye(n, m), lambda: torch.eye(n) if m is None else torch.eye(n, m))
    if outcome.raised:
        assert str(outcome.error).startswith("eye: "), outcome.describe()


@FUZZ
@given(low=st.one_of(st.integers(-3, 3), st.sampled_from([2.5, "a", None])),
       high=st.one_of(st.integers(-3, 400), st.sampled_from([2 ** 70, 2.0])),
       dtype=st.sampled_from([None, genesis.uint8, genesis.int8, genesis.int64, genesis.float32]))
def test_randint_arguments(low, high, dtype):
    outcome = same_outcome(
        lambda: genesis.randint(low, high, (3,), dtype=dtype),
        lambda: torch.randint(low, high, (3,), dtype=_torch_dtype(dtype) if dtype else None))
    if outcome.raised:
        assert str(outcome.error).startswith("randint: "), outcome.describe()
    else:
        assert outcome.result.shape == (3,)


def test_randint_takes_high_and_size_alone():
    assert genesis.randint(5, (2, 3)).shape == (2, 3)
    assert 0 <= genesis.randint(5, (100,)).min().item() and genesis.randint(5, (100,)).max().item() < 5


# Each overload of randint / randint_like, with its arguments given by position or by name
# (genesis used to drop `size=` when only `high` came before it, giving a 0-d tensor).
RANDINT_CALLS = [
    ((10,), {"size": (3,)}), ((), {"high": 10, "size": (2, 2)}), ((2, 10), {"size": (2,)}),
    ((), {"low": 2, "high": 10, "size": (3,)}), ((2,), {"high": 10, "size": [1, 2]}),
    ((10, ()), {}), ((10,), {"size": (2,), "dtype": "float32", "requires_grad": True}),
]
RANDINT_REFUSED = [  # (args, keywords, what the error names)
    ((10,), {}, "randint"), ((3, 10), {}, "size"), ((10,), {"size": 3}, "size"),
    ((), {"low": 2, "size": (3,)}, "randint"), ((2, 10, (3,)), {"size": (3,)}, "randint"),
    ((10, (2,)), {"requires_grad": True}, "floating point"),
]
RANDINT_LIKE_CALLS = [((5,), {}), ((2, 5), {}), ((), {"high": 5}), ((), {"low": 1, "high": 3}),
                      ((1,), {"high": 3}), ((5,), {"dtype": "int64"})]
RANDINT_LIKE_REFUSED = [((), {}), ((), {"low": 1}), ((1, 2, 3), {})]


def _with_dtype(library, keywords: dict) -> dict:
    return {name: getattr(library, value) if name == "dtype" else value for name, value in keywords.items()}


@pytest.mark.parametrize("args, keywords", RANDINT_CALLS)
def test_randint_overloads(args, keywords):
    ours = genesis.randint(*args, **_with_dtype(genesis, keywords))
    assert all(0 <= value < 10 for value in ours.flatten().tolist())
    if torch is not None:
        theirs = torch.randint(*args, **_with_dtype(torch, keywords))
        assert (tuple(ours.shape), str(ours.dtype).split(".")[1], ours.requires_grad) == \
            (tuple(theirs.shape), str(theirs.dtype).split(".")[1], theirs.requires_grad)


@pytest.mark.parametrize("args, keywords, culprit", RANDINT_REFUSED)
def test_randint_refuses_what_no_overload_takes(args, keywords, culprit):
    genesis_error(lambda: genesis.randint(*args, **keywords), culprits=[culprit],
                  like=lambda: torch.randint(*args, **keywords))


@pytest.mark.parametrize("input_dtype", ["float32", "int32"])
@pytest.mark.parametrize("args, keywords", RANDINT_LIKE_CALLS)
def test_randint_like_overloads(args, keywords, input_dtype):
    ours = genesis.randint_like(genesis.zeros(2, 3, dtype=getattr(genesis, input_dtype)), *args,
                                **_with_dtype(genesis, keywords))
    assert ours.shape == (2, 3) and ours.dtype is (getattr(genesis, keywords.get("dtype", input_dtype)))
    if torch is not None:
        theirs = torch.randint_like(torch.zeros(2, 3, dtype=getattr(torch, input_dtype)), *args,
                                    **_with_dtype(torch, keywords))
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]


@pytest.mark.parametrize("args, keywords", RANDINT_LIKE_REFUSED)
def test_randint_like_refuses_what_no_overload_takes(args, keywords):
    genesis_error(lambda: genesis.randint_like(genesis.zeros(2), *args, **keywords),
                  culprits=["randint_like"], like=lambda: torch.randint_like(torch.zeros(2), *args, **keywords))


def test_randint_like_draws_from_the_generator():
    first, second = (genesis.randint_like(genesis.zeros(8), 100, generator=genesis.Generator().manual_seed(3))
                     for _ in range(2))
    assert first.tolist() == second.tolist()


@pytest.mark.parametrize("name", ["randn", "rand"])
@pytest.mark.parametrize("dtype", [genesis.int64, genesis.uint8, genesis.bool])
def test_random_floats_refuse_integer_dtypes(name, dtype):
    """genesis used to draw floats and cast them: randn(2, dtype=int64) gave zeros."""
    genesis_error(lambda: getattr(genesis, name)(2, dtype=dtype), culprits=[dtype.name],
                  like=lambda: getattr(torch, name)(2, dtype=_torch_dtype(dtype)))


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "randn_like", "rand_like",
                                  "full_like"])
@pytest.mark.parametrize("given_input", [[1.0, 2.0], np.ones(2), 3.0, None])
def test_like_functions_need_a_tensor(name, given_input):
    extra = (1.0,) if name == "full_like" else ()
    genesis_error(lambda: getattr(genesis, name)(given_input, *extra),
                  culprits=[name, "must be a Tensor"],
                  like=lambda: getattr(torch, name)(given_input, *extra))


@pytest.mark.parametrize("seed", [2 ** 64, -2 ** 63 - 1, "a"])
def test_manual_seed_range(seed):
    genesis_error(lambda: genesis.manual_seed(seed), like=lambda: torch.manual_seed(seed))


def test_a_negative_seed_wraps_as_in_pytorch_and_works():
    genesis.manual_seed(-1)
    first = genesis.randn(3)
    genesis.manual_seed(2 ** 64 - 1)
    assert genesis.randn(3).tolist() == first.tolist()
