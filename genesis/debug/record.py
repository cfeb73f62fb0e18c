"""`record()`: capture the graph of every backward call made while it is active.

While recording, every Function call notes the user's source line (and its
outputs' value statistics), and the outermost modules called are noted so that
parameters and module paths are named as `genesis.debug.names.RootModules` says
(every op remembers its module call anyway: `genesis.autograd.module_scope`);
every backward run is snapshotted into a `Graph` as it runs, with gradient
statistics added as they flow. Steps with the same structure share one Graph,
which keeps the per-step gradient norm of each leaf.

>>> import genesis
>>> w = genesis.tensor([1.0, 2.0], requires_grad=True)
>>> with record() as recording:
...     for step in range(3):
...         w.grad = None
...         loss = (w * w).sum()
...         loss.backward()
>>> graph, = recording.graphs
>>> graph.steps, [round(norm, 3) for norm in graph.grad_norms["w"]]
([0, 1, 2], [4.472, 4.472, 4.472])

Nothing is paid when not recording: the hook lists the core consults stay empty.
Statistics of tensors on a GPU are taken there and fetched together when each
backward's graph is closed (`genesis.debug.readings`), not once per tensor.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from ..autograd import engine, function, module_scope
from ..autograd.function import AccumulateGrad
from ..autograd.source import SourceLocation
from ..tensor import Tensor, wrap_array
from ..utils.checkpoint import recomputed_inputs
from .capture import RECORD_ATTRIBUTE, GraphBuilder
from .gc_pause import backward_pause, paused_gc
from .names import Names, RootModules, user_namespace, user_namespaces
from .readings import Readings
from .stats import grad_stats_later, value_stats_later

__all__ = ["record", "OpRecord"]


@dataclass(slots=True)
class OpRecord:
    """What the forward of one op left for the graph: its outputs' value statistics (None
    when not collected) and its saved tensors' (shape, dtype). (The module call it ran in
    is on the node itself: `Node._module_call`.)"""

    values: list | None
    saved: tuple


class record:
    """Record module paths, source lines and statistics; capture a Graph per backward.

    Args:
        stats: also collect value statistics of every op output (a few reductions per op).
        include_saved: add saved tensors to the captured graphs.
        readings: where statistics of GPU tensors wait to be fetched (shared with the other
            hooks of a session); they are fetched when each backward's graph is closed.

    `graphs` lists the distinct graphs seen so far (in order of first appearance).
    A backward's graph is built when that backward returns.
    """

    def __init__(self, *, stats: bool = True, include_saved: bool = True, on_step=None,
                 readings: Readings | None = None):
        self.stats = stats
        self.readings = readings if readings is not None else Readings()
        self.include_saved = include_saved
        self.on_step = on_step  # called as on_step(graph_index, {autograd node: node id}) per step
        self.scope = _ModuleScope()
        self._graphs = []
        self._by_structure = {}
        self._open_runs = {}
        self._steps = 0
        # Held while a backward call's graph is filed (backward calls on several threads
        # file theirs one at a time); tools doing more bookkeeping per call can share it.
        self.lock = threading.RLock()
        self._observer = self._observe
        self._checker = self._check
        self._forward_paused = set()  # threads whose recorded forward paused the collector
        self._recording = False
        self._annotated = []  # the attribute dicts of the nodes _observe wrote an OpRecord on

    def __enter__(self) -> "record":
        self._recording = True
        function.observers.add(self._observer)
        module_scope.listeners.add(self.scope)
        engine.node_checkers.add(self._checker)
        engine.backward_listeners.add(self)
        return self

    def __exit__(self, *exc_info) -> None:
        function.observers.discard(self._observer)
        module_scope.listeners.discard(self.scope)
        engine.node_checkers.discard(self._checker)
        engine.backward_listeners.discard(self)
        here = threading.get_ident()
        # Runs of this thread end here; a backward running on another thread goes on
        # calling this recorder (the engine took its listeners when it started) and files
        # its graph when it finishes.
        for key, run in list(self._open_runs.items()):
            if run.thread == here:
                self._close(self._open_runs.pop(key))
        for _ in range(len(self._forward_paused)):  # forwards no backward call followed
            backward_pause.resume()
        self._forward_paused.clear()
        self.readings.fetch()
        self._recording = False
        self._drop_records()

    def _drop_records(self) -> None:
        """Once recording has stopped and every run is filed, take the OpRecords off the
        autograd nodes: the Graphs hold what they said. Left there, they would live as long
        as the program's graphs do (a script's last `loss` keeps its whole graph), several
        objects per op for the collector to walk again and again, and at exit."""
        if self._recording or self._open_runs:
            return
        for attributes in self._annotated:
            attributes.pop(RECORD_ATTRIBUTE, None)
        self._annotated = []

    @property
    def graphs(self) -> list:
        """The distinct Graphs of the backward calls seen so far."""
        return list(self._graphs)

    def release(self) -> None:
        """Forget the graphs seen so far (their holders keep them): a later backward's graph
        is filed as a new one."""
        self._graphs = []
        self._by_structure = {}

    # -- backward passes: the engine says when each starts and ends ----------
    def backward_started(self, run) -> None:
        # The graph of this call is built when its first node runs and filed when it ends:
        # a cyclic collection per 25% growth of the objects alive would walk it again and
        # again (over a second on 100,000 ops). Refcounting still frees what the call drops.
        backward_pause.pause()

    def backward_finished(self, run, completed: bool = True) -> None:
        try:
            finished = self._open_runs.pop(id(run), None)
            if finished is not None:
                self._close(finished)
        finally:
            backward_pause.resume()
            self._resume_forward_pause()

    def _resume_forward_pause(self) -> None:
        """End the pause this thread's recorded forward started (see `_observe`)."""
        here = threading.get_ident()
        if here in self._forward_paused:
            self._forward_paused.discard(here)
            backward_pause.resume()

    def _close(self, run: "_Run") -> None:
        with paused_gc():  # also when record() ends while a call is open (then no pause)
            node_ids = run.builder.ids  # (the run lets go of its builder as it finishes)
            graph = run.finish()
            with self.lock:
                self.readings.fetch()  # the graph's statistics: one transfer, one host batch
                index = self._add_graph(graph)
                if self.on_step is not None:
                    self.on_step(index, node_ids)
            self._drop_records()  # a run another thread filed after recording stopped

    # -- forward: one call per Function.apply -------------------------------
    def _observe(self, node, args, outputs) -> None:
        if not node._next_nodes or engine.unwatched.depth:  # no graph, or gradcheck's own call
            return
        # The forward builds the graph this recorder keeps (a dozen objects an op): no cyclic
        # collection from its first op to the end of the backward call that follows, which
        # would walk the growing graph again and again. Refcounting still frees the rest.
        here = threading.get_ident()
        if here not in self._forward_paused:  # (only this thread adds or removes `here`)
            self._forward_paused.add(here)
            backward_pause.pause()
        node._source = SourceLocation.capture(max_frames=2)  # the ops of a loop share one
        values = None
        if self.stats:
            readings = self.readings
            values = [value_stats_later(o._data, readings, o._device) if o is not None else None
                      for o in outputs]
        attributes = node.__dict__  # (the node's, not a dict of the node: it keeps no node alive)
        attributes[RECORD_ATTRIBUTE] = OpRecord(values, node.saved_tensor_info)
        self._annotated.append(attributes)

    # -- backward: one call per node run --------------------------------------
    def _check(self, node, grads, grad_inputs, flowed_from) -> None:
        if engine.unwatched.depth:  # gradcheck's own backward calls are not the script's steps
            return
        run = self._open_runs.get(id(flowed_from))
        if run is None:
            run = self._open_runs[id(flowed_from)] = _Run(self, flowed_from)
        ids = run.builder.ids
        if node not in ids:
            # A backward call made inside a node's backward (checkpoint's recomputation) is
            # part of this one: the engine notes its roots as sent gradient by that node.
            caller = flowed_from.get(node)
            if caller is None:  # a root of this backward
                run.add_root(node, grads)
            elif caller in ids:
                run.add_inner_root(node, grads, caller)
            else:  # the caller is checked once its backward returns (a root of this backward)
                # (copies: the engine may add into the gradients before then)
                run.waiting.setdefault(caller, []).append(
                    (node, _copies(grads), _copies(grad_inputs)))
                return
        run.file_grads(node, grads)
        for index, child in enumerate(node._next_nodes):
            # (a leaf not in the graph is a copy of a checkpoint's input, drawn as that input)
            if child.__class__ is AccumulateGrad and isinstance(grad_inputs[index], Tensor) \
                    and child in ids:
                run.add_leaf_gradient(child, grad_inputs[index]._data)
        for waiting in run.waiting.pop(node, ()):
            self._check(*waiting, flowed_from)

    # It keeps copies of what it keeps (statistics are taken during the call, or of copies),
    # so the engine goes on owning the gradients (engine.NodeChecker).
    _check.keeps_gradients = False

    def _add_graph(self, graph) -> int:
        """File the step's graph under its structure; returns that graph's index in `graphs`."""
        step = graph.steps[0]
        norms = {node.name: (node.outputs[0].grad or {}).get("norm")
                 for node in graph.nodes if node.kind in ("param", "input")}
        # Filed under the hash of its structure, not the structure itself (a 100,000-op
        # graph's key is 27 MB of tuples): the hash is made a piece of the key at a time, and
        # a graph filed under the same hash is compared with it a piece at a time.
        same_hash = self._by_structure.setdefault(graph.structure_hash(), [])
        filed = next((entry for entry in same_hash if entry[0].same_structure(graph)), None)
        if filed is None:
            graph.grad_norms = {name: [norm] for name, norm in norms.items()}
            same_hash.append((graph, len(self._graphs)))
            self._graphs.append(graph)
            return len(self._graphs) - 1
        existing, index = filed
        existing.nodes = graph.nodes  # the latest step's statistics
        existing.steps.append(step)
        for name, norm in norms.items():
            existing.grad_norms.setdefault(name, []).append(norm)
        return index


class _Run:
    """One backward call being recorded: its graph, and the gradients seen so far."""

    def __init__(self, recorder: record, flowed_from: dict):
        self.flowed_from = flowed_from
        self.thread = threading.get_ident()
        self.namespace = user_namespace()
        names = Names.from_namespace(self.namespace, roots=recorder.scope.roots)
        self.readings = recorder.readings
        self.builder = GraphBuilder(names, recorder.include_saved, readings=recorder.readings)
        with recorder.lock:
            self.builder.graph.steps = [recorder._steps]
            recorder._steps += 1
        self.leaf_gradients = {}  # AccumulateGrad -> summed gradient array
        self.waiting = {}         # node -> checks of an inner backward call made in its backward

    def add_root(self, node, grads) -> None:
        builder = self.builder
        for output_nr, gradient in enumerate(grads):
            if gradient is None:
                continue
            output_id = builder.add_output_of(node, output_nr, self._root_name(node, output_nr))
            builder.graph.nodes[output_id].outputs[0].grad = grad_stats_later(
                gradient._data, self.readings, gradient._device)
        builder.expand()

    def add_inner_root(self, node, grads, caller) -> None:
        """A root of a backward call made inside the backward of `caller` (a node in the
        graph), linked into it; a checkpoint's recomputation, drawn with the checkpoint's
        inputs in place of its copies of them."""
        stand_ins = {leaf: caller.next_functions[position]
                     for leaf, position in recomputed_inputs(caller).items()}
        for output_nr, gradient in enumerate(grads):
            if gradient is not None:
                self.builder.add_inner_root(node, output_nr, caller, stand_ins)

    def _root_name(self, node, output_nr: int) -> str | None:
        for name, value in self.namespace.items():
            if isinstance(value, Tensor) and value.grad_fn is node and value._output_nr == output_nr \
                    and not name.startswith("_"):
                return name
        return None

    def file_grads(self, node, grads) -> None:
        """The statistics of the gradients `node` was given, on its graph node's outputs now
        (not kept by node until the run finishes: a dict and a list per op, 11 MB at the
        peak of a 100,000-op backward). A leaf's gradient is summed and filed by `finish`; a
        node the graph did not take (an inner root given no gradient) files nothing."""
        node_id = self.builder.ids.get(node)
        if node_id is None or node.__class__ is AccumulateGrad:
            return
        readings = self.readings
        for info, gradient in zip(self.builder.graph.nodes[node_id].outputs, grads):
            if info is not None:
                info.grad = None if gradient is None else grad_stats_later(
                    gradient._data, readings, gradient._device)

    def add_leaf_gradient(self, leaf, array) -> None:
        shape = leaf._output_meta[0][0]
        if array.shape != shape:
            array = _sum_to_shape(array, shape)
        total = self.leaf_gradients.get(leaf)
        # a copy: the engine may add into the gradient later in the pass
        self.leaf_gradients[leaf] = array.copy() if total is None else total + array

    def finish(self):
        builder = self.builder
        nodes = builder.graph.nodes
        for node, node_id in builder.ids.items():
            if node.__class__ is AccumulateGrad:
                total = self.leaf_gradients.get(node)
                nodes[node_id].outputs[0].grad = None if total is None else grad_stats_later(
                    total, self.readings, node._output_meta[0][2])
        builder.place_in_modules()
        graph = builder.graph
        self.builder = self.leaf_gradients = self.namespace = self.readings = None
        self.waiting = None
        return graph


def _sum_to_shape(array, shape: tuple):
    """Sum a broadcast gradient array back to `shape` (as the engine does for tensors)."""
    lead = array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, extent in enumerate(shape)
                                      if extent == 1 and array.shape[lead + i] != 1)
    return array.sum(axis=axes, keepdims=True).reshape(shape) if axes else array.reshape(shape)


class _ModuleScope:
    """Listener for `genesis.autograd.module_scope` while recording: the outermost modules
    called (`roots`, by which parameters and module paths are named: see
    `genesis.debug.names.RootModules`) and the line where each module was first called.
    The path of the module each op ran in is worked out when its graph is built, from the
    module call the op remembers (`genesis.debug.module_paths`)."""

    def __init__(self):
        self.roots = RootModules()
        self.call_sites = {}  # id(module) -> SourceLocation of its first call
        self._modules = {}    # id(module) -> module, kept alive so its id stays its own

    @property
    def params(self) -> dict:
        """{id(tensor): (dotted name, tensor)} for the parameters of the outermost modules called."""
        return self.roots.parameter_names()

    def enter(self, module) -> None:
        call = module_scope.running.call
        if call is not None and call[1] is None and module not in self.roots:
            self.roots.note(module, user_namespaces())
        if id(module) not in self.call_sites:
            self._modules[id(module)] = module
            self.call_sites[id(module)] = SourceLocation.capture(max_frames=2)

    def exit(self, module) -> None:
        pass

    def call_site_of(self, parameter) -> SourceLocation | None:
        """Where the module holding `parameter` was first called, if one was."""
        for module in self._modules.values():
            if any(value is parameter for value in module._parameters.values()):
                return self.call_sites[id(module)]
        return None


def _copies(gradients) -> list:
    """The gradients (Tensors or None) as copies, kept past a node checker's call."""
    return [g if not isinstance(g, Tensor) else wrap_array(g._data.copy(), g._device)
            for g in gradients]
