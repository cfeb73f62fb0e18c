"""gradgradcheck: second derivatives through create_graph=True."""
import numpy as np
import pytest

import genesis
from genesis.autograd import GradcheckError, gradgradcheck
from tests.helpers import Sigmoid


def double(shape, seed=0, requires_grad=True):
    values = np.random.default_rng(seed).uniform(-1.5, 1.5, shape)
    return genesis.tensor(values, dtype=genesis.float64, requires_grad=requires_grad)


def sigmoid_from_exp(x):
    return 1 / (1 + (-x).exp())


def softmax_from_exp(x, dim=-1):
    e = x.exp()  # inputs are small: no max-shift needed
    return e / e.sum(dim, keepdim=True)


@pytest.mark.parametrize("func", [
    lambda x: x.tanh(),
    lambda x: x.sigmoid(),
    lambda x: genesis.softmax(x, dim=-1),
    lambda x: genesis.log_softmax(x, dim=0),
    lambda x: sigmoid_from_exp(x),
    lambda x: softmax_from_exp(x),
    lambda x: (x.sigmoid() * x.tanh()).sum(),
], ids=["tanh", "sigmoid", "softmax", "log_softmax", "sigmoid-from-exp", "softmax-from-exp",
        "sigmoid-times-tanh-sum"])
def test_passes_for_smooth_expressions(func):
    assert gradgradcheck(func, double((3, 4)))


def test_passes_for_attention_like_expression():
    q, k = double((2, 3), seed=3), double((4, 3), seed=4)
    assert gradgradcheck(lambda q, k: genesis.softmax(q @ k.T, dim=-1), (q, k))


def test_passes_for_matmul_with_two_inputs():
    a, b = double((3, 4), seed=1), double((4, 2), seed=2)
    assert gradgradcheck(lambda a, b: (a @ b).tanh(), (a, b))


def test_passes_with_given_grad_outputs():
    x = double((3,))
    v = genesis.tensor([1.0, -2.0, 0.5], dtype=genesis.float64, requires_grad=True)
    assert gradgradcheck(lambda x: x.tanh() * x, x, v)


class CubeWrongSecondDerivative(genesis.Function):
    """x ** 3 whose backward's own backward is wrong (3x^2 differentiated as 3x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x._data ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * WrongSquareTimesThree.apply(x)


class WrongSquareTimesThree(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 3 * x._data ** 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x  # should be 6 * x


def test_first_derivative_is_fine_but_second_is_missing():
    x = double((4,))
    assert genesis.autograd.gradcheck(Sigmoid.apply, x)
    with pytest.raises(GradcheckError) as caught:
        gradgradcheck(Sigmoid.apply, x)
    message = str(caught.value)
    assert message.startswith("gradgradcheck failed: gradient missing")
    assert "grad_output" in message  # the legend explains what inputs and outputs are here


def test_wrong_second_derivative_fails_with_the_entries_table():
    x = double((3,))
    assert genesis.autograd.gradcheck(CubeWrongSecondDerivative.apply, x)
    with pytest.raises(GradcheckError) as caught:
        gradgradcheck(CubeWrongSecondDerivative.apply, x)
    result = caught.value.result
    assert result.failed_check == "values" and result.check_name == "gradgradcheck"
    assert (result.output_index, result.input_index) == (0, 0)
    worst = result.worst[0]
    assert worst.input_position == worst.output_position
    assert worst.numerical == pytest.approx(2 * worst.analytical, rel=1e-5)  # 6x v vs 3x v


def test_raise_exception_false_returns_false():
    assert gradgradcheck(Sigmoid.apply, double((2,)), raise_exception=False) is False


def test_wrong_number_of_grad_outputs_is_an_error():
    x = double((2,))
    with pytest.raises(ValueError, match="got 2 grad_outputs for 1 outputs"):
        gradgradcheck(lambda x: x.tanh(), x, (double((2,)), double((2,))))
