"""ParameterUses: where a parameter was used in the forward, or cut off from the loss by
.detach(), .data or no_grad; and the hooks it needs cost nothing when no one listens."""
import sys

import genesis
import genesis.nn as nn
from genesis.autograd import engine, function, module_scope
from genesis.debug.parameter_uses import ParameterUses
from genesis.debug.session import TraceSession
from genesis.optim import optimizer as optimizers
from genesis.tensor import cut_listeners


def here() -> int:
    """The line number of the caller's line."""
    return sys._getframe(1).f_lineno


def test_detach_of_a_value_computed_from_the_parameter_is_the_cut():
    layer = nn.Linear(3, 2)
    head = nn.Linear(2, 1)
    with ParameterUses() as uses:
        features = layer(genesis.randn(4, 3)).tanh().detach(); line = here()
        head(features).sum()
    for param in layer.parameters():
        reason = uses.explain(param)
        assert reason.how == ".detach()" and reason.source.line == line
        assert reason.source.file == __file__
    assert "cut off from the loss at" in reason.describe() and "by .detach()" in reason.describe()


def test_data_read_of_the_parameter_is_the_cut():
    weight = nn.Parameter(genesis.randn(2, 3))
    bias = nn.Parameter(genesis.zeros(2))
    with ParameterUses() as uses:
        out = genesis.randn(4, 3) @ weight.data.T + bias; line = here()
    assert uses.explain(weight).how == ".data" and uses.explain(weight).source.line == line
    assert uses.explain(bias).how == "used"


def test_detach_in_place_is_the_cut():
    weight = nn.Parameter(genesis.randn(3))
    other = nn.Parameter(genesis.randn(3))
    with ParameterUses() as uses:
        hidden = weight * 2
        hidden.detach_(); line = here()
        (hidden * other).sum()
    assert uses.explain(weight).how == ".detach_()" and uses.explain(weight).source.line == line


def test_an_op_under_no_grad_is_the_cut_at_its_line():
    backbone = nn.Linear(3, 4)
    head = nn.Linear(4, 1)
    with ParameterUses() as uses:
        with genesis.no_grad():
            features = backbone(genesis.randn(2, 3)); line = here()
        head(features.relu()).sum()
    reason = uses.explain(backbone.weight)
    assert reason.how == "no_grad" and reason.source.line == line
    assert "genesis.no_grad()" in reason.describe()
    assert id(head.weight) in uses.ran_with_grad and id(backbone.weight) not in uses.ran_with_grad


def test_used_but_not_reaching_the_loss_and_never_used():
    used = nn.Parameter(genesis.randn(3))
    unused = nn.Parameter(genesis.randn(3))
    with ParameterUses() as uses:
        aux = (used * 2).sum(); line = here()
    reason = uses.explain(used)
    assert reason.how == "used" and reason.source.line == line
    assert "nothing computed from it reached the loss" in reason.describe()
    assert uses.explain(unused).how == "unused"
    assert uses.explain(unused).describe() == "never used in the forward"


class Halve(genesis.autograd.Function):
    """x / 2 whose backward gives no gradient: it returns None."""

    @staticmethod
    def forward(ctx, x):
        return x * 0.5

    @staticmethod
    def backward(ctx, grad):
        return None


def test_a_functions_forward_is_no_cut_and_its_none_gradient_is_named():
    """A user's Function runs its forward with gradients disabled itself: no no_grad cut.
    A leaf behind it that got no gradient is said to have gone into the Function."""
    layer = nn.Linear(3, 2)
    with ParameterUses() as uses:
        (Halve.apply(layer(genesis.randn(4, 3))) * 3).sum(); line = here()
    reason = uses.explain(layer.weight)
    assert reason.how == "function" and reason.function == "Halve" and reason.source.line == line
    assert not [cut for cut in uses.cuts.values() if cut.fed]
    assert reason.summary() == "no gradient came back through Halve.backward"
    assert "went into the custom Function Halve at" in reason.describe()


def test_a_no_grad_cut_before_a_function_is_still_the_cut():
    layer = nn.Linear(3, 2)
    with ParameterUses() as uses:
        with genesis.no_grad():
            features = layer(genesis.randn(4, 3)); line = here()
        Halve.apply(features.requires_grad_()).sum()
    reason = uses.explain(layer.weight)
    assert reason.how == "no_grad" and reason.source.line == line


def test_cuts_that_never_feed_a_graph_are_not_blamed():
    """Logging a detached loss, an EMA copy, state_dict and init through .data: none of them
    took the parameter out of a graph that was used."""
    weight = nn.Parameter(genesis.randn(3))
    ema = genesis.zeros(3)
    model = nn.Linear(3, 1)
    with ParameterUses() as uses:
        weight.data.mul_(0.5)                       # init through .data
        logged = (weight * 2).sum().detach()        # logging
        ema.mul_(0.9).add_(weight.detach() * 0.1)   # an EMA copy
        model.state_dict()                          # genesis's own detach
    assert uses.explain(weight).how == "used"
    assert uses.explain(model.weight).how == "unused"


def test_a_straight_through_estimator_cut_is_noted_but_the_weight_is_reached():
    genesis.manual_seed(0)
    weight = nn.Parameter(genesis.randn(4, 3))
    with TraceSession() as session:
        optimizer = genesis.optim.SGD([weight], lr=0.1)
        quantised = weight + (weight.round() - weight).detach()
        (genesis.randn(2, 4) @ quantised).sum().backward()
        optimizer.step()
    assert session.result().findings == []


def test_gradchecks_own_calls_are_not_watched():
    probe = genesis.randn(3, dtype=genesis.float64, requires_grad=True)
    with ParameterUses() as uses:
        with engine.unwatched:
            (probe * 2).detach()
        with genesis.no_grad(), engine.unwatched:
            probe * 3
    assert uses.explain(probe).how == "unused" and not uses.cuts


def test_a_loop_cut_at_one_line_is_one_cut():
    layer = nn.Linear(3, 3)
    with ParameterUses() as uses:
        for _ in range(50):
            layer(genesis.randn(1, 3)).detach()
    assert len(uses.cuts) == 1


def test_hooks_are_empty_unless_a_session_records():
    assert not cut_listeners and not optimizers.listeners
    with TraceSession(steps=1) as session:
        assert cut_listeners and optimizers.listeners and session.uses in function.observers
        w = genesis.ones(2, requires_grad=True)
        (w * 2).sum().backward()
        assert not cut_listeners and session.uses not in function.observers
        assert optimizers.listeners  # cheap: told only when an optimizer is made
    assert not cut_listeners and not optimizers.listeners
    assert session.uses not in module_scope.listeners


# -- the session's findings ---------------------------------------------------------------------
def _trained(model_class, steps=2):
    genesis.manual_seed(0)
    model = model_class()
    with TraceSession() as session:
        optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(steps):
            loss = model(genesis.randn(8, 4)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return session.result()


class Detached(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        features = self.embed(x).detach()  # the cut
        return self.head(features)


class Unused(nn.Module):
    def __init__(self):
        super().__init__()
        self.used = nn.Linear(4, 1)
        self.spare = nn.Linear(4, 1)

    def forward(self, x):
        return self.used(x)


def test_the_finding_points_at_the_cut():
    trace = _trained(Detached)
    finding, = trace.findings
    line = next(number for number, text in enumerate(open(__file__), 1) if "# the cut" in text)
    assert finding.kind == "no_gradient" and finding.module == "embed"
    assert finding.source == f"{__file__}:{line}" and "detach()" in finding.code
    assert finding.title == "embed.weight and embed.bias received no gradient: cut off by .detach()"
    assert f":{line} (`features = self.embed(x).detach()  # the cut`) by .detach()" in finding.message
    assert "given to SGD (lr=0.1) made at" in finding.message and finding.details["reason"] == ".detach()"


def test_a_layer_never_called_is_never_used():
    finding, = _trained(Unused).findings
    assert finding.title == "spare.weight and spare.bias received no gradient: never used in the forward"
    assert finding.details["parameters"] == ["spare.weight", "spare.bias"]


def test_a_model_first_run_after_the_recorded_steps_is_named_and_not_called_unused():
    """A sanity check on a first model is the recorded step; the model trained afterwards,
    with its first layer cut off by a detach, ran only in steps that were not recorded: its
    parameters are named by the script's variable, and the report says what it knows."""
    genesis.manual_seed(0)
    x = genesis.randn(8, 4)
    with TraceSession(check=False) as session:
        check = Detached()
        check.embed = nn.Identity()  # the sanity check has no cut
        check(x).sum().backward()  # the recorded step (--steps 1)
        model = Detached()
        optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
    finding, = session.result().findings
    assert finding.title == ("model.embed.weight and model.embed.bias received no gradient: "
                             "not used in the recorded steps")
    assert "trace again with --steps covering one of them" in finding.message
    assert finding.details["reason"] == "unrecorded"


def test_optimizer_parameters_are_named_from_the_callers_variables():
    genesis.manual_seed(0)
    w = genesis.randn(3, requires_grad=True)
    lonely = genesis.randn(3, requires_grad=True)
    with TraceSession() as session:
        optimizer = genesis.optim.Adam([w, lonely], lr=0.1)
        (w * 2).sum().backward()
        optimizer.step()
    finding, = session.result().findings
    assert finding.title == "lonely received no gradient: never used in the forward"


def test_a_detach_made_inside_genesis_is_not_the_scripts():
    module = nn.Module()
    module.weight = nn.Parameter(genesis.randn(2))
    with ParameterUses() as uses:
        state = module.state_dict()  # detaches each parameter, in genesis's code
        (state["weight"] * genesis.ones(2, requires_grad=True)).sum()
    assert not uses.cuts and uses.explain(module.weight).how == "unused"


def test_an_optimizer_that_never_steps_expects_nothing():
    """A model and optimizer set up but not trained in this run (only another model is)."""
    genesis.manual_seed(0)
    idle = nn.Linear(3, 1)
    with TraceSession() as session:
        genesis.optim.SGD(idle.parameters(), lr=0.1)
        other = nn.Linear(3, 1)
        other(genesis.randn(2, 3)).sum().backward()
    trace = session.result()
    assert trace.findings == []
    assert {row.name: row.status for row in trace.parameters}["weight"] == "not trained"


def test_every_layer_run_under_one_no_grad_line_is_cut_there():
    layers = [nn.Linear(3, 3) for _ in range(5)]
    head = nn.Linear(3, 1)
    with ParameterUses() as uses:
        x = genesis.randn(2, 3)
        with genesis.no_grad():
            for layer in layers:
                x = layer(x); line = here()
        head(x).sum()
    assert {uses.explain(layer.weight).how for layer in layers} == {"no_grad"}
    assert {uses.explain(layer.bias).source.line for layer in layers} == {line}


def test_the_ops_between_the_parameter_and_the_cut_are_named():
    layer, head = nn.Linear(3, 2), nn.Linear(2, 1)
    with ParameterUses() as uses:
        features = layer(genesis.randn(4, 3)).tanh().detach()
        head(features).sum()
    reason = uses.explain(layer.weight)
    assert reason.path == ("Linear", "Tanh")
    assert reason.describe().endswith("by .detach(), after Linear -> Tanh")


def test_a_number_made_by_item_that_reaches_the_graph_is_the_cut():
    gate, body = nn.Linear(3, 1), nn.Linear(3, 1)
    x = genesis.randn(4, 3)
    with ParameterUses() as uses:
        strength = gate(x).mean().item(); line = here()
        (body(x) * strength).sum()
    reason = uses.explain(gate.weight)
    assert reason.how == ".item()" and reason.source.line == line
    assert reason.path == ("Linear", "Mean")


def test_numbers_from_tolist_followed_into_an_op():
    weight = nn.Parameter(genesis.randn(3))
    other = genesis.randn(3, requires_grad=True)
    with ParameterUses() as uses:
        values = (weight * 2).tolist()
        (other * values[1]).sum()
    assert uses.explain(weight).how == ".tolist()"


def test_a_logged_item_is_not_a_cut_that_fed_anything():
    weight = nn.Parameter(genesis.randn(3))
    with ParameterUses() as uses:
        loss = (weight * 2).sum()
        print(f"loss {loss.item():.3f}")  # logging only: the number goes nowhere
    assert uses.explain(weight).how == "used"


def test_an_integer_cast_and_a_comparison_are_cuts():
    cast, compared, body = nn.Linear(3, 2), nn.Linear(3, 2), nn.Linear(3, 2)
    x = genesis.randn(4, 3)
    with ParameterUses() as uses:
        index = cast(x).long(); cast_line = here()
        keep = compared(x) > 0; compare_line = here()
        (body(x) * keep * index).sum()
    reason = uses.explain(cast.weight)
    assert reason.how == "an integer cast (its result carries no gradient)"
    assert reason.source.line == cast_line
    reason = uses.explain(compared.weight)
    assert reason.how == "a comparison (>) (its result carries no gradient)"
    assert reason.source.line == compare_line
    assert uses.explain(body.weight).how == "used"  # the parameter the loss does reach


class Energy(nn.Module):
    """E(x), and a penalty on its features from a second head."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 8), nn.Softplus(), nn.Linear(8, 1))
        self.penalty = nn.Linear(8, 1)

    def forward(self, x):
        hidden = self.body[1](self.body[0](x))
        return self.body[2](hidden).sum(), self.penalty(hidden).pow(2).mean()


def _score_matching(with_penalty: bool):
    """Train E on a loss built from its score dE/dx (denoising/sliced score matching), and
    the penalty when `with_penalty`: E's last bias adds a constant to E, so dE/dx cannot
    depend on it."""
    genesis.manual_seed(0)
    model = Energy()
    optimizer = genesis.optim.Adam(model.parameters(), lr=1e-2)
    with TraceSession(check=False) as session:
        for _ in range(3):
            x = genesis.randn(16, 2).requires_grad_()
            energy, penalty = model(x)
            score, = genesis.autograd.grad(energy, x, create_graph=True)
            loss = (score ** 2).sum(-1).mean() + 2 * (score * genesis.randn(16, 2)).sum(-1).mean()
            if with_penalty:
                loss = loss + penalty
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return session.result(script="t.py")


def test_a_bias_that_drops_out_of_the_derivative_the_loss_is_built_from_is_no_finding():
    trace = _score_matching(with_penalty=True)
    assert trace.findings == []
    row, = [row for row in trace.parameters if row.name == "body.2.bias"]
    assert row.status == "no effect on the loss"


def test_a_term_left_out_of_a_loss_built_from_a_derivative_is_still_found():
    """The penalty computed but left out of the loss: its head was never differentiated
    through, so its parameters getting no gradient is a finding."""
    trace = _score_matching(with_penalty=False)
    finding, = trace.findings
    assert finding.title == ("penalty.weight and penalty.bias received no gradient: "
                             "nothing computed from them reached the loss")
