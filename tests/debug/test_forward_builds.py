"""`ForwardBuilds` on small training loops: a layer built anew in each forward is found at
the line that builds it; the look-alikes (lazy modules, a layer built once and kept, a model
and optimizer per fold or trial, constant weights, fresh noise) give no finding at all."""
import genesis
import genesis.nn as nn
import genesis.nn.functional as F
from genesis.debug.parameter_uses import short_path
from genesis.debug.session import TraceSession
from tests.debug.traced import line_of, traced


def train(model, steps=4, optimizer=None, make_optimizer=None):
    """`steps` SGD steps on a regression; the optimizer is made after one forward when
    `make_optimizer` is given (a model whose layers the first forward builds)."""
    genesis.manual_seed(0)
    x = genesis.randn(32, 4)
    y = x.sum(dim=1, keepdim=True)
    if make_optimizer is not None:
        model(x)
        optimizer = make_optimizer(model)
    for _ in range(steps):
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()


class CalledInForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)

    def forward(self, x):
        return nn.Linear(8, 1)(self.body(x).tanh())


class AssignedInForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)

    def forward(self, x):
        self.head = nn.Linear(8, 1)
        return self.head(self.body(x).tanh())


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(4, 8), nn.Linear(8, 1)

    def forward(self, x):
        return self.down(self.up(x).tanh())


class BlockInForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(genesis.ones(1))

    def forward(self, x):
        return Block()(x) * self.scale


def _findings_of(model_class) -> list:
    model = model_class()
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
    return traced(lambda: train(model, optimizer=optimizer))


def test_a_layer_built_and_called_in_forward_is_found_at_its_line():
    finding, = _findings_of(CalledInForward)
    assert finding.kind == "built_in_forward" and finding.severity == "error"
    assert finding.source.endswith(f":{line_of(CalledInForward.forward, 'nn.Linear(8, 1)')}")
    assert finding.code == "return nn.Linear(8, 1)(self.body(x).tanh())"
    assert finding.title == "a new Linear is built in each forward: its parameters never train"
    assert finding.message == (
        "This line, run in the forward of CalledInForward, builds a new Linear each time: 4 "
        "backward calls each gave gradients to a new set of its parameters (1x8, 1), used in "
        "that call only. No optimizer that stepped was given any of them, so each set stays as "
        "initialised until the next forward builds another: the layer never learns. Build it "
        "once in CalledInForward.__init__ and only call it in forward (if it is meant to stay "
        "fixed, build it once and call requires_grad_(False) on it).")
    assert finding.step == 0


def test_a_layer_assigned_to_self_in_forward_is_found_at_its_line():
    finding, = _findings_of(AssignedInForward)
    assert finding.kind == "built_in_forward"
    assert finding.source.endswith(f":{line_of(AssignedInForward.forward, 'self.head =')}")


def test_a_block_built_in_forward_is_found_where_the_forward_builds_it():
    """Its layers are built inside Block.__init__: the line to change is the forward's."""
    finding, = _findings_of(BlockInForward)
    assert finding.source.endswith(f":{line_of(BlockInForward.forward, 'Block()(x)')}")
    assert finding.title.startswith("a new Block is built")
    assert "(8x4, 8, 1x8, 1)" in finding.message


def _table_of(model_class) -> dict:
    """{name: status} of the parameter table, and the names of the graphs' parameter leaves."""
    model = model_class()
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
    with TraceSession(check=False) as session:
        train(model, optimizer=optimizer)
    trace = session.result(script="t.py")
    leaves = {node.name for graph in trace.graphs for node in graph.nodes if node.kind == "param"}
    return {row.name: row.status for row in trace.parameters}, leaves


def test_the_parameters_of_a_layer_built_in_forward_are_named_and_never_train_in_the_table():
    """Known to the graph only as inputs ("input0"): named after the layer and its line, in
    the table and in the graph; the model's own parameters keep their rows."""
    line = line_of(CalledInForward.forward, "nn.Linear(8, 1)")
    table, leaves = _table_of(CalledInForward)
    built = [f"Linear built at {short_path(__file__)}:{line} ({name})" for name in ("weight", "bias")]
    assert table == {"body.weight": "ok", "body.bias": "ok",
                     built[0]: "never trains", built[1]: "never trains"}
    assert set(built) <= leaves


def test_the_parameters_of_a_layer_assigned_in_forward_keep_their_attribute_name():
    table, _ = _table_of(AssignedInForward)
    assert table == {"body.weight": "ok", "body.bias": "ok",
                     "head.weight": "never trains", "head.bias": "never trains"}


def test_the_layers_of_a_block_built_in_forward_are_named_at_the_forward_line():
    line = line_of(BlockInForward.forward, "Block()(x)")
    table, _ = _table_of(BlockInForward)
    built = f"Linear built at {short_path(__file__)}:{line}"
    assert table == {"scale": "ok", f"{built} (weight)": "never trains",
                     f"{built} (bias)": "never trains", f"{built} (weight)#2": "never trains",
                     f"{built} (bias)#2": "never trains"}


# -- look-alikes: no finding -----------------------------------------------------------------------
class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = None

    def forward(self, x):
        if self.proj is None:
            self.proj = nn.Linear(x.shape[-1], 1)
        return self.proj(x)


class Stateless(nn.Module):
    """Layers without parameters, a container of existing layers and a constant weight,
    all made in forward."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 8), nn.Linear(8, 1)

    def forward(self, x):
        with genesis.no_grad():
            mix = genesis.randn(4, 4)  # a fixed random map, not a parameter
        x = F.linear(x, mix)
        return nn.Sequential(self.a, nn.ReLU(), nn.Dropout(0.0), self.b)(x)


def test_a_lazy_module_is_not_a_layer_built_in_forward():
    model = nn.Sequential(nn.LazyLinear(8), nn.Tanh(), nn.Linear(8, 1))
    assert traced(lambda: train(model, make_optimizer=lambda m: genesis.optim.SGD(
        m.parameters(), lr=0.05))) == []


def test_a_layer_built_once_in_the_first_forward_and_kept_is_clean():
    assert traced(lambda: train(Cached(), make_optimizer=lambda m: genesis.optim.SGD(
        m.parameters(), lr=0.05))) == []


def test_layers_without_parameters_and_constant_weights_made_in_forward_are_clean():
    model = Stateless()
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
    assert traced(lambda: train(model, optimizer=optimizer)) == []


def test_a_model_and_optimizer_made_anew_per_fold_or_trial_are_clean():
    def folds():
        for lr in (0.01, 0.05, 0.1):  # a fold, a trial, an episode: the same shape of loop
            model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
            train(model, optimizer=genesis.optim.Adam(model.parameters(), lr=lr))
    assert traced(folds) == []


def test_a_cached_layer_rebuilt_per_fold_with_its_optimizer_is_clean():
    """Each fold's model builds its layer in its first forward, then its optimizer."""
    def folds():
        for _ in range(3):
            train(Cached(), make_optimizer=lambda m: genesis.optim.SGD(m.parameters(), lr=0.05))
    assert traced(folds) == []


def test_a_gan_with_new_noise_each_step_is_clean():
    genesis.manual_seed(0)
    generator = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
    critic = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
    g_opt = genesis.optim.Adam(generator.parameters(), lr=1e-3)
    d_opt = genesis.optim.Adam(critic.parameters(), lr=1e-3)

    def run():
        for _ in range(4):
            real = genesis.randn(16, 2) + 2.0
            fake = generator(genesis.randn(16, 2))  # new noise each step
            d_opt.zero_grad()
            d_loss = F.softplus(-critic(real)).mean() + F.softplus(critic(fake.detach())).mean()
            d_loss.backward()
            d_opt.step()
            g_opt.zero_grad()
            F.softplus(-critic(fake)).mean().backward()
            g_opt.step()
    assert traced(run) == []


def test_a_layer_built_in_forward_and_given_to_each_steps_optimizer_is_not_said_untrained():
    """Odd, but each set is updated once: "never trained" would be false."""
    model = AssignedInForward()

    def run():
        genesis.manual_seed(0)
        x = genesis.randn(32, 4)
        for _ in range(4):
            loss = model(x).pow(2).mean()
            optimizer = genesis.optim.SGD(model.parameters(), lr=0.05)
            loss.backward()
            optimizer.step()
    assert [finding.kind for finding in traced(run)] == []
