"""`fold_starved`: zero-gradient findings a fully dead layer explains are told in its finding;
those it does not (a path around the dead layer, a layer only partly dead, a product whose
input is not the dead output) stay findings of their own."""
from genesis.debug.findings import Finding
from genesis.debug.graph import Edge, Graph, GraphNode
from genesis.debug.starved_params import fold_starved


def _graph(skip: bool) -> Graph:
    """loss <- Linear(out) <- [relu (dead), out.weight, out.bias]; relu <- Linear(mid) <-
    [x, mid.weight]; with `skip`, mid's output is also added to out's (a way around)."""
    names = [("output", "loss", None), ("op", "LinearBackward", "Linear"),
             ("op", "ReluBackward", "Relu"), ("param", "out.weight", None),
             ("param", "out.bias", None), ("op", "LinearBackward", "Linear"),
             ("input", "x", None), ("param", "mid.weight", None), ("op", "AddBackward", "Add")]
    nodes = [GraphNode(index, kind, name, [], function=function)
             for index, (kind, name, function) in enumerate(names)]
    edges = [Edge(2, 1, 0), Edge(3, 1, 1), Edge(4, 1, 2), Edge(5, 2, 0), Edge(6, 5, 0),
             Edge(7, 5, 1)]
    edges += [Edge(1, 8, 0), Edge(5, 8, 1), Edge(8, 0, 0)] if skip else [Edge(1, 0, 0)]
    return Graph(nodes=nodes, edges=edges)


def _findings(dead_units=16):
    dead = Finding("dead_activation", "warning", "dead relu units in relu", graph=0, node=2,
                   details={"activation": "relu", "dead_units": dead_units, "units": 16})
    zeros = [Finding("zero_gradient", "warning", f"{name}: gradient always zero",
                     details={"parameters": [name]}) for name in ("mid.weight", "out.weight")]
    return [dead, *zeros]


def test_the_parameters_a_dead_layer_starves_are_folded_into_its_finding():
    (dead,) = fold_starved(_findings(), [_graph(skip=False)])
    assert dead.details["starved"] == ["mid.weight", "out.weight"]
    assert dead.details["knock_on"] == [
        "mid.weight: gradient always zero (every gradient path to it passes through relu)",
        "out.weight: gradient always zero (it multiplies the all-zero output of relu)"]


def test_a_parameter_with_a_path_around_the_dead_layer_stays_a_finding():
    kept = fold_starved(_findings(), [_graph(skip=True)])
    assert [finding.title for finding in kept] == [
        "dead relu units in relu", "mid.weight: gradient always zero"]


def test_a_layer_only_partly_dead_explains_nothing():
    kept = fold_starved(_findings(dead_units=12), [_graph(skip=False)])
    assert len(kept) == 3 and "knock_on" not in kept[0].details
