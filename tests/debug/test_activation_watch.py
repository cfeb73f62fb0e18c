"""ActivationWatch: per-module activation statistics at sampled steps only (checked against
NumPy by hand), and the rules behind "dead" and "saturated" layers, with no finding for a
normal ReLU net, a classifier's final sigmoid that becomes confident, or too few samples."""
import types

import numpy as np
import pytest

import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.autograd import function, module_scope
from genesis.debug.activation_figures import MIN_EXAMPLES, Figures, kind_of, units_axis
from genesis.debug.activation_watch import ActivationWatch
from genesis.debug.readings import Readings
from genesis.debug.session import TraceSession
from tests.helpers import line_of


class Net(nn.Module):
    """Linear -> relu (inline) -> Linear -> Tanh module -> Linear -> sigmoid (inline, last)."""

    def __init__(self, bias: float = 0.0, scale: float = 1.0):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 8)
        self.act = nn.Tanh()
        self.head = nn.Linear(8, 1)
        with genesis.no_grad():
            self.fc1.bias.fill_(bias)
            self.fc2.weight.mul_(scale)

    def forward(self, x):
        x = self.fc1(x).relu()
        x = self.act(self.fc2(x))
        return self.head(x).sigmoid()


def run(model, steps: int, batch: int = 32, lr: float = 0.0, make=None) -> ActivationWatch:
    """`steps` training steps of `model` watched; inputs from `make(step)` or randn."""
    genesis.manual_seed(0)
    watch = ActivationWatch()
    optimizer = genesis.optim.SGD(model.parameters(), lr=lr)
    watch.start()
    try:
        for step in range(steps):
            x = make(step) if make is not None else genesis.randn(batch, 6)
            loss = model(x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            watch.step_finished(step + 1)
    finally:
        watch.stop()
    return watch


def test_the_figures_are_those_numpy_gives_by_hand():
    model = Net()
    outputs = {}
    for name in ("fc1", "act", "head"):
        getattr(model, name).register_forward_hook(
            lambda module, args, out, name=name: outputs.__setitem__(name, out._data.copy()))
    watch = run(model, 1, batch=64)
    latest = watch.latest(0)
    relu = np.maximum(outputs["fc1"], 0)
    assert latest["Net.relu"]["mean"] == pytest.approx(relu.mean(dtype=np.float64))
    assert latest["Net.relu"]["std"] == pytest.approx(relu.std(dtype=np.float64))
    assert latest["Net.relu"]["zeros"] == pytest.approx((relu == 0).mean())
    assert latest["Net.relu"]["dead"] == pytest.approx((relu == 0).all(axis=0).mean())
    tanh = outputs["act"]
    assert latest["act"]["saturated"] == pytest.approx((np.abs(tanh) > 0.99).mean())
    assert latest["act"]["mean"] == pytest.approx(tanh.mean(dtype=np.float64))
    sigmoid = 1 / (1 + np.exp(-outputs["head"].astype(np.float64)))
    assert latest["Net"]["mean"] == pytest.approx(sigmoid.mean(), rel=1e-5)
    assert latest["Net"]["saturated"] == pytest.approx(((sigmoid < 0.01) | (sigmoid > 0.99)).mean())
    history = watch.to_dict()
    assert list(history) == ["fc1", "Net.relu", "fc2", "act", "head", "Net"]
    assert [history[key]["kind"] for key in history] == ["other", "relu", "other", "tanh",
                                                         "other", "sigmoid"]
    assert "dead" in history["Net.relu"] and "dead" not in history["fc1"]
    (sample,) = history["Net.relu"]["values"]
    assert sample["count"] == relu.size and sample["non_finite"] == 0
    percentiles = sample["percentiles"]  # of 512 of the 1,024 values
    assert percentiles[0] == 0.0 and 0 < percentiles[-1] <= relu.max()
    assert percentiles == sorted(percentiles)


def test_conv_style_outputs_count_channels_and_merged_calls_add_up():
    conv = nn.Conv2d(1, 4, 3, padding=1)
    with genesis.no_grad():
        conv.bias.copy_(genesis.tensor([0.0, -50.0, 0.0, -50.0]))  # channels 1 and 3 dead
    model = nn.Sequential(conv, nn.ReLU())
    watch = ActivationWatch()
    watch.start()
    x = genesis.randn(2, 1, 5, 5)
    model(x).sum().backward()
    watch.step_finished(1)
    # the same module called twice in one step: both calls count
    y = model(x) + model(x)
    y.sum().backward()
    watch.step_finished(2)
    watch.stop()
    dead = watch.to_dict()["1"]["dead"]
    assert dead["steps"] == [0, 1] and dead["values"] == [0.5, 0.5]
    counts = [sample["count"] for sample in watch.to_dict()["1"]["values"]]
    assert counts == [2 * 4 * 25, 2 * 2 * 4 * 25]


def test_kinds_come_from_the_op_that_made_the_output():
    x = genesis.randn(4, 3, requires_grad=True)
    assert kind_of(F.relu6(x).grad_fn) == ("relu", "relu6")
    assert kind_of(F.hardtanh(x, 0.0, 1.0).grad_fn) == ("relu", "hardtanh")
    assert kind_of(F.hardtanh(x).grad_fn) == ("other", "hardtanh")  # clipped at -1: never dead
    assert kind_of(F.leaky_relu(x).grad_fn)[0] == "other"
    assert kind_of(F.gelu(x).grad_fn)[0] == "other"
    assert kind_of(x.tanh().grad_fn) == ("tanh", "tanh")
    assert kind_of(nn.Sigmoid()(x).grad_fn) == ("sigmoid", "sigmoid")


def test_a_batch_of_one_does_not_measure_dead_units():
    y = genesis.randn(1, 16).relu()
    figures = Figures.measure(np, y._data, "relu", units_axis(y, y.grad_fn) if y.grad_fn else 1)
    assert figures.units is None  # every unit would be "zero for every example" half the time
    y = genesis.randn(MIN_EXAMPLES, 16).relu()
    assert Figures.measure(np, y._data, "relu", 1).units == 16


def test_only_sampled_steps_are_measured_and_nothing_listens_in_between():
    watch = ActivationWatch()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
    listening = []
    watch.start()
    for step in range(25):
        listening.append(watch in function.observers and watch in module_scope.listeners)
        model(genesis.randn(16, 4)).sum().backward()
        watch.step_finished(step + 1)
    watch.stop()
    assert [step for step, on in enumerate(listening) if on] == [0, 1, 2, 3, 10, 20]
    assert watch.to_dict()["1"]["mean"]["steps"] == [0, 1, 2, 3, 10, 20]
    assert watch not in function.observers and watch not in module_scope.listeners
    assert watch.latest(20) and watch.latest(21) == {}


def test_a_forward_without_a_graph_is_not_a_training_step():
    watch = ActivationWatch()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
    watch.start()
    with genesis.no_grad():
        model(genesis.randn(16, 4))
    watch.step_finished(1)
    watch.stop()
    assert watch.to_dict() == {}


def test_a_dead_relu_layer_is_found_with_its_module_op_line_and_step():
    watch = run(Net(bias=-50.0), 12)
    (finding,) = watch.findings()
    assert finding.kind == "dead_activation" and finding.severity == "warning"
    assert finding.module == "Net" and finding.details["activation"] == "Net.relu"
    assert finding.op == "ReluBackward" and finding.step == 0
    assert finding.source == f"{__file__}:{line_of(__file__, 'x = self.fc1(x).relu()')}"
    assert finding.code == "x = self.fc1(x).relu()"
    assert "16 of 16" in finding.title and "on the output of fc1 (Linear)" in finding.message
    assert "Rule: a hidden layer (not the model's output) with at least 50% of its units" \
        in finding.message
    assert finding.details["steps"] == [3, 10] or finding.details["steps"] == [2, 3, 10]


def test_a_relu_net_with_some_dead_units_and_too_few_samples_are_not_findings():
    assert run(Net(), 30, lr=0.01).findings() == []       # a few dead units, if any
    assert run(Net(bias=-50.0), 2).findings() == []       # dead, but only 2 samples
    history = run(Net(), 30, lr=0.01).to_dict()["Net.relu"]["dead"]["values"]
    assert max(history) < 0.5


def test_sparse_units_in_small_batches_are_not_dead():
    """Each unit fires for about 6% of the inputs: zero for a whole batch of 8 about 60% of
    the time, so each batch alone shows most units "dead"; over 64 examples and more, each
    fires (a sparse autoencoder's hidden layer, healthy)."""
    model = Net()
    with genesis.no_grad():
        model.fc1.weight.copy_(genesis.randn(16, 6))
        model.fc1.weight.div_(model.fc1.weight.norm(dim=1, keepdim=True))  # w.x ~ N(0, 1)
        model.fc1.bias.fill_(-1.555)  # P(w.x + b > 0) = 6%
    watch = run(model, 120, batch=8)
    shares = watch.to_dict()["Net.relu"]["dead"]["values"]
    assert min(shares[-3:]) >= 0.5  # the batches alone look dead...
    assert watch.findings() == []   # ...the 64+ examples of the latest samples do not


def test_a_layer_that_dies_late_is_found_from_the_step_it_died():
    model = Net()

    def make(step):
        return genesis.randn(32, 6) - (100.0 if step >= 10 else 0.0)  # fc1's inputs shift
    with genesis.no_grad():
        model.fc1.weight.abs_()  # so the shift kills every unit
    (finding,) = run(model, 31, make=make).findings()
    assert finding.kind == "dead_activation" and finding.step == 10
    assert finding.details["steps"] == [10, 20, 30]


def test_a_hidden_layer_saturated_from_the_start_is_found_not_a_confident_output():
    watch = run(Net(scale=40.0), 12, make=lambda step: genesis.randn(32, 6) * 3)
    kinds = {(finding.kind, finding.details["activation"]) for finding in watch.findings()}
    assert ("saturated_activation", "act") in kinds
    assert ("saturated_activation", "Net") not in kinds  # the model's output: not hidden
    (finding,) = [found for found in watch.findings() if found.kind == "saturated_activation"]
    assert finding.module == "act" and finding.step == 0 and finding.op == "TanhBackward"
    assert "Rule: a hidden layer (not the model's output, nor a sigmoid gating a product" \
        in finding.message


def test_a_classifier_whose_sigmoid_becomes_confident_is_not_a_finding():
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
    x = genesis.randn(64, 4)
    y = (x[:, :1] > 0).float()
    optimizer = genesis.optim.Adam(model.parameters(), lr=0.05)
    watch = ActivationWatch()
    watch.start()
    for step in range(60):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        watch.step_finished(step + 1)
    watch.stop()
    assert watch.to_dict()["3"]["saturated"]["values"][-1] > 0.5  # confident by the end
    assert watch.findings() == []


def test_a_trace_session_keeps_the_history_and_the_finding():
    model = Net(bias=-50.0)
    with TraceSession(steps=1, check=False) as session:
        for _ in range(11):
            model(genesis.randn(32, 6)).sum().backward()
    trace = session.result(script="t.py")
    (finding,) = [finding for finding in trace.findings if finding.kind == "dead_activation"]
    assert finding.module == "Net" and finding.step == 0 and finding.graph == 0
    assert trace.graphs[0].nodes[finding.node].name == "ReluBackward"
    assert "activation" in trace.graphs[0].nodes[finding.node].findings
    history = trace.meta["history"]["activations"]
    assert history["Net.relu"]["dead"]["steps"] == [0, 1, 2, 3, 10]


def test_relus_of_a_loss_and_outputs_of_the_model_are_not_dead_layers():
    """A hinge loss's relu is meant to reach zero; so may a model's final relu on a batch."""
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU())
    with genesis.no_grad():
        model[2].bias.fill_(-100.0)  # every output zero
    watch = ActivationWatch()
    watch.start()
    for step in range(12):
        scores = model(genesis.randn(32, 4))
        margins = (scores[:, :1] - scores[:, 1:] - 1.0).relu()  # a hinge: 0 when satisfied
        (margins.sum() + scores.sum()).backward()
        watch.step_finished(step + 1)
    watch.stop()
    history = watch.to_dict()
    assert history["relu"]["kind"] == "relu" and history["3"]["dead"]["values"][-3:] == [1.0] * 3
    assert history["relu"]["dead"]["values"][-3:] == [1.0] * 3
    assert watch.findings() == []


class Ranker(nn.Module):
    """A model that computes its pairwise hinge loss in its own forward."""

    def __init__(self):
        super().__init__()
        self.score = nn.Linear(4, 1)

    def forward(self, better, worse):
        return F.relu(1.0 - self.score(better) + self.score(worse)).mean()


def test_a_hinge_computed_in_a_forward_or_a_loss_module_is_not_a_dead_layer():
    """Once the ranking is learned, every margin is satisfied and the hinge's relu is zero:
    the loss term doing its job, not a layer that died."""
    genesis.manual_seed(0)
    ranker, triplet = Ranker(), nn.TripletMarginLoss(margin=0.1)
    with genesis.no_grad():
        ranker.score.weight.fill_(5.0)
    watch = ActivationWatch()
    watch.start()
    for step in range(12):
        anchor = genesis.randn(32, 4, requires_grad=True)
        loss = ranker(anchor + 3.0, anchor) + triplet(anchor, anchor + 0.01, anchor + 5.0)
        loss.backward()
        watch.step_finished(step + 1)
    watch.stop()
    history = watch.to_dict()
    assert history["Ranker.relu"]["dead"]["values"][-3:] == [1.0] * 3
    assert watch.findings() == []


def test_a_dead_layer_before_a_one_output_head_is_found():
    """A Linear(32, 1) after the ReLU also leaves one value per example: it is a layer."""
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
    with genesis.no_grad():
        model[0].bias.fill_(-100.0)
    watch = ActivationWatch()
    watch.start()
    for step in range(12):
        model(genesis.randn(32, 4)).sum().backward()
        watch.step_finished(step + 1)
    watch.stop()
    assert [finding.details["activation"] for finding in watch.findings()] == ["1"]


def test_conv1d_outputs_count_channels():
    conv = nn.Sequential(nn.Conv1d(2, 4, 3), nn.BatchNorm1d(4))
    y = conv(genesis.randn(5, 2, 10)).relu()
    assert units_axis(y, y.grad_fn) == 1
    y = nn.Linear(3, 4)(genesis.randn(5, 7, 3)).relu()
    assert units_axis(y, y.grad_fn) == 2


def test_device_figures_wait_for_one_transfer_per_step(monkeypatch):
    """On a GPU the figures stay on the device until the session's fetch: one transfer for
    all the modules of a step (a namespace other than NumPy stands in for CuPy here)."""
    device_xp = types.SimpleNamespace(**{name: getattr(np, name) for name in dir(np)
                                         if not name.startswith("__")})
    measure = Figures.measure.__func__
    monkeypatch.setattr(Figures, "measure", classmethod(
        lambda cls, xp, *args, **kwargs: measure(cls, device_xp, *args, **kwargs)))
    readings = Readings()
    watch = ActivationWatch(readings)
    model = Net()
    watch.start()
    model(genesis.randn(32, 6)).sum().backward()
    watch.step_finished(1)
    assert watch.latest(0) == {} and readings.transfers == 0
    readings.fetch()
    watch.stop()
    assert readings.transfers == 1 and sorted(watch.latest(0)) == sorted(watch.to_dict())
    assert watch.to_dict()["Net.relu"]["dead"]["steps"] == [0]
