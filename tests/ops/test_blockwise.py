"""Block-by-block evaluation of long elementwise formulas (gelu) gives exactly what one
call over the whole array gives."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis.ops._blockwise import _BLOCK, in_blocks


def test_in_blocks_covers_every_element_and_keeps_shape_and_dtype():
    x = np.arange(7 * (_BLOCK + 5), dtype=np.float32).reshape(-1, 7)  # not a whole number of blocks
    out = in_blocks(np, lambda a, b: a * 2 - b, x, x + 1)
    assert out.shape == x.shape and out.dtype == np.float32
    np.testing.assert_array_equal(out, x - 1)


def test_in_blocks_takes_non_contiguous_inputs_and_leaves_mixed_shapes_to_one_call():
    x = np.arange(6 * _BLOCK, dtype=np.float64).reshape(2, -1).T  # transposed: not contiguous
    np.testing.assert_array_equal(in_blocks(np, np.negative, x), -x)
    broadcast = in_blocks(np, np.add, x, np.ones(2))
    np.testing.assert_array_equal(broadcast, x + 1)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [genesis.float32, genesis.float64])
def test_gelu_on_a_large_input_matches_row_by_row_values_and_gradients(approximate, dtype):
    rows = np.random.default_rng(0).standard_normal((3, 70_000)) * 3
    x = genesis.tensor(rows, dtype=dtype, requires_grad=True)  # 210,000 elements: in blocks
    upstream = genesis.tensor(np.random.default_rng(1).standard_normal(rows.shape), dtype=dtype)
    F.gelu(x, approximate=approximate).backward(upstream)
    for index in range(rows.shape[0]):  # 70,000 elements: one call
        row = genesis.tensor(rows[index], dtype=dtype, requires_grad=True)
        out = F.gelu(row, approximate=approximate)
        out.backward(upstream[index])
        np.testing.assert_array_equal(
            F.gelu(x.detach(), approximate=approximate)[index].numpy(), out.detach().numpy())
        np.testing.assert_array_equal(x.grad[index].numpy(), row.grad.numpy())
