"""Parameters starved by a dead layer: their "gradient always zero" findings told inside the
dead layer's finding, as what followed from it, not as findings of their own.

A ReLU-like layer with every unit zero for every example (a `dead_activation` finding whose
units are all dead) passes no gradient back, and its output, all zeros, gives no gradient to
a weight that multiplies it. In the recorded graph of the dead layer's op (its structure is
that of every step), a parameter is starved by it when

- every gradient path from the graph's outputs to the parameter passes through the dead op
  (it lies upstream, with no way around it), or
- each op that takes the parameter is a product (Linear, MatMul, Convolution) whose other
  factor is the dead op's output itself (the next layer's weight; not its bias).

A zero-gradient finding all of whose parameters are starved by one dead layer is folded into
that layer's finding; one with a parameter that is not (a skip connection around the dead
layer, a dead layer only partly dead) stays a finding of its own.
"""
from __future__ import annotations

from .findings import add_knock_on

__all__ = ["fold_starved", "gradient_edges", "reached"]

PRODUCTS = frozenset({"Linear", "MatMul", "Convolution"})  # Functions whose weight's gradient
# is its input times the output's gradient: zero where the input is all zeros


def fold_starved(findings: list, graphs: list) -> list:
    """`findings` without the zero-gradient ones a fully dead layer explains, each told in
    that layer's finding instead (`details["starved"]`: the parameters, and a line of its
    `knock_on`)."""
    folded = set()
    for dead in findings:
        if dead.kind != "dead_activation" or dead.graph is None or dead.node is None or \
                dead.details.get("units") is None or \
                dead.details.get("dead_units") != dead.details["units"]:
            continue
        graph = graphs[dead.graph]
        upstream, fed = _starved(graph, dead.node)
        for finding in findings:
            names = finding.details.get("parameters", [])
            if finding.kind != "zero_gradient" or id(finding) in folded or not names or \
                    not all(name in upstream or name in fed for name in names):
                continue
            folded.add(id(finding))
            dead.details.setdefault("starved", []).extend(names)
            layer = dead.details["activation"]
            them = "them" if len(names) > 1 else "it"
            if all(name in upstream for name in names):
                why = f"every gradient path to {them} passes through {layer}"
            elif all(name in fed for name in names):
                why = (f"{'they multiply' if len(names) > 1 else 'it multiplies'} the all-zero "
                       f"output of {layer}")
            else:
                behind = ", ".join(name for name in names if name in upstream)
                after = ", ".join(name for name in names if name not in upstream)
                why = (f"{behind} only get gradient through {layer}, {after} multiply its "
                       "all-zero output")
            add_knock_on(dead, f"{finding.title} ({why})", limit=len(findings))
    return [finding for finding in findings if id(finding) not in folded]


def _starved(graph, dead: int) -> tuple:
    """(names of the parameters every gradient path to which passes through node `dead`,
    names of those only products with `dead`'s output as the other factor take)."""
    nodes = graph.nodes
    inputs, consumers, slots = gradient_edges(graph)
    first = {node: fed for (node, slot), fed in slots.items() if slot == 0}
    around = reached([node.id for node in nodes if node.kind == "output"], inputs, dead)
    through = reached(inputs.get(dead, []), inputs, None)
    upstream = {nodes[i].name for i in through - around if nodes[i].kind == "param"}
    fed = set()
    for node in nodes:
        uses = consumers.get(node.id, [])
        if node.kind == "param" and uses and all(_fed_by(edge, dead, inputs, first, nodes)
                                               for edge in uses):
            fed.add(node.name)
    return upstream, fed


def gradient_edges(graph) -> tuple:
    """The edges gradients flow along (those of saved tensors left out), as (node -> the
    nodes feeding it, node -> the edges leaving it, (node, input slot) -> the node feeding
    that slot)."""
    nodes = graph.nodes
    inputs, consumers, slots = {}, {}, {}
    for edge in graph.edges:
        if nodes[edge.src].kind == "saved" or nodes[edge.dst].kind == "saved":
            continue
        inputs.setdefault(edge.dst, []).append(edge.src)
        consumers.setdefault(edge.src, []).append(edge)
        slots[(edge.dst, edge.index)] = edge.src
    return inputs, consumers, slots


def reached(starts: list, inputs: dict, barrier) -> set:
    """The nodes reached from `starts` going to inputs, not through node `barrier`."""
    seen, stack = set(), [start for start in starts if start != barrier]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(child for child in inputs.get(node, []) if child != barrier)
    return seen


def _fed_by(edge, dead: int, inputs: dict, first: dict, nodes: list) -> bool:
    """Whether the use `edge` of a parameter is as the weight of a product whose input is
    the dead op's output."""
    op = nodes[edge.dst]
    if op.function not in PRODUCTS:
        return False
    factors = inputs.get(edge.dst, [])
    if op.function == "MatMul":
        return len(factors) == 2 and dead in factors and edge.src in factors
    return edge.index == 1 and first.get(edge.dst) == dead
