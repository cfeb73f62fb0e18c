"""Per-node gradient checks (what `genesis trace --check-all` runs on each recorded call)."""
import pytest

import genesis
import genesis.nn.functional as F
from genesis.autograd import function
from genesis.debug.node_check import InvocationLog, check_invocation


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
