"""gradcheck: passes correct gradients, and names the check that fails with a readable report."""
import warnings

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis.autograd import GradcheckError, GradcheckWarning, check_gradients, format_report, gradcheck
from tests.helpers import Float32Sin, Float32WrongSign, Sigmoid, sigmoid_array


def double(values, requires_grad=True):
    return genesis.tensor(np.asarray(values, dtype=np.float64), dtype=genesis.float64,
                          requires_grad=requires_grad)


@pytest.fixture
def x():
    return double(np.random.default_rng(0).uniform(-2, 2, (3, 4)))


class WrongSigmoid(Sigmoid):
    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 + s)


class NoisyBackward(Sigmoid):
    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        noise = genesis.tensor(np.random.default_rng().normal(0, 1e-3, s.shape), dtype=s.dtype)
        return grad * s * (1 - s) + noise * grad


class WrongShape(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        return x._data * 2

    @staticmethod
    def backward(ctx, grad):
        return (grad * 2).sum(0)  # drops a dimension that the input has


class IgnoresZeroGrad(genesis.Function):
    """Backward adds a constant: wrong whenever the incoming gradient is zero."""

    @staticmethod
    def forward(ctx, x):
        return x._data * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2 + 1e-12 * 0 + (grad * 0 + 1) * 1e-3


class TwoOutputs(genesis.Function):
    """(x * 2, x * 3); with materialize_grads off, backward sees None for an unused output."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x._data * 2, x._data * 3

    @staticmethod
    def backward(ctx, grad_a, grad_b):
        return grad_a * 2 + grad_b * 3  # fails when either is None


class SquaresGrad(genesis.Function):
    """Backward is not linear in its incoming gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x._data * x._data

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * grad * 2 * x


def test_correct_custom_function_passes(x):
    assert gradcheck(Sigmoid.apply, x) is True


def test_wrong_backward_fails_with_worst_entries_table(x):
    with pytest.raises(GradcheckError) as caught:
        gradcheck(WrongSigmoid.apply, x)
    message = str(caught.value)
    assert message.startswith("gradcheck failed: analytical and numerical gradients differ")
    assert ("Jacobian mismatch for output 0 with respect to input 0 "
            "(output: shape (3, 4), float64; input: shape (3, 4), float64)") in message
    assert "atol=1e-05, rtol=0.001" in message
    assert "input index" in message and "output index" in message and "analytical" in message
    result = caught.value.result
    assert result.failed_check == "values"
    assert result.failing_entries == 12 and result.total_entries == 144
    assert len(result.worst) == 10
    worst = result.worst[0]
    assert worst.input_position == worst.output_position  # the Jacobian is diagonal
    s = sigmoid_array(x)[worst.input_position]
    assert worst.analytical == pytest.approx(s * (1 + s))
    assert worst.numerical == pytest.approx(s * (1 - s), rel=1e-6)
    assert worst.abs_error == pytest.approx(result.max_abs_error)
    assert f"{worst.analytical:.6g}" in message


def test_max_report_limits_the_table(x):
    result = check_gradients(WrongSigmoid.apply, x, max_report=3)
    assert len(result.worst) == 3
    assert "worst 3 entries" in format_report(result)


def test_raise_exception_false_returns_false(x):
    assert gradcheck(WrongSigmoid.apply, x, raise_exception=False) is False


def test_non_reentrant_backward_is_named(x):
    with pytest.raises(GradcheckError, match="Backward is not reentrant") as caught:
        gradcheck(NoisyBackward.apply, x)
    assert caught.value.result.failed_check == "reentrant"
    assert "first run" in str(caught.value) and "second run" in str(caught.value)
    assert "nondet_tol" in str(caught.value)


def test_nondet_tol_accepts_small_run_to_run_differences(x):
    assert gradcheck(NoisyBackward.apply, x, nondet_tol=1.0, atol=0.1, check_undefined_grad=False)


def test_wrong_shape_gradient_is_named(x):
    with pytest.raises(GradcheckError) as caught:
        gradcheck(WrongShape.apply, x)
    message = str(caught.value)
    assert "gradient of wrong shape or dtype" in message
    assert "WrongShapeBackward returned a gradient of shape (4,) for its input 0, which has shape (3, 4)" \
        in message
    assert caught.value.result.failed_check == "grad_shape"


def test_a_gradient_for_an_argument_that_is_not_a_tensor_is_named(x):
    class Scale(genesis.autograd.Function):
        @staticmethod
        def forward(ctx, t, factor):
            return t * factor

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, grad  # the second should be None: factor is a number

    with pytest.raises(GradcheckError) as caught:
        gradcheck(lambda t: Scale.apply(t, 2.0), x)
    assert "ScaleBackward returned a gradient for its input 1, which is not a tensor" \
        in str(caught.value)
    assert caught.value.result.failed_check == "grad_shape"


def test_wrong_shape_gradient_deep_inside_the_function_is_named(x):
    with pytest.raises(GradcheckError, match="WrongShapeBackward returned a gradient of shape"):
        gradcheck(lambda t: WrongShape.apply(t * 3).tanh(), x)


def test_backward_ignoring_a_zero_gradient_fails_the_undefined_grad_check(x):
    with pytest.raises(GradcheckError, match="undefined output gradient not treated as zero") as caught:
        gradcheck(IgnoresZeroGrad.apply, x, atol=1e-2)
    assert "non-zero entries" in str(caught.value)
    assert gradcheck(IgnoresZeroGrad.apply, x, atol=1e-2, check_undefined_grad=False)


def test_backward_that_cannot_take_none_fails_the_undefined_grad_check(x):
    # a TypeError in the backward is raised as it is (as PyTorch does), with a note
    with pytest.raises(TypeError) as caught:
        gradcheck(TwoOutputs.apply, x)
    notes = "\n".join(caught.value.__notes__)
    assert "TwoOutputsBackward" in notes and "undefined-gradient check" in notes
    assert gradcheck(TwoOutputs.apply, x, check_undefined_grad=False)


def test_batched_grad_checks_linearity_in_grad_outputs(x):
    assert gradcheck(Sigmoid.apply, x, check_batched_grad=True)
    # One-hot rows hide the bug (1 * 1 == 1, 0 * 0 == 0): only the linearity check sees it.
    assert gradcheck(SquaresGrad.apply, x)
    with pytest.raises(GradcheckError, match="not linear in its grad_outputs") as caught:
        gradcheck(SquaresGrad.apply, x, check_batched_grad=True)
    assert caught.value.result.failed_check == "batched_grad"
    assert "vjp(a*v1+b*v2)" in str(caught.value)


def test_gradient_expected_to_be_zero(x):
    class LeaksIntoUnused(genesis.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a._data * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, grad * 5  # b is not used, yet gets a gradient

    result = check_gradients(LeaksIntoUnused.apply, (x, double([1.0, 2.0, 3.0, 4.0])))
    assert result.failed_check == "expected_zero"
    assert result.input_index == 1
    assert "gradient expected to be zero" in format_report(result)


def test_missing_gradient_when_the_graph_is_cut(x):
    result = check_gradients(lambda t: t * genesis.tensor(t.detach().numpy() * 1.0, dtype=t.dtype), x)
    assert result.ok is False
    assert result.failed_check == "values"  # the graph still reaches x through one factor
    result = check_gradients(lambda a, b: a * 2 + b.detach(), (x, double(np.ones((3, 4)))))
    assert result.failed_check == "missing_gradient"
    assert result.input_index == 1
    assert "no path" in format_report(result)


def test_inputs_not_requiring_grad_are_skipped_and_non_tensors_pass_through(x):
    seen = []

    def func(a, scale, b, label):
        seen.append((scale, label))
        return (a * scale + b).tanh()

    b = double(np.ones((3, 4)), requires_grad=False)
    result = check_gradients(func, (x, 2.5, b, "tag"))
    assert result.ok
    assert set(seen) == {(2.5, "tag")}


def test_multiple_inputs_and_outputs_report_the_failing_pair():
    a, b = double([0.5, -1.0, 2.0]), double([1.5, 0.25, -0.5])

    def func(a, b):
        return a * b, WrongSigmoid.apply(b) + a

    result = check_gradients(func, (a, b))
    assert result.failed_check == "values"
    assert (result.output_index, result.input_index) == (1, 1)
    assert result.also_failing == []
    assert gradcheck(lambda a, b: (a * b, (b * 2 + a).tanh(), a.sum()), (a, b))


def test_integer_outputs_are_ignored(x):
    assert gradcheck(lambda t: (t * 2, genesis.tensor([1, 2])), x)


def test_non_contiguous_inputs_are_perturbed_in_place():
    base = np.random.default_rng(1).uniform(-1, 1, (4, 6))
    strided = genesis.from_numpy(base[:, ::2]).requires_grad_()
    transposed = genesis.from_numpy(np.ascontiguousarray(base.T).T).requires_grad_()
    assert not strided.is_contiguous() and not transposed.is_contiguous()
    assert gradcheck(lambda a, b: (a * b[:, :3]).tanh(), (strided, transposed))
    assert np.array_equal(strided.detach().numpy(), base[:, ::2])  # restored exactly


def test_fast_mode_agrees_with_slow_mode(x):
    cases = [Sigmoid.apply, WrongSigmoid.apply, lambda t: (t * 2 + 1).tanh().sum(),
             lambda t: (t @ t.T).tanh(), lambda t: WrongSigmoid.apply(t).sum()]
    for func in cases:
        slow = check_gradients(func, x)
        fast = check_gradients(func, x, fast_mode=True)
        assert slow.ok == fast.ok
        if not fast.ok:
            assert fast.failed_check == slow.failed_check
            assert fast.worst == slow.worst
            assert "fast mode found it" in fast.detail


def test_fast_mode_passing_result_says_so(x):
    result = check_gradients(Sigmoid.apply, x, fast_mode=True)
    assert result.ok and result.fast_mode
    assert "passed (fast mode" in format_report(result)


def test_spec_example_with_float32_input_warns_once_and_passes():
    x = genesis.tensor([1., 2., 3.], requires_grad=True)
    with pytest.warns(GradcheckWarning) as record:
        assert gradcheck(lambda x: (x ** 2).sum(), x, eps=1e-6)
    assert len(record) == 1
    assert "float32" in str(record[0].message) and "float64 copies" in str(record[0].message)
    assert record[0].filename == __file__


def test_one_warning_for_several_float32_inputs():
    a = genesis.tensor([1., 2.], requires_grad=True)
    b = genesis.tensor([3., 4.], requires_grad=True)
    with pytest.warns(GradcheckWarning) as record:
        assert gradcheck(lambda a, b: a * b, (a, b))
    assert len(record) == 1
    assert "input 0 (float32), input 1 (float32)" in str(record[0].message)


def test_float32_check_still_catches_a_wrong_gradient():
    x = genesis.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcheckWarning)
        result = check_gradients(WrongSigmoid.apply, x)
    assert result.failed_check == "values"
    assert result.input.dtype == "float32"


def test_bfloat16_inputs_are_checked_on_float64_copies():
    # NumPy gives bfloat16 the kind "V": its inputs got no float64 copies and its outputs were
    # left out of the check, so every backward passed with error 0.
    x = genesis.tensor(np.random.default_rng(0).uniform(0.5, 2, (3, 4)), dtype=genesis.bfloat16,
                       requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcheckWarning)
        wrong = check_gradients(WrongSigmoid.apply, x)
        right = check_gradients(lambda x: x.sin(), x, rtol=1.6e-2)
        product = check_gradients(lambda a, b: a * b, (x, x.detach().neg().requires_grad_()),
                                  rtol=1.6e-2)
    assert wrong.failed_check == "values" and wrong.input.dtype == "bfloat16"
    assert wrong.max_abs_error > 0.1
    assert right.ok and 0 < right.max_abs_error < 1e-2
    assert product.ok and product.max_abs_error > 0


class Relu(genesis.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > 0)


class DoubledRelu(Relu):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > 0) * 2   # wrong away from the kink too


def test_a_right_backward_at_a_kink_is_not_differentiable_there_not_wrong():
    # central differences give 0.5 at relu(0); the backward's 0 is a valid sub-gradient
    at_kink = double([-1.0, 0.0, 2.0, 0.0])
    result = check_gradients(Relu.apply, at_kink)
    assert result.failed_check == "kink" and result.failing_entries == 2
    assert format_report(result).startswith("gradcheck can't check the gradient: not differentiable here")
    wrong = check_gradients(DoubledRelu.apply, at_kink)
    assert wrong.failed_check == "values" and wrong.failing_entries == 1
    assert "2 more entries out of tolerance sit on a kink" in format_report(wrong)
    one = check_gradients(DoubledRelu.apply, double([-1.0, 0.0, 2.0]))
    assert "(1 more entry out of tolerance sits on a kink" in format_report(one)
    beyond = check_gradients(lambda x: Relu.apply(x) * 3, at_kink)
    assert beyond.failed_check == "kink"
    assert check_gradients(lambda x: x.clamp(min=0) + Relu.apply(x) * 0, double([-1.0, 2.0])).ok


def test_float64_inputs_do_not_warn(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradcheck(Sigmoid.apply, x)


def test_no_input_requiring_grad_is_an_error():
    with pytest.raises(ValueError, match="no input requires grad"):
        gradcheck(lambda t: t * 2, double([1.0], requires_grad=False))


def test_function_returning_a_non_tensor_is_an_error(x):
    with pytest.raises(TypeError, match="output 1 is a float"):
        gradcheck(lambda t: (t * 2, 3.0), x)


def test_zero_size_and_zero_dim_inputs():
    assert gradcheck(lambda t: t * 2, double(np.zeros((0, 3))))
    assert gradcheck(lambda t: (t * t).tanh(), double(0.7))


def test_passing_result_reports_the_largest_errors(x):
    result = check_gradients(Sigmoid.apply, x)
    assert result.ok and result.failed_check is None
    assert 0 < result.max_abs_error < 1e-8
    assert result.tolerances.atol == 1e-5 and result.tolerances.eps == 1e-6
    assert format_report(result).startswith("gradcheck passed")


# -- inputs holding NaN/Inf; a nondeterministic forward ----------------------------------

def test_inputs_holding_nan_or_inf_are_named_not_the_backward():
    x = double([1.0, float("nan"), 3.0])
    with pytest.raises(GradcheckError) as caught:
        gradcheck(Sigmoid.apply, x)
    message = str(caught.value)
    assert message.startswith("gradcheck failed: an input holds NaN or Inf\n"
                              "  input 0 (shape (3,)) holds 1 NaN at (1,): gradcheck needs finite inputs")
    assert "reentrant" not in message and "analytical" not in message
    assert caught.value.result.failed_check == "non_finite_input"
    assert gradcheck(Sigmoid.apply, x, raise_exception=False) is False


@pytest.mark.parametrize("fast_mode", [False, True])
def test_every_input_holding_non_finite_values_is_named(fast_mode):
    x = double([1.0, 2.0])
    y = double([[1.0, float("inf")], [float("-inf"), float("nan")]])
    result = check_gradients(lambda a, b: a.sum() * b, (x, y), fast_mode=fast_mode)
    assert result.failed_check == "non_finite_input"
    assert result.detail.splitlines()[0] == ("input 1 (shape (2, 2)) holds 1 NaN and 2 Inf at "
                                             "(0, 1), (1, 0), (1, 1): gradcheck needs finite inputs")


def test_a_function_that_handles_non_finite_inputs_passes_as_in_pytorch():
    with_nan = double([[0.5, float("nan")], [1.0, -2.0]])
    other = double([[1.0, 0.0], [float("nan"), 3.0]])
    masked = double([[0.3, float("-inf"), 1.0], [float("-inf"), float("-inf"), 2.0]])
    assert gradcheck(genesis.fmax, (with_nan, other))          # fmax ignores a NaN
    assert gradcheck(lambda t: t.softmax(dim=1), masked)       # softmax consumes -inf
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    assert torch.autograd.gradcheck(torch.fmax, (_torch(torch, with_nan), _torch(torch, other)))
    assert torch.autograd.gradcheck(lambda t: t.softmax(dim=1), _torch(torch, masked))


def test_the_same_nan_in_both_backward_runs_is_not_called_non_reentrant(x):
    result = check_gradients(lambda t: t * genesis.tensor(float("nan"), dtype=genesis.float64), x)
    assert result.failed_check != "reentrant"


def test_a_nondeterministic_forward_is_named_not_a_wrong_gradient(x):
    for fast_mode in (False, True):
        with pytest.raises(GradcheckError) as caught:
            gradcheck(lambda t: F.dropout(t, 0.5), x, fast_mode=fast_mode)
        message = str(caught.value)
        assert message.startswith("gradcheck failed: the function is nondeterministic")
        assert "differ between two runs on the same inputs" in message
        assert "analytical" not in message and "reentrant" not in message


def test_non_finite_and_nondeterministic_failures_raise_what_pytorch_raises(x):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    with_nan = double([1.0, float("nan"), 3.0])
    cases = [(lambda t: t * 2, with_nan, lambda t: t * 2),
             (lambda t: t * genesis.rand(*t.shape, dtype=genesis.float64), x,
              lambda t: t * torch.rand(t.shape, dtype=torch.float64))]
    for ours, value, theirs in cases:
        with pytest.raises(GradcheckError) as caught:
            gradcheck(ours, value)
        with pytest.raises(RuntimeError) as reference:
            torch.autograd.gradcheck(theirs, _torch(torch, value))
        assert type(reference.value).__name__ == type(caught.value).__name__ == "GradcheckError"
        assert isinstance(caught.value, RuntimeError)
        assert gradcheck(ours, value, raise_exception=False) is False
        assert torch.autograd.gradcheck(theirs, _torch(torch, value), raise_exception=False) is False


def _torch(torch, tensor):
    return torch.tensor(tensor.detach().numpy(), requires_grad=True)


def test_a_forward_rounding_to_float32_is_not_blamed_on_the_backward():
    x = double([[0.3, -1.2, 0.7], [2.0, 0.05, -0.4]])
    result = check_gradients(Float32Sin.apply, x)
    assert result.failed_check == "low_precision_forward"
    report = format_report(result)
    assert "lower precision than its inputs' dtype" in report and "float32" in report
    assert "The backward formula" not in report
    wrong = check_gradients(Float32WrongSign.apply, x)  # errors far above the rounding
    assert wrong.failed_check == "values" and "The backward formula" in format_report(wrong)

