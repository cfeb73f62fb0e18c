"""dtype promotion: the rules pinned literally, then every dtype pair checked against PyTorch."""
import itertools

import numpy as np
import pytest

import genesis
from genesis.ops._operands import result_type

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def make(dtype, shape=(3,)):
    values = np.arange(1, 1 + int(np.prod(shape))).reshape(shape) % 2 + 1
    return genesis.tensor(values, dtype=dtype)


@pytest.mark.parametrize("compute, expected", [
    (lambda: make("int64") + 2.5, genesis.float32),
    (lambda: make("int32") * 2, genesis.int32),
    (lambda: make("bool") + 1, genesis.int64),
    (lambda: make("bool") + True, genesis.bool),
    (lambda: make("bool") + make("bool"), genesis.bool),
    (lambda: make("bool") * make("bool"), genesis.bool),
    (lambda: make("int64") / make("int64"), genesis.float32),
    (lambda: make("bool") / make("bool"), genesis.float32),
    (lambda: 1 / make("int32"), genesis.float32),
    (lambda: make("float16") + make("float32"), genesis.float32),
    (lambda: make("float16") + 2.5, genesis.float16),
    (lambda: make("uint8") + make("int8"), genesis.int16),
    (lambda: make("int16") + make("float16"), genesis.float16),
    (lambda: make("float32") * make("float64", ()), genesis.float32),
    (lambda: make("int32") * make("int64", ()), genesis.int32),
    (lambda: make("int32") * make("float64", ()), genesis.float64),
    (lambda: make("bool") * make("int64", ()), genesis.int64),
    (lambda: make("float64", ()) * make("float32", ()), genesis.float64),
    (lambda: make("int64") ** 2, genesis.int64),
    (lambda: make("bool") ** 2, genesis.int64),
    (lambda: make("int64") ** 0.5, genesis.float32),
    (lambda: 2 ** make("int32"), genesis.int32),
    (lambda: 2.5 ** make("int32"), genesis.float32),
    (lambda: make("int64").sqrt(), genesis.float32),
    (lambda: make("int16").exp(), genesis.float32),
    (lambda: make("bool").sigmoid(), genesis.float32),
    (lambda: make("int64").abs(), genesis.int64),
    (lambda: make("bool").square(), genesis.int64),
    (lambda: make("bool").sign(), genesis.bool),
    (lambda: make("int64").floor(), genesis.int64),
    (lambda: make("int64").logsumexp(0), genesis.float32),
    (lambda: genesis.atan2(make("int64"), make("int64")), genesis.float32),
    (lambda: genesis.where(make("bool"), make("int64"), 0.5), genesis.float32),
    (lambda: genesis.where(make("bool"), 1.0, 0), genesis.float32),
    (lambda: genesis.where(make("bool"), 1, 0), genesis.int64),
    (lambda: genesis.maximum(make("int64"), make("float16")), genesis.float16),
    (lambda: make("int64").clamp(1.5), genesis.float32),
    (lambda: make("bool").clamp(0), genesis.int64),
    (lambda: genesis.addcmul(make("float16"), make("float32"), make("float32")), genesis.float32),
    (lambda: genesis.div(make("int64"), 2, rounding_mode="floor"), genesis.int64),
    (lambda: genesis.div(make("int64"), 2.0, rounding_mode="floor"), genesis.float32),
    (lambda: make("int64") // 2, genesis.int64),
    (lambda: make("int64") % 2.0, genesis.float32),
    (lambda: make("int64") < 0.5, genesis.bool),
    (lambda: make("int64") & make("bool"), genesis.int64),
    (lambda: genesis.logical_and(make("float32"), make("int64")), genesis.bool),
], ids=lambda value: "" if callable(value) else value.name)
def test_result_dtype(compute, expected):
    assert compute().dtype is expected


def test_comparison_between_int_and_float_compares_as_float():
    x = genesis.tensor([0, 1, 2])
    assert (x < 0.5).tolist() == [True, False, False]
    assert (x == genesis.tensor([0.0, 1.5, 2.0])).tolist() == [True, False, True]


def test_integer_to_negative_integer_power_is_refused():
    with pytest.raises(RuntimeError, match="pow: integers to negative integer powers"):
        genesis.tensor([2, 3]) ** -1


@pytest.mark.parametrize("values, expected", [
    ((genesis.tensor([1], dtype=genesis.int32), 2.5, True), np.float32),
    ((genesis.tensor([1], dtype=genesis.float16), genesis.tensor(2.0, dtype=genesis.float64)),
     np.float16),
    ((genesis.tensor([True]), genesis.tensor(2.0, dtype=genesis.float64)), np.float64),
    ((genesis.tensor([1], dtype=genesis.uint8), 300), np.uint8),
    ((3, 2.5), np.float32),
    ((True, False), np.bool_),
    ((genesis.tensor(1, dtype=genesis.int8), genesis.tensor(1, dtype=genesis.int16), 1.0),
     np.float32),
])
def test_result_type_literal(values, expected):
    assert result_type(*values) == expected


def test_result_type_needs_an_operand():
    with pytest.raises(TypeError, match="at least one"):
        result_type(None)


PAIRS = list(itertools.product(DTYPES, DTYPES))


def _torch_pair(torch, dtype_a, dtype_b, shape_b):
    a = torch.ones(3, dtype=getattr(torch, dtype_a))
    b = torch.ones(shape_b, dtype=getattr(torch, dtype_b))
    return a, b


@pytest.mark.parametrize("shape_b", [(3,), ()], ids=["dimensioned", "0-d"])
@pytest.mark.parametrize("dtype_a, dtype_b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_binary_promotion_matches_pytorch(dtype_a, dtype_b, shape_b):
    torch = pytest.importorskip("torch")
    a, b = make(dtype_a), make(dtype_b, shape_b)
    ta, tb = _torch_pair(torch, dtype_a, dtype_b, shape_b)
    assert result_type(a, b).name == str(torch.result_type(ta, tb)).removeprefix("torch.")
    for ours, theirs in [(a + b, ta + tb), (a * b, ta * tb), (a / b, ta / tb),
                         (genesis.maximum(a, b), torch.maximum(ta, tb)),
                         (genesis.where(a > 1, a, b), torch.where(ta > 1, ta, tb))]:
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert (a < b).dtype is genesis.bool


@pytest.mark.parametrize("number", [True, 2, 2.5], ids=["bool", "int", "float"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_with_python_number_matches_pytorch(dtype, number):
    torch = pytest.importorskip("torch")
    a, ta = make(dtype), torch.ones(3, dtype=getattr(torch, dtype))
    expected = str(torch.result_type(ta, number)).removeprefix("torch.")
    assert result_type(a, number).name == expected
    assert (a * number).dtype.name == str((ta * number).dtype).removeprefix("torch.")
    if not (dtype == "bool" and number is True):
        assert (a + number).dtype.name == str((ta + number).dtype).removeprefix("torch.")


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_float_math_dtype_matches_pytorch(dtype):
    torch = pytest.importorskip("torch")
    a, ta = make(dtype), torch.ones(3, dtype=getattr(torch, dtype))
    for name in ("sqrt", "exp", "log", "sin", "sigmoid", "tanh", "erf", "reciprocal"):
        ours, theirs = getattr(a, name)(), getattr(ta, name)()
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), name
