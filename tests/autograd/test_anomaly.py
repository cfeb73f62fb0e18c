"""Anomaly detection: NaN/Inf pinpointed to the source line that produced them."""
import inspect

import numpy as np
import pytest

import genesis
from genesis.autograd import AnomalyError, detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from genesis.autograd.engine import node_checkers
from genesis.autograd.function import observers

# NumPy warns about 0/0 and 1/0 before anomaly mode sees the result; these tests are about the result.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def this_line() -> int:
    return inspect.currentframe().f_back.f_lineno


class Reciprocal(genesis.Function):
    """1/x: finite forward for x != 0 ... and a backward that is Inf/NaN where x is 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.where(x._data == 0, 0.0, 1 / np.where(x._data == 0, 1.0, x._data)).astype(x._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad / (x * x)


class Explodes(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        return x._data * 2

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("backward exploded")


@pytest.fixture(autouse=True)
def _no_hooks_left_behind():
    yield
    assert not is_anomaly_enabled()
    assert observers == [] and node_checkers == []


def test_off_by_default_and_free():
    assert not is_anomaly_enabled()
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.grad_fn.forward_location is None  # nothing recorded, no frame inspected


def test_zero_over_zero_in_forward_is_pinpointed():
    a = genesis.tensor([0.0, 1.0], requires_grad=True)
    b = genesis.tensor([0.0, 2.0])
    with pytest.raises(AnomalyError) as caught, detect_anomaly():
        line = this_line() + 1
        ratio = a / b  # noqa: F841
    message = str(caught.value)
    assert "anomaly detected in forward: Div produced NaN from finite inputs" in message
    assert f"{__file__}:{line} in test_zero_over_zero_in_forward_is_pinpointed" in message
    assert "ratio = a / b" in message
    assert "check_forward=False" in message


def test_forward_check_ignores_non_finite_inputs_and_can_be_turned_off():
    masked = genesis.tensor([float("-inf"), 1.0], requires_grad=True)
    with detect_anomaly():
        (masked * 2).exp()  # -inf came in: not born here
        (genesis.tensor([1.0]) * float("inf"))  # a deliberate infinite constant
    zero = genesis.tensor([0.0])
    with detect_anomaly(check_forward=False):
        assert not np.isfinite((zero / zero).item())


def test_an_intended_minus_inf_mask_does_not_raise():
    scores = genesis.randn(4, 4, requires_grad=True)
    with detect_anomaly():
        bias = genesis.ones(4, 4).tril().log()                 # -inf above the diagonal
        masked = scores.masked_fill(genesis.ones(4, 4).tril() == 0, float("-inf")) + bias
        masked.softmax(dim=-1).pow(2).sum().backward()         # softmax consumes the -inf
    assert np.isfinite(scores.grad.numpy()).all()


def test_an_inf_born_in_forward_raises_when_backward_starts_from_a_loss_holding_it():
    x = genesis.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        line = this_line() + 1
        loss = -x.log().sum()  # noqa: F841  (log(0) = -inf: not raised here, it may be a mask)
        with pytest.raises(AnomalyError) as caught:
            loss.backward()
    message = str(caught.value)
    assert message.startswith("anomaly detected in forward: Log produced Inf from finite inputs")
    assert f"{__file__}:{line}" in message and "It reached the loss" in message


def test_nan_from_zero_times_an_inf_raises_naming_where_the_inf_was_born():
    x = genesis.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        logs = x.log()
        with pytest.raises(AnomalyError) as caught:
            logs * 0
    message = str(caught.value)
    assert "Mul produced NaN from inputs holding Inf but no NaN" in message
    assert "Inf in Log (born there from finite inputs)" in message and "logs = x.log()" in message


def test_inf_in_backward_is_pinpointed_with_the_gradient_chain():
    x = genesis.tensor([0.0, 2.0], requires_grad=True)
    with detect_anomaly():
        line = this_line() + 1
        y = Reciprocal.apply(x)
        loss = (y * 3).sum()
        with pytest.raises(AnomalyError) as caught:
            loss.backward()
    message = str(caught.value)
    assert message.startswith("anomaly detected in backward: ReciprocalBackward returned Inf in its "
                              "gradient for input 0: 1 of 2 values")
    assert "the gradient it received was finite, so this backward produced it" in message
    assert f"{__file__}:{line} in test_inf_in_backward_is_pinpointed_with_the_gradient_chain" in message
    assert "y = Reciprocal.apply(x)" in message
    chain = message.split("The gradient flowed from the root through:")[1].splitlines()
    assert [step.split()[0] for step in chain[1:4]] == ["SumBackward", "MulBackward", "ReciprocalBackward"]
    assert f"{__file__}:{line + 1}: loss = (y * 3).sum()" in chain[1]


def test_inf_from_sqrt_backward_at_zero():
    x = genesis.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        line = this_line() + 1
        root = x.sqrt()
        with pytest.raises(AnomalyError, match="SqrtBackward returned Inf") as caught:
            root.sum().backward()
    assert f"{__file__}:{line}" in str(caught.value) and "root = x.sqrt()" in str(caught.value)


def test_nan_in_backward_from_a_zero_times_inf_gradient():
    x = genesis.tensor([0.0, 4.0], requires_grad=True)
    with detect_anomaly():
        line = this_line() + 1
        power = x ** 0.5
        with pytest.raises(AnomalyError, match="PowBackward returned NaN") as caught:
            power.backward(genesis.tensor([0.0, 1.0]))  # 0 * inf
    assert f"{__file__}:{line}" in str(caught.value) and "power = x ** 0.5" in str(caught.value)


def test_check_nan_false_lets_backward_through():
    x = genesis.tensor([0.0, 2.0], requires_grad=True)
    with detect_anomaly(check_nan=False):
        Reciprocal.apply(x).sum().backward()
    assert np.isinf(x.grad.numpy()[0])


@pytest.mark.parametrize("switch", [lambda: detect_anomaly(check_nan=False),
                                    lambda: set_detect_anomaly(True, check_nan=False)])
def test_check_nan_false_lets_a_nan_born_in_forward_through_and_keeps_the_forward_line(switch):
    """As in PyTorch: check_nan=False turns every NaN check off, forward ones too, while a
    failing backward still names the forward call that made its node."""
    x = genesis.tensor([-1.0], requires_grad=True)
    with switch(), np.errstate(invalid="ignore"):
        x.sqrt().sum().backward()  # a NaN born in forward, and its NaN gradient
        assert np.isnan(x.grad.numpy()[0])
        line = this_line() + 1
        y = Explodes.apply(x)
        with pytest.raises(ValueError, match="backward exploded") as caught:
            y.sum().backward()
    assert f"{__file__}:{line}" in "\n".join(caught.value.__notes__)


def test_error_inside_backward_names_the_forward_line():
    x = genesis.tensor([1.0], requires_grad=True)
    with detect_anomaly():
        line = this_line() + 1
        y = Explodes.apply(x)
        with pytest.raises(ValueError, match="backward exploded") as caught:
            y.sum().backward()
    notes = "\n".join(caught.value.__notes__)
    assert "raised by the backward of ExplodesBackward" in notes
    assert f"{__file__}:{line}" in notes


def test_decorator_nesting_and_restoring_after_errors():
    @detect_anomaly(check_forward=False)
    def inner():
        assert is_anomaly_enabled()
        zero = genesis.tensor([0.0])
        return zero / zero  # check_forward is off in here

    with detect_anomaly():
        assert np.isnan(inner().item())
        assert is_anomaly_enabled()
        with pytest.raises(AnomalyError):  # the outer mode (check_forward on) is back
            genesis.tensor([0.0]) / genesis.tensor([0.0])
    assert not is_anomaly_enabled()

    with pytest.raises(KeyError):
        with detect_anomaly():
            raise KeyError("boom")
    assert not is_anomaly_enabled()


def test_set_detect_anomaly_as_a_call_and_as_a_context():
    set_detect_anomaly(True)
    try:
        assert is_anomaly_enabled() and observers and node_checkers
        with set_detect_anomaly(False):
            assert not is_anomaly_enabled() and not observers
        assert is_anomaly_enabled()
        with set_detect_anomaly(True, check_nan=False):
            assert not genesis.autograd.is_anomaly_check_nan_enabled() and not node_checkers
    finally:
        set_detect_anomaly(False)


def test_the_check_nan_flag_reads_as_torchs_outside_anomaly_mode():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    for library in (torch, genesis):
        seen = [library.is_anomaly_check_nan_enabled()]
        with library.autograd.set_detect_anomaly(False, check_nan=False):
            seen.append(library.is_anomaly_check_nan_enabled())
        seen.append(library.is_anomaly_check_nan_enabled())
        assert seen == [True, False, True] and not library.is_anomaly_enabled()


def test_other_tools_hooks_are_left_alone():
    def other(*args):
        pass

    observers.append(other)
    try:
        with detect_anomaly():
            assert observers == [other] + [hook for hook in observers if hook is not other]
        assert observers == [other]
    finally:
        observers.remove(other)


def test_exported_from_genesis_autograd():
    assert genesis.autograd.detect_anomaly is detect_anomaly
    assert {"detect_anomaly", "set_detect_anomaly"} <= set(genesis.autograd.__all__)


def test_a_non_finite_gradient_passed_to_backward_raises_as_in_pytorch():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        y = x * 3
        with pytest.raises(AnomalyError, match="the gradient it received was already non-finite"):
            y.backward(genesis.tensor([float("nan"), 1.0]))
