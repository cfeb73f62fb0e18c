"""out= on the public functions that `out_forms` wraps: the result written into the given
tensor (or values/indices tuple), compared with PyTorch's."""
import inspect
import warnings

import numpy as np
import pytest

import genesis
from genesis.ops.catalog import FAMILIES
from genesis.ops.out_forms import OUT_FORMS
from tests.helpers import torch_or_skip

_A = np.array([[1.5, -2.0, 3.0], [0.25, 4.0, -1.0]])
_B = np.array([[2.0, 1.0], [-1.0, 0.5], [3.0, 1.0]])
_SQUARE = np.array([[1.0, 2.0], [3.0, 4.0]])

# name -> how to call it, given the library and its tensors a (2x3), b (3x2), s (2x2)
_CALLS = {
    "matmul": lambda lib, a, b, s: (a, b), "mm": lambda lib, a, b, s: (a, b),
    "bmm": lambda lib, a, b, s: (a[None], b[None]), "mv": lambda lib, a, b, s: (a, b[:, 0]),
    "dot": lambda lib, a, b, s: (a[0], b[:, 1]), "outer": lambda lib, a, b, s: (a[0], b[:, 0]),
    "addmm": lambda lib, a, b, s: (s, a, b), "baddbmm": lambda lib, a, b, s: (s[None], a[None], b[None]),
    "addmv": lambda lib, a, b, s: (s[0], a, b[:, 0]), "cat": lambda lib, a, b, s: ([a, a], 1),
    "stack": lambda lib, a, b, s: ([s, s],), "sum": lambda lib, a, b, s: (a, 1),
    "mean": lambda lib, a, b, s: (a, 0), "prod": lambda lib, a, b, s: (a, 1),
    "logsumexp": lambda lib, a, b, s: (a, 1), "std": lambda lib, a, b, s: (a, 1),
    "var": lambda lib, a, b, s: (a, 0), "cumsum": lambda lib, a, b, s: (a, 1),
    "cumprod": lambda lib, a, b, s: (a, 0), "clamp": lambda lib, a, b, s: (a, -1.0, 2.0),
    "pow": lambda lib, a, b, s: (a, 2), "where": lambda lib, a, b, s: (a > 0, a, -a),
    "neg": lambda lib, a, b, s: (a,), "floor": lambda lib, a, b, s: (a,),
    "ceil": lambda lib, a, b, s: (a,), "round": lambda lib, a, b, s: (a,),
    "trunc": lambda lib, a, b, s: (a,), "maximum": lambda lib, a, b, s: (a, -a),
    "minimum": lambda lib, a, b, s: (a, -a), "eq": lambda lib, a, b, s: (a, 3.0),
    "ne": lambda lib, a, b, s: (a, 3.0), "lt": lambda lib, a, b, s: (a, 1.0),
    "le": lambda lib, a, b, s: (a, 1.5), "gt": lambda lib, a, b, s: (a, 1.0),
    "ge": lambda lib, a, b, s: (a, 1.5), "remainder": lambda lib, a, b, s: (a, 1.5),
    "fmod": lambda lib, a, b, s: (a, 1.5), "lerp": lambda lib, a, b, s: (a, -a, 0.25),
    "index_select": lambda lib, a, b, s: (a, 1, lib.tensor([2, 0])),
    "gather": lambda lib, a, b, s: (a, 1, lib.tensor([[2, 0], [1, 1]])),
    "tril": lambda lib, a, b, s: (a,), "triu": lambda lib, a, b, s: (a, 1),
    "softmax": lambda lib, a, b, s: (a, 1), "log_softmax": lambda lib, a, b, s: (a, 0),
    "argmax": lambda lib, a, b, s: (a, 1), "argmin": lambda lib, a, b, s: (a, 0),
    "max": lambda lib, a, b, s: (a, 1), "min": lambda lib, a, b, s: (a, 0),
    "sort": lambda lib, a, b, s: (a, 1), "topk": lambda lib, a, b, s: (a, 2),
    "kthvalue": lambda lib, a, b, s: (a, 2, 1), "median": lambda lib, a, b, s: (a, 1),
    "mode": lambda lib, a, b, s: (a, 1), "cummax": lambda lib, a, b, s: (a, 1),
    "cummin": lambda lib, a, b, s: (a, 1),
}


def _args(lib, name):
    a, b, s = (lib.from_numpy(array.copy()) for array in (_A, _B, _SQUARE))
    return _CALLS[name](lib, a, b, s)


def _outs(lib, name, like):
    """Empty outputs of the dtypes the result has (int64 for indices)."""
    if isinstance(like, tuple):
        return tuple(lib.empty(0, dtype=part.dtype) for part in like)
    return lib.empty(0, dtype=like.dtype)


def test_every_out_form_is_a_family_function_written_without_out():
    functions = {name: getattr(family, name) for family in FAMILIES for name in family.__all__}
    assert set(_CALLS) == set(OUT_FORMS)
    for name in OUT_FORMS:
        assert "out" not in inspect.signature(functions[name]).parameters, name
        assert getattr(genesis, name).__wrapped__ is functions[name]
        assert getattr(genesis, name).__doc__ == functions[name].__doc__


@pytest.mark.parametrize("name", sorted(OUT_FORMS))
def test_out_holds_pytorchs_result(name):
    torch = torch_or_skip()
    expected = getattr(torch, name)(*_args(torch, name))
    plain = getattr(genesis, name)(*_args(genesis, name))
    out = _outs(genesis, name, plain)
    theirs_out = _outs(torch, name, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized without a warning
        returned = getattr(genesis, name)(*_args(genesis, name), out=out)
        getattr(torch, name)(*_args(torch, name), out=theirs_out)
    if isinstance(out, tuple):
        assert type(returned) is type(plain) and all(r is o for r, o in zip(returned, out))
        pairs = list(zip(out, theirs_out))
    else:
        assert returned is out
        pairs = [(out, theirs_out)]
    for mine, theirs in pairs:
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12)
        assert mine._version == 1


def test_a_nonempty_out_of_another_shape_is_resized_with_pytorchs_warning():
    out = genesis.zeros(5)
    with pytest.warns(UserWarning, match="was resized") as warned:
        genesis.matmul(genesis.ones(2, 3), genesis.ones(3, 2), out=out)
    assert warned[0].filename == __file__  # points at the call
    assert out.shape == (2, 2) and out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_out_is_refused_while_recording_and_allowed_under_no_grad():
    x = genesis.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        genesis.matmul(x, x, out=genesis.empty(2, 2))
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        genesis.cat([x, x], out=genesis.empty(4, 2))  # a tensor inside the sequence counts
    with genesis.no_grad():
        out = genesis.matmul(x, x, out=genesis.empty(2, 2))
    assert out.tolist() == [[2.0, 2.0], [2.0, 2.0]] and not out.requires_grad


def test_wrong_out_kinds_raise_as_pytorch():
    torch = torch_or_skip()
    a = genesis.tensor([[1.0, 3.0], [2.0, 0.0]])
    for lib, x in ((genesis, a), (torch, torch.tensor(a.tolist()))):
        with pytest.raises(RuntimeError, match="dtype"):
            lib.argmax(x, 1, out=lib.empty(0))  # indices need int64
        with pytest.raises(RuntimeError):
            lib.max(x, 1, out=(lib.empty(0), lib.empty(0)))
        with pytest.raises(RuntimeError):
            lib.matmul(x, x, out=lib.empty(0, dtype=lib.int64))
    with pytest.raises(TypeError, match="tuple of 2 Tensors"):
        genesis.max(a, 1, out=genesis.empty(0))
    with pytest.raises(TypeError, match="returns 1 tensor"):
        genesis.sum(a, out=(genesis.empty(0), genesis.empty(0)))


def test_out_none_is_the_plain_call_and_methods_take_no_out():
    a = genesis.ones(2, 2, requires_grad=True)
    assert genesis.matmul(a, a, out=None).grad_fn is not None
    assert "out" not in inspect.signature(genesis.Tensor.matmul).parameters
