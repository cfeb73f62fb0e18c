"""Softmax probabilities fed to a loss that wants logits or log-probabilities, found in the
recorded graphs.

The rule (softmax_into_loss, a warning), read from the nodes and edges of each recorded
graph: the output of a built-in Softmax op (`F.softmax`, `nn.Softmax`, `x.softmax(dim)`,
softmin), through nothing but ops that only move, copy or cast its values (view, reshape,
squeeze, unsqueeze, transpose, permute, a dtype or device copy, clone/contiguous), is

- input 0 (the scores) of cross entropy against class indices (`F.cross_entropy`,
  `nn.CrossEntropyLoss`: one CrossEntropy or WeightedCrossEntropy node), which applies
  log_softmax to its input itself;
- the input of a LogSoftmax op (`F.cross_entropy` against class probabilities applies it to
  its input; `log_softmax(softmax(x))` written out is the same);
- the tensor a Gather takes its values from, the gathered values then squeezed and negated
  (through a Where that zeroes ignored targets, for class weights): the negative
  log-likelihood of `F.nll_loss` / `nn.NLLLoss`, which expect log-probabilities (the same
  graph as `-probs.gather(1, y[:, None]).squeeze(1)` written out);
- input 0 of `F.kl_div` / `nn.KLDivLoss` (one KLDiv node), which holds log-probabilities
  (distillation's student, given as `softmax(s / T)` instead of `log_softmax(s / T)`).

The finding sits at the loss op's line and names the module whose forward ran the softmax
(when one did). Any other op between the two (a `log()`, a clamp, a matmul) ends the path:
`softmax(x).log()` into nll_loss, an attention softmax followed by a linear head, softmax
taken for metrics beside a loss on the logits, and probabilities given as a *target*
(distillation's soft labels, kl_div's target: input 1) are no finding. A softmax computed without
gradient (under no_grad, or of a detached tensor) is in no graph.

>>> import genesis
>>> import genesis.nn.functional as F
>>> from genesis.debug import capture_graph
>>> scores = genesis.randn(4, 3, requires_grad=True)
>>> graph = capture_graph(F.cross_entropy(scores.softmax(1).view(4, 3), genesis.tensor([0, 1, 2, 0])))
>>> [finding.title for finding in softmax_loss_findings([graph])]
['softmax probabilities passed to cross_entropy, which applies log_softmax itself']
>>> graph = capture_graph(F.cross_entropy(scores, genesis.tensor([0, 1, 2, 0])))
>>> softmax_loss_findings([graph])
[]
"""
from __future__ import annotations

import math

from .findings import Finding
from .graph import Graph, GraphNode
from .parameter_uses import short_path

__all__ = ["softmax_loss_findings", "PASS_THROUGH"]

# Functions whose output holds the values of their input, moved, copied or cast
PASS_THROUGH = frozenset({"View", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Permute",
                          "ToCopy", "ToDevice", "Clone"})
CROSS_ENTROPY = frozenset({"CrossEntropy", "WeightedCrossEntropy"})


def softmax_loss_findings(graphs: list) -> list:
    """One softmax_into_loss finding per loss line and softmax line, at the first graph that
    shows them."""
    found, seen = [], set()
    for graph_index, graph in enumerate(graphs):
        softmaxes = [node for node in graph.nodes
                     if node.kind == "op" and node.function == "Softmax" and not node.user_defined]
        if not softmaxes:
            continue
        consumers: dict = {}
        for edge in graph.edges:
            consumers.setdefault(edge.src, []).append(edge)
        for softmax in softmaxes:
            for loss, kind, through, edge in _losses_fed(graph, consumers, softmax):
                key = (str(loss.source), str(softmax.source), kind)
                if key in seen:
                    continue
                seen.add(key)
                found.append(_finding(graph, graph_index, softmax, loss, kind, through, edge))
    return found


def _losses_fed(graph: Graph, consumers: dict, softmax: GraphNode) -> list:
    """(loss node, "cross_entropy" | "log_softmax" | "nll" | "kl_div", pass-through ops on the way, the
    edge into the loss node) for each loss the softmax's output reaches."""
    found = []
    pending = [(softmax.id, ())]
    visited = {softmax.id}
    while pending:
        node_id, through = pending.pop()
        for edge in consumers.get(node_id, ()):
            node = graph.nodes[edge.dst]
            if node.kind != "op" or node.user_defined or edge.output_nr != 0:
                continue
            if node.function in PASS_THROUGH:
                if node.id not in visited:
                    visited.add(node.id)
                    pending.append((node.id, through + (node.function,)))
            elif node.function in CROSS_ENTROPY and edge.index == 0:
                found.append((node, "cross_entropy", through, edge))
            elif node.function == "LogSoftmax" and edge.index == 0:
                found.append((node, "log_softmax", through, edge))
            elif node.function == "Gather" and edge.index == 0 and _negated(graph, consumers, node):
                found.append((node, "nll", through, edge))
            elif node.function == "KLDiv" and edge.index == 0:
                found.append((node, "kl_div", through, edge))
    return found


def _negated(graph: Graph, consumers: dict, gather: GraphNode) -> bool:
    """Whether the gathered values are squeezed, then negated (through a Where's kept
    branch): nll_loss's -input[target]."""
    squeezes = [graph.nodes[edge.dst] for edge in consumers.get(gather.id, ())
                if graph.nodes[edge.dst].function == "Squeeze"]
    for squeeze in squeezes:
        for edge in consumers.get(squeeze.id, ()):
            node = graph.nodes[edge.dst]
            if node.function == "Neg":
                return True
            if node.function == "Where" and edge.index == 1 and any(
                    graph.nodes[after.dst].function == "Neg" for after in consumers.get(node.id, ())):
                return True
    return False


def _module_words(graph: Graph, path: str | None) -> tuple:
    """(the module as findings name it, as the message says it): "1" and "module 1
    (Softmax)"; the top module by its class name."""
    if path is None:
        return None, None
    if path == "":
        name = graph.modules.get("", "the model")
        return name, f"the forward of {name}"
    return path, f"module {path} ({graph.modules[path]})" if path in graph.modules else f"module {path}"


def _where(node: GraphNode) -> str:
    source = node.source
    return f"{short_path(source.file)}:{source.line}" if source is not None else "an unknown line"


def _finding(graph: Graph, graph_index: int, softmax: GraphNode, loss: GraphNode, kind: str,
             through: tuple, edge) -> Finding:
    module, module_words = _module_words(graph, softmax.module)
    made = "softmax" + (f" in {module_words}" if module_words else "") + \
        (f" (at {_where(softmax)})" if softmax.source != loss.source else "")
    via = f", through {', '.join(through)}," if through else ","
    shape = edge.shape if edge.shape is not None else softmax.shape
    if kind == "cross_entropy":
        title = "softmax probabilities passed to cross_entropy, which applies log_softmax itself"
        classes = shape[0 if len(shape) == 1 else 1] if shape else None
        floor = ""
        if loss.function == "CrossEntropy" and classes and classes > 1:
            floor = (f" With {classes} classes the loss of a position can never go below "
                     f"log(1 + {classes - 1}/e) = {math.log(1 + (classes - 1) / math.e):.3g}, "
                     "however right the prediction.")
        message = (f"The input of this cross entropy is the output of {made}"
                   f"{via} that is, probabilities, not logits. cross_entropy takes log_softmax of "
                   "its input, so it scores a second softmax of values in [0, 1]: the predicted "
                   "distribution cannot become confident, and the gradients shrink as the first "
                   f"softmax saturates, so the model trains slowly or stalls.{floor} Pass the "
                   "logits (the softmax's input) to cross_entropy, and take softmax only for "
                   "predictions and metrics.")
    elif kind == "log_softmax":
        title = "log_softmax taken of softmax probabilities"
        message = (f"This LogSoftmax takes the output of {made}{via} that is, "
                   "probabilities: a second softmax of values in [0, 1], which cannot become "
                   "confident and whose gradients shrink as the first softmax saturates. "
                   "cross_entropy against class probabilities applies log_softmax to its input: "
                   "pass it the logits (the softmax's input); for log-probabilities, take "
                   "log_softmax of the logits.")
    elif kind == "kl_div":
        title = "softmax probabilities passed to kl_div as its input, which holds log-probabilities"
        message = (f"The input of this kl_div is the output of {made}{via} that is, "
                   "probabilities, but kl_div(input, target) reads its input as "
                   "log-probabilities (only the target is probabilities, unless "
                   "log_target=True). It computes target * (log(target) - p) with the "
                   "probabilities p in place of their logs: not the divergence (it can go "
                   "below zero), and minimising it moves the probability onto the class where "
                   "the target is largest instead of toward the target distribution. Pass "
                   "log_softmax of the logits as the input (e.g. F.log_softmax(student / T, "
                   "dim=-1)).")
    else:
        title = "softmax probabilities used as log-probabilities in a negative log-likelihood"
        message = (f"This loss takes -input[target] of the output of {made}"
                   f"{via} which is what nll_loss (nn.NLLLoss) computes; it expects "
                   "log-probabilities. On probabilities each position contributes -p(target) "
                   "instead of -log p(target): not the log-likelihood, and a confidently wrong "
                   "prediction (p(target) near 0) gets almost no gradient. Use log_softmax "
                   "instead of softmax, or cross_entropy on the logits (log_softmax and "
                   "nll_loss in one).")
    source = loss.source
    return Finding(
        "softmax_into_loss", "warning", title, message, op=loss.name, function=loss.function,
        module=module, source=str(source) if source is not None else None,
        code=source.code if source is not None else None, graph=graph_index, node=loss.id,
        step=graph.steps[0] if graph.steps else None,
        details={"loss": kind, "softmax_node": softmax.id, "softmax_module": module,
                 "softmax_source": str(softmax.source) if softmax.source is not None else None,
                 "through": list(through)})
