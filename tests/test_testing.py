"""genesis.testing.assert_close: passes and fails where torch.testing.assert_close does."""
import numpy as np
import pytest

import genesis
from genesis.testing import assert_close
from tests.helpers import torch_or_skip

CASES = [  # (actual, expected, options)
    ([1.0, 2.0], [1.0, 2.0 + 1e-7], {}),
    ([1.0, 2.0], [1.0, 2.0 + 1e-4], {}),
    ([1.0, 2.0], [1.0, 2.1], {"rtol": 0.1, "atol": 0.0}),
    ([1.0, float("nan")], [1.0, float("nan")], {}),
    ([1.0, float("nan")], [1.0, float("nan")], {"equal_nan": True}),
    ([1, 2], [1, 3], {}),
]


@pytest.mark.parametrize("actual, expected, options", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_agrees_with_pytorch(actual, expected, options, dtype):
    torch = torch_or_skip()
    if isinstance(actual[0], int):
        dtype = "int64"
    try:
        torch.testing.assert_close(torch.tensor(actual, dtype=getattr(torch, dtype)),
                                   torch.tensor(expected, dtype=getattr(torch, dtype)), **options)
        theirs = None
    except AssertionError as error:
        theirs = error
    mine = lambda: assert_close(genesis.tensor(actual, dtype=dtype), genesis.tensor(expected, dtype=dtype),
                                **options)
    if theirs is None:
        mine()
    else:
        with pytest.raises(AssertionError, match="not close"):
            mine()


def test_shape_dtype_containers_and_messages():
    with pytest.raises(AssertionError, match="'shape' do not match"):
        assert_close(genesis.zeros(2), genesis.zeros(3))
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        assert_close(genesis.zeros(2), genesis.zeros(2, dtype=genesis.float64))
    assert_close(genesis.zeros(2), genesis.zeros(2, dtype=genesis.float64), check_dtype=False)
    assert_close({"a": [genesis.ones(1), 2.0]}, {"a": [genesis.ones(1), 2.0]})
    with pytest.raises(AssertionError, match=r"\['a'\]\[1\]"):
        assert_close({"a": [genesis.ones(1), 2.0]}, {"a": [genesis.ones(1), 3.0]})
    with pytest.raises(AssertionError, match="^custom$"):
        assert_close(genesis.ones(1), genesis.zeros(1), msg="custom")
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        assert_close(genesis.ones(1), genesis.ones(1), rtol=0.1)
    assert np.isfinite(1.0)
