"""A backward call made inside another's backward (checkpoint's recomputation, a custom
Function whose backward calls `autograd.grad`) is part of that call: the tools watching
backward calls see one step, its graph takes in the recomputed ops (drawn with the
checkpoint's inputs in place of their detached copies), and checks follow the gradient
from the outer root into it."""
import pytest

import genesis
import genesis.nn as nn
from genesis.autograd import engine
from genesis.debug.session import TraceSession
from genesis.utils.checkpoint import checkpoint
from tests.helpers import line_of

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).tanh()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        # the reentrant variant: its backward runs a backward call of its own
        return self.head(checkpoint(self.block, x, use_reentrant=True))


class Listener:
    def __init__(self):
        self.started = self.finished = 0

    def backward_started(self, run):
        self.started += 1

    def backward_finished(self, run, completed=True):
        self.finished += 1


def test_listeners_hear_of_the_outer_backward_call_only():
    net, listener = Net(), Listener()
    engine.backward_listeners.append(listener)
    try:
        net(genesis.randn(8, 4)).sum().backward()
    finally:
        engine.backward_listeners.remove(listener)
    assert (listener.started, listener.finished) == (1, 1)
    assert net.block.fc.weight.grad is not None  # the recomputation's backward ran


def test_a_checkpointed_model_is_one_step_whose_graph_holds_the_recomputed_ops():
    genesis.manual_seed(0)
    net = Net()
    optimizer = genesis.optim.SGD(net.parameters(), lr=0.1)
    with TraceSession(steps=2) as session:
        for _ in range(3):
            optimizer.zero_grad()
            net(genesis.randn(8, 4)).pow(2).mean().backward()
            optimizer.step()
    trace = session.result(script="train.py")
    assert (trace.steps_seen, trace.steps_recorded, len(trace.graphs)) == (3, 2, 1)
    assert trace.findings == []
    nodes = {node.id: node for node in trace.graphs[0].nodes}
    ops = {node.name: node for node in nodes.values() if node.kind == "op"}
    assert {"CheckpointBackward", "TanhBackward", "LinearBackward"} <= set(ops)
    assert ops["TanhBackward"].module == "block"
    params = {node.name: node.id for node in nodes.values() if node.kind == "param"}
    assert set(params) == {"head.weight", "head.bias", "block.fc.weight", "block.fc.bias"}
    # the recomputed Linear takes the model's own parameters, not copies of them
    into_linear = {edge.src for edge in trace.graphs[0].edges
                   if nodes[edge.dst].name == "LinearBackward" and nodes[edge.dst].module == "block.fc"}
    assert {params["block.fc.weight"], params["block.fc.bias"]} <= into_linear
    assert {row.name: row.status for row in trace.parameters} == dict.fromkeys(params, "ok")


class ScaledSquare(genesis.autograd.Function):
    """x² * scale, whose backward differentiates the forward again with autograd.grad."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        with genesis.enable_grad():
            inner = x.detach().requires_grad_()
            slope, = genesis.autograd.grad((inner * inner).sum(), inner)
        return grad * slope


def test_autograd_grad_inside_a_backward_is_part_of_the_step():
    x = genesis.randn(5, requires_grad=True)
    with TraceSession() as session:
        ScaledSquare.apply(x).sum().backward()
    trace = session.result(script="inline")
    assert trace.steps_seen == 1 and trace.findings == []
    assert x.grad.allclose(2 * x.detach())


def test_a_nan_made_inside_a_recomputation_is_found_with_the_path_from_the_loss():
    x = genesis.tensor([0.0, 1.0, 4.0], requires_grad=True)
    with TraceSession() as session:
        y = checkpoint(lambda value: value.sqrt(), x, use_reentrant=True)  # SQRT AT ZERO
        y.sum().backward()
    finding, = session.result(script="inline").findings
    assert finding.kind == "nan_backward" and finding.op == "SqrtBackward"
    assert finding.source == f"{__file__}:{line_of(__file__, '# SQRT AT ZERO')}"  # the recomputed op's line
    assert "CheckpointBackward" in finding.message  # the chain runs from the outer root
    # the checkpoint passes the Inf on: part of this finding, not one of its own
    assert finding.details["knock_on"] == [
        "CheckpointBackward returned Inf in its gradient for input 0: 1 of 3 values"]

