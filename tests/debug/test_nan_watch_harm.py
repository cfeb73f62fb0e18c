"""When a NaN/Inf does harm, and what an optimizer step writes: a NaN that `where` discards
is no finding, one that reaches a gradient or the loss is; an optimizer step that leaves
NaN/Inf in a parameter is found at the step's line, naming the parameter, unless a defect
already told made that parameter's gradient non-finite (then it is listed inside that one);
a parameter that held NaN before the run is found where it came in, once."""
import numpy as np
import pytest

import genesis
import genesis.nn as nn
from genesis.debug.session import TraceSession
from tests.helpers import line_of

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def here(marker: str) -> str:
    return f"{__file__}:{line_of(__file__, marker)}"


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)


def trained(step_loss, steps: int = 3, lr: float = 0.1, model=None):
    """Findings of a TraceSession over `steps` SGD steps of `step_loss(model, batch)`."""
    genesis.manual_seed(0)
    model = model if model is not None else Regressor()
    optimizer = genesis.optim.SGD(model.parameters(), lr=lr)
    with TraceSession(steps=2) as session:
        for _ in range(steps):
            batch = genesis.randn(8, 3)
            optimizer.zero_grad()
            loss = step_loss(model, batch)
            loss.backward()
            optimizer.step()  # STEP
    return session.result(script="train.py").findings


def test_a_nan_that_where_discards_is_no_finding():
    def loss(model, batch):
        y = model(batch)
        # log of a negative value is NaN, never picked; its gradient there is 0 / y, finite
        safe = genesis.where(y > 0, y.log(), y - 1)
        return safe.pow(2).mean()
    assert trained(loss) == []


def test_a_nan_in_the_branch_where_does_not_pick_still_poisons_its_gradient():
    """The known trap: where's gradient for the branch it did not pick is 0, and sqrt's
    backward multiplies it by 0.5 / sqrt(y), NaN there; 0 * NaN is NaN (as in PyTorch)."""
    def loss(model, batch):
        y = model(batch).squeeze(-1)
        scores = y.sqrt()                                # BRANCH: NaN where y < 0
        return genesis.where(y > 0, scores, genesis.zeros_like(scores)).sum()
    finding, = trained(loss)
    assert finding.kind == "nan_backward" and finding.op == "SqrtBackward"
    assert finding.source == here("# BRANCH")
    assert "Its forward saw non-finite values:" in finding.message
    assert "NaN in Sqrt (born there from finite inputs)" in finding.message


def test_a_discarded_log_of_zero_whose_backward_makes_nan_is_found_at_that_op():
    x = genesis.tensor([0.0, 1.0, 2.0], requires_grad=True)
    with TraceSession() as session:
        safe = genesis.where(x > 0, x.log(), x)          # LOG OF ZERO
        safe.sum().backward()
    finding, = session.result(script="inline").findings
    assert finding.kind == "nan_backward" and finding.op == "LogBackward"
    assert finding.title == "NaN produced by its backward: LogBackward"
    assert finding.source == here("# LOG OF ZERO")


def test_a_step_that_overflows_a_parameter_is_found_at_the_step_naming_it():
    def loss(model, batch):
        return model(batch).pow(2).mean()
    finding, = trained(loss, lr=1e39)                    # lr * gradient overflows float32
    assert finding.kind == "nan_step" and finding.op is None
    assert finding.source == here("# STEP") and finding.details["first_step"] == 0
    assert finding.title == "Inf written into fc.weight and 1 more by SGD.step"
    assert finding.message.startswith(
        "SGD.step wrote Inf into fc.weight (3 of 3 values) and fc.bias (1 of 1 value).")
    assert "The gradients of fc.weight and fc.bias were finite: the update itself" in finding.message
    # what the next step's forward and backward made of it is listed inside, not found again
    assert any(line.startswith("Linear made NaN and Inf from it") for line in finding.details["knock_on"])


def test_a_step_writing_a_nan_gradient_is_part_of_the_finding_that_made_it():
    def loss(model, batch):
        y = model(batch)
        zero = y * 0                                     # a finite zero in forward
        return y.pow(2).mean() + zero.sqrt().sum()       # SQRT: its gradient at 0 is Inf
    findings = trained(loss)
    finding, = findings
    assert finding.kind == "nan_backward" and finding.op == "SqrtBackward"
    assert finding.source == here("# SQRT")
    knock_on = finding.details["knock_on"]
    assert any(line.startswith(f"SGD.step at {here('# STEP')} wrote") and "fc.weight" in line
               for line in knock_on)
    assert finding.details["count"] == 1  # later steps' NaN came from this one: not new births


def test_a_parameter_holding_nan_before_the_run_is_found_where_it_came_in_once():
    genesis.manual_seed(0)
    model = Regressor()
    model.fc.weight.data[0, 1] = float("nan")           # a corrupt checkpoint, say

    def loss(model, batch):
        return model(batch).pow(2).mean()                # FORWARD
    finding, = trained(loss, model=model)
    assert finding.kind == "nan_forward"
    assert finding.title == "NaN reaches the loss: it came into Linear through parameter fc.weight"
    assert "whose values no watched op or optimizer step made" in finding.message
    assert finding.source == here("return self.fc(x)")


def test_gradient_accumulation_over_several_backward_calls_per_step_is_clean():
    def accumulate(model, batch):
        for part in batch.chunk(3):
            model(part).pow(2).mean().backward()
        return model(batch).pow(2).mean()
    assert trained(accumulate) == []


def test_the_step_check_leaves_parameters_and_their_gradients_as_they_were():
    model = Regressor()
    before = model.fc.weight.detach().numpy().copy()
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.0)
    with TraceSession():
        model(genesis.randn(4, 3)).sum().backward()
        gradient = model.fc.weight.grad.numpy().copy()
        optimizer.step()
    np.testing.assert_array_equal(model.fc.weight.detach().numpy(), before)
    np.testing.assert_array_equal(model.fc.weight.grad.numpy(), gradient)


def test_nan_and_inf_together_reach_the_loss_in_plural():
    genesis.manual_seed(0)
    model = Regressor()
    model.fc.weight.data[0, 0] = float("nan")
    model.fc.weight.data[0, 1] = float("inf")
    finding, = trained(lambda model, batch: model(batch).pow(2).mean(), model=model)
    assert finding.title == ("NaN and Inf reach the loss: it came into Linear through parameter "
                             "fc.weight")
