"""`ActivationWatch`: per-module activation statistics at sampled steps, and the layers they
show dead (ReLU-like outputs zero for every example) or saturated (tanh/sigmoid outputs
pinned at their limits).

At the steps `genesis.debug.sampling.sampled` selects (a step is the number of backward
calls finished before its forward), the watch listens to every module call and every op
that builds a graph; at other steps it listens to nothing. It measures, with a few device
reductions (`genesis.debug.activation_figures`) and one transfer per step:

- each module's output (the last op that ran in its forward; all the calls of a module in a
  step together: an RNN cell's steps), keyed by its module path ("encoder.layers.0.act";
  the top module by its class name, "MLP"), of kind "relu", "tanh", "sigmoid" or "other"
  by the op that made it;
- each ReLU-like, tanh and sigmoid op run inside a module's forward whose output is not that
  module's output (`x = self.fc(x).relu()`): filed under the module that ran it and the op,
  "MLP.relu" ("MLP.relu#2" for the second such op in one call); such ops run outside any
  module under the op's name ("relu"). The ops of a recurrent layer's time steps (`nn.RNN`,
  `LSTM`, `GRU`, and the cells, which declare each step) are filed by their role in a step,
  every step together: "lstm.sigmoid" (the forget gate), "lstm.sigmoid#2" (input),
  "lstm.tanh" (the cell candidate), "lstm.sigmoid#3" (output), "lstm.tanh#2" (tanh of the
  cell state); a GRU's "gru.sigmoid" (reset), "gru.sigmoid#2" (update), "gru.tanh" (new);
  in a stacked or bidirectional one, per layer and direction ("lstm.l1_reverse.tanh#2").
  Ops of a module's own loop over time steps (`h = torch.tanh(self.wx(x[:, t]) + self.wh(h))`)
  are filed once too: an op of the same name and line as an earlier one, computed from the
  same modules or parameters but not from the same module call, product or activation
  (`activation_roles.computed_from`), is that layer again; a loop over layers computes
  from others at each turn, and keeps one entry per layer.

Figures: mean, standard deviation (of the population), fraction of exact zeros, fraction of
dead units (ReLU-like), fraction saturated (|tanh| > 0.99; sigmoid < 0.01 or > 0.99), and
the distribution of (at most 512 of) the values at the steps
`genesis.debug.run_history.distribution_step` selects (as for the parameters). A module
whose output is an inner module's (a Sequential ending in a ReLU) shows the same figures;
findings name only the module whose forward ran the op.

Rules (each finding states its rule and numbers), for hidden layers only: outputs made in
a module's forward that are not the output of the outermost module (a classifier's final
sigmoid may well become confident; a hinge loss's relu is meant to reach zero), not ops
run outside any module (a loss written in the training loop), and taken on by some op other
than a sum or mean to one value per example or fewer (a relu only such a reduction takes,
`relu(margin - pos + neg).mean()` in a forward or a loss module, is a hinge loss):

- dead: a ReLU-like output with at least half of its units dead in each of its last 3
  samples (3 samples at least), and zero for every one of the examples of its latest
  samples together (64 examples at least: in a batch of 8, a healthy sparse unit that fires
  for one input in twelve is zero for the whole batch half the time). A ReLU net with
  10-30% dead units is normal: no finding.
- saturated: a tanh/sigmoid output with at least half of its values saturated in each of
  its first 3 samples: saturated from the start, by the initialisation or the scale of the
  inputs. A sigmoid some op multiplies elementwise by another tensor is a gate (an LSTM's or
  a GRU's, a highway layer's, the sigmoid of x * sigmoid(x)), open or shut by design (an
  LSTM's forget gate set near 1 for a long memory): not judged.

>>> import genesis
>>> from genesis import nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
>>> watch = ActivationWatch()
>>> watch.start()
>>> for step in range(3):
...     model(genesis.randn(16, 4)).sum().backward()
...     watch.step_finished(step + 1)
>>> watch.stop()
>>> sorted(watch.to_dict()), watch.to_dict()["1"]["kind"]
(['0', '1', '2', 'Sequential'], 'relu')
>>> watch.to_dict()["1"]["dead"]["steps"], sorted(watch.latest(2)["1"])
([0, 1, 2], ['dead', 'mean', 'saturated', 'std', 'zeros'])
"""
from __future__ import annotations

import threading
import weakref
from collections import deque

from ..autograd import function, module_scope
from ..autograd.module_scope import running
from ..autograd.source import SourceLocation
from .activation_figures import (MIN_EXAMPLES, SATURATION, Figures, is_sum_or_mean, kind_of,
                                 multiplies, units_axis)
from .activation_roles import computed_from, roles, unit_words
from .findings import Finding
from .names import RootModules
from .readings import Readings
from .run_history import distribution_step
from .sampling import sampled
from .step_series import DistributionSeries, StepSeries

__all__ = ["ActivationWatch", "DEAD_SHARE", "SATURATED_SHARE", "WINDOW"]

DEAD_SHARE = 0.5       # share of dead units that makes a layer dead
SATURATED_SHARE = 0.5  # share of saturated outputs that makes a layer saturated
WINDOW = 3             # samples the share must hold in: the last (dead), the first (saturated)
EXAMPLES = 64          # examples a unit must be zero for, over the latest samples, to be dead
MASKS_KEPT = 16        # latest samples whose units' activity is kept (to reach EXAMPLES)

DEAD_RULE = (f"a hidden layer (not the model's output) with at least {DEAD_SHARE:.0%} of its "
             "units (features of the last dimension; channels of a conv-style output) zero for "
             f"every example of the batch, in each of its last {WINDOW} sampled steps ({WINDOW} "
             f"samples at least; units measured only with {MIN_EXAMPLES}+ values each), and "
             f"zero for all of the {EXAMPLES}+ examples of its latest samples together")
SATURATED_RULE = (f"a hidden layer (not the model's output, nor a sigmoid gating a product as an "
                  f"LSTM's gates do) with at least {SATURATED_SHARE:.0%} of "
                  f"its outputs saturated (|tanh| > {SATURATION:g}; sigmoid < {1 - SATURATION:.2g} "
                  f"or > {SATURATION:g}) in each of its first {WINDOW} sampled steps")


class _Output:
    """One output measured in the step under way: the figures, what made it, where it is
    filed, whether it is the top module's output (`final`)."""

    __slots__ = ("order", "tensor", "figures", "op", "node", "node_name", "source", "owner",
                 "module", "final", "fed_by", "examples", "feeds", "gates", "step", "inputs",
                 "runs")

    def __init__(self, tensor, figures: Figures, op: str, node, source, examples: int):
        self.order = 0      # when it was measured in the step: entries are listed in that order
        self.tensor, self.figures = tensor, figures
        self.op, self.source = op, source
        self.node, self.node_name = weakref.ref(node), type(node).__name__
        self.owner = None   # the key it was first filed under, that of the call that made it
        self.module = None  # the path of the module whose forward made it (None: outside any)
        self.final = False
        self.fed_by = None  # the key of the module call whose output the op took, if any
        self.examples = examples  # values per unit: the examples (and positions) it holds
        self.feeds = False  # an op took it on as a layer does (not a hinge loss's sum or mean)
        self.gates = False  # a product took it on as a gate: times another tensor, elementwise
        self.step = None    # (call order, unit, index): the time step its call declared, if any
        self.inputs = None  # what its input is computed from in its call (`computed_from`)
        self.runs = 1       # the outputs of its key's own forward in the step (time steps)


class _Entry:
    """The history of one key: series of each figure, the value distribution, and (for the
    rules) the samples where this key's own forward made the output."""

    __slots__ = ("kind", "series", "values", "samples", "activity", "op", "source", "node",
                 "node_name", "module", "final", "fed_by", "feeds", "gates", "unit", "runs")

    def __init__(self):
        self.kind = "other"
        self.series = {name: StepSeries() for name in ("mean", "std", "zeros", "dead", "saturated")}
        self.values = DistributionSeries()
        self.samples = []   # (step, dead share, saturated share, units), of its own outputs
        self.activity = deque(maxlen=MASKS_KEPT)  # the latest (step, units alive, examples)
        self.op = self.source = self.node = self.node_name = self.module = self.fed_by = None
        self.final = False  # its output was once the top module's
        self.feeds = False  # an op took its output on as a layer does (see _Output.feeds)
        self.gates = False  # a product took its output on as a gate (see _Output.gates)
        self.unit = None    # the recurrent unit whose time steps made it ("", "l1_reverse")
        self.runs = 1       # how many outputs of its own it merged in its latest sample

    def to_dict(self) -> dict:
        kept = {name: series.to_dict() for name, series in self.series.items()
                if name not in ("dead", "saturated") or series.last_step is not None}
        return {"kind": self.kind, **kept, "values": self.values.to_dict()}


class _ThreadState(threading.local):
    def __init__(self):
        self.ops = 0        # graph ops seen on this thread in the step
        self.last = None    # (node, output) of the last of them
        self.entered = []   # `ops` when each module call in progress started


class ActivationWatch:
    """Measures activations at sampled steps: `start()`, then `step_finished(steps)` after each
    backward call (`steps`: the backward calls finished so far), `stop()`; `findings()`,
    `to_dict()` and `latest(step)` give what it saw.

    Args:
        readings: where the device figures wait to be fetched together (one transfer a step).
        root_prefix: the path of an outermost module ("" for the only model, else a name:
            `genesis.debug.names.RootModules.prefix`, which is the default, with roots of its
            own). Keys are named at the end of each step, once every model of the step is known.
    """

    # As an op observer it is not shown views of data (a DataLoader's samples, indexed out of
    # the dataset): outside the graph, whose outputs `__call__` would pass over at once.
    sees_data_views = False

    def __init__(self, readings: Readings | None = None, root_prefix=None):
        self.readings = readings if readings is not None else Readings()
        self.root_prefix = root_prefix if root_prefix is not None else RootModules().prefix
        self.entries = {}       # key -> _Entry, in the order first filed
        self._step = 0          # the step whose forward runs now
        self._running = False
        self._measuring = False
        self._state = _ThreadState()
        self._lock = threading.Lock()
        self._trees = {}        # id(outermost module) -> (module, {id(submodule): path in it})
        self._class_names = {}  # module name -> its class name
        self._clear()
        self._latest = (None, {})

    # -- listening -------------------------------------------------------------------
    def start(self) -> None:
        """Listen from now on (at sampled steps)."""
        self._running = True
        self._listen(sampled(self._step))

    def stop(self) -> None:
        """Stop listening; what the step under way measured so far is kept."""
        self._running = False
        if self._measuring:
            self._finish(self._step)
        self._listen(False)

    def step_finished(self, steps: int) -> None:
        """A backward call finished and `steps` have so far: file what the step measured, and
        listen during the next forward only if its step is sampled. Nothing else at unsampled
        steps."""
        if steps == self._step:  # a backward call that did not complete: the step goes on
            return
        if self._measuring:
            self._finish(self._step)
        self._step = steps
        self._listen(self._running and sampled(steps))

    def _listen(self, on: bool) -> None:
        if on == self._measuring:
            return
        self._measuring = on
        if on:
            self._state.entered.clear()  # calls begun while not listening end unheard of
            function.observers.add(self)
            module_scope.listeners.add(self)
        else:
            function.observers.discard(self)
            module_scope.listeners.discard(self)

    # -- what the hooks see ------------------------------------------------------------
    def __call__(self, node, args: tuple, outputs: tuple) -> None:
        """Op observer: note the op's output as the last one; measure a ReLU-like, tanh or
        sigmoid output now, for the module call that ran it."""
        if not outputs:
            return
        output = outputs[0]
        if not output.requires_grad:  # no graph (no_grad, an evaluation pass): not a training step
            return
        if self._outputs:  # does it take a measured output on, as a layer does?
            for arg in args:
                taken = self._outputs.get(id(arg))
                if taken is None or taken.tensor is not arg:
                    continue
                if not taken.feeds:
                    # a sum or mean to one value per example (or fewer) ends a hinge loss
                    taken.feeds = output._data.size > taken.examples or not is_sum_or_mean(node)
                if not taken.gates and taken.figures.kind == "sigmoid":
                    taken.gates = multiplies(node, args, arg)
        state = self._state
        state.ops += 1
        state.last = (node, output)
        kind, op = kind_of(node)
        if kind == "other":
            return
        source = node._source or SourceLocation.capture(max_frames=1)
        measured = self._measure(node, output, kind, op, source)
        call = running.call
        if call is not None:
            step = running.step
            if step is not None and step[0] == call[2]:
                measured.step = step
            else:
                measured.inputs = computed_from(node, call, self._walked)
        child = node._next_nodes[0] if node._next_nodes else None
        fed_by = child._module_call if child is not None else None
        with self._lock:
            if fed_by is not None:
                measured.fed_by = self._key(fed_by)
            self._pending.setdefault(call[2] if call is not None else None, []).append(measured)

    def enter(self, module) -> None:
        """Module listener: a module's forward starts."""
        state = self._state
        state.entered.append(state.ops)

    def exit(self, module) -> None:
        """Module listener: a module's forward ends; file its output and the activations its
        own forward made."""
        state = self._state
        started = state.entered.pop() if state.entered else state.ops
        call = running.call
        if call is None or call[0] is not module:
            return
        with self._lock:
            pending = self._pending.pop(call[2], ())
            if state.ops == started:  # no op of a graph ran in it (an evaluation pass, Identity)
                return
            key = self._key(call)
            node, output = state.last
            measured = self._outputs.get(id(output))
            if measured is None or measured.tensor is not output:
                kind, op = kind_of(node)
                measured = self._measure(node, output, kind, op, None)
            for inline, label in roles(pending, measured):
                self._file((*key, label), inline, key)
            self._file((*key, ""), measured, key)
            self._classes.setdefault(key, type(module).__name__)
            if call[1] is None:
                measured.final = True
                self._outputs.clear()  # nothing outside this call can return its outputs

    def _measure(self, node, output, kind: str, op: str, source) -> _Output:
        axis = units_axis(output, node)
        figures = Figures.measure(output._device.xp, output._data, kind, axis,
                                  distribution=distribution_step(self._step))
        examples = output._data.size // output.shape[axis] if axis is not None and \
            output.shape[axis] else output._data.size
        measured = _Output(output, figures, op, node, source, examples)
        measured.order = self._measured = self._measured + 1
        self._outputs[id(output)] = measured
        return measured

    def _file(self, key: tuple, measured: _Output, module) -> None:
        """File `measured` under `key` (a module call's key and "" for its output, or an op's
        name for an activation its forward ran); the first key it is filed under is that of
        the call whose forward made it (`module`: that call's key)."""
        filed = self._filed.get(key)
        own = measured.owner is None
        if own:
            measured.owner, measured.module = key, module
        if filed is None:
            self._filed[key] = [measured, own, measured.figures]
        elif filed[2].kind == measured.figures.kind:  # called again in the step: both count
            filed[2] = filed[2].merged(measured.figures)
            if own and filed[1]:  # and what took its output on (see `_finish`)
                filed.append(measured)

    def _key(self, call) -> tuple:
        """(id of the outermost module, path in it) of a module call: the module's path in
        its outermost module's tree ("" for that one), else (made inside a forward) its
        class name under the call that ran it."""
        key = self._paths.get(call[2])
        if key is None:
            module, outer, _ = call
            root = call
            while root[1] is not None:
                root = root[1]
            known = self._trees.get(id(root[0]))
            if known is None:  # the module is kept: its id stays its own
                known = self._trees[id(root[0])] = (root[0], {
                    id(sub): name for name, sub in root[0].named_modules()})
            path = known[1].get(id(module))
            if path is None:
                above = self._key(outer)[1]
                path = f"{above}.{type(module).__name__}" if above else type(module).__name__
            key = self._paths[call[2]] = (id(root[0]), path)
        return key

    def _name(self, key) -> str | None:
        """The dotted name of a key: "fc1", "encoder.relu#2"; the top module by its class name
        ("MLP", "MLP.relu"), or by its name beside other models ("generator.0")."""
        if key is None:
            return None
        root_id, path, *op = key
        if root_id is None:
            return op[0]
        root = self._trees[root_id][0]
        prefix = self.root_prefix(root)
        name = (f"{prefix}.{path}" if prefix else path) if path else \
            (prefix or type(root).__name__)
        return f"{name}.{op[0]}" if op and op[0] else name

    # -- the end of a step ------------------------------------------------------------
    def _finish(self, step: int) -> None:
        """File the ops run outside any module, hand the step's figures to `readings` (one read
        per array namespace), and start the next step afresh."""
        with self._lock:
            counts = {}
            for outside in self._pending.get(None, ()):
                number = counts[outside.op] = counts.get(outside.op, 0) + 1
                self._file((None, "", outside.op + (f"#{number}" if number > 1 else "")),
                           outside, None)
            filed, classes = self._filed, self._classes
            self._state.last = None  # this thread's last output, kept no longer than the step
            for key, name in classes.items():
                self._class_names[self._name(key)] = name
            self._clear()
            by_namespace = {}
            for key, (measured, own, figures, *again) in sorted(filed.items(),
                                                                key=lambda item: item[1][0].order):
                measured.tensor = None  # the figures are all it needs from now on
                measured.runs += len(again)
                for other in again:  # a hidden layer or a gate at any of its calls or steps
                    other.tensor = None
                    measured.feeds = measured.feeds or other.feeds
                    measured.gates = measured.gates or other.gates
                if own:
                    measured.module, measured.fed_by = self._name(measured.module), \
                        self._name(measured.fed_by)
                    measured.owner = self._name(measured.owner)
                by_namespace.setdefault(id(figures.xp), []).append(
                    (self._name(key), measured, own, figures))
        for entries in by_namespace.values():
            xp = entries[0][3].xp
            arrays = [array for *_, figures in entries for array in figures.readable()]
            self.readings.read(xp, arrays, lambda values, entries=entries:
                               self._record(step, entries, values))

    def _record(self, step: int, entries: list, values: list) -> None:
        latest = {}
        position = 0
        for key, measured, own, figures in entries:
            numbers = figures.read(values[position:position + figures.width])
            position += figures.width
            entry = self.entries.get(key)
            if entry is None:
                entry = self.entries[key] = _Entry()
            entry.kind = figures.kind
            for name in ("mean", "std", "zeros"):
                entry.series[name].add(step, numbers[name])
            if numbers["dead"] is not None:
                entry.series["dead"].add(step, numbers["dead"])
            if numbers["saturated"] is not None:
                entry.series["saturated"].add(step, numbers["saturated"])
            if numbers["sample"] is not None:
                entry.values.add(step, numbers["sample"])
                sample = entry.values.samples[-1]  # percentiles of the sample; counts of all
                sample["count"], sample["non_finite"] = figures.count, numbers["non_finite"]
            if own:
                entry.samples.append((step, numbers["dead"], numbers["saturated"], figures.units))
                if numbers["alive"] is not None:
                    entry.activity.append((step, numbers["alive"], figures.count // figures.units))
                entry.op, entry.source, entry.node_name = measured.op, measured.source, \
                    measured.node_name
                if entry.node is None or entry.node() is None:  # the first, in a recorded graph
                    entry.node = measured.node
                entry.module = measured.module
                entry.fed_by = measured.fed_by
                entry.final = entry.final or measured.final
                entry.feeds = entry.feeds or measured.feeds
                entry.gates = entry.gates or measured.gates
                entry.unit = measured.step[1] if measured.step is not None else None
                entry.runs = measured.runs
            latest[key] = {name: numbers[name] for name in ("mean", "std", "zeros", "dead",
                                                            "saturated")}
        if self._latest[0] != step:
            self._latest = (step, {})
        self._latest[1].update(latest)

    def _clear(self) -> None:
        self._pending = {}   # module call's order (None: outside modules) -> activations it ran
        self._outputs = {}   # id(output) -> _Output, within the outermost call under way
        self._filed = {}     # key -> [first _Output, whether this key's forward made it,
        #                      the Figures of all its calls in the step, the other _Outputs
        #                      its own forward made]
        self._paths = {}     # module call's order -> its key
        self._measured = 0   # outputs measured in the step
        self._classes = {}   # module call's key -> its class name
        self._walked = set()  # ids of the nodes `computed_from` walked from in the step

    # -- what was seen --------------------------------------------------------------------
    def findings(self, locate=None) -> list:
        """Dead and saturated layers (see the module docstring for the rules), one finding
        each, for the key of the module call whose forward ran the op. `locate(node)` gives
        the (graph, node id) of the op's node in a recorded graph, else (None, None)."""
        found = []
        for key, entry in self.entries.items():
            hidden = entry.module is not None and not entry.final and entry.feeds
            if entry.kind == "relu" and hidden:
                facts = _dead(entry.samples, entry.activity)
                if facts is not None:
                    found.append(self._finding("dead_activation", key, entry, facts, locate))
            elif entry.kind in ("tanh", "sigmoid") and hidden and not entry.gates:
                facts = _saturated(entry.samples)
                if facts is not None:
                    found.append(self._finding("saturated_activation", key, entry, facts, locate))
        return found

    def _named(self, key: str) -> str:
        """A key with its module's class where the path does not say it: "4 (ReLU)"."""
        name = self._class_names.get(key)
        return f"{key} ({name})" if name is not None and name not in key else key

    def _finding(self, kind: str, key: str, entry: _Entry, facts: dict, locate) -> Finding:
        node = entry.node() if entry.node is not None else None
        graph, node_id = locate(node) if locate is not None and node is not None else (None, None)
        source = entry.source
        where = f"the {entry.op}{unit_words(entry.unit)} in {entry.module}'s forward" \
            if entry.module is not None and entry.module != key else \
            f"the output of {self._named(key)}"
        if entry.runs > 1:
            where += (f" (all its time steps together: {entry.runs} in the last sample)"
                      if entry.unit is not None else
                      f" (all its runs in a step together: {entry.runs} in the last sample)")
        if entry.fed_by is not None and entry.fed_by != entry.module:
            where += f" (on the output of {self._named(entry.fed_by)})"
        shares = ", ".join(f"{share:.0%}" for share in facts["shares"])
        steps = ", ".join(str(step) for step in facts["steps"])
        if kind == "dead_activation":
            units, dead = facts["units"], facts["dead"]
            title = (f"dead {entry.op} units in {self._named(key)}: {dead} of {units} zero for "
                     f"every example")
            message = (f"In {where}, {dead} of the {units} units were zero for every one of the "
                       f"{facts['examples']} examples of sampled steps "
                       f"{', '.join(str(step) for step in facts['examples_steps'])}; in each "
                       f"batch alone, {shares} of them in sampled steps {steps} (and at least "
                       f"{DEAD_SHARE:.0%} in every sample since step {facts['since']}). A dead "
                       "unit passes no gradient, so the weights "
                       "before it stop learning. "
                       f"Rule: {DEAD_RULE}. Usual causes: a learning rate too high, a large "
                       "negative bias or a bad initialisation; try a lower learning rate, "
                       "Kaiming initialisation, or leaky_relu.")
            step = facts["since"]
        else:
            title = (f"saturated {entry.op} in {self._named(key)}: {facts['shares'][0]:.0%} of its "
                     "outputs at the limits from the start")
            message = (f"In {where}, {shares} of the outputs were saturated in sampled steps "
                       f"{steps} (the first), and {facts['last']:.0%} in the last sample (step "
                       f"{facts['last_step']}). A saturated {entry.op} passes almost no gradient. "
                       f"Rule: {SATURATED_RULE}. Usual causes: inputs not normalised, weights "
                       "initialised too large; scale the inputs, use Xavier initialisation or "
                       "normalise the layer's input.")
            step = facts["steps"][0]
        return Finding(kind, "warning", title, message, op=entry.node_name,
                       module=entry.module, source=str(source) if source is not None else None,
                       code=source.code if source is not None else None, graph=graph,
                       node=node_id, step=step,
                       details={"activation": key, "op": entry.op,
                                "rule": DEAD_RULE if kind == "dead_activation" else SATURATED_RULE,
                                "steps": facts["steps"], "shares": facts["shares"],
                                **({"dead_units": facts["dead"], "units": facts["units"]}
                                   if kind == "dead_activation" else {})})

    def latest(self, step: int) -> dict:
        """{key: {"mean", "std", "zeros", "dead", "saturated"}} measured at `step` ({} if it
        was not sampled, or its figures are not fetched yet)."""
        return dict(self._latest[1]) if self._latest[0] == step else {}

    def to_dict(self) -> dict:
        """The "activations" section of the run history: {key: {"kind", "mean", "std",
        "zeros", "dead" (ReLU-like), "saturated" (tanh, sigmoid): Series, "values":
        [distribution sample]}}."""
        return {key: entry.to_dict() for key, entry in self.entries.items()}


def _dead(samples: list, activity) -> dict | None:
    """The facts that make a layer dead: at least DEAD_SHARE of its units dead in each of its
    last WINDOW samples (`since`: the first step of the run of such samples), and at least
    DEAD_SHARE of them zero for every one of the EXAMPLES or more examples of its latest
    samples together (`activity`: (step, alive mask, examples per unit) of the latest). Else
    None: a batch too small to tell a dead unit from a sparse one says nothing."""
    readings = [(step, dead, units) for step, dead, _, units in samples if dead is not None]
    if len(readings) < WINDOW or any(dead < DEAD_SHARE for _, dead, _ in readings[-WINDOW:]):
        return None
    together = _never_active(activity)
    if together is None:
        return None
    never, examples, steps = together
    if never.mean() < DEAD_SHARE:
        return None
    start = len(readings) - WINDOW
    while start > 0 and readings[start - 1][1] >= DEAD_SHARE:
        start -= 1
    return {"steps": [step for step, _, _ in readings[-WINDOW:]],
            "shares": [dead for _, dead, _ in readings[-WINDOW:]], "since": readings[start][0],
            "units": readings[-1][2], "dead": int(never.sum()), "examples": examples,
            "examples_steps": steps}


def _never_active(activity):
    """(mask of the units zero in every example, how many examples, their steps) over the
    latest samples, newest first, until EXAMPLES examples (WINDOW samples at least); None
    when the samples kept hold fewer."""
    never, examples, steps = None, 0, []
    for step, alive, count in reversed(activity):
        if never is not None and alive.shape != never.shape:
            break  # the layer changed width: earlier samples are of other units
        never = ~alive if never is None else never & ~alive
        examples += count
        steps.insert(0, step)
        if examples >= EXAMPLES and len(steps) >= WINDOW:
            return never, examples, steps
    return None


def _saturated(samples: list):
    """The facts that make a layer saturated from the start: at least SATURATED_SHARE of its
    outputs saturated in each of its first WINDOW samples. Else None."""
    readings = [(step, share) for step, _, share, _ in samples if share is not None]
    if len(readings) < WINDOW or any(share < SATURATED_SHARE for _, share in readings[:WINDOW]):
        return None
    return {"steps": [step for step, _ in readings[:WINDOW]],
            "shares": [share for _, share in readings[:WINDOW]],
            "last": readings[-1][1], "last_step": readings[-1][0]}
