"""Parameters starved by an all-zero factor that never trains: their "gradient always zero"
findings told inside the finding of the parameter that never changes, as what followed from
it, not as findings of their own.

LoRA's B matrix starts at zeros, so that the adapter adds nothing until B is trained. Left
out of the optimizer (added after it was built, say), B stays zero; then A, which reaches
the loss only through the product with B, gets an all-zero gradient at every step. The
finding to act on is B's ("gets gradients but no optimizer updates it", or "never changes"
at learning rate 0); A's "gradient always zero" is its consequence.

In the recorded graph, a parameter P starves another, Q, when

- P's values were all zeros at the recorded step, and a finding of kind `not_optimized` or
  `not_updated` says no step changes P (so they stay zeros), and
- a product (Linear's weight, MatMul, Convolution's weight) takes P, directly or through
  views (transpose, reshape, permute, indexing), as one factor: the gradient it passes to
  its other factor is a product with P, all zeros, and
- every gradient path from the graph's outputs to Q passes through that other factor.

A zero-gradient finding all of whose parameters are starved so is folded into P's finding;
one with a parameter that is not (a path around the product) stays a finding of its own.
"""
from __future__ import annotations

from .findings import add_knock_on
from .starved_params import gradient_edges, reached

__all__ = ["fold_zero_factors"]

NEVER_CHANGES = frozenset({"not_optimized", "not_updated"})
VIEWS = frozenset({"Transpose", "Permute", "Reshape", "Expand", "GetItem", "Diagonal"})
# the products and the input slots of their factors (the bias of Linear is not one)
FACTORS = {"MatMul": (0, 1), "Linear": (0, 1), "Convolution": (0, 1)}


def fold_zero_factors(findings: list, graphs: list) -> list:
    """`findings` without the zero-gradient ones an all-zero parameter that never changes
    explains, each told in that parameter's finding instead (`details["starved"]`, and a
    line of its `knock_on`)."""
    causes = [finding for finding in findings if finding.kind in NEVER_CHANGES]
    starved = [finding for finding in findings
               if finding.kind == "zero_gradient" and finding.details.get("parameters")]
    if not causes or not starved:
        return findings
    folded = set()
    for graph in graphs:
        for cause in causes:
            for zero, names in _starved_by(graph, cause.details.get("parameters", [])).items():
                for finding in starved:
                    parameters = finding.details["parameters"]
                    if id(finding) in folded or not all(name in names for name in parameters):
                        continue
                    folded.add(id(finding))
                    cause.details.setdefault("starved", []).extend(parameters)
                    them = "them" if len(parameters) > 1 else "it"
                    add_knock_on(cause, f"{finding.title} (the only gradient path to {them} is "
                                        f"multiplied by {zero}, all zeros while it never changes)",
                                 limit=len(findings))
    return [finding for finding in findings if id(finding) not in folded]


def _starved_by(graph, never_changing: list) -> dict:
    """{name of an all-zero parameter among `never_changing`: names of the parameters it
    starves in `graph`}."""
    nodes = graph.nodes
    zeros = {node.id: node.name for node in nodes
             if node.kind == "param" and node.name in never_changing and _all_zeros(node)}
    if not zeros:
        return {}
    inputs, _, slots = gradient_edges(graph)
    outputs = [node.id for node in nodes if node.kind == "output"]
    found = {}
    for node in nodes:
        factors = FACTORS.get(node.function) if node.kind == "op" else None
        if factors is None:
            continue
        for slot, other in ((factors[0], factors[1]), (factors[1], factors[0])):
            zero = _zero_source(slots.get((node.id, slot)), zeros, inputs, nodes)
            starving = slots.get((node.id, other))
            if zero is None or starving is None:
                continue
            around = reached(outputs, inputs, node.id)
            behind = reached([starving], inputs, None) - around
            names = {nodes[i].name for i in behind if nodes[i].kind == "param"} - {zeros[zero]}
            if names:
                found.setdefault(zeros[zero], set()).update(names)
    return found


def _zero_source(node_id, zeros: dict, inputs: dict, nodes: list):
    """The all-zero parameter `node_id` is, or is a view of (through view ops only)."""
    while node_id is not None:
        if node_id in zeros:
            return node_id
        node = nodes[node_id]
        fed = inputs.get(node_id, [])
        if node.kind != "op" or node.function not in VIEWS or len(fed) != 1:
            return None
        node_id = fed[0]
    return None


def _all_zeros(node) -> bool:
    stats = node.outputs[0].stats if node.outputs else None
    return bool(stats) and stats.get("min") == 0.0 and stats.get("max") == 0.0 and \
        not stats.get("nan") and not stats.get("inf")

