"""ParamWatch: gradient norms per step in bounded memory, and the rules behind "no gradient",
"gradient always zero", "exploding" and "vanishing" (relative, explained, no false alarms
on small correct problems)."""
import json
import math
import random

import pytest

import genesis
import genesis.nn as nn
from genesis.debug.norm_history import NormHistory
from genesis.debug.param_watch import ParamWatch
from genesis.debug.session import TraceSession
from genesis.debug.trace import ParameterRow, Trace


class _Leaf:
    """A stand-in tracked tensor whose norms a test sets directly (cheap measure loops)."""

    def __init__(self, ndim: int = 2):
        self.ndim = ndim
        self.requires_grad = True
        self.shape = (4,) * ndim
        self.dtype = genesis.float32


def synthetic(norms: dict) -> ParamWatch:
    """A ParamWatch fed (grad norm, weight norm) per step for each name: norms[name] is a
    list of pairs (None for no gradient); ndim 2 unless the name ends in "bias"."""
    watch = ParamWatch()
    for name in norms:
        watch.track(name, _Leaf(1 if name.endswith("bias") else 2), rank=2, role="optimizer")
    steps = len(next(iter(norms.values())))
    for step in range(steps):
        for entry in watch.tracked.values():
            pair = norms[entry.name][step]
            entry.history.add(step, *(pair if pair is not None else (None, None)))
            if pair is not None:
                entry.history.reached += 1
        watch.steps += 1
    return watch


def statuses(watch: ParamWatch) -> dict:
    return {entry.name: status for entry, status in watch.statuses().items()}


def no_locate(entry):
    return None, None, None, None


# -- measuring ---------------------------------------------------------------------------
def test_each_row_says_which_step_each_norm_is_from():
    w = genesis.tensor([3.0, 4.0], requires_grad=True)
    unused = genesis.tensor([1.0], requires_grad=True)
    watch = ParamWatch()
    watch.track("w", w)
    watch.track("unused", unused)
    for scale in (1.0, 2.0, 3.0):
        w.grad = None
        (w * scale).sum().backward()
        watch.measure()
    row, idle = watch.rows()
    assert row.steps == [0, 1, 2] and row.history == pytest.approx([2 ** 0.5, 8 ** 0.5, 18 ** 0.5])
    assert row.grad_norm == pytest.approx(18 ** 0.5) and row.grad_norm_step == 2
    assert idle.history == [None, None, None] and idle.grad_norm is None and idle.status == "not trained"


def test_a_stale_grad_is_not_read_as_this_steps_gradient():
    """Two models stepping in turn (a GAN): a backward that did not reach a parameter leaves
    its old .grad in place, which is not a reading of that step."""
    a = genesis.tensor([1.0], requires_grad=True)
    b = genesis.tensor([1.0], requires_grad=True)
    with TraceSession(steps=2) as session:
        (a * 2).sum().backward()
        (b * 3).sum().backward()
    rows = {row.name: row for row in session.result().parameters}
    assert rows["a"].steps == [0, 1] and rows["a"].history == [2.0, None]
    assert rows["b"].steps == [1] and rows["b"].history == [3.0]  # tracked from its first graph


def test_frozen_parameters_are_not_tracked():
    frozen = genesis.tensor([1.0])
    assert ParamWatch().track("frozen", frozen) is None


def test_names_are_unique_and_improve():
    watch = ParamWatch()
    first, second = genesis.ones(1, requires_grad=True), genesis.ones(1, requires_grad=True)
    entry = watch.track("SGD.param_groups[0][0]", first, rank=0, role="optimizer")
    watch.track("fc.weight", first, rank=2)
    other = watch.track("fc.weight", second, rank=2)
    assert entry.name == "fc.weight" and other.name == "fc.weight#2" and entry.roles == {"optimizer"}


# -- bounded memory -------------------------------------------------------------------------
def test_a_million_steps_keep_a_fixed_window_and_a_logarithmic_summary():
    history = NormHistory(start=0, recent=512)
    counts = {}
    for step in range(1_000_000):
        history.add(step, 1.0 + (step % 7), 2.0)
        if step + 1 in (10_000, 100_000, 1_000_000):
            counts[step + 1] = len(history.bins())
    assert len(history.steps()) == 512 and history.steps()[-1] == 999_999
    assert len(history._grads) == len(history._weights) == 512
    assert counts[1_000_000] <= 2 * math.log2(1_000_000 / 64) + 2
    assert counts[1_000_000] - counts[10_000] <= 2 * math.log2(100) + 2


def test_summary_bins_cover_every_older_step_once_with_exact_figures():
    rng = random.Random(0)
    values = []
    history = NormHistory(start=5, recent=32)
    for step in range(5, 2005):
        roll = rng.random()
        value = None if roll < 0.2 else (math.inf if roll < 0.22 else rng.uniform(0, 10))
        values.append((step, value))
        history.add(step, value, 1.0 if value is not None else None)
    bins = history.bins()
    assert bins[0].first_step == 5 and bins[-1].last_step == history.steps()[0] - 1
    for older, newer in zip(bins, bins[1:]):
        assert newer.first_step == older.last_step + 1 and newer.width <= older.width
    widths = [summary.width for summary in bins[:-1]]
    assert all(widths.count(width) <= 2 for width in widths)
    for summary in bins:
        inside = [value for step, value in values if summary.first_step <= step <= summary.last_step]
        finite = [value for value in inside if value is not None and math.isfinite(value)]
        assert summary.readings == sum(value is not None for value in inside)
        assert summary.non_finite == sum(value is not None and not math.isfinite(value)
                                         for value in inside)
        assert summary.min == min(finite) and summary.max == max(finite)
        assert summary.mean == pytest.approx(sum(finite) / len(finite))
        assert summary.last == next(value for value in reversed(inside) if value is not None)


def test_rows_and_trace_json_stay_small_over_many_steps():
    watch = synthetic({"fc.weight": [(1.0, 10.0)] * 5000, "fc.bias": [(0.5, 1.0)] * 5000})
    text = Trace(script="x.py", parameters=watch.rows()).to_json()
    row = Trace.from_json(text).parameters[0]
    assert len(row.history) == len(row.steps) == 512 and row.steps[0] == 5000 - 512
    assert row.summary[0]["first_step"] == 0 and row.summary[-1]["last_step"] == 5000 - 513
    assert len(text) < 40_000


def test_non_finite_norms_are_kept_and_round_trip():
    watch = synthetic({"w": [(1.0, 1.0), (math.inf, 1.0), (math.nan, 1.0)]})
    row, = watch.rows()
    assert row.status == "nan" and row.history[1] == math.inf and math.isnan(row.history[2])
    text = Trace(script="x.py", parameters=[row]).to_json()
    assert "Infinity" in text and json.loads(text)  # strict JSON
    back, = Trace.from_json(text).parameters
    assert back.history[1] == math.inf and math.isnan(back.history[2])


def test_version_1_trace_files_are_still_read():
    data = Trace(script="old.py").to_dict()
    data["version"] = 1
    data["parameters"] = [{"name": "w", "shape": [2], "dtype": "float32", "grad_norm": 0.5,
                           "status": "ok", "history": [1.0, None, 0.5]}]
    row, = Trace.from_dict(data).parameters
    assert row.steps == [0, 1, 2] and row.grad_norm_step == 2 and row.summary == []


def test_a_row_made_by_hand_numbers_its_history_from_zero():
    row = ParameterRow("w", (2,), "float32", 3.0, "ok", [1.0, 3.0, None])
    assert row.steps == [0, 1, 2] and row.grad_norm_step == 1


# -- exploding ------------------------------------------------------------------------------
def test_exploding_needs_growth_a_rising_trend_and_a_gradient_above_its_weights():
    growing = [(10.0 ** step, 1.0) for step in range(8)]
    watch = synthetic({"fc.weight": growing, "fc2.weight": [(1.0, 1.0)] * 8})
    assert statuses(watch)["fc.weight"] == "exploding"
    finding, = [f for f in watch.findings(no_locate) if f.kind == "exploding_gradient"]
    assert "rose from 10 (median of steps 0-2) to 1e+06 (median of steps 5-7)" in finding.message
    assert "x1e+05" in finding.message and "Rule:" in finding.message
    assert finding.details["evidence"][0]["name"] == "fc.weight"


def test_an_explosion_that_overflowed_is_exploding_by_its_finite_readings():
    nan = float("nan")
    blown = [(156.0, 10.0), (4.2e7, 1e3), (1.8e21, 1e9)] + [(nan, nan)] * 5
    watch = synthetic({"fc.weight": blown, "fc2.weight": [(1.0, 1.0)] * 8})
    assert statuses(watch)["fc.weight"] == "exploding"
    finding, = watch.findings(no_locate)
    assert "rose from 156 (step 0) to 1.8e+21 (step 2)" in finding.message
    assert "From step 3 on it was NaN/Inf" in finding.message
    assert finding.details["evidence"][0]["non_finite_from"] == 3


def test_a_norm_that_turned_nan_without_growing_first_is_not_exploding():
    nan = float("nan")
    steady = [(1.0, 1.0)] * 4 + [(nan, nan)] * 3
    assert statuses(synthetic({"fc.weight": steady}))["fc.weight"] == "nan"
    wobbly = [(1.0, 1.0), (1e4, 1.0), (10.0, 1.0), (nan, nan)]   # not rising at every step
    assert statuses(synthetic({"fc.weight": wobbly}))["fc.weight"] == "nan"


def test_a_gradient_growing_from_a_zero_init_toward_normal_is_not_exploding():
    """Gradients that start near 0 (a zero-initialised layer after it) and grow to a
    normal size stay far below the weights' own norm."""
    waking = [(1e-7 * 10.0 ** step, 5.0) for step in range(6)] + [(0.05, 5.0)] * 4
    watch = synthetic({"fc.weight": waking, "out.weight": [(0.1, 1.0)] * 10})
    assert statuses(watch)["fc.weight"] == "ok"


def test_a_gradient_growing_above_its_weights_while_the_loss_falls_is_not_exploding():
    """A zero-initialised head learning a large-scale target: the gradients of the layers
    before it grow x1000 from nothing and outgrow their weights, while the loss falls."""
    waking = [(1e-3 * 3.0 ** step, 1.0) for step in range(10)]
    watch = synthetic({"fc.weight": waking, "out.weight": [(1.0, 1.0)] * 10})
    watch.loss_at = lambda step: 500.0 - step   # learning
    assert statuses(watch)["fc.weight"] == "ok" and watch.findings(no_locate) == []
    watch.loss_at = lambda step: 500.0 + step   # diverging: the same norms are an explosion
    assert statuses(watch)["fc.weight"] == "exploding"


def test_a_zero_initialised_head_learning_is_not_exploding():
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 1))
    nn.init.zeros_(model[4].weight)  # as ResNet/DiT heads: the layers before start at 0
    optimizer = genesis.optim.Adam(model.parameters(), lr=1e-4)
    x = genesis.randn(64, 4)
    y = 20 * x[:, :1]
    with TraceSession(check=False) as session:
        for _ in range(400):
            loss = ((model(x) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    trace = session.result(script="t.py")
    assert trace.findings == []
    grad_norms = trace.meta["history"]["parameters"]["0.bias"]["grad_norm"]["values"]
    assert grad_norms[-2] > 1000 * grad_norms[2]  # grown x1000: the case the loss tells apart


def test_an_explosion_that_recovered_is_not_reported_now():
    spike = [(1.0, 1.0)] * 3 + [(1e5, 1.0), (1e6, 1.0), (1e4, 1.0), (1e3, 1.0), (10.0, 1.0)]
    assert statuses(synthetic({"fc.weight": spike}))["fc.weight"] == "ok"


def test_gradient_accumulation_sawtooth_is_not_exploding():
    cycle = [(1.0, 0.5), (2.0, 0.5), (3.0, 0.5), (4.0, 0.5)] * 10
    assert statuses(synthetic({"fc.weight": cycle, "out.weight": cycle}))["fc.weight"] == "ok"


# -- vanishing ------------------------------------------------------------------------------
def test_vanishing_needs_a_gap_to_the_others_a_fall_and_persistence():
    dying = [(1.0, 1.0)] * 3 + [(1e-2, 1.0), (1e-4, 1.0)] + [(1e-7, 1.0)] * 5
    healthy = [(0.5, 1.0)] * 10
    watch = synthetic({"a.weight": dying, "a.bias": dying, "b.weight": healthy,
                       "c.weight": healthy})
    assert statuses(watch) == {"a.weight": "vanishing", "a.bias": "vanishing", "b.weight": "ok",
                               "c.weight": "ok"}
    finding, = watch.findings(no_locate)
    assert finding.details["parameters"] == ["a.weight", "a.bias"]
    assert "fell from 1 (median of steps 0-2) to 1e-07 in steps 5-9" in finding.message
    assert "other parameters' median was 0.5" in finding.message


def test_one_low_step_is_not_vanishing():
    blip = [(1.0, 1.0)] * 6 + [(1e-9, 1.0)] + [(1.0, 1.0)] * 3
    watch = synthetic({"a.weight": blip, "b.weight": [(0.5, 1.0)] * 10})
    assert statuses(watch)["a.weight"] == "ok"


def test_a_converged_run_is_not_vanishing():
    """Every gradient shrinks toward zero as the loss converges; one reaching exactly 0
    first is not vanishing."""
    converging = [(10.0 ** -step, 1.0) for step in range(12)]
    exact = converging[:6] + [(0.0, 1.0)] * 6
    watch = synthetic({"a.weight": exact, "b.weight": converging, "c.weight": converging})
    assert set(statuses(watch).values()) == {"ok"}


def test_a_parameter_small_from_the_start_is_not_falling():
    """A static gap (a big embedding table touched sparsely) is no trend."""
    watch = synthetic({"embed.weight": [(1e-5, 1.0)] * 10, "fc.weight": [(0.5, 1.0)] * 10})
    assert statuses(watch)["embed.weight"] == "ok"


def test_a_converged_bias_alone_is_not_vanishing():
    """An output bias learns the mean quickly and its gradient drops to ~0 while the
    weights keep learning: biases are only judged with their module's weights."""
    settled = [(1.0, 1.0)] * 3 + [(1e-8, 1.0)] * 7
    watch = synthetic({"out.weight": [(0.5, 1.0)] * 10, "out.bias": settled,
                       "fc.weight": [(0.5, 1.0)] * 10})
    assert set(statuses(watch).values()) == {"ok"}


# -- no gradient and zero gradient --------------------------------------------------------------
def test_zero_gradient_is_reported_per_module():
    watch = synthetic({"fc.weight": [(0.0, 1.0)] * 4, "fc.bias": [(0.0, 1.0)] * 4,
                       "out.weight": [(1.0, 1.0)] * 4})
    finding, = watch.findings(no_locate)
    assert finding.kind == "zero_gradient" and finding.module == "fc"
    assert finding.details["parameters"] == ["fc.weight", "fc.bias"]


def test_a_weight_after_a_dead_layer_is_told_its_input_was_zero():
    """The last Linear after dead ReLUs: its bias learns, its weight gets exact zeros
    because its input is all zeros; there is no ReLU after it to blame."""
    watch = synthetic({"hidden.weight": [(0.0, 1.0)] * 4, "hidden.bias": [(0.0, 1.0)] * 4,
                       "out.weight": [(0.0, 1.0)] * 4, "out.bias": [(0.5, 1.0)] * 4})
    hidden, out = watch.findings(no_locate)
    assert out.details["parameters"] == ["out.weight"]
    assert "out.bias of the same module did get non-zero gradients" in out.message
    assert "are the units of the layer before it dead?" in out.message
    assert "ReLUs after it" not in out.message
    assert "no gradient flows back through its output" in hidden.message


def test_a_bias_that_cancels_out_has_no_effect_on_the_loss_and_is_no_finding():
    """score(pos) - score(neg): the shared bias drops out of a ranking loss. Its weight's
    gradient, non-zero in the same backward calls, shows gradient reached the module."""
    watch = synthetic({"score.weight": [(0.5, 1.0)] * 4, "score.bias": [(0.0, 1.0)] * 4})
    assert statuses(watch)["score.bias"] == "no effect on the loss"
    assert watch.findings(no_locate) == []


def test_a_bias_is_judged_by_its_weight_in_the_same_backward_calls():
    """The weight learned only in calls that did not reach the bias: nothing shows that
    gradient reached the module's output when the bias got its zeros."""
    watch = synthetic({"score.weight": [(0.5, 1.0), (0.5, 1.0), (0.0, 1.0), (0.0, 1.0)],
                       "score.bias": [None, None, (0.0, 1.0), (0.0, 1.0)]})
    finding, = watch.findings(no_locate)
    assert finding.details["parameters"] == ["score.bias"]
    assert "in none of the recent backward calls that gave score.bias its zeros" in finding.message
    assert "multiplies" not in finding.message


@pytest.mark.parametrize("weight, bias", [
    ("rnn.weight_ih_l0", "rnn.bias_ih_l0"),
    ("rnn.weight_hh_l1_reverse", "rnn.bias_hh_l1_reverse"),
    ("attn.in_proj_weight", "attn.in_proj_bias"),
])
def test_a_bias_named_after_its_weight_can_cancel_out(weight, bias):
    watch = synthetic({weight: [(0.5, 1.0)] * 4, bias: [(0.0, 1.0)] * 4})
    assert statuses(watch)[bias] == "no effect on the loss"
    assert watch.findings(no_locate) == []


@pytest.mark.parametrize("learning, bias", [
    ("rnn.weight_ih_l0", "rnn.bias_ih_l0_reverse"),   # the other direction
    ("rnn.weight_ih_l0", "rnn.bias_ih_l1"),           # another layer
    ("rnn.weight_hh_l0", "rnn.bias_ih_l0"),           # another product
    ("attn.in_proj_weight", "attn.bias_k"),           # a learned key, no weight_k
])
def test_a_bias_is_judged_by_its_own_weight_only(learning, bias):
    """Another weight of the module learning says nothing about what this bias is added to."""
    watch = synthetic({learning: [(0.5, 1.0)] * 4, bias: [(0.0, 1.0)] * 4})
    assert statuses(watch)[bias] == "zero gradient"
    finding, = watch.findings(no_locate)
    assert finding.details["parameters"] == [bias]


class RNNCritic(nn.Module):
    """A bidirectional ReLU RNN over one time step whose outputs are summed into a score; its
    biases start at 2 (every unit active), the reverse direction's at `reverse_bias`."""

    def __init__(self, reverse_bias: float = 2.0):
        super().__init__()
        self.rnn = nn.RNN(2, 8, nonlinearity="relu", bidirectional=True)
        with genesis.no_grad():
            for name, param in self.rnn.named_parameters():
                if name.startswith("bias"):
                    param.fill_(reverse_bias if name.endswith("reverse") else 2.0)
                else:
                    param.mul_(0.1)

    def forward(self, x):
        state = genesis.rand(2, x.shape[1], 8)  # a different start state for each batch
        out, _ = self.rnn(x, state)
        return out.sum(dim=(0, 2))


def test_rnn_biases_that_cancel_in_a_wgan_critic_have_no_effect_on_the_loss():
    """mean(C(fake)) - mean(C(real)): each bias adds the same to both means, so its gradient
    cancels exactly, while every weight beside it learns."""
    genesis.manual_seed(0)
    critic = RNNCritic()
    optimizer = genesis.optim.SGD(critic.parameters(), lr=1e-3)
    with TraceSession(check=False) as session:
        for _ in range(4):
            optimizer.zero_grad()
            real, fake = genesis.randn(1, 64, 2) + 1, genesis.randn(1, 64, 2)
            (critic(fake).mean() - critic(real).mean()).backward()
            optimizer.step()
    trace = session.result(script="t.py")
    assert {row.name: row.status for row in trace.parameters if "bias" in row.name} == {
        f"rnn.bias_{kind}_l0{direction}": "no effect on the loss"
        for kind in ("ih", "hh") for direction in ("", "_reverse")}
    assert {row.status for row in trace.parameters if "weight" in row.name} == {"ok"}
    assert trace.findings == []


def test_rnn_biases_of_a_dead_direction_are_a_finding_though_the_other_direction_learns():
    genesis.manual_seed(0)
    critic = RNNCritic(reverse_bias=-2.0)  # every reverse unit's ReLU is dead
    optimizer = genesis.optim.SGD(critic.parameters(), lr=1e-3)
    with TraceSession(check=False) as session:
        for _ in range(4):
            optimizer.zero_grad()
            x = genesis.randn(1, 64, 2)
            ((critic(x) - x.sum(dim=(0, 2))) ** 2).mean().backward()
            optimizer.step()
    trace = session.result(script="t.py")
    dead = {f"rnn.{kind}_{part}_l0_reverse" for kind in ("weight", "bias") for part in ("ih", "hh")}
    assert {row.name for row in trace.parameters if row.status == "zero gradient"} == dead
    # told once, by the dead layer's finding, as what followed from it (findings.add_knock_on)
    finding, = trace.findings
    assert finding.kind == "dead_activation" and set(finding.details["starved"]) == dead
    assert "gradient always zero (every gradient path to them passes through " \
           "rnn.l0_reverse.relu)" in finding.message
    # the forward direction learning says nothing of the reverse one's input
    assert "what it multiplies" not in finding.message and "layer before it" not in finding.message


def test_a_weight_without_a_bias_beside_it_is_told_every_possible_cause():
    """A bias-free RNN's dead reverse direction beside a learning forward one: nothing tells
    whether the gradient stopped after its weights or their input was zero."""
    watch = synthetic({"rnn.weight_ih_l0": [(0.5, 1.0)] * 4,
                       "rnn.weight_ih_l0_reverse": [(0.0, 1.0)] * 4})
    finding, = watch.findings(no_locate)
    assert finding.details["parameters"] == ["rnn.weight_ih_l0_reverse"]
    assert "rnn.weight_ih_l0 of the same module did get non-zero gradients, so gradient reaches " \
        "another part of the module" in finding.message
    assert "no gradient flows back through its product, or what flows back cancels exactly, or " \
        "what it multiplies was all zeros" in finding.message
    assert "layer before it dead" not in finding.message


def test_each_zero_parameter_is_explained_by_its_own_weight_or_bias():
    """One direction's weight multiplied zeros (its bias learned); the other direction's
    weight and bias both got zeros."""
    watch = synthetic({"rnn.weight_ih_l0": [(0.0, 1.0)] * 4, "rnn.bias_ih_l0": [(0.5, 1.0)] * 4,
                       "rnn.weight_ih_l0_reverse": [(0.0, 1.0)] * 4,
                       "rnn.bias_ih_l0_reverse": [(0.0, 1.0)] * 4})
    finding, = watch.findings(no_locate)
    assert finding.message.endswith(
        "rnn.bias_ih_l0 of the same module did get non-zero gradients, so gradient does reach the "
        "module: what rnn.weight_ih_l0 multiplies was all zeros (for a Linear or a convolution, its "
        "input: are the units of the layer before it dead?); with rnn.bias_ih_l0_reverse at zero, "
        "the gradient reaching what it is added to summed to exactly zero in every backward call: "
        "no gradient flows back there (e.g. all the ReLUs after that are dead, or that part of the "
        "module's output is multiplied by 0 or left out of the loss), or what flows back cancels "
        "exactly")


def test_only_a_bias_can_cancel_out():
    """A 1-D weight (a LayerNorm's) with exact-zero gradients beside a learning bias
    multiplies zeros (a normalisation over a dimension of size 1)."""
    watch = synthetic({"norm.weight": [(0.0, 1.0)] * 4, "norm.bias": [(0.5, 1.0)] * 4})
    watch.tracked[id(watch._names["norm.weight"].tensor)].tensor.ndim = 1
    finding, = watch.findings(no_locate)
    assert finding.details["parameters"] == ["norm.weight"]
    assert "what it multiplies was all zeros" in finding.message


def test_no_gradient_concerns_expected_parameters_only():
    optimized, plain = _Leaf(), _Leaf()
    watch = ParamWatch()
    watch.track("fc.weight", optimized, rank=2, role="optimizer")
    watch.track("x", plain, rank=1)
    watch.track("teacher.weight", _Leaf(), rank=2, role="module")
    for entry in watch.tracked.values():
        entry.history.add(0, None, None)
    watch.steps = 1
    assert statuses(watch) == {"fc.weight": "no gradient", "x": "not trained",
                               "teacher.weight": "not trained"}
    finding, = watch.findings(no_locate)
    assert finding.details["parameters"] == ["fc.weight"]  # the optimizer says what should learn


def test_without_an_optimizer_module_parameters_are_expected():
    watch = ParamWatch()
    watch.track("fc.weight", _Leaf(), rank=2, role="module")
    watch.track("x", _Leaf(), rank=1)
    for entry in watch.tracked.values():
        entry.history.add(0, None, None)
    watch.steps = 1
    finding, = watch.findings(no_locate)
    assert finding.details["parameters"] == ["fc.weight"]
    assert "a parameter of a module whose forward ran with grad enabled" in finding.message


# -- sessions on PyTorch-style training loops ------------------------------------------------------
def _train(model, steps, lr=0.1, accumulate=1):
    optimizer = genesis.optim.SGD(model.parameters(), lr=lr)
    x, y = genesis.randn(32, 4), genesis.randn(32, 1)
    for _ in range(steps):
        optimizer.zero_grad()
        for part in range(accumulate):
            loss = ((model(x) - y) ** 2).mean() / accumulate
            loss.backward()
        optimizer.step()
    return loss


def test_gradient_accumulation_counts_every_backward_and_finds_nothing():
    genesis.manual_seed(0)
    with TraceSession() as session:
        _train(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)), steps=10, accumulate=4)
    trace = session.result()
    assert trace.steps_seen == 40 and trace.findings == []
    assert all(row.steps == list(range(40)) for row in trace.parameters)


def test_a_frozen_layer_is_not_reported():
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    for param in model[0].parameters():
        param.requires_grad_(False)
    with TraceSession() as session:
        _train(model, steps=3)
    trace = session.result()
    assert trace.findings == [] and [row.name for row in trace.parameters] == ["2.weight", "2.bias"]


def test_gradcheck_inside_the_script_is_not_a_step():
    genesis.manual_seed(0)
    model = nn.Linear(4, 1)
    probe = genesis.randn(3, dtype=genesis.float64, requires_grad=True)
    with TraceSession() as session:
        assert genesis.autograd.gradcheck(lambda t: (t * t).sum(), (probe,))
        assert genesis.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (probe,))
        _train(model, steps=2)
    trace = session.result()
    assert trace.steps_seen == 2 and trace.findings == []
    assert [row.name for row in trace.parameters] == ["weight", "bias"]
    graph, = trace.graphs
    assert any(node.name == "weight" for node in graph.nodes)  # the training step's graph


def test_autograd_grad_reaches_parameters_without_filling_grad():
    genesis.manual_seed(0)
    model = nn.Linear(3, 1)
    with TraceSession() as session:
        optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = model(genesis.randn(8, 3)).pow(2).mean()
            grads = genesis.autograd.grad(loss, list(model.parameters()))
            for param, grad in zip(model.parameters(), grads):
                param.grad = grad
            optimizer.step()
    trace = session.result()
    assert trace.findings == [] and {row.status for row in trace.parameters} == {"ok"}


# -- gradient always zero, on real backward calls -------------------------------------------------
def _zero_gradient_run(loss_of, steps=4):
    """Trace `steps` SGD steps of a 2 -> 8 -> 1 ReLU model on `loss_of(model, batch)`, each
    batch 64 rows; the trace's statuses by name and its findings."""
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
    with TraceSession() as session:
        optimizer = genesis.optim.SGD(model.parameters(), lr=0.01)
        for _ in range(steps):
            optimizer.zero_grad()
            loss_of(model, genesis.randn(64, 2)).backward()
            optimizer.step()
    trace = session.result()
    return {row.name: row.status for row in trace.parameters}, trace.findings


def test_a_wgan_critics_last_bias_has_no_effect_on_the_loss():
    """mean(C(fake)) - mean(C(real)) over batches of 64: the last bias adds the same constant
    to both means, so its gradient is exactly 0 in every step, while its weight learns."""
    status, findings = _zero_gradient_run(
        lambda critic, real: critic(real * 0.5 + 1.0).mean() - critic(real).mean())
    assert status == {"0.weight": "ok", "0.bias": "ok", "2.weight": "ok",
                      "2.bias": "no effect on the loss"}
    assert findings == []


def test_a_linear_after_which_every_relu_is_dead_is_still_found():
    """Its weight and bias both get zeros: nothing flows back through its output. The next
    layer's weight multiplies those zeros while its bias learns."""
    def dead(model, batch):
        with genesis.no_grad():
            model[0].bias.fill_(-100.0)
        return model(batch).pow(2).mean()
    status, findings = _zero_gradient_run(dead)
    assert status == {"0.weight": "zero gradient", "0.bias": "zero gradient",
                      "2.weight": "zero gradient", "2.bias": "ok"}
    finding, = findings  # the dead ReLU's, which tells what it starved
    assert finding.kind == "dead_activation"
    assert finding.details["starved"] == ["0.weight", "0.bias", "2.weight"]
    assert "0.weight and 0.bias: gradient always zero (every gradient path to them passes " \
           "through 1)" in finding.message
    assert "2.weight: gradient always zero (it multiplies the all-zero output of 1)" in finding.message


def test_a_branch_multiplied_by_zero_is_still_found():
    status, findings = _zero_gradient_run(lambda model, batch: (model(batch) * 0.0).mean())
    assert set(status.values()) == {"zero gradient"}
    assert [finding.details["parameters"] for finding in findings] == [
        ["0.weight", "0.bias"], ["2.weight", "2.bias"]]
    assert all("no gradient flows back through its output" in finding.message
               for finding in findings)


def test_a_layer_fed_only_zeros_is_still_found():
    """Its weight multiplies an all-zero input; its bias learns: not a cancelling bias."""
    status, (finding,) = _zero_gradient_run(lambda model, batch: model(batch * 0.0).pow(2).mean())
    assert status["0.weight"] == "zero gradient" and status["0.bias"] == "ok"
    assert finding.details["parameters"] == ["0.weight"]
    assert "what it multiplies was all zeros" in finding.message


def test_a_gradient_set_by_hand_is_no_finding_and_said_so():
    """Reptile: no backward reaches the meta-model; its .grad is set by hand from adapted
    copies and its optimizer steps on it. Its parameters train: "gradient set by hand", no
    finding. Those the script leaves without a .grad, or with one it only filled with zeros,
    still get no gradient."""
    import copy
    genesis.manual_seed(0)
    x = genesis.randn(16, 2)
    with TraceSession(check=False) as session:
        meta = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
        forgotten, zeroed = nn.Linear(2, 1), nn.Linear(2, 1)
        optimizer = genesis.optim.Adam([*meta.parameters(), *forgotten.parameters(),
                                        *zeroed.parameters()], lr=0.01)
        for _ in range(3):
            learner = copy.deepcopy(meta)
            inner = genesis.optim.SGD(learner.parameters(), lr=0.1)
            for _ in range(2):
                inner.zero_grad()
                ((learner(x) - x.sum(1, keepdim=True)) ** 2).mean().backward()
                inner.step()
            optimizer.zero_grad()
            for p, q in zip(meta.parameters(), learner.parameters()):
                p.grad = (p - q).detach()
            for p in zeroed.parameters():
                p.grad = genesis.zeros_like(p)  # filled in by hand, never given a gradient
            optimizer.step()
    trace = session.result(script="t.py")
    rows = {row.name: row.status for row in trace.parameters}
    assert [rows[f"meta.{name}"] for name in ("0.weight", "0.bias", "2.weight", "2.bias")] == \
        ["gradient set by hand"] * 4
    assert [(finding.kind, finding.details["parameters"]) for finding in trace.findings] == [
        ("no_gradient", ["forgotten.weight", "forgotten.bias"]),
        ("no_gradient", ["zeroed.weight", "zeroed.bias"])]


def test_a_bidirectional_rnn_whose_reverse_half_is_never_used_is_told_so():
    """The reverse direction's output is sliced away before the head: its parameters get
    exactly zero gradient while the forward direction's learn, and no layer is dead to
    explain it, so the zero-gradient finding itself says where gradient stops."""
    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(3, 8, batch_first=True, bidirectional=True)
            self.head = nn.Linear(8, 2)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[..., :8])  # the reverse half is never used

    genesis.manual_seed(0)
    model = Tagger()
    optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
    with TraceSession(check=False) as session:
        for _ in range(4):
            loss = model(genesis.randn(4, 5, 3)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    finding, = session.result(script="t.py").findings
    reverse = [f"rnn.{kind}_{part}_l0_reverse" for kind in ("weight", "bias") for part in ("ih", "hh")]
    assert finding.kind == "zero_gradient" and sorted(finding.details["parameters"]) == sorted(reverse)
    said = " ".join(finding.message.split())
    assert "of the same module did get non-zero gradients, so gradient reaches another part of " \
           "the module" in said
    assert "the gradient reaching what they are added to summed to exactly zero" in said
