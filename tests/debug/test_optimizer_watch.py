"""`OptimizerWatch` rules on small loops, written as training loops are: each finding on the
bug, none on its look-alike."""
import pytest

import genesis
import genesis.nn as nn
from genesis.debug.session import TraceSession
from genesis.optim.lr_scheduler import StepLR
from tests.helpers import line_of
from tests.optimizer_wrappers import Lookahead


def kinds(session) -> list:
    return [finding.kind for finding in session.result(script="t.py").findings]


def regression():
    genesis.manual_seed(0)
    x = genesis.randn(64, 6)
    return x, x.sum(dim=1, keepdim=True)


def test_a_step_with_no_backward_since_the_last_one():
    x, y = regression()
    model = nn.Linear(6, 1)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    with TraceSession(check=False) as session:
        for _ in range(3):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
            optimizer.step()  # bug: twice
    found = session.result(script="t.py").findings
    assert [finding.kind for finding in found] == ["step_without_backward"]
    assert found[0].step == 0 and found[0].details["times"] == 3


def test_new_gradients_assigned_by_hand_before_a_step_are_not_a_repeat():
    model = nn.Linear(6, 1)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
    x, y = regression()
    with TraceSession(check=False) as session:
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
        for _ in range(3):  # gradients from elsewhere (an estimate, another worker)
            for param in model.parameters():
                param.grad = genesis.randn(*param.shape)
            optimizer.step()
    assert kinds(session) == []


def test_an_estimate_written_into_the_same_grad_tensors_is_not_a_repeat():
    x, y = regression()
    model = nn.Linear(6, 1)
    optimizer = genesis.optim.Adam(model.parameters(), lr=0.01)
    for param in model.parameters():
        param.grad = genesis.zeros_like(param)
    with TraceSession(check=False) as session:
        for _ in range(4):  # evolution strategies: no backward, an estimate copied in place
            with genesis.no_grad():
                for param in model.parameters():
                    param.grad.copy_(genesis.randn(*param.shape))
            optimizer.step()
    assert kinds(session) == []


@pytest.mark.parametrize("clip", [lambda params: nn.utils.clip_grad_norm_(params, 0.01),
                                  lambda params: nn.utils.clip_grad_value_(params, 0.001)],
                         ids=["clip_grad_norm_", "clip_grad_value_"])
def test_a_second_step_on_clipped_gradients_is_still_a_repeat(clip):
    """Clipping edits the gradients in place (their version goes up), but they are still the
    ones the previous step applied: stepping again on them is a repeat."""
    x, y = regression()
    model = nn.Linear(6, 1)
    with TraceSession(check=False) as session:
        optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
        for _ in range(3):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            clip(model.parameters())
            optimizer.step()
            clip(model.parameters())
            optimizer.step()  # bug: the same gradients again
    found = session.result(script="t.py").findings
    assert [finding.kind for finding in found] == ["step_without_backward"]
    assert found[0].details["times"] == 3


def test_steps_on_unchanged_gradients_before_any_backward_are_a_repeat():
    model = nn.Linear(6, 1)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
    for param in model.parameters():
        param.grad = genesis.ones_like(param)
    with TraceSession(check=False) as session:
        for _ in range(3):
            optimizer.step()  # bug: the same gradients again and again
    found = session.result(script="t.py").findings
    assert [finding.kind for finding in found] == ["step_without_backward"]
    assert found[0].step is None and found[0].message.startswith("Before any backward call,")


def test_zero_grad_between_backward_and_step_is_found_at_the_zero_grad():
    x, y = regression()
    for set_to_none, clear in ((True, "optimizer"), (False, "optimizer"), (True, "model")):
        model = nn.Linear(6, 1)
        with TraceSession(check=False) as session:  # (it sees the optimizer built)
            optimizer = genesis.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            for _ in range(3):
                ((model(x) - y) ** 2).mean().backward()
                (optimizer if clear == "optimizer" else model).zero_grad(set_to_none=set_to_none)
                optimizer.step()
        found = session.result(script="t.py").findings
        assert [finding.kind for finding in found] == ["gradients_cleared"]
        assert found[0].step == 0 and found[0].details["steps_affected"] == 3
        assert ".zero_grad(set_to_none=set_to_none)" in found[0].code
        assert found[0].details["parameters"] == ["weight", "bias"]


def findings_of_a_loop(between, after=None, zero_grad_first: bool = True) -> list:
    """The findings of 3 steps of a linear regression where `between(model, optimizer)` runs
    between loss.backward() and optimizer.step(), and `after(model)` after the step; each step
    starts with optimizer.zero_grad() if `zero_grad_first`."""
    x, y = regression()
    model = nn.Linear(6, 1)
    with TraceSession(check=False) as session:
        optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
        for _ in range(3):
            if zero_grad_first:
                optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            between(model, optimizer)
            optimizer.step()
            if after is not None:
                with genesis.no_grad():
                    after(model)
    return session.result(script="t.py").findings


def set_to_none(model, optimizer):
    for param in model.parameters():
        param.grad = None  # bug: no zero_grad() to name, so the step is named


def zeroed_in_place(model, optimizer=None):
    for param in model.parameters():
        param.grad.mul_(0)


def cleared_in_different_ways(model, optimizer):
    model.weight.grad.mul_(0)                       # by hand
    optimizer.zero_grad(set_to_none=False)          # zeroes both, then
    nn.utils.clip_grad_value_([model.weight], 1.0)  # clamping leaves them zeros
    model.bias.grad = None                          # and bias is set to None by hand


def test_gradients_set_to_none_by_hand_before_a_step_are_found_at_the_step():
    found = findings_of_a_loop(set_to_none, zero_grad_first=False)
    assert [finding.kind for finding in found] == ["gradients_cleared"]
    assert "optimizer.step()" in found[0].code and "zero_grad" not in found[0].message
    assert "every one of them was set to None, so" in found[0].message
    assert "p.grad = None" in found[0].message


@pytest.mark.parametrize("call, zero", [
    ("clip_grad_value_", lambda model, _: nn.utils.clip_grad_value_(model.parameters(), 0.0)),
    ("clip_grad_norm_", lambda model, _: nn.utils.clip_grad_norm_(model.parameters(), 0.0)),
], ids=["clip_grad_value_", "clip_grad_norm_"])
def test_clipping_to_zero_between_backward_and_step_is_found_at_the_clipping(call, zero):
    found = findings_of_a_loop(zero)
    assert [finding.kind for finding in found] == ["gradients_cleared"]
    assert found[0].function == call and f"nn.utils.{call}(" in found[0].code
    message = found[0].message
    assert f"this {call}() call set every one of them to zeros" in message
    assert f"{call} with" in message and "zero_grad" not in message


def test_gradients_zeroed_in_place_by_hand_are_found_at_the_step_without_blaming_zero_grad():
    found = findings_of_a_loop(zeroed_in_place)
    assert [finding.kind for finding in found] == ["gradients_cleared"]
    assert "optimizer.step()" in found[0].code and "zero_grad" not in found[0].message
    assert "every one of them was set to zeros, so" in found[0].message


def test_gradients_cleared_in_different_ways_are_each_named():
    found = findings_of_a_loop(cleared_in_different_ways, zero_grad_first=False)
    assert [finding.kind for finding in found] == ["gradients_cleared"]
    assert "optimizer.step()" in found[0].code
    message = found[0].message
    assert "before SGD.step() zero_grad() (line " in message
    assert ") set weight to zeros; bias was set to None, so" in message
    assert "Call zero_grad() before loss.backward()" in message and "p.grad = None" in message


@pytest.mark.parametrize("after_step", [
    lambda model: nn.utils.clip_grad_value_(model.parameters(), 0.0),
    lambda model: nn.utils.clip_grad_norm_(model.parameters(), 0.0),
    zeroed_in_place,
], ids=["clip_grad_value_", "clip_grad_norm_", "mul_"])
def test_clipping_to_zero_or_zeroing_after_the_step_is_no_finding(after_step):
    """The look-alike: the same calls after step() (a clearing in place of zero_grad)."""
    found = findings_of_a_loop(lambda model, _: nn.utils.clip_grad_value_(model.parameters(), 0.5),
                               after=after_step, zero_grad_first=False)
    assert found == []


def test_gradients_clipped_replaced_or_partly_cleared_before_a_step_are_applied():
    x, y = regression()
    model = nn.Sequential(nn.Linear(6, 4), nn.Linear(4, 1))
    with TraceSession(check=False) as session:
        optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
        for step in range(4):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.01)   # written in place, not zero
            model[1].weight.grad = model[1].weight.grad / 2      # replaced (an all-reduce)
            model[0].bias.grad = None                            # one of them cleared
            optimizer.step()
    assert kinds(session) == []


def test_a_group_with_learning_rate_zero_never_changes_its_parameters():
    x, y = regression()
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = genesis.optim.Adam([{"params": model[0].parameters(), "lr": 0.0},
                                    {"params": model[2].parameters()}], lr=1e-2)
    with TraceSession(check=False) as session:
        for _ in range(5):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
    found = session.result(script="t.py").findings
    assert [finding.kind for finding in found] == ["not_updated"]
    assert found[0].details["parameters"] == ["0.weight", "0.bias"] and found[0].details["lr"] == 0.0


@pytest.mark.parametrize("unfrozen_at", [5, None], ids=["unfrozen_between_samples", "never"])
def test_a_group_frozen_by_learning_rate_zero_then_unfrozen_is_no_finding(unfrozen_at):
    """Steps 0-3 are measured, then every tenth: a group whose lr 0 is raised at step 5 of
    8 changed at steps no sample saw, so "never changes" would be untrue; left at 0 it
    is still found."""
    x, y = regression()
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = genesis.optim.Adam([{"params": model[0].parameters(), "lr": 0.0},
                                    {"params": model[2].parameters()}], lr=1e-2)
    with TraceSession(check=False) as session:
        for step in range(8):
            if step == unfrozen_at:
                optimizer.param_groups[0]["lr"] = 1e-3
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
    assert kinds(session) == ([] if unfrozen_at else ["not_updated"])


def test_a_weight_updated_orders_of_magnitude_less_than_the_others():
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                          nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    with genesis.no_grad():
        model[2].weight.mul_(1e4)  # bug: a huge initialisation; Adam moves it by ~lr a step
    optimizer = genesis.optim.Adam(model.parameters(), lr=1e-3)
    x, y = regression()
    with TraceSession(check=False) as session:
        for _ in range(6):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
    found = [finding for finding in session.result(script="t.py").findings
             if finding.kind == "update_ratio"]
    assert [finding.details["parameter"] for finding in found] == ["2.weight"]
    assert "far less" in found[0].title and "not learning" in found[0].message


def test_zero_initialised_residual_branches_are_no_outlier():
    """Each block's last layer starts at zero (Fixup, zero_init_residual, adaLN-Zero): its
    update ratio is about 1/k at step k, and the layer before it gets no gradient at first and
    small ones until it grows. Neither is compared with the others, so plain SGD on such a
    model, which trains well, is no finding."""

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(64, 64), nn.Linear(64, 64)
            nn.init.zeros_(self.fc2.weight)
            nn.init.zeros_(self.fc2.bias)

        def forward(self, x):
            return x + self.fc2(genesis.relu(self.fc1(x)))

    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 64), Block(), Block(), Block(), nn.Linear(64, 1))
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = genesis.randn(64, 6)
    y = x.sum(dim=1, keepdim=True)
    with TraceSession(check=False) as session:
        for _ in range(8):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
    assert kinds(session) == []


def test_embedding_tables_are_judged_on_the_rows_a_batch_looked_up():
    genesis.manual_seed(0)
    center, context, projection = nn.Embedding(20000, 8), nn.Embedding(20000, 8), nn.Linear(8, 8)
    optimizer = genesis.optim.SGD([*center.parameters(), *context.parameters(),
                                   *projection.parameters()], lr=0.05)
    with TraceSession(check=False) as session:
        for _ in range(6):  # skip-gram: each batch moves 8 rows of 20000 (ratio ~5e-5)
            words = genesis.randint(0, 20000, (8,))
            score = (projection(center(words)) * context((words + 1) % 20000)).sum(-1)
            loss = -genesis.nn.functional.logsigmoid(score).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    assert kinds(session) == []


def test_an_ordinary_run_has_update_ratios_and_no_outlier():
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                          nn.Linear(16, 1))
    optimizer = genesis.optim.Adam(model.parameters(), lr=1e-3)
    scheduler = StepLR(optimizer, step_size=2)
    x, y = regression()
    with TraceSession(check=False) as session:
        for _ in range(12):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
            scheduler.step()
    trace = session.result(script="t.py")
    assert trace.findings == []
    history = trace.meta["history"]
    ratios = history["parameters"]["0.weight"]["update_ratio"]
    assert ratios["steps"] == [0, 1, 2, 3, 10] and all(0 < value < 1 for value in ratios["values"])
    (adam,) = history["optimizers"]
    assert adam["name"] == "Adam" and adam["steps"] == 12
    assert adam["groups"][0]["lr"]["values"][:4] == [1e-3, 1e-3, 1e-4, 1e-4] or \
        adam["groups"][0]["lr"]["values"][0] == 1e-3


def test_lbfgs_with_a_closure_is_no_finding():
    x, y = regression()
    model = nn.Linear(6, 1)
    optimizer = genesis.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)

    def closure():
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss

    with TraceSession(check=False) as session:
        for _ in range(3):
            optimizer.step(closure)
    assert kinds(session) == []


def test_each_step_record_reaches_the_step_listeners():
    x, y = regression()
    model = nn.Linear(6, 1)
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
    records = []

    class Listener:
        def step_finished(self, record):
            records.append(record)

    with TraceSession(check=False) as session:
        session.step_listeners.add(Listener())
        for _ in range(3):
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
    assert [record["step"] for record in records] == [0, 1, 2]
    assert records[0]["loss"] > records[2]["loss"] > 0
    assert set(records[0]["grad_norm"]) == {"weight", "bias"}
    assert set(records[1]["update_ratio"]) == {"weight", "bias"} and records[1]["lr"] == {"SGD[0]": 0.01}
    assert records[2]["findings"] == 0


def test_an_optimizer_over_frozen_parameters_only_is_found_but_a_frozen_part_is_not():
    x, y = regression()
    frozen = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    frozen.requires_grad_(False)
    optimizer = genesis.optim.SGD(frozen.parameters(), lr=0.1)
    trained = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    trained[0].requires_grad_(False)  # frozen on purpose: the rest trains
    other = genesis.optim.SGD(trained.parameters(), lr=0.1)
    with TraceSession(check=False) as session:
        for _ in range(3):
            optimizer.zero_grad(), other.zero_grad()
            ((frozen(x) - y) ** 2).mean()
            ((trained(x) - y) ** 2).mean().backward()
            optimizer.step(), other.step()
    found = session.result(script="t.py").findings
    assert [(finding.kind, finding.title) for finding in found] == [
        ("not_updated", "SGD holds only frozen parameters")]


def test_a_model_trained_then_frozen_for_analysis_or_as_a_teacher_is_no_finding():
    x, y = regression()
    teacher = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = genesis.optim.Adam(teacher.parameters(), lr=0.01)
    with TraceSession(check=False) as session:
        for _ in range(4):
            optimizer.zero_grad()
            ((teacher(x) - y) ** 2).mean().backward()
            optimizer.step()
        teacher.requires_grad_(False)  # trained: now a frozen teacher, or a model to explain
        inputs = x.clone().requires_grad_(True)
        (saliency,) = genesis.autograd.grad(teacher(inputs).sum(), inputs)
    assert saliency.shape == x.shape
    assert session.result(script="t.py").findings == []


def test_a_scheduler_after_an_optimizer_with_its_own_step_is_no_finding():
    """An optimizer whose class writes its own step (no listener calls in it) still counts
    its steps, so a scheduler stepped after it is in order, as PyTorch's warning agrees."""

    class HalvingOptimizer(genesis.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.5})

        def step(self, closure=None):
            for group in self.param_groups:
                for param in group["params"]:
                    param.data.mul_(group["lr"])

    x, y = regression()
    model = nn.Linear(6, 1)
    optimizer = HalvingOptimizer(model.parameters())
    scheduler = StepLR(optimizer, step_size=2)
    with TraceSession(check=False) as session:
        for _ in range(3):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
            scheduler.step()
    assert "scheduler_order" not in kinds(session)


class SignSGD(genesis.optim.Optimizer):
    """An optimizer written the way a paper's pseudo-code is: its own step, under no_grad,
    calling the closure it is given itself."""

    def __init__(self, params, lr=0.01):
        super().__init__(params, {"lr": lr})  # (not where the optimizer is made)

    @genesis.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with genesis.enable_grad():
                loss = closure()  # (not where the optimizer steps)
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    param.sub_(group["lr"] * param.grad.sign())
        return loss


@pytest.mark.parametrize("clears", [True, False], ids=["zero_grad", "forgotten"])
@pytest.mark.parametrize("with_closure", [False, True], ids=["plain", "closure"])
def test_an_optimizer_with_a_hand_written_step_is_watched_as_a_built_in_one(clears, with_closure):
    """Its steps reach the watch (before, a hand-written step was invisible to it: a missing
    zero_grad went unseen), at the line of the script's step() call, not a line in the class."""
    x, y = regression()
    model = nn.Linear(6, 1)

    def closure():
        if clears:
            optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss

    with TraceSession(check=False) as session:
        optimizer = SignSGD(model.parameters())  # made here
        for _ in range(4):
            if with_closure:
                optimizer.step(closure)  # the closure's step
            else:
                closure()
                optimizer.step()  # the plain step
    found = session.result(script="t.py").findings
    (entry,) = session.optimizer_watch.watched.values()
    assert entry.steps == 4 and entry.made_at.line == line_of(__file__, "# made here")
    if clears:
        assert found == []
        return
    assert [finding.kind for finding in found] == ["gradient_accumulation"]
    marker = "# the closure's step" if with_closure else "# the plain step"
    assert found[0].source == f"{__file__}:{line_of(__file__, marker)}"


def test_a_hand_written_step_calling_super_step_is_one_step():
    class ClippedSGD(genesis.optim.SGD):
        def step(self, closure=None):
            nn.utils.clip_grad_norm_([p for g in self.param_groups for p in g["params"]], 1.0)
            return super().step(closure)

    x, y = regression()
    model = nn.Linear(6, 1)
    optimizer = ClippedSGD(model.parameters(), lr=0.01)
    with TraceSession(check=False) as session:
        for _ in range(3):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
    (entry,) = session.optimizer_watch.watched.values()
    assert entry.steps == 3 and kinds(session) == []


def test_a_zero_grad_forgotten_after_one_of_two_step_calls_is_found_at_that_call():
    """An epoch's last, partial accumulation group flushed by a step() of its own that no
    zero_grad() follows: its gradients enter the next epoch's first step. The finding is at
    the flushing step() (the one to fix), and names the step() that applied them again."""
    x, y = regression()
    model = nn.Linear(6, 1)
    optimizer = genesis.optim.Adam(model.parameters(), lr=0.01)
    with TraceSession(check=False) as session:
        for epoch in range(3):
            for i in range(5):
                ((model(x[i::5]) - y[i::5]) ** 2).mean().backward()
                if i % 2 == 1:
                    optimizer.step()  # every two batches
                    optimizer.zero_grad()
                elif i == 4:
                    optimizer.step()  # the last, partial group
    found = session.result(script="t.py").findings
    assert [finding.kind for finding in found] == ["gradient_accumulation"]
    flush, regular = line_of(__file__, "# the last, partial group"), line_of(__file__, "# every two")
    assert found[0].source == f"{__file__}:{flush}"
    assert found[0].details["step_call"] == f"{__file__}:{regular}"
    assert (f"They were left by the Adam.step() call at line {flush}, which no zero_grad() "
            f"followed, and applied again by the one at line {regular}.") in found[0].message


@pytest.mark.parametrize("bug", [None, "no zero_grad", "lr 0"])
def test_an_optimizer_stepped_inside_a_wrappers_step_is_judged_once_as_the_wrapper(bug):
    x, y = regression()
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    with TraceSession(check=False) as session:
        first_lr = 0.0 if bug == "lr 0" else 0.01
        groups = [{"params": model[0].parameters(), "lr": first_lr}, {"params": model[2].parameters()}]
        inner = genesis.optim.Adam(groups, lr=0.01)  # the groups
        optimizer = Lookahead(inner)
        for _ in range(6):
            if bug != "no zero_grad":
                optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()  # the wrapper's step
    found = session.result(script="t.py").findings
    assert [(finding.kind, finding.function) for finding in found] == {
        None: [], "no zero_grad": [("gradient_accumulation", "Lookahead.step")],
        "lr 0": [("not_updated", "Lookahead")]}[bug]
    if bug == "no zero_grad":
        assert found[0].source == f"{__file__}:{line_of(__file__, '# the wrapper' + chr(39) + 's step')}"
    if bug == "lr 0":
        assert found[0].source == f"{__file__}:{line_of(__file__, '# the groups')}"
        assert "Lookahead (over the param groups of Adam (made at " in found[0].message


class AcceleratedOptimizer(genesis.optim.Optimizer):
    """Hugging Face Accelerate's wrapper, reduced: step() and zero_grad() are called after
    every micro-batch and act on every `every`-th only (when gradients are synchronised)."""

    def __init__(self, inner, every):
        self.inner, self.every, self.calls = inner, every, 0
        self.param_groups, self.state = inner.param_groups, inner.state

    def zero_grad(self, set_to_none=True):
        if self.calls % self.every == 0:
            self.inner.zero_grad(set_to_none)

    def step(self, closure=None):
        self.calls += 1
        if self.calls % self.every == 0:
            self.inner.step(closure)


@pytest.mark.parametrize("clears", [True, False], ids=["zero_grad", "forgotten"])
def test_a_wrapper_skipping_steps_while_gradients_accumulate_is_no_finding(clears):
    """Its skipped steps change no parameter: they are not steps, so the gradients it
    accumulates over them are not carried across one; without any zero_grad() they are
    carried across the real ones, and that is found."""
    x, y = regression()
    model = nn.Linear(6, 1)
    with TraceSession(check=False) as session:
        optimizer = AcceleratedOptimizer(genesis.optim.AdamW(model.parameters(), lr=0.01), every=4)
        for i in range(16):
            ((model(x[i::16]) - y[i::16]) ** 2).mean().backward()
            optimizer.step()
            if clears:
                optimizer.zero_grad()
    assert kinds(session) == ([] if clears else ["gradient_accumulation"])


class DataWritingSGD(genesis.optim.Optimizer):
    """A hand-written SGD as many scripts carry one: it writes through `.data`, which moves
    no version counter of the parameters."""

    def __init__(self, params, lr=0.05):
        super().__init__(params, {"lr": lr})

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data.add_(p.grad.data, alpha=-group["lr"])


@pytest.mark.parametrize("clears", [True, False], ids=["zero_grad", "forgotten"])
def test_an_optimizer_writing_through_data_is_watched(clears):
    """Its steps change the parameters where no version counter sees it: they are steps
    still, so a forgotten zero_grad with it is found, and none when it is called."""
    x, y = regression()
    model = nn.Linear(6, 1)
    with TraceSession(check=False) as session:
        optimizer = DataWritingSGD(model.parameters())
        for i in range(8):
            if clears:
                optimizer.zero_grad()
            ((model(x[i::8]) - y[i::8]) ** 2).mean().backward()
            optimizer.step()
    assert kinds(session) == ([] if clears else ["gradient_accumulation"])


class FlakySGD(genesis.optim.Optimizer):
    """A hand-written SGD whose step raises when told to (a failed step the script catches)."""

    def __init__(self, params, lr=0.05):
        super().__init__(params, {"lr": lr})
        self.fail = False

    def step(self, closure=None):
        if self.fail:
            raise RuntimeError("step failed")
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data.sub_(p.grad * group["lr"])


def test_a_step_that_raised_does_not_hold_later_steps_inside_it():
    """An optimizer whose step raised (caught by the script) is not stepping any more: a
    later step of another optimizer over the same parameters is judged as its own, and a
    zero_grad forgotten with that one is found at its line."""
    x, y = regression()
    model = nn.Linear(6, 1)
    with TraceSession(check=False) as session:
        flaky = FlakySGD(model.parameters())
        flaky.fail = True
        plain = genesis.optim.SGD(model.parameters(), lr=0.05)
        ((model(x[:8]) - y[:8]) ** 2).mean().backward()
        with pytest.raises(RuntimeError, match="step failed"):
            flaky.step()
        for i in range(6):
            ((model(x[i::8]) - y[i::8]) ** 2).mean().backward()
            plain.step()  # the later steps
    found = session.result(script="t.py").findings
    assert [(finding.kind, finding.function) for finding in found] == [
        ("gradient_accumulation", "SGD.step")]
