"""Mixed precision with a GradScaler under `genesis trace`: gradients that overflow because
the loss was scaled up, in a step the scaler skips, are how it finds its scale, not a
defect; norms are read unscaled. A NaN/Inf the scale did not make is still found: once the
scaler has backed off to a scale of 1, or when a step is taken with it."""
import pytest

import genesis
import genesis.nn as nn
from genesis.amp import GradScaler
from genesis.debug.session import TraceSession
from tests.helpers import line_of

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))

    def forward(self, x):
        return self.body(x)


def train(model, steps: int, scaler: GradScaler, extra=None, step_with_scaler: bool = True,
          recorded: int = 1):
    """A float16 autocast training loop (the first `recorded` steps recorded); `extra(logits)`
    adds to the loss."""
    genesis.manual_seed(0)
    optimizer = genesis.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    with TraceSession(steps=recorded) as session:
        for _ in range(steps):
            x, y = genesis.randn(32, 16) * 10, genesis.randint(0, 4, (32,))
            optimizer.zero_grad()
            with genesis.autocast("cpu", dtype=genesis.float16):
                logits = model(x)
                loss = loss_fn(logits, y)
                if extra is not None:
                    loss = loss + extra(logits)
            scaler.scale(loss).backward()
            if step_with_scaler:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
    return session.result(script="train.py")


def test_overflow_while_the_scaler_finds_its_scale_is_no_finding():
    genesis.manual_seed(0)
    model = Classifier()
    scaler = GradScaler()  # 65536: the first step's gradients overflow float16
    trace = train(model, 12, scaler)
    assert trace.findings == []
    assert trace.meta["scaler_skips"] >= 1 and scaler.get_scale() < 2.0 ** 16
    assert {row.status for row in trace.parameters} == {"ok"}


def test_gradient_norms_are_read_unscaled():
    genesis.manual_seed(0)
    model = Classifier()
    trace = train(model, 3, GradScaler(init_scale=1024.0))
    weight = next(row for row in trace.parameters if row.name == "body.0.weight")
    # the gradient after the last step's unscale_ is the one the norm describes
    assert weight.grad_norm == pytest.approx(float(model.body[0].weight.grad.norm()), rel=1e-3)


def _sqrt_at_zero(logits):
    return (logits.float() * 0).sqrt().sum()         # SQRT: its gradient at 0 is Inf


def test_a_nan_the_scale_did_not_make_is_found_once_the_scale_is_down_to_one():
    genesis.manual_seed(0)
    scaler = GradScaler(init_scale=4.0)              # 4, 2, then 1: found at the third step
    trace = train(Classifier(), 5, scaler, extra=_sqrt_at_zero, recorded=3)
    finding, = trace.findings
    assert finding.kind == "nan_backward" and finding.op == "SqrtBackward"
    assert finding.source == f"{__file__}:{line_of(__file__, '# SQRT')}"
    assert finding.details["first_step"] == 2 and finding.details["count"] == 3
    assert trace.meta["scaler_skips"] == 2


def test_a_finding_in_a_step_not_recorded_says_why_it_has_no_source_line():
    genesis.manual_seed(0)
    trace = train(Classifier(), 4, GradScaler(init_scale=4.0), extra=_sqrt_at_zero)
    finding, = trace.findings
    assert finding.source is None and finding.details["first_step"] == 2
    assert "(not recorded: genesis trace keeps the source lines of the ops of the recorded " \
           "backward calls, the first --steps" in finding.message


def test_a_step_taken_on_scaled_non_finite_gradients_is_found():
    genesis.manual_seed(0)
    trace = train(Classifier(), 2, GradScaler(), extra=_sqrt_at_zero, step_with_scaler=False)
    kinds = [finding.kind for finding in trace.findings]
    assert kinds == ["nan_backward"] and trace.findings[0].op == "SqrtBackward"
    assert trace.meta["scaler_skips"] == 0


def test_the_losses_kept_are_the_losses_not_the_scaled_ones():
    """`scaler.scale(loss).backward()` starts from loss x scale; the run's losses (trace.json,
    metrics.jsonl, the pictures) are the script's own, whatever the scale was that step."""
    genesis.manual_seed(0)
    model = Classifier()
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler(init_scale=2.0 ** 20, growth_interval=1)
    losses = []
    with TraceSession(steps=1) as session:
        for _ in range(4):
            x, y = genesis.randn(32, 16), genesis.randint(0, 4, (32,))
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
    kept = session.result(script="train.py").meta["losses"]
    assert kept["steps"] == [0, 1, 2, 3]
    assert kept["values"] == pytest.approx(losses, rel=1e-6)
