import numpy as np
import pytest

import genesis
from genesis.autograd import engine, function, module_scope
from genesis.debug import record
from genesis.debug.session import TraceSession

from .modules import MLP, Model, Unrolled


def hook_lists():
    return function.observers, module_scope.listeners, engine.node_checkers


def train(model, steps, scale=lambda step: 1.0):
    x = genesis.randn(3, 4)
    for step in range(steps):
        for _, parameter in model.named_parameters():
            parameter.grad = None
        loss = model(x).sum() * scale(step)
        loss.backward()


def test_identical_steps_share_one_graph_with_norm_history():
    model = MLP()
    with record() as recording:
        train(model, 4, scale=lambda step: float(step + 1))
    (graph,) = recording.graphs
    assert graph.steps == [0, 1, 2, 3]
    norms = graph.grad_norms["fc1.weight"]
    assert len(norms) == 4
    assert norms[1] == pytest.approx(2 * norms[0]) and norms[3] == pytest.approx(4 * norms[0])
    assert set(graph.grad_norms) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
    # the graph holds the latest step's statistics
    assert graph.find("fc1.weight").outputs[0].grad["norm"] == pytest.approx(norms[3])


def test_norm_history_is_this_steps_gradient_even_when_grads_accumulate():
    model = MLP()
    x = genesis.randn(3, 4)
    with record() as recording:
        for _ in range(3):  # .grad is never cleared: it accumulates, the step's gradient does not
            model(x).sum().backward()
    (graph,) = recording.graphs
    first, second, third = graph.grad_norms["fc2.bias"]
    assert first == pytest.approx(second) == pytest.approx(third)
    assert np.linalg.norm(model.fc2.bias.grad.numpy()) == pytest.approx(3 * first)


def test_a_different_structure_is_a_new_graph():
    model = MLP()
    x = genesis.randn(3, 4)
    with record() as recording:
        model(x).sum().backward()
        (model(x) * 2).sum().backward()
        model(x).sum().backward()
    first, second = recording.graphs
    assert first.steps == [0, 2] and second.steps == [1]


def test_module_paths_are_relative_to_the_outermost_module():
    model = Model(width=4, depth=2)
    with record() as recording:
        loss = model(genesis.randn(2, 4))
        loss.backward()
    (graph,) = recording.graphs
    modules = {node.module for node in graph.of_kind("op")}
    assert "encoder.layers.0.attn.query" in modules and "encoder.layers.1.mlp.fc2" in modules
    assert "head" in modules and "" in modules  # the final .sum() runs in Model.forward itself
    assert graph.find("encoder.layers.1.attn.value.weight").kind == "param"
    assert graph.modules["encoder.layers.0"] == "Block" and graph.modules[""] == "Model"
    assert graph.nodes[0].name == "loss" and graph.nodes[0].kind == "output"


def test_ops_carry_source_lines_and_value_statistics():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with record() as recording:
        y = (x * 3).sum()  # the line recorded for MulBackward and SumBackward
        y.backward()
    (graph,) = recording.graphs
    mul = graph.find("MulBackward")
    assert mul.source.file == __file__ and mul.source.function == "test_ops_carry_source_lines_and_value_statistics"
    assert "(x * 3).sum()" in mul.source.code
    assert mul.outputs[0].stats["max"] == 6.0
    assert mul.outputs[0].grad["norm"] == pytest.approx(2 ** 0.5)
    assert graph.find("x").outputs[0].grad["norm"] == pytest.approx(3 * 2 ** 0.5)


def test_root_saved_tensors_survive_their_release():
    x = genesis.randn(3, requires_grad=True)
    with record() as recording:
        (x * x).sum().backward()
        (x.exp() * x).sum().backward()
    assert len(recording.graphs) == 2
    mul = recording.graphs[1].find("MulBackward")
    assert len([e for e in recording.graphs[1].edges if e.dst == mul.id
                and recording.graphs[1].nodes[e.src].kind == "saved"]) == 2


def test_hooks_are_removed_on_exit_even_after_an_error():
    assert hook_lists() == ([], [], [])
    with pytest.raises(ZeroDivisionError):
        with record():
            assert all(len(hooks) == 1 for hooks in hook_lists())
            1 / 0
    assert hook_lists() == ([], [], [])


def test_no_backward_means_no_graph():
    x = genesis.randn(2, requires_grad=True)
    with record() as recording:
        x * 2
    assert recording.graphs == []


def test_stats_can_be_turned_off():
    x = genesis.randn(2, requires_grad=True)
    with record(stats=False) as recording:
        x.exp().sum().backward()
    exp = recording.graphs[0].find("ExpBackward")
    assert exp.outputs[0].stats is None and exp.outputs[0].grad is not None


def test_autograd_grad_calls_are_recorded_too():
    x = genesis.tensor(2.0, requires_grad=True)
    with record() as recording:
        (gradient,) = genesis.autograd.grad(x ** 3, x)
    (graph,) = recording.graphs
    assert graph.find("x").outputs[0].grad["norm"] == pytest.approx(12.0)


def test_real_nn_modules_name_parameters_and_paths():
    nn = pytest.importorskip("genesis.nn")
    if not hasattr(nn, "Sequential") or not hasattr(nn, "Linear"):
        pytest.skip("genesis.nn has no Sequential/Linear yet")
    model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 1))
    with record() as recording:
        loss = model(genesis.randn(3, 4)).sum()
        loss.backward()
    (graph,) = recording.graphs
    assert {node.name for node in graph.of_kind("param")} == {"0.weight", "0.bias", "1.weight", "1.bias"}
    assert {"0", "1"} <= {node.module for node in graph.of_kind("op")}
    assert graph.modules["0"] == "Linear"


def test_each_call_of_a_module_is_its_own_module_path():
    model = Unrolled()
    with record() as recording:
        model(genesis.randn(3, 2, 3)).backward()
    graph = recording.graphs[0]
    modules = {node.module for node in graph.nodes if node.kind == "op"}
    assert modules == {"cell", "cell.inp", "cell.hid", "cell#2", "cell#2.inp", "cell#2.hid",
                       "cell#3", "cell#3.inp", "cell#3.hid", "head", ""}
    assert graph.modules["cell#3"] == "Cell" and graph.modules["cell#2.hid"] == "Linear"
    params = {node.name: node.module for node in graph.nodes if node.kind == "param"}
    assert params["cell.inp.weight"] == "cell.inp"  # parameters keep their registered names


def test_calls_are_counted_afresh_in_each_call_of_the_outer_module():
    model = Unrolled()
    with record() as recording:
        for _ in range(2):
            model(genesis.randn(2, 2, 3)).backward()
    (graph,) = recording.graphs  # the same structure both steps: one graph, two steps
    assert graph.steps == [0, 1]
    assert {node.module for node in graph.nodes if node.kind == "op"} >= {"cell", "cell#2"}
    assert "cell#3" not in graph.modules


def test_a_loss_module_beside_the_model_is_not_drawn_inside_it():
    from genesis import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    loss_fn = nn.CrossEntropyLoss()
    with record() as recording:
        loss_fn(model(genesis.randn(5, 4)), genesis.tensor([0, 1, 2, 0, 1])).backward()
    (graph,) = recording.graphs
    assert graph.modules[""] == "Sequential" and graph.modules["loss_fn"] == "CrossEntropyLoss"
    modules = {node.name: node.module for node in graph.of_kind("op")}
    assert modules["CrossEntropyBackward"] == "loss_fn" and modules["ReluBackward"] == "1"
    assert {node.name for node in graph.of_kind("param")} == {"0.weight", "0.bias", "2.weight",
                                                               "2.bias"}


def test_two_models_are_named_by_their_variables():
    """A GAN's generator and discriminator: both have a "0.weight", told apart by name."""
    from genesis import nn

    generator = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
    discriminator = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    with record() as recording:
        discriminator(generator(genesis.randn(3, 2))).mean().backward()
    (graph,) = recording.graphs
    params = {node.name for node in graph.of_kind("param")}
    assert {"generator.0.weight", "discriminator.0.weight", "discriminator.2.bias"} <= params
    assert {node.module for node in graph.of_kind("op")} >= {"generator.0", "discriminator.2"}
    assert graph.modules["generator"] == graph.modules["discriminator"] == "Sequential"
    # capture_graph names them the same way outside record()
    again = genesis.debug.capture_graph(discriminator(generator(genesis.randn(3, 2))).mean())
    assert {node.name for node in again.of_kind("param")} == params


def test_models_without_variables_are_named_by_class():
    from genesis import nn

    models = [nn.Linear(2, 2), nn.Linear(2, 1)]
    with record() as recording:
        models[1](models[0](genesis.randn(3, 2))).sum().backward()
    params = {node.name for node in recording.graphs[0].of_kind("param")}
    assert params == {"Linear.weight", "Linear.bias", "Linear#2.weight", "Linear#2.bias"}


@pytest.mark.parametrize("parts_first", [False, True])
def test_parts_of_the_model_called_on_their_own_keep_the_models_names(parts_first):
    """`model[2](model[0](x))` in one step and `model(x)` in another: the parameters have
    one name in every graph, as in the parameter table ("0.weight"; the graphs of the steps
    that called the parts named them "model.0.weight", or "Linear.weight" when those came
    first)."""
    from genesis import nn

    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
    calls = [lambda x: model(x), lambda x: model[2](model[0](x))]
    with record() as recording:
        for call in (calls[::-1] if parts_first else calls):
            call(genesis.randn(8, 4)).pow(2).mean().backward()
    names = [{node.name for node in graph.of_kind("param")} for graph in recording.graphs]
    assert names == [{"0.weight", "0.bias", "2.weight", "2.bias"}] * 2
    modules = [{node.module for node in graph.of_kind("op")} for graph in recording.graphs]
    assert all(found >= {"0", "2"} for found in modules), modules


def test_the_records_leave_the_autograd_nodes_once_recording_stops():
    """The graph keeps the statistics; the program's own graph (alive as long as its `loss`)
    carries nothing of the recorder's afterwards."""
    from genesis.debug.capture import op_record

    x = genesis.randn(4, requires_grad=True)
    with record() as recorder:
        loss = (x * 2).tanh().sum()
        loss.backward()
        assert op_record(loss.grad_fn) is not None  # while recording
        assert loss.grad_fn.metadata == {}  # the user's metadata dict is left alone
    assert op_record(loss.grad_fn) is None
    assert op_record(loss.grad_fn.next_functions[0][0]) is None
    (graph,) = recorder.graphs
    ops = [node for node in graph.nodes if node.kind == "op"]
    assert ops and all(node.outputs[0].stats is not None for node in ops)


def test_a_session_lets_go_of_its_graphs_once_its_trace_has_them():
    x = genesis.randn(3, requires_grad=True)
    session = TraceSession(steps=1, check=False)
    with session:
        (x * x).sum().backward()
    trace = session.result()
    session.release()
    assert session.recorder.graphs == [] and len(trace.graphs) == 1
