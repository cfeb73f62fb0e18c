"""genesis.debug.run_diff: two traced runs compared; identical runs do not differ, and each
kind of change (an op, a width, a learning rate, an unused layer) is found and located."""
import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.debug.run_diff import diff_runs, loss_history
from genesis.debug.session import TraceSession


class Net(nn.Module):
    def __init__(self, hidden=8, activation="relu", spare=False):
        super().__init__()
        self.fc1 = nn.Linear(4, hidden)
        self.fc2 = nn.Linear(hidden, 3)
        self.activation = activation
        if spare:
            self.spare = nn.Linear(4, 4)  # never called: gets no gradient

    def forward(self, x):
        hidden = self.fc1(x)
        hidden = hidden.relu() if self.activation == "relu" else F.gelu(hidden)
        return self.fc2(hidden)


def traced_run(steps=4, lr=0.1, **options):
    genesis.manual_seed(0)
    model = Net(**options)
    optimizer = genesis.optim.SGD(model.parameters(), lr=lr)
    x, y = genesis.randn(16, 4), genesis.randint(0, 3, (16,))
    with TraceSession(steps=2, check=False) as session:
        for _ in range(steps):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return session.result(script="train.py")


def test_two_runs_of_the_same_seeded_script_do_not_differ():
    diff = diff_runs(traced_run(), traced_run())
    assert not diff.differ
    assert diff.structure == [] and diff.changed_norms == []
    assert diff.loss.steps_compared == 4 and diff.loss.first_step is None
    assert len(diff.gradient_norms) == 4 and all(c.steps_compared == 4 for c in diff.gradient_norms)


def test_a_run_that_made_more_steps_differs():
    """A run of 8 steps against one of 4 whose steps are the same: "do not differ" was said
    (only the steps both made were compared), and the exit status was 0."""
    diff = diff_runs(traced_run(steps=4), traced_run(steps=8))
    assert diff.changed_norms == [] and diff.loss.first_step is None
    assert diff.differ and diff.steps_seen == (4, 8)
    assert diff.steps_in_words().startswith("The runs made different numbers of backward calls: "
                                            "A 4, B 8")
    assert diff_runs(traced_run(), traced_run()).steps_in_words() is None


def test_a_changed_activation_is_located_with_its_module_and_line():
    diff = diff_runs(traced_run(), traced_run(activation="gelu"))
    assert diff.differ
    kinds = {(change.kind, change.what) for change in diff.structure}
    assert ("removed", "Relu") in kinds and ("added", "Gelu") in kinds
    assert all("test_run_diff.py:" in change.source for change in diff.structure)
    assert diff.loss.first_step == 0
    assert {change.parameter for change in diff.changed_norms} >= {"fc1.weight", "fc2.weight"}


def test_a_changed_width_reshapes_ops_and_parameters():
    diff = diff_runs(traced_run(), traced_run(hidden=9))
    reshaped = {change.what for change in diff.structure if change.kind == "reshaped"}
    assert {"parameter fc1.weight", "parameter fc2.weight", "Linear"} <= reshaped
    detail = next(c.detail for c in diff.structure if c.what == "parameter fc1.weight")
    assert detail == "(8, 4) -> (9, 4)"


def test_a_changed_learning_rate_differs_from_the_second_step_on():
    diff = diff_runs(traced_run(lr=0.1), traced_run(lr=0.2))
    assert diff.structure == []
    assert diff.loss.first_step == 1  # the first step runs on the same weights
    assert all(change.first_step == 1 for change in diff.changed_norms)
    largest = diff.gradient_norms[0]
    assert largest.max_rel_change == max(c.max_rel_change for c in diff.gradient_norms)


def test_a_finding_in_one_run_only_is_reported():
    diff = diff_runs(traced_run(), traced_run(spare=True))
    assert diff.findings_only_in_a == []
    assert any("spare" in text for text in diff.findings_only_in_b)


def test_looser_tolerances_accept_small_changes():
    diff = diff_runs(traced_run(lr=0.1), traced_run(lr=0.1000001), rtol=1e-3)
    assert not diff.differ


def test_the_loss_of_every_step_is_kept_in_the_trace():
    trace = traced_run(steps=5)
    losses = loss_history(trace)
    assert sorted(losses) == [0, 1, 2, 3, 4]
    assert losses[1] < losses[0]  # it trains


def test_to_dict_is_plain_json():
    import json
    diff = diff_runs(traced_run(), traced_run(activation="gelu"))
    data = json.loads(json.dumps(diff.to_dict()))
    assert data["differ"] is True and data["loss"]["first_step"] == 0
