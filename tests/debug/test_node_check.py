"""Per-node gradient checks (what `genesis trace --check-all` runs on each recorded call)."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis.autograd import function
from genesis.debug.node_check import InvocationLog, check_invocation
from tests.helpers import line_of


def _checks(run, include_builtin=False) -> dict:
    log = InvocationLog(include_builtin=include_builtin)
    function.observers.append(log)
    try:
        run()
    finally:
        function.observers.remove(log)
    return {invocation.function.__name__: check_invocation(invocation)
            for invocation in log.calls.values()}


def _scaled_with_its_mean(factor):
    class ScaledWithMean(genesis.autograd.Function):
        """x * 3 and, as a non-differentiable side output, x's mean (it depends on x)."""

        @staticmethod
        def forward(ctx, x):
            mean = x.mean()
            ctx.mark_non_differentiable(mean)
            return x * 3, mean

        @staticmethod
        def backward(ctx, grad, _mean_grad):
            return grad * factor
    return ScaledWithMean


@pytest.mark.parametrize("factor, status", [(3, "pass"), (2, "fail")])
def test_non_differentiable_outputs_are_left_out_of_the_check(factor, status):
    function_class = _scaled_with_its_mean(factor)
    x = genesis.randn(4, requires_grad=True)
    checks = _checks(lambda: function_class.apply(x)[0].sum())
    assert checks["ScaledWithMean"].status == status, checks["ScaledWithMean"].report()


def test_batch_norm_node_passes_with_its_statistics_as_side_outputs():
    x = genesis.randn(6, 3, 4, requires_grad=True)
    weight, bias = genesis.rand(3, requires_grad=True), genesis.randn(3, requires_grad=True)
    checks = _checks(lambda: F.batch_norm(x, genesis.zeros(3), genesis.ones(3), weight, bias,
                                          training=True), include_builtin=True)
    assert checks["BatchNorm"].status == "pass", checks["BatchNorm"].report()


# -- non-finite points: skipped and counted, never mismatches -----------------------------

NEG_INF = float("-inf")


def _masked_scores():
    """Causal attention scores: -inf above the diagonal, as masked_fill leaves them."""
    scores = genesis.randn(4, 4, requires_grad=True)
    return scores, genesis.ones(4, 4).tril() == 0


def test_masked_fill_with_minus_inf_passes_its_outputs_at_minus_inf_left_out():
    scores, mask = _masked_scores()
    check = _checks(lambda: scores.masked_fill(mask, NEG_INF), include_builtin=True)["MaskedFill"]
    assert check.status == "pass", check.report()
    assert check.reason == "6 of 16 output values are NaN/±inf here and were left out"


def test_inputs_at_minus_inf_are_skipped_and_counted():
    scores, mask = _masked_scores()
    bias = genesis.randn(4, 4, requires_grad=True)     # a learned bias added to masked scores

    def run():
        masked = scores.masked_fill(mask, NEG_INF)
        (masked + bias).softmax(dim=-1)
    checks = _checks(run, include_builtin=True)
    for name in ("Add", "Softmax"):
        assert checks[name].status == "pass", checks[name].report()
    assert checks["Add"].skipped_elements == 6 and checks["Add"].checked_elements == 26
    assert checks["Add"].reason.startswith("6 of 32 input elements skipped: finite differences "
                                           "undefined at ±inf")
    assert checks["Softmax"].reason == ("6 of 16 input elements skipped: finite differences "
                                        "undefined at ±inf")


def test_softmax_and_logsumexp_of_rows_with_all_but_one_minus_inf_pass():
    row = genesis.tensor([[0.5, NEG_INF, NEG_INF], [1.0, 2.0, NEG_INF]], dtype=genesis.float64,
                         requires_grad=True)
    checks = _checks(lambda: (row.softmax(dim=1), row.logsumexp(dim=1)), include_builtin=True)
    assert {name: check.status for name, check in checks.items()} == {"Softmax": "pass",
                                                                       "Logsumexp": "pass"}
    assert checks["Logsumexp"].skipped_elements == 3


class StaysInfinite(genesis.autograd.Function):
    """x + log(mask): -inf where the mask is 0, whatever x is; the gradient passes through."""

    @staticmethod
    def forward(ctx, x, mask):
        return x + mask.log()

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def test_an_output_that_stays_minus_inf_changed_by_zero():
    x = genesis.randn(6, requires_grad=True)
    mask = genesis.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    check = _checks(lambda: StaysInfinite.apply(x, mask))["StaysInfinite"]
    assert check.status == "pass", check.report()
    assert check.skipped_elements == 0 and "2 of 6 output values" in check.reason


class WrongWhereFinite(genesis.autograd.Function):
    """softmax whose backward is wrong (twice the true gradient): the skipped -inf elements
    must not hide that."""

    @staticmethod
    def forward(ctx, x):
        out = x.softmax(dim=-1)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return 2 * out * (grad - (grad * out).sum(dim=-1, keepdim=True))


def test_a_wrong_backward_still_fails_next_to_skipped_elements():
    scores, mask = _masked_scores()
    check = _checks(lambda: WrongWhereFinite.apply(scores.masked_fill(mask, NEG_INF)))[
        "WrongWhereFinite"]
    assert check.status == "fail", check.report()
    assert all(np.isfinite(entry["numerical"]) for entry in check.worst)
    assert "6 of 16 input elements skipped" in check.reason


class Root(genesis.autograd.Function):
    """sqrt with its correct backward: at x = 0 the output turns NaN when x moves down."""

    @staticmethod
    def forward(ctx, x):
        out = x.sqrt()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (2 * out)


def test_elements_whose_perturbation_makes_nan_are_skipped_and_counted():
    x = genesis.tensor([0.0, 1.0, 4.0, 0.0, 9.0], requires_grad=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        check = _checks(lambda: Root.apply(x))["Root"]
    assert check.status == "pass", check.report()
    assert check.skipped_elements == 2 and check.checked_elements == 3
    assert check.reason.startswith("2 of 5 input elements skipped: finite differences undefined: "
                                   "an output is or turns NaN/±inf as they move")


def test_nan_inputs_are_skipped_and_named():
    x = genesis.tensor([1.0, float("nan"), 2.0], requires_grad=True)
    check = _checks(lambda: genesis.maximum(x, genesis.zeros(3)) * 2, include_builtin=True)["Mul"]
    assert check.status == "pass", check.report()
    assert check.reason.startswith("1 of 3 input elements skipped: finite differences undefined "
                                   "at NaN")


def test_log_at_zero_is_skipped_where_it_is_not_finite_not_failed():
    x = genesis.tensor([0.0, 0.5, 2.0, 0.0], requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        check = _checks(lambda: x.log(), include_builtin=True)["Log"]
    assert check.status == "pass", check.report()
    assert check.skipped_elements == 2 and check.checked_elements == 2
    assert check.reason == ("2 of 4 input elements skipped: finite differences undefined: an "
                            "output is or turns NaN/±inf as they move; 2 of 4 output values are "
                            "NaN/±inf here and were left out")


# -- surrogate gradients: declared, or evident from a flat forward --------------------------

class RoundSTE(genesis.autograd.Function):
    """Round in forward, identity in backward: a straight-through estimator."""

    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, grad):
        return grad


class ScaledRound(genesis.autograd.Function):
    """round(x) + 2 y, whose backward passes straight through for x and is wrong for y."""

    @staticmethod
    def forward(ctx, x, y):
        return x.round() + 2 * y

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * 3


def _reversal(declared: bool, scale: float = 1.0):
    class GradReverse(genesis.autograd.Function):
        """`scale` times its input in forward, minus the gradient in backward (domain
        adaptation's reversal layer when `scale` is 1)."""

        surrogate_gradient = declared

        @staticmethod
        def forward(ctx, x):
            return x.clone() if scale == 1.0 else x * scale

        @staticmethod
        def backward(ctx, grad):
            return -grad
    return GradReverse


class ReversalWithStrength(genesis.autograd.Function):
    """DANN's layer as PyTorch users write it: view_as in forward, -lambda * grad in backward."""

    @staticmethod
    def forward(ctx, x, strength):
        ctx.strength = strength
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.neg() * ctx.strength, None


class HalfSquare(genesis.autograd.Function):
    """x ** 2 with its backward off by a factor of two: a constant factor is a bug here."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x


def test_a_straight_through_estimator_of_a_flat_forward_is_skipped_not_failed():
    x = genesis.randn(6, 3, requires_grad=True) * 3
    check = _checks(lambda: RoundSTE.apply(x))["RoundSTE"]
    assert check.status == "skipped"
    assert check.reason.startswith("its forward is flat in input 0 (no checked element moved an "
                                   "output: a piecewise-constant function such as round or sign)")


def test_a_flat_input_does_not_excuse_a_wrong_gradient_of_another_input():
    x, y = genesis.randn(5, requires_grad=True) * 3, genesis.randn(5, requires_grad=True)
    check = _checks(lambda: ScaledRound.apply(x, y))["ScaledRound"]
    assert check.status == "fail"
    assert {entry["input"] for entry in check.worst} == {1}


def test_a_declared_surrogate_gradient_is_skipped_and_an_undeclared_one_fails():
    x = genesis.randn(4, requires_grad=True)
    declared = _checks(lambda: _reversal(True, scale=2.0).apply(x))["GradReverse"]
    assert declared.status == "skipped" and "declares a surrogate gradient" in declared.reason
    assert _checks(lambda: _reversal(False, scale=2.0).apply(x))["GradReverse"].status == "fail"


def test_a_gradient_reversal_layer_is_skipped_as_one_without_being_declared():
    # its forward returns the input unchanged: a backward scaling the gradient can only be
    # meant (PyTorch programs written for torch cannot declare it)
    x = genesis.randn(3, 4, requires_grad=True)
    check = _checks(lambda: ReversalWithStrength.apply(x * 2, 0.3))["ReversalWithStrength"]
    assert check.status == "skipped"
    assert check.reason.startswith("its forward returns input 0 unchanged and its backward "
                                   "multiplies the gradient by -0.3 there: a gradient reversal")
    assert _checks(lambda: _reversal(False).apply(x))["GradReverse"].status == "skipped"


class ClipGradient(genesis.autograd.Function):
    """The identity in forward, the gradient clamped to [-bound, bound] in backward (as RL
    code clips a gradient at one point of a graph); `keep_positive` instead zeroes the
    negative gradients, which no clip does."""

    @staticmethod
    def forward(ctx, x, bound, keep_positive=False):
        ctx.bound, ctx.keep_positive = bound, keep_positive
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        if ctx.keep_positive:
            return grad.clamp(min=0), None, None
        return grad.clamp(-ctx.bound, ctx.bound), None, None


def test_a_gradient_clipping_identity_is_skipped_as_one_without_being_declared():
    x = genesis.randn(8, 6, requires_grad=True)
    check = _checks(lambda: ClipGradient.apply(x * 2, 0.5))["ClipGradient"]
    assert check.status == "skipped", check.reason
    assert check.reason.startswith("its forward returns input 0 unchanged and its backward "
                                   "clamps the gradient to ±0.5 there")
    # a bound above every gradient leaves it unchanged: a pass
    assert _checks(lambda: ClipGradient.apply(x * 2, 100.0))["ClipGradient"].status == "pass"
    assert _checks(lambda: ClipGradient.apply(x * 2, 0.5, True))["ClipGradient"].status == "fail"


def test_a_gradient_off_by_a_constant_factor_still_fails():
    x = genesis.randn(5, requires_grad=True)
    check = _checks(lambda: HalfSquare.apply(x))["HalfSquare"]
    assert check.status == "fail" and "reversal" not in check.reason


def test_a_failing_custom_function_is_told_how_to_declare_a_deliberate_surrogate():
    from genesis.debug.session import TraceSession
    x = genesis.randn(4, requires_grad=True)
    with TraceSession() as session:
        _reversal(False, scale=2.0).apply(x).sum().backward()
    finding, = session.result(script="inline").findings
    assert finding.kind == "gradient_mismatch"
    assert finding.message.endswith("set surrogate_gradient = True on GradReverse: the checks "
                                    "then skip it.")


def test_ctc_loss_with_pytorchs_gradient_is_skipped_not_failed():
    """PyTorch's ctc_loss gradient assumes normalised log_probs: exact under a log_softmax,
    not along log_probs alone, so a re-check of the node would be a false alarm."""
    logits = genesis.randn(6, 2, 5, requires_grad=True)

    def loss():
        return F.ctc_loss(F.log_softmax(logits, -1), genesis.tensor([[1, 2, 2], [3, 4, 0]]),
                          genesis.tensor([6, 5]), genesis.tensor([3, 2]))

    checks = _checks(loss, include_builtin=True)
    ctc = checks["CTCLossFunction"]
    assert ctc.status == "skipped" and "surrogate" in ctc.reason
    assert {check.status for name, check in checks.items() if name != "CTCLossFunction"} == {"pass"}
    assert genesis.autograd.gradcheck(lambda x: F.ctc_loss(
        F.log_softmax(x, -1), genesis.tensor([[1, 2, 2], [3, 4, 0]]), genesis.tensor([6, 5]),
        genesis.tensor([3, 2])), (logits.detach().double().requires_grad_(),))


# float32, closed over: the float64 re-run cannot use them. Drawn from a seeded generator and
# scaled so that x @ WEIGHTS keeps tanh curved (drawn from the global generator at import, the
# test's order decided them, and a draw saturating tanh hid the wrong backward's 5%)
WEIGHTS = genesis.tensor(np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32) * 0.25)


def _projected_tanh(factor):
    class ProjectedTanh(genesis.autograd.Function):
        """tanh(x @ WEIGHTS), its weights float32 whatever x is."""

        @staticmethod
        def forward(ctx, x):
            out = (x @ WEIGHTS).tanh()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            out, = ctx.saved_tensors
            return ((grad * (1 - out * out)) @ WEIGHTS.T) * factor
    return ProjectedTanh


@pytest.mark.parametrize("seed", range(5))
def test_a_call_that_cannot_rerun_in_float64_is_checked_in_float32_without_false_alarms(seed):
    """Its float64 re-run raises (float32 weights): it is checked in its own float32, with
    float32's step and tolerances: a right backward passes on curved outputs, a wrong one
    fails, and the verdict says in which precision."""
    genesis.manual_seed(seed)
    x = genesis.randn(32, 16, requires_grad=True)
    right = _checks(lambda: _projected_tanh(1).apply(x))["ProjectedTanh"]
    assert right.status == "pass", right.reason
    assert "checked in float32: its float64 re-run failed" in right.reason
    assert "expected both operands to have the same dtype" in right.reason
    wrong = _checks(lambda: _projected_tanh(1.05).apply(x))["ProjectedTanh"]
    assert wrong.status == "fail" and "checked in float32" in wrong.reason


def _float32_gelu(factor):
    class Float32Gelu(genesis.autograd.Function):
        """GELU computed in float32 whatever the input's dtype, cast back (a common way to
        keep a bfloat16 model's activation accurate)."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return F.gelu(x.float()).to(x.dtype)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            xf = x.float()
            derivative = 0.5 * (1 + (xf / 2 ** 0.5).erf()) + xf * (-0.5 * xf * xf).exp() / (2 * np.pi) ** 0.5
            return (grad.float() * derivative * factor).to(grad.dtype)
    return Float32Gelu


@pytest.mark.parametrize("seed", range(5))
def test_a_forward_that_rounds_to_float32_inside_is_checked_with_float32s_step(seed):
    """Re-run in float64, its outputs are float64 but hold float32 values: finite
    differences with float64's step (1e-6) measure its rounding (errors of 0.03 were
    reported as a wrong gradient). Checked with float32's step: a right backward passes, a
    wrong one still fails, and the verdict says why the step is float32's."""
    genesis.manual_seed(seed)
    x = genesis.randn(32, 16, requires_grad=True)
    right = _checks(lambda: _float32_gelu(1).apply(x * 2))["Float32Gelu"]
    assert right.status == "pass", right.reason
    assert "its forward computes in float32" in right.reason
    wrong = _checks(lambda: _float32_gelu(1.05).apply(x * 2))["Float32Gelu"]
    assert wrong.status == "fail"


class OnceDifferentiableHalfSquare(genesis.autograd.Function):
    """x ** 2 with a backward off by two, under @once_differentiable (as Functions with a
    NumPy backward are written)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @genesis.autograd.once_differentiable
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        wrong = grad * x
        return wrong


def test_a_wrong_backward_under_once_differentiable_is_blamed_in_the_users_code():
    """The blame names the author's backward and its line, not the decorator's wrapper in
    genesis/autograd/custom_function.py."""
    x = genesis.randn(6, requires_grad=True)
    check = _checks(lambda: OnceDifferentiableHalfSquare.apply(x))["OnceDifferentiableHalfSquare"]
    assert check.status == "fail"
    assert check.backward_site.startswith(f"{__file__}:")
    (row,) = check.blame
    assert row["line"] == f"{__file__}:{line_of(__file__, 'wrong = grad * x')}"


def _tripled_in_place(factor):
    class TripleInPlace(genesis.autograd.Function):
        """x *= 3 in place (ctx.mark_dirty), as memory-saving Functions are written."""

        @staticmethod
        def forward(ctx, x):
            x.mul_(3)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * factor
    return TripleInPlace


def test_a_function_that_changes_its_input_in_place_is_checked():
    """Its re-run gets copies of the leaves: changing a leaf in place is refused (and would
    move the points the check perturbs), so it used to be skipped with 'pass a clone of it
    instead', which the script did."""
    x = genesis.randn(4, 3, requires_grad=True)
    right = _checks(lambda: _tripled_in_place(3).apply(x * 1.0))["TripleInPlace"]
    assert right.status == "pass", right.reason
    assert _checks(lambda: _tripled_in_place(2).apply(x * 1.0))["TripleInPlace"].status == "fail"
