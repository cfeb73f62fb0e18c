"""Traces for the viewer's tests, from real genesis runs: a small network with a custom
Function whose backward is wrong (and the gradient_mismatch Finding a gradient check of it
gives), a run whose module, parameter, script and messages are hostile markup, a run
with two graph structures, and a deep stack of blocks (a drawing with lazy labels)."""
from __future__ import annotations

from dataclasses import asdict

import genesis
import viz
from genesis import nn
from genesis.autograd.gradcheck import check_gradients
from genesis.debug import record
from genesis.debug.findings import Finding
from genesis.debug.trace import ParameterRow, Trace

HOSTILE_MODULE = "<img src=x onerror=alert(1)>"
HOSTILE_PARAMETER = "<svg onload=alert(2)>"
HOSTILE_MESSAGE = "</script><script>alert(3)</script> & \u2028 done"
HOSTILE_SCRIPT = '"><script>alert(4)</script>.py'


class WrongSigmoid(genesis.Function):
    """sigmoid, with the derivative s * (1 + s) where s * (1 - s) is right."""

    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + genesis.exp(-x))
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 + s)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(3, 8), nn.Tanh())
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return WrongSigmoid.apply(self.head(self.encoder(x))).sum()


def model_trace(steps: int = 3) -> Trace:
    """Three training steps of Net, with a gradient_mismatch finding on WrongSigmoid."""
    net = Net()
    x = genesis.randn(5, 3)
    with record() as recording:
        for _ in range(steps):
            net.zero_grad()
            net(x).backward()
    graph, = recording.graphs
    culprit = next(node for node in graph.nodes if node.function == "WrongSigmoid")
    point = genesis.randn(2, 3, dtype=genesis.float64, requires_grad=True)
    result = check_gradients(WrongSigmoid.apply, point, max_report=4)
    mismatch = Finding(
        "gradient_mismatch", "error", "WrongSigmoid.backward disagrees with finite differences",
        message=f"max abs error {result.max_abs_error:.3g}; {result.failing_entries} of "
                f"{result.total_entries} entries out of tolerance",
        op=culprit.name, function="WrongSigmoid", module=culprit.module, source=str(culprit.source),
        code=culprit.source.code, graph=0, node=culprit.id,
        details={"max_abs_error": result.max_abs_error, "failing_entries": result.failing_entries,
                 "worst": [asdict(entry) for entry in result.worst]})
    note = Finding("vanishing_gradient", "info", "encoder.0.bias gradient is small", graph=0,
                   node=graph.find("encoder.0.bias").id)
    return Trace(script="train.py", graphs=[graph], findings=[note, mismatch],
                 parameters=parameter_rows(graph), steps_recorded=steps, steps_seen=steps)


def parameter_rows(graph) -> list:
    rows = []
    for node in graph.of_kind("param"):
        history = graph.grad_norms[node.name]
        rows.append(ParameterRow(node.name, node.shape, node.dtype, history[-1], "ok", history))
    return rows


class Hostile(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module(HOSTILE_MODULE, nn.Linear(2, 2))
        self.register_parameter(HOSTILE_PARAMETER, nn.Parameter(genesis.ones(2)))

    def forward(self, x):
        return (getattr(self, HOSTILE_MODULE)(x) * getattr(self, HOSTILE_PARAMETER)).sum()


def hostile_trace() -> Trace:
    net = Hostile()
    with record() as recording:
        net(genesis.randn(3, 2)).backward()
    graph, = recording.graphs
    linear = next(node for node in graph.nodes if node.module == HOSTILE_MODULE and node.kind == "op")
    finding = Finding("nan_forward", "warning", HOSTILE_MESSAGE, message=HOSTILE_MESSAGE, op=linear.name,
                      module=HOSTILE_MODULE, source=f"{HOSTILE_SCRIPT}:1", code=HOSTILE_MESSAGE, graph=0,
                      node=linear.id, details={HOSTILE_PARAMETER: HOSTILE_MESSAGE,
                                               "rows": [{HOSTILE_MODULE: HOSTILE_MESSAGE}]})
    return Trace(script=HOSTILE_SCRIPT, args=[HOSTILE_MODULE], graphs=[graph], findings=[finding],
                 parameters=parameter_rows(graph), script_error=HOSTILE_MESSAGE, exit_code=1)


def two_graph_trace() -> Trace:
    """A training step and an evaluation-style step with a different graph."""
    net = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    x = genesis.randn(4, 3)
    with record() as recording:
        net(x).sum().backward()
        (net(x) ** 2).mean().backward()
    first, second = recording.graphs
    return Trace(script="two.py", graphs=[first, second], parameters=parameter_rows(first),
                 steps_recorded=2, steps_seen=2)


def deep_trace(blocks: int = 80) -> Trace:
    """A stack of Linear + Tanh blocks: over 300 drawn items when nothing is folded."""
    net = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(blocks)])
    with record() as recording:
        net(genesis.randn(2, 4)).sum().backward()
    graph, = recording.graphs
    return Trace(script="deep.py", graphs=[graph], parameters=parameter_rows(graph), steps_recorded=1,
                 steps_seen=1)


def write(trace: Trace, path) -> None:
    viz.to_html(trace, path)
