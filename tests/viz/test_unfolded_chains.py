"""A graph drawn node for node with its runs compressed is made straight from the graph
(viz.unfolded_chains): the same view, item for item and edge for edge in the same order, as
making an item per node and folding the runs afterwards (viz.collapse's general path)."""
from __future__ import annotations

import random

import pytest

from genesis.debug import Edge, Graph, GraphNode, TensorInfo
from viz import collapse
from viz.collapse import _Layout, _Policy, _compress_chains, _copy_shared_leaves, build_view

MODULES = [None, None, None, "enc", "enc.layer", "dec", "cell#2", "cell"]


def random_graph(seed: int) -> Graph:
    """A DAG of ops with leaves (some shared, some feeding one op), saved tensors, outputs,
    module paths, repeated edges between one pair, and long runs of single-input ops."""
    rng = random.Random(seed)
    nodes, edges = [], []

    def add(kind, name, module=None):
        shape = rng.choice([(2,), (3, 4), ()])
        nodes.append(GraphNode(len(nodes), kind, name, [TensorInfo(shape, "float32")], module=module))
        return len(nodes) - 1

    ops = []
    leaves = [add(rng.choice(["param", "input"]), f"w{i}", rng.choice(MODULES)) for i in range(rng.randint(1, 5))]
    for index in range(rng.randint(5, 60)):
        module = rng.choice(MODULES) if rng.random() < 0.3 else (nodes[ops[-1]].module if ops else None)
        op = add("op", f"Op{index}Backward", module)
        if ops and rng.random() < 0.8:  # mostly a chain from the previous op
            edges.append(Edge(ops[-1], op, 0, shape=nodes[ops[-1]].outputs[0].shape))
            if rng.random() < 0.1:  # the same pair twice (x * x)
                edges.append(Edge(ops[-1], op, 1, shape=nodes[ops[-1]].outputs[0].shape))
        if len(ops) > 2 and rng.random() < 0.15:  # a skip connection
            edges.append(Edge(rng.choice(ops[:-1]), op, 2, shape=(2,)))
        if rng.random() < 0.3:
            edges.append(Edge(rng.choice(leaves), op, 3, shape=(2,)))
        if rng.random() < 0.15:
            saved = add("saved", f"saved{index}")
            edges.append(Edge(saved, op, 4, shape=(2,)))
        ops.append(op)
    for number in range(rng.randint(1, 2)):
        output = add("output", f"loss{number}")
        edges.append(Edge(rng.choice(ops[-3:]), output, 0, shape=()))
    return Graph(nodes, edges)


def view_by_folding_afterwards(graph: Graph, visible: list) -> collapse.View:
    layout = _Layout(graph, visible)
    view = layout._folded(_Policy(None))
    _compress_chains(view, graph)
    _copy_shared_leaves(view, graph)
    return view


def described(view) -> tuple:
    return ([(item.key, item.kind, item.cluster, list(item.members), item.title, item.count, item.uses)
             for item in view.items.values()], list(view.edges.items()))


@pytest.mark.parametrize("seed", range(300))
def test_runs_found_straight_from_the_graph_give_the_view_folding_gives(seed):
    graph = random_graph(seed)
    for visible in (list(graph.nodes), [node for node in graph.nodes if node.kind != "saved"]):
        made = _Layout(graph, visible).view(_Policy(None, chains=True))
        assert described(made) == described(view_by_folding_afterwards(graph, visible))


def test_a_long_chain_of_ops_is_drawn_as_its_ends_and_one_chain():
    nodes = [GraphNode(0, "input", "x", [TensorInfo((16,), "float32")])]
    nodes += [GraphNode(i, "op", "MulBackward", [TensorInfo((16,), "float32")]) for i in range(1, 2001)]
    nodes.append(GraphNode(2001, "output", "loss", [TensorInfo((), "float32")]))
    edges = [Edge(i, i + 1, 0, shape=(16,)) for i in range(2001)]
    view = build_view(Graph(nodes, edges), max_nodes=500)
    assert [item.kind for item in view.items.values()] == ["node", "node", "node", "node", "chain"]
    chain = view.items["c0"]
    assert chain.members == list(range(2, 2000))
    assert list(view.edges) == [("n0", "n1"), ("n1", "c0"), ("c0", "n2000"), ("n2000", "n2001")]


def test_the_random_graphs_hold_what_the_comparison_is_for():
    """Runs are folded in most of them, leaves folded into a run and shared leaves copied in
    some: the comparison above covers every step."""
    chains = folded_leaves = copies = 0
    for seed in range(300):
        graph = random_graph(seed)
        view = _Layout(graph, list(graph.nodes)).view(_Policy(None, chains=True))
        kinds = [graph.nodes[member].kind for item in view.items.values() if item.kind == "chain"
                 for member in item.members]
        chains += "op" in kinds
        folded_leaves += "param" in kinds or "input" in kinds
        copies += any(item.uses for item in view.items.values())
    assert chains > 150 and folded_leaves > 10 and copies > 10
