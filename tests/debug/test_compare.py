"""genesis.debug.compare: two implementations on the same inputs, outputs and gradients
compared; identical ones agree, different ones are found and located."""
import math

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.debug.compare import compare, default_tolerances
from genesis.debug.difference_shape import explain_difference


def naive_attention(q, k, v):
    return (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(-1) @ v


def unscaled_attention(q, k, v):  # the bug: divides by d instead of sqrt(d)
    return (q @ k.transpose(-2, -1) / q.shape[-1]).softmax(-1) @ v


class HalfSquare(genesis.autograd.Function):
    """x * x with a backward that forgot the factor 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x


class Square(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * x


class Block(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.dropout = nn.Dropout(0.2)

    def forward(self, x):
        return x + self.dropout(F.gelu(self.fc(self.norm(x))))


class BlockTanhGelu(Block):
    def forward(self, x):
        return x + self.dropout(F.gelu(self.fc(self.norm(x)), approximate="tanh"))


def _qkv(seed=0):
    rng = np.random.default_rng(seed)
    return [genesis.tensor(rng.standard_normal((2, 3, 4, 8)), dtype=genesis.float32)
            for _ in range(3)]


def test_a_fused_op_and_its_plain_form_agree_on_outputs_and_every_gradient():
    result = compare(naive_attention, F.scaled_dot_product_attention, *_qkv())
    assert result.agree
    assert [row.name for row in result.rows] == ["output", "gradient of q", "gradient of k",
                                                 "gradient of v"]
    assert all(row.max_abs_error < 1e-12 for row in result.rows)
    assert result.dtype is genesis.float64  # float32 inputs are compared in float64


def test_a_wrong_scale_is_found_in_the_output_and_every_gradient_with_the_worst_entries():
    result = compare(naive_attention, unscaled_attention, *_qkv())
    assert not result.agree
    assert all(not row.agree for row in result.rows)
    output = result.rows[0]
    assert output.differing > 0 and output.total == 2 * 3 * 4 * 8
    index, a, b = output.worst[0]
    assert abs(a - b) == pytest.approx(output.max_abs_error)
    assert output.note == ""  # not a constant factor: nothing is guessed


def test_a_backward_missing_a_factor_is_named_as_such():
    result = compare(HalfSquare, Square, genesis.randn(3, 4))
    output, gradient = result.rows
    assert output.agree and not gradient.agree
    assert gradient.note == "A = 0.5 x B at every entry (a constant factor: a missing factor 2?)"


def test_modules_start_from_the_same_weights_and_dropout_draws_the_same_mask():
    genesis.manual_seed(1)
    first, second = Block(), Block()  # different random weights: B gets A's
    result = compare(first, second, genesis.randn(4, 6))
    assert result.agree
    names = [row.name for row in result.rows]
    assert names == ["output", "gradient of x", "gradient of parameter norm.weight",
                     "gradient of parameter norm.bias", "gradient of parameter fc.weight",
                     "gradient of parameter fc.bias"]
    assert first.fc.weight.dtype is genesis.float32  # the caller's modules are not changed


def test_a_changed_activation_is_located_in_the_output_and_the_parameter_gradients():
    genesis.manual_seed(1)
    result = compare(Block(), BlockTanhGelu(), genesis.randn(4, 6))
    assert not result.agree
    differing = {row.name for row in result.rows if not row.agree}
    assert {"output", "gradient of parameter fc.weight"} <= differing


def test_b_with_parameters_a_lacks_is_a_usage_error():
    class Other(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(6, 6)

        def forward(self, x):
            return self.proj(x)

    with pytest.raises(ValueError, match="proj.weight"):
        compare(Block(), Other(), genesis.randn(2, 6))


def test_an_implementation_that_raises_is_a_difference_named_in_its_row():
    def broken(x):
        raise RuntimeError("shapes do not match")

    result = compare(lambda x: x * 2, broken, genesis.randn(3))
    assert not result.agree
    assert result.rows[0].note == "B raised RuntimeError: shapes do not match"


def test_outputs_of_different_structure_differ():
    result = compare(lambda x: (x, x * 2), lambda x: x, genesis.randn(3))
    assert not result.agree and "A returns 2 values" in result.rows[0].note


def test_outputs_of_different_shapes_differ_and_their_gradients_are_not_compared():
    # B's backward was fed A's output gradient and "raised" a shape mismatch of the tool's making
    result = compare(lambda x: x, lambda x: x.sum(0), genesis.randn(3, 4))
    assert not result.agree
    assert [(row.name, row.note) for row in result.rows] == [
        ("output", "shapes differ: (3, 4) in A, (4,) in B")]
    assert result.notes == ["gradients not compared: the outputs' shapes differ (output is (3, 4) "
                            "in A, (4,) in B), so no output gradient fits both"]


def test_an_input_that_reaches_no_output_in_either_agrees_and_says_so():
    result = compare(lambda x, y: x * 2, lambda x, y: x + x, genesis.randn(3), genesis.randn(3))
    assert result.agree
    assert result.rows[-1].name == "gradient of y"
    assert "does not reach the outputs" in result.rows[-1].note


def test_nan_at_the_same_places_is_equal_and_nan_in_one_side_only_is_not():
    x = genesis.tensor([1.0, -1.0, 4.0])
    assert compare(lambda t: t.log(), lambda t: t.log(), x).agree
    result = compare(lambda t: t.log(), lambda t: t.abs().log(), x)
    assert not result.agree and result.rows[0].differing == 1


def test_index_inputs_pass_through_and_only_floating_inputs_get_gradients():
    index = genesis.tensor([0, 2, 2])
    result = compare(lambda w, i: w[i].sum(), lambda w, i: (w.index_select(0, i)).sum(),
                     genesis.randn(4), index)
    assert result.agree
    assert [row.name for row in result.rows] == ["output", "gradient of w"]


def test_tolerances_default_by_dtype_as_torch_testing():
    assert default_tolerances(genesis.float64) == (1e-7, 1e-7)
    assert default_tolerances(genesis.float32) == (1e-5, 1.3e-6)
    loose = compare(naive_attention, unscaled_attention, *_qkv(), atol=10.0)
    assert loose.agree and loose.atol == 10.0


@pytest.mark.parametrize("a, b, words", [
    ([1.0, -2.0], [-1.0, 2.0], "A = -B at every entry (the sign is wrong)"),
    ([0.0, 0.0], [1.0, 2.0], "A is zero at every entry, B is not"),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.0, 3.0], [2.0, 4.0]], "A is the transpose of B"),
    ([2.0, 4.0], [1.0, 2.0], "A = 2 x B at every entry (a constant factor: an extra factor 2?)"),
    ([1.0, 2.0], [1.0, 2.5], ""),
])
def test_a_difference_is_explained_only_when_every_entry_fits(a, b, words):
    assert explain_difference(np.array(a), np.array(b), 1e-7, 1e-7) == words


def test_an_implementation_that_only_runs_in_float32_is_compared_in_float32():
    def float32_only(x):
        if x.dtype is not genesis.float32:
            raise TypeError("this kernel takes float32 only")
        return x.tanh()

    result = compare(lambda x: x.tanh(), float32_only, genesis.randn(5))
    assert result.agree and result.dtype is genesis.float32
    assert result.notes == ["compared in float32: in float64 B raised TypeError: this kernel "
                            "takes float32 only"]
    assert (result.atol, result.rtol) == (1e-5, 1.3e-6)
