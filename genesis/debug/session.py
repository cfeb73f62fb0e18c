"""`TraceSession`: record a run and find what is wrong with it — what `genesis trace` runs
around a script, usable from Python too.

The first `steps` backward calls are recorded fully (graphs with module paths,
source lines and statistics); later ones only update the per-parameter gradient
norms. NaN/Inf births are watched in every step. After the run, `result()`
re-checks each user-defined Function call of the first step against finite
differences (every call with `check_all`) and turns everything into a `Trace`.

>>> import genesis
>>> w = genesis.tensor([1.0, 2.0], requires_grad=True)
>>> unused = genesis.tensor([3.0], requires_grad=True)
>>> with TraceSession(steps=2) as session:
...     for _ in range(3):
...         w.grad = None
...         (w * w).sum().backward()
>>> trace = session.result(script="example.py")
>>> trace.steps_seen, trace.steps_recorded, [p.name for p in trace.parameters]
(3, 2, ['w'])
"""
from __future__ import annotations

import time
import weakref

from ..autograd import engine, function
from ..autograd.function import AccumulateGrad, SavedTensorModifiedError
from ..autograd.source import SourceLocation
from .. import amp
from ..grad_state import grad_state
from ..listeners import Listeners
from ..nn.parameter import Parameter
from ..optim import optimizer as optimizers
from .activation_watch import ActivationWatch
from .findings import Finding
from .forward_builds import ForwardBuilds
from .blame import forward_input_names
from .journal import Journal
from .loss_watch import LossWatch
from .mode_watch import ModeWatch
from .nan_watch import NaNWatch
from .nan_replay import NaNReplay
from .optimizer_watch import OptimizerWatch
from .node_check import PER_SITE, InvocationLog, check_invocation, surrogate_advice
from .names import Names, user_namespace
from .param_watch import ParamWatch
from .module_paths import module_paths
from .parameter_uses import Explanation, ParameterUses, short_path
from .readings import Readings
from .run_history import RunHistory, distribution_step
from .softmax_loss import softmax_loss_findings
from .starved_params import fold_starved
from .zero_factors import fold_zero_factors
from .stale_state import StaleStateWatch
from .write_log import WriteLog
from .record import record
from .trace import Trace

__all__ = ["TraceSession"]


RECORDS_EVERY_S = 0.25  # the step records reach the step listeners at least this often
RECORDS_AT_ONCE = 64    # or once this many wait (fewer than the recent steps histories keep)
USES_FOLLOWED = 8       # backward calls after the recorded ones in which uses and cuts are
#                         still noted, until each optimizer seen has stepped once


class TraceSession:
    """Context manager: record, watch, and afterwards `result()` gives the `Trace`.

    Args:
        steps: backward calls to record fully (later ones update norm statistics only).
        check: re-check user-defined Functions of the first step against finite differences.
        check_all: re-check built-in ops too.
        anomaly: watch every op for NaN/Inf being born (forward and backward).
        stats: value statistics of every op output in the recorded steps.
        journal: where to write down what is captured as it is captured (a run that dies
            still leaves it; see `genesis.debug.journal`).
        replay_dir: the folder the leaves of the step where the first NaN/Inf was born are
            saved into (`genesis.debug.nan_replay`); None keeps them in memory only.
        checks_per_site: with `check`, the Function calls re-checked per Function and
            source line, at most (the others are counted).

    `step_listeners` (objects with `step_finished(record: dict)`) are told each finished
    step's figures: step, loss, grad_norm and update_ratio per parameter, lr per parameter
    group, activations (on sampled steps), findings so far, elapsed_s. A step's record is
    complete as the next backward call starts; the records are sent in order, together,
    every RECORDS_EVERY_S or RECORDS_AT_ONCE steps, and when the session ends (one record
    at a time would cost a step more than its figures: a hook run once a step finds none
    of its code and data in the processor's caches).

    Backward calls may run on several threads at once: each is captured, and the
    bookkeeping after each call is done one call at a time.
    """

    def __init__(self, steps: int = 1, check: bool = True, check_all: bool = False,
                 anomaly: bool = True, stats: bool = True, journal: Journal | None = None,
                 replay_dir=None, checks_per_site: int = PER_SITE):
        if steps < 1:
            raise ValueError(f"steps must be at least 1, got {steps}")
        self.steps = steps
        self.check = check or check_all
        self.check_all = check_all
        # figures of GPU tensors wait here and cross to the host together, once per backward
        self.readings = Readings()
        self.recorder = record(stats=stats, on_step=self._on_step, readings=self.readings)
        self.invocations = InvocationLog(include_builtin=check_all, per_site=checks_per_site) \
            if self.check else None
        self.stale_watch = StaleStateWatch(per_site=checks_per_site) if self.check else None
        self.params = ParamWatch(self.readings)
        self.nan_watch = NaNWatch(self.readings, name_of=self.parameter_name) if anomaly else None
        self.history = RunHistory()
        self.activations = ActivationWatch(self.readings, root_prefix=self.recorder.scope.roots.prefix)
        self.losses = LossWatch(self.readings, step=lambda: self.params.steps,
                                series=self.history.loss, scale_of=self._scale_of)
        self.params.loss_at = self._loss_at  # gradients growing as the loss falls: no explosion
        self.optimizer_watch = OptimizerWatch(steps=lambda: self.params.steps,
                                              name_of=self.parameter_name, readings=self.readings)
        self.optimizer_watch.grad_norm_at = self.params.grad_norm_at  # zero as backward gave it?
        self.forward_builds = ForwardBuilds()
        self.modes = ModeWatch(root_prefix=self.recorder.scope.roots.prefix)
        self.replay = NaNReplay(replay_dir, name_of=self.parameter_name)
        if self.nan_watch is not None:
            self.nan_watch.on_new_finding = self._nan_found
            self.nan_watch.leaf_seen = self.replay.see
        self.step_listeners = Listeners()
        self._record = None          # the figures of the step in progress, sent when it is done
        self._unsent = []            # records of finished steps, not yet built and sent
        self._records_sent_at = 0.0
        self.writes = WriteLog()  # where tensors were changed in place, to blame those lines
        self.writes.backward_ran = lambda node: node in self.node_ids
        # where parameters were used or cut off: while recording, and on until each optimizer
        # seen has stepped once (the cut that matters is in the backward before its step)
        self.uses = ParameterUses(steps=lambda: self.params.steps)
        self._stepped = set()        # ids of the optimizers that stepped
        self._optimizers = []
        self._first_steps = {}       # id(optimizer) -> backward calls finished at its first step
        self._recorded_models_params = {}  # {id: (name, parameter)}: the recorded steps' models
        self._scaled = None          # (weak reference to the node of a scaled loss, its scale)
        self.node_ids = {}          # autograd node -> (graph index, node id), recorded steps
        self.check_results = []     # one summary dict per re-checked Function call
        self.journal = journal
        self._journaled_findings = 0
        self._recording = False
        self._started = 0.0
        self.duration = 0.0

    # -- installing and removing the hooks ----------------------------------------
    def __enter__(self) -> "TraceSession":
        self._started = time.perf_counter()
        self.recorder.__enter__()
        self.uses.start()
        self._recording = True
        optimizers.listeners.add(self)
        amp.listeners.add(self)
        if self.invocations is not None:
            function.observers.add(self.invocations)
            function.observers.add(self.stale_watch)
        if self.nan_watch is not None:
            self.nan_watch.start()
        self.losses.start()
        self.activations.start()
        self.optimizer_watch.start()
        self.forward_builds.start()
        self.modes.start()
        self.writes.start()
        self.writes.start_recording()
        engine.backward_listeners.add(self)
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop_recording()
        self.uses.stop()
        self._stop_invocation_log()
        if self.nan_watch is not None:
            self.nan_watch.stop()
        self.losses.stop()
        self.activations.stop()
        self.optimizer_watch.stop()
        self.forward_builds.stop()
        self.modes.stop()
        self.writes.stop()
        engine.backward_listeners.discard(self)
        optimizers.listeners.discard(self)
        amp.listeners.discard(self)
        self.readings.fetch()
        self._step_done(send=True)
        self.duration = time.perf_counter() - self._started
        if self.journal is not None:
            self._write_journal(force=True)

    def _stop_recording(self) -> None:
        if self._recording:
            self._track_module_parameters()
            self.recorder.__exit__(None, None, None)
            self._stop_uses_once_stepped()
            self.writes.stop_recording()
            self._recording = False

    def _stop_invocation_log(self) -> None:
        if self.invocations is not None:
            function.observers.discard(self.invocations)
            function.observers.discard(self.stale_watch)

    # -- per backward call ---------------------------------------------------------------
    def backward_started(self, run) -> None:
        if engine.unwatched.depth or grad_state.in_backward:
            return  # gradcheck's calls, and a backward inside a backward (a checkpoint's)
        with self.recorder.lock:
            self._step_done()
            self.optimizer_watch.backward_started()

    def backward_finished(self, run, completed: bool = True) -> None:
        # record() has closed this call's graph already (it listens first): _on_step ran.
        if engine.unwatched.depth:  # gradcheck's own backward calls are not the script's steps
            return
        with self.recorder.lock:
            recorded = self._recording
            if recorded:  # once recording stops, the modules' parameters are all known
                self._track_module_parameters()
            if completed and not recorded and run is not None:
                self._track_late_parameters(run)
            if completed:  # a backward that raised says nothing about which parameters get gradients
                self.params.measure(reached=run, scale=self._loss_scale(run))
                self.forward_builds.backward_finished(run, self.params.steps - 1)
                self.modes.backward_finished(run, self.params.steps - 1)
                if not grad_state.in_backward:
                    self.optimizer_watch.backward_finished()
            self.activations.step_finished(self.params.steps)
            self.readings.fetch()  # what this step's hooks took on a GPU: one transfer
            if self.nan_watch is not None:
                if not grad_state.in_backward:
                    self.nan_watch.backward_done()
                self.nan_watch.step = self.params.steps
                self.replay.step_done()
            step = self.params.steps - 1
            if completed and distribution_step(step):
                self.history.sample_distributions(step, {
                    entry.name: (entry.tensor._grad._data if entry.tensor._grad is not None
                                 else None, entry.tensor._data, entry.tensor._device.xp)
                    for entry in self.params.tracked.values() if entry.tensor is not None})
            if self.step_listeners:
                self._record = {"step": step, "started": time.perf_counter()}
            self._stop_invocation_log()  # the first step's calls are all that is checked
            if self.params.steps >= self.steps:
                self._stop_recording()
            if self.params.steps >= self.steps + USES_FOLLOWED:
                self.uses.stop()
            if self.journal is not None:
                steps = self.params.steps
                force = recorded or steps & (steps - 1) == 0
                if force or time.monotonic() >= self.journal.progress_due_at or (
                        self.nan_watch is not None
                        and len(self.nan_watch.findings) > self._journaled_findings):
                    self._write_journal(force=force)  # (nothing to write otherwise: not called)

    def _step_done(self, send: bool = False) -> None:
        """The step that just finished is complete (its optimizer step has run): note what
        its record needs that the histories do not keep (the learning rates in force, the
        findings so far, its activations), and send the waiting records when due, or now
        with `send`."""
        record, self._record = self._record, None
        if record is not None and self.step_listeners:
            self._unsent.append((record["step"], record["started"],
                                 self.optimizer_watch.learning_rates(), self._findings_so_far(),
                                 self._activations_at(record["step"])))
        if not self._unsent:
            return
        now = time.perf_counter()
        if send or len(self._unsent) >= RECORDS_AT_ONCE or now - self._records_sent_at >= RECORDS_EVERY_S:
            self._records_sent_at = now
            self._send_records()

    def _send_records(self) -> None:
        """Tell the step listeners the records of the steps not sent yet, in order (their
        figures are all still among the recent steps the histories keep in full)."""
        unsent, self._unsent = self._unsent, []
        self.readings.fetch()
        tracked = list(self.params.tracked.values())
        ratios = list(self.optimizer_watch.update_ratios.items())
        loss = self.history.loss
        for step, started, rates, findings, activations in unsent:
            record = {"step": step, "loss": loss.at(step),
                      "grad_norm": {entry.name: entry.history.at(step) for entry in tracked},
                      "update_ratio": {name: series.at(step) for name, series in ratios
                                       if series.has(step)},
                      "lr": rates, "activations": activations, "findings": findings,
                      "elapsed_s": started - self._started}
            for listener in self.step_listeners:
                listener.step_finished(record)

    def _activations_at(self, step: int) -> dict:
        watch = getattr(self, "activations", None)
        return watch.latest(step) if watch is not None else {}

    def _loss_at(self, step: int) -> float | None:
        """The loss of `step`: kept for the first steps, else among the recent ones."""
        loss = self.losses.losses.get(step)
        return loss if loss is not None else self.history.loss.at(step)

    def _findings_so_far(self) -> int:
        """Findings known while the run goes on (most are made after it, by `result`)."""
        found = len(self.nan_watch.findings) if self.nan_watch is not None else 0
        return found + self.optimizer_watch.live_findings

    def _nan_found(self, finding, node) -> None:
        """NaN watch: a new NaN/Inf finding: its step and module (found now: a step that is
        not recorded has no graph to read them from); the first one's leaves are saved."""
        finding.step = finding.details.get("first_step")
        call = getattr(node, "_module_call", None) if node is not None else None
        if call is not None and finding.module is None:
            paths, classes = module_paths([call], self.recorder.scope.roots.prefix)
            path = paths.get(call[2])
            finding.module = path or classes.get(path) or type(call[0]).__name__
        self.replay.save(finding, self.params.steps, [
            (entry.name, entry.tensor) for entry in self.params.tracked.values()
            if entry.tensor is not None and entry.is_parameter])

    def _loss_scale(self, run) -> float:
        """The scale of the GradScaler whose scaled loss this backward call started from (its
        gradients are that many times too large until unscaled), else 1."""
        if self._scaled is None:
            return 1.0
        node, scale = self._scaled[0](), self._scaled[1]
        if node is not None and any(run.get(child) is node for child in node._next_nodes
                                    if child is not None):
            return scale
        return 1.0

    def _scale_of(self, loss) -> float:
        """The GradScaler scale `loss` carries when it is what `scaler.scale()` returned
        last, else 1."""
        if self._scaled is None or loss.grad_fn is None or self._scaled[0]() is not loss.grad_fn:
            return 1.0
        return self._scaled[1]

    # -- a GradScaler's calls ------------------------------------------------------------
    def loss_scaled(self, scaler, output, scale: float) -> None:
        """GradScaler listener: `output` is a loss scaled by `scale`."""
        if output.grad_fn is None or engine.unwatched.depth:
            return
        self._scaled = (weakref.ref(output.grad_fn), scale)
        if self.nan_watch is not None:
            self.nan_watch.loss_scaled(scaler, output, scale)

    def step_skipped(self, scaler, optimizer) -> None:
        """GradScaler listener: it skipped `optimizer`'s step on NaN/Inf gradients."""
        self.optimizer_watch.step_skipped(optimizer)
        if self.nan_watch is not None:
            with self.recorder.lock:
                self.nan_watch.step_skipped(scaler)

    def _on_step(self, graph_index: int, node_ids: dict) -> None:
        graph = self.recorder.graphs[graph_index]
        for node, node_id in node_ids.items():
            self.node_ids[node] = (graph_index, node_id)
            if node.__class__ is AccumulateGrad and node.variable is not None:
                described = graph.nodes[node_id]
                self.params.track(described.name, node.variable,
                                  rank=2 if described.kind == "param" else 1)
        if self.journal is not None:
            self.journal.graph(graph_index, graph)

    def flush_journal(self, wait_s: float = 1.0, meta: dict | None = None) -> None:
        """Bring the journal up to date now, with the run's history (the Training view of
        report.html) and losses, and send the step listeners the records of the steps so far,
        the last one's too: the process is about to end abruptly (`os._exit`, a SIGTERM).
        `meta`: more entries for the trace's meta, known to the caller (genesis trace's
        `real_torch`). Waits at most `wait_s` for a backward call's bookkeeping on another
        thread to finish; the journal then stays as it was."""
        if (self.journal is None and not self._unsent and self._record is None) or \
                not self.recorder.lock.acquire(timeout=wait_s):
            return
        try:
            self.readings.fetch()
            self._step_done(send=True)
            if self.journal is not None:
                self._write_journal(force=True, ending=meta or {})
        finally:
            self.recorder.lock.release()

    def _write_journal(self, force: bool, ending: dict | None = None) -> None:
        """New NaN/Inf findings, and (every few seconds, or now when `force`) the progress;
        `ending` (the process is about to end): with the meta of `_last_progress`, and these
        entries in it."""
        if self.nan_watch is not None:
            found = self.nan_watch.findings
            for finding, node in zip(found[self._journaled_findings:],
                                     self.nan_watch.nodes[self._journaled_findings:]):
                finding.graph, finding.node = self.node_ids.get(node, (None, None))
                self.journal.finding(finding)
            self._journaled_findings = len(found)
        # the table is built only when due; the history only when the process is ending
        self.journal.progress(self.progress if ending is None else
                              lambda: self._last_progress(ending), force=force)

    def progress(self) -> dict:
        """Where the run stands: backward calls seen and recorded, the parameter table."""
        rows = Trace(script="", parameters=self.params.rows()).to_dict()["parameters"]
        return {"steps_seen": self.params.steps,
                "steps_recorded": min(self.steps, self.params.steps), "parameters": rows,
                "duration_s": time.perf_counter() - self._started}

    def _last_progress(self, meta: dict) -> dict:
        """`progress()` as the process ends abruptly: with the meta the pictures and `genesis
        diff` read (the run's history and losses), too costly to write at every progress, and
        the entries of `meta`."""
        return {**self.progress(), "meta": {"losses": self.losses.to_dict(),
                                            "history": self._history(), **meta}}

    def _track_module_parameters(self) -> None:
        """Parameters of every module seen in a forward, gradient or not (to spot missing ones);
        those of modules whose forward ran with grad enabled are expected to get gradients."""
        known = self.recorder.scope.params
        self._recorded_models_params = dict(known)  # (later calls may name more models)
        for name, tensor in list(known.values()):
            self.params.track(name, tensor, rank=2)
        unregistered = None  # worked out only when a module outside the roots' paths ran
        for key, (fallback, tensor) in list(self.uses.ran_with_grad.items()):
            entry = known.get(key)
            if entry is None or entry[1] is not tensor:
                if unregistered is None:
                    unregistered = self.recorder.scope.roots.unregistered_parameter_names()
                entry = unregistered.get(key)
            name, rank = (entry[0], 2) if entry is not None and entry[1] is tensor else (fallback, 1)
            tracked = self.params.track(name, tensor, rank=rank, role="module")
            if tracked is not None and unregistered and key in unregistered:
                tracked.unregistered = True
        # the models' order (their parameters'), then the unregistered ones' as their modules ran
        order = {key: rank for rank, key in enumerate(known)}
        for key in self.uses.ran_with_grad:
            order.setdefault(key, len(order))
        self.params.put_in_order(order)

    def _track_late_parameters(self, reached) -> None:
        """Track the module parameters a backward call after the recorded steps reached for
        the first time (a model made anew, or a layer replaced, after its optimizer was
        built), under their paths in the script's models, as a recorded step would have:
        so that gradients no optimizer applies are found there too. Parameters of layers
        built inside a forward are left to `forward_builds`; other leaves (inputs that
        require grad) are no parameters."""
        new = [tensor for tensor in self.params.untracked(reached)
               if isinstance(tensor, Parameter) and not self.forward_builds.built_in_forward(tensor)]
        if not new:
            return
        names = Names.from_namespace(user_namespace())
        order = {key: index for index, key in enumerate(names.roots.parameter_names())}
        for tensor in sorted(new, key=lambda tensor: order.get(id(tensor), len(order))):
            name, kind = names.leaf_name(tensor)
            if kind == "param":
                self.params.track(name, tensor, rank=2, role="module")

    def _stop_uses_once_stepped(self) -> None:
        """Stop noting uses and cuts once every optimizer seen has stepped."""
        if all(key in self._stepped for key in self.optimizer_watch.watched):
            self.uses.stop()

    def _explained(self, tensor) -> Explanation:
        """Why `tensor` got no gradient, as far as the recorded steps tell: "replaced" when
        nothing used it and a model that ran holds another tensor under its name (a layer
        swapped after the optimizer was built); "unused" only when what was recorded could
        have used it (its model ran in the recorded steps, or no backward call went
        unrecorded); otherwise "unrecorded"."""
        stepped_after = {self._first_steps[id(optimizer)] - 1 for optimizer in self._optimizers
                         if any(param is tensor for group in optimizer.param_groups
                                for param in group["params"])}
        reason = self.uses.explain(tensor, stepped_after)
        if reason.how == "unused":
            name = self.params.name_of(tensor)
            now = self.recorder.scope.roots.parameter_names()
            if name is not None and id(tensor) not in now and \
                    any(held == name for held, _ in now.values()):
                return Explanation("replaced")
        if reason.how == "unused" and self.params.steps > self.steps:
            entry = self._recorded_models_params.get(id(tensor))
            if entry is None or entry[1] is not tensor:
                return Explanation("unrecorded")
        return reason

    def parameter_name(self, tensor) -> str | None:
        """The name of `tensor` if it is a parameter: given to an optimizer (or tracked as a
        module's), or of a module called so far; else None."""
        name = self.params.name_of(tensor)
        if name is None:
            entry = self.recorder.scope.roots.parameter_names().get(id(tensor))
            name = entry[0] if entry is not None and entry[1] is tensor else None
        return name

    def params_added(self, optimizer, params: list) -> None:
        """Optimizer listener: track (and name) the tensors an optimizer is given; once it
        steps, they are expected to get gradients."""
        if engine.unwatched.depth:
            return
        group = len(optimizer.param_groups) - 1
        made = f"{type(optimizer).__name__} (lr={optimizer.param_groups[group].get('lr')!r})"
        site = SourceLocation.capture(max_frames=2)
        if site is not None:
            made += f" made at {short_path(site.file)}:{site.line}"
        roots = self.recorder.scope.roots  # the modules called so far, else the script's
        namespace = user_namespace()
        roots.regroup([namespace])  # modules called while the script's model was being built
        names = Names.from_namespace(namespace, roots=roots if len(roots) else None)
        script_names = None  # the script's models, for a model not called yet
        role = "optimizer" if id(optimizer) in self._stepped else None
        with self.recorder.lock:
            for index, param in enumerate(params):
                name, kind = names.leaf_name(param)
                if kind != "param" and len(roots):
                    script_names = script_names or Names.from_namespace(namespace)
                    name, kind = script_names.leaf_name(param)
                if kind == "param":
                    rank = 2
                elif names.variable_name(param) is not None:
                    rank = 1
                else:
                    name, rank = f"{type(optimizer).__name__}.param_groups[{group}][{index}]", 0
                entry = self.params.track(name, param, rank=rank, role=role)
                if entry is not None:
                    entry.optimizer, entry.optimizer_site = made, site

    def stepping(self, optimizer) -> None:
        """Optimizer listener: a step is about to update (the NaN replay keeps the leaves as
        they were before it; the parameters built in a forward since its previous step are
        looked for among those it updates)."""
        self.replay.stepping()
        with self.recorder.lock:
            self.forward_builds.stepping(optimizer)
            self.modes.stepping(optimizer)

    def stepped(self, optimizer) -> None:
        """Optimizer listener: an optimizer that steps wants gradients for its parameters;
        what each step writes into them is watched for NaN/Inf."""
        self.writes.optimizer_stepped(optimizer)
        with self.recorder.lock:
            if id(optimizer) not in self._stepped:
                self._stepped.add(id(optimizer))
                self._first_steps[id(optimizer)] = self.params.steps
                self._optimizers.append(optimizer)  # kept alive, so its id stays its own
                if not self._recording:
                    self._stop_uses_once_stepped()
                for group in optimizer.param_groups:
                    for param in group["params"]:
                        entry = self.params.tracked.get(id(param))
                        if entry is not None:
                            entry.roles.add("optimizer")
            if self.nan_watch is not None:
                self.nan_watch.optimizer_stepped(optimizer)

    # -- the result ----------------------------------------------------------------------------
    def result(self, script: str = "", args=(), error: BaseException | None = None,
               exit_code: int = 0, script_error: str | None = None, progress=None) -> Trace:
        """The Trace: graphs, findings (most severe first), parameter table.

        `error` is the exception the run ended with, if any (a backward error or an
        in-place modification becomes a finding); `progress(done, total)` is called
        during the per-node checks.
        """
        graphs = self.recorder.graphs
        findings = self._gradient_findings(progress) + self._stale_findings() + \
            self._data_write_findings()
        if self.nan_watch is not None:
            for finding, node in zip(self.nan_watch.findings, self.nan_watch.nodes):
                finding.graph, finding.node = self.node_ids.get(node, (None, None))
                findings.append(finding)
        self._mark_built_in_forward()
        self._mark_gradients_set_by_hand()
        self._mark_differentiated_away()
        findings.extend(self.params.findings(self._locate_parameter, self._explained))
        findings.extend(self.optimizer_watch.findings(self.params))
        findings.extend(self.forward_builds.findings())
        findings.extend(self.modes.findings())
        findings.extend(softmax_loss_findings(graphs))
        findings.extend(self.activations.findings(lambda node: self.node_ids.get(node, (None, None))))
        if error is not None:
            findings.extend(self._error_findings(error))
        findings = fold_zero_factors(fold_starved(findings, graphs), graphs)
        findings.sort(key=Finding.sort_key)
        for finding in findings:
            if finding.graph is not None and finding.node is not None:
                graphs[finding.graph].add_finding(finding.node, finding.tag)
                described = graphs[finding.graph].nodes[finding.node]
                if finding.module is None and described.module:
                    finding.module = described.module
        trace = Trace(script=script, args=list(args), graphs=graphs, findings=findings,
                      parameters=self.params.rows(),
                      steps_recorded=min(self.steps, self.params.steps),
                      steps_seen=self.params.steps, exit_code=exit_code,
                      script_error=script_error, duration_s=self.duration,
                      meta={"checks": self.check_results,
                            "calls_not_rechecked": self.invocations.not_copied
                            if self.invocations is not None else 0,
                            "scaler_skips": self.nan_watch.scaler_skips
                            if self.nan_watch is not None else 0,
                            "losses": self.losses.to_dict(),
                            "history": self._history()})
        if self.replay.saved is not None:
            trace.meta["nan_replay"] = self.replay.saved
        if self.journal is not None:
            self.journal.end(trace)
        return trace

    def _mark_gradients_set_by_hand(self) -> None:
        """The parameters no backward call reached whose optimizer still stepped with a .grad:
        one the script set by hand (Reptile's meta-update, evolution strategies), so they
        train, and their status says so rather than "no gradient"."""
        stepped = self.optimizer_watch.stepped_with_grad
        for entry in self.params.tracked.values():
            if not entry.history.reached and id(entry.tensor) in stepped:
                entry.grad_set_by_hand = True

    def _mark_differentiated_away(self) -> None:
        """The parameters no backward call reached that were taken only by ops the script
        differentiated with create_graph=True and that drop out of that derivative (see
        `ParameterUses.differentiated_away`): the loss does not depend on them, by
        construction; their status says so rather than "no gradient"."""
        for entry in self.params.tracked.values():
            if not entry.history.reached and self.uses.differentiated_away(entry.tensor):
                entry.differentiated_away = True

    def _mark_built_in_forward(self) -> None:
        """The parameter table's rows of a layer built anew in each forward (a finding): their
        status says they never train, and one known only by its place in a graph ("input0")
        is named after its layer and line ("Linear built at model.py:12 (weight)"), in the
        graphs too (so the table's row still points at its leaf there)."""
        renamed = {}
        for entry in list(self.params.tracked.values()):
            label = self.forward_builds.label_of(entry.tensor)
            if label is not None:
                entry.never_trains = True
                if entry.rank < 2:
                    old = entry.name
                    renamed[id(entry.tensor)] = self.params.track(label, entry.tensor, rank=2).name
                    self.history.rename(old, entry.name)
        if not renamed:
            return
        for node, (graph_index, node_id) in self.node_ids.items():
            if node.__class__ is AccumulateGrad and id(node.variable) in renamed:
                described = self.recorder.graphs[graph_index].nodes[node_id]
                described.name, described.kind = renamed[id(node.variable)], "param"

    def release(self) -> None:
        """Let go of the graphs recorded so far and of the autograd nodes they were made of
        (call after `result()`: its Trace keeps the graphs). A session is referenced by the
        hooks it registered, so it lives until a cyclic collection finds it; what it lets go
        of here is freed at once, or with the program's own graph, instead of being walked by
        every collection until then (a 100,000-op graph is a million objects)."""
        self.recorder.release()
        self.node_ids = {}

    def _history(self) -> dict:
        """trace.json's meta["history"] (the pictures of report.html)."""
        ratios = self.optimizer_watch.update_ratios
        parameters = {}
        for entry in self.params.tracked.values():
            history = entry.history
            parameters[entry.name] = {
                "grad_norm": {"steps": history.steps(), "values": history.grad_norms(),
                              "summary": [summary.to_dict() for summary in history.bins()]},
                "update_ratio": ratios[entry.name].to_dict() if entry.name in ratios else None}
        watch = getattr(self, "activations", None)
        return self.history.to_dict(parameters, self.optimizer_watch.to_dict(),
                                    watch.to_dict() if watch is not None else {},
                                    steps_seen=self.params.steps)

    def _gradient_findings(self, progress) -> list:
        """Run the per-node checks; keep a summary row per call in `check_results`. Only a
        backward that disagrees is a finding: a call the check cannot re-run is "skipped"."""
        self.check_results = []
        findings = []
        if self.invocations is None:
            return findings
        calls = list(self.invocations.calls.items())
        for done, (node, invocation) in enumerate(calls):
            if progress is not None:
                progress(done, len(calls))
            verdict = check_invocation(invocation)
            graph, node_id = self.node_ids.get(node, (None, None))
            source = invocation.source
            name = invocation.function.node_name
            self.check_results.append({
                "function": name, "op": type(node).__name__, "status": verdict.status,
                "reason": verdict.reason, "source": str(source) if source is not None else None,
                "graph": graph, "node": node_id,  # measured only where elements disagree
                "max_abs_error": verdict.max_abs_error if verdict.status == "fail" else None})
            if verdict.status == "fail":
                advice = "" if invocation.function._builtin else "\n" + surrogate_advice(name)
                wrong = verdict.wrong_inputs()
                findings.append(Finding(
                    "gradient_mismatch", "error",
                    f"wrong gradient in {name}.backward" + (f" for {wrong}" if wrong else ""),
                    verdict.report() + advice, op=type(node).__name__, function=name,
                    module=self._module_of(graph, node_id), source=str(source) if source else None,
                    code=source.code if source is not None else None, graph=graph, node=node_id,
                    details={"max_abs_error": verdict.max_abs_error,
                             "max_rel_error": verdict.max_rel_error, "worst": verdict.worst,
                             "tolerances": verdict.tolerances, "blame": verdict.blame,
                             "backward_site": verdict.backward_site}))
        if progress is not None:
            progress(len(calls), len(calls))
        return findings

    def _stale_findings(self) -> list:
        """A backward whose answer changed between the end of its forward and its run."""
        if self.stale_watch is None:
            return []
        findings = []
        for stale in self.stale_watch.stale:
            graph, node_id = self.node_ids.get(stale.node, (None, None))
            name = stale.function.node_name
            names = forward_input_names(stale.function)
            inputs = ", ".join(f"{names[p]} (input {p})" if p < len(names) else f"input {p}"
                               for p in stale.difference)
            largest = max(stale.difference.values(), default=0.0)
            lines = [f"Its backward, run on one output gradient right after forward and again just "
                     f"before the engine ran it, gave different gradients for {inputs} (largest "
                     f"difference {largest:.3g}): it read something that changed in between, "
                     "which the forward did not leave it (saved tensors, ctx attributes as set)."]
            for attribute, (before, after) in stale.changed.items():
                lines.append(f"ctx.{attribute} was {before} at the end of forward and {after} "
                             "when backward started.")
            held = [attribute for attribute in stale.changed if "." in attribute]
            if held:
                owner, _, field_name = held[0].partition(".")
                lines.append(f"Keep the value the forward used: set ctx.{field_name} = "
                             f"{owner}.{field_name} in forward and read that in backward, rather "
                             f"than reading ctx.{owner}.{field_name} when backward runs.")
            elif stale.changed:
                lines.append("Keep what the forward used: set ctx attributes in forward only, and "
                             "save tensors with ctx.save_for_backward (a later in-place change "
                             "is then an error, not a silent wrong gradient).")
            else:
                lines.append("No ctx attribute changed: the backward reads a closure or global "
                             "variable (or a tensor changed in place through another reference). "
                             "Save what it needs in forward: ctx.save_for_backward for tensors, "
                             "a ctx attribute for numbers.")
            source = stale.source
            findings.append(Finding(
                "stale_backward", "error",
                f"{name}.backward depends on state that changed after forward",
                "\n".join(lines), op=type(stale.node).__name__, function=name,
                module=self._module_of(graph, node_id), source=str(source) if source else None,
                code=source.code if source is not None else None, graph=graph, node=node_id,
                details={"changed": {key: list(value) for key, value in stale.changed.items()},
                         "difference": {str(key): value for key, value in stale.difference.items()}}))
        return findings

    def _data_write_findings(self) -> list:
        """Tensors saved for a backward that ran, changed through `.data` before it ran: one
        finding per line that changed them, naming every op whose backward used them."""
        by_line: dict = {}
        for node_ref, index, source in self.writes.data_writes:
            node = node_ref()
            if node is None or node not in self.node_ids:
                continue  # gone, or never backwarded in a recorded step: no gradient used it
            nodes = by_line.setdefault(str(source), (source, []))[1]
            if node not in nodes:
                nodes.append(node)
        findings = []
        for source, nodes in by_line.values():
            savers = [type(node).__name__ for node in nodes]
            forwards = [f"{type(node).__name__} at {short_path(node._source.file)}:"
                        f"{node._source.line}" for node in nodes if node._source is not None]
            where = f"{short_path(source.file)}:{source.line}" if source is not None else "?"
            message = (f"Changed through .data at {where}"
                       + (f" (`{source.code}`)" if source is not None and source.code else "")
                       + f", after {' and '.join(savers)} saved it for the backward"
                       + (f" (forward: {'; '.join(forwards)})" if forwards else "")
                       + ", which then ran on the changed values without any error: a write "
                       "through .data is invisible to autograd's version counters (in PyTorch "
                       "too). Change a copy (x = x.clone(); x.mul_(...)), or make the change "
                       "before the forward that saves the tensor.")
            node = nodes[0]
            graph, node_id = self.node_ids[node]
            forward_class = type(node)._forward_cls
            findings.append(Finding(
                "inplace_modified", "error",
                f"a tensor saved by {' and '.join(savers)} was changed through .data before "
                "backward", message, op=savers[0],
                function=forward_class.node_name if forward_class else None,
                module=self._module_of(graph, node_id),
                source=str(source) if source is not None else None,
                code=source.code if source is not None else None, graph=graph, node=node_id,
                details={"ops": savers}))
        return findings

    def _writer(self, error) -> tuple | None:
        """(source, what) of the write that changed the saved tensor `error` is about."""
        saved = getattr(error.node, "_saved", None)
        if not isinstance(saved, tuple) or error.index is None or error.index >= len(saved):
            return None
        entry = saved[error.index]
        if not (isinstance(entry, tuple) and len(entry) == 3 and entry[1] is not None):
            return None
        found = self.writes.writer_of(entry[0], entry[1])
        return None if found is None or found[0] is None else found

    def _module_of(self, graph, node_id):
        """The dotted module path of a node; the top module shows as its class name."""
        if graph is None or node_id is None:
            return None
        described = self.recorder.graphs[graph]
        module = described.nodes[node_id].module
        return described.modules.get("", None) if module == "" else module

    def _locate_parameter(self, entry) -> tuple:
        """(source, code, graph, node) for a tracked parameter: its node if it is in a graph;
        the line of the first op that took it as input, else the line where its module was
        first called."""
        name = entry.name
        graph_index = node_id = None
        for index, graph in enumerate(self.recorder.graphs):
            for node in graph.nodes:
                if node.name == name and node.kind in ("param", "input"):
                    graph_index, node_id = index, node.id
                    break
            if node_id is not None:
                break
        site = self.uses.first_use(entry.tensor)
        if site is None and entry.rank == 2:
            site = self.recorder.scope.call_site_of(entry.tensor)
        if site is None:
            return None, None, graph_index, node_id
        return str(site), site.code, graph_index, node_id

    def _error_findings(self, error: BaseException) -> list:
        node = getattr(error, "backward_node", None)
        writer = None
        if isinstance(error, SavedTensorModifiedError):
            node = error.node
            writer = self._writer(error)
            kind, title = "inplace_modified", f"a tensor saved by {type(node).__name__} was " \
                "modified in place before backward"
            if writer is not None and writer[1] != "an in-place op":
                title = f"a tensor saved by {type(node).__name__} was modified by {writer[1]} " \
                    "before backward"
        elif node is not None:
            kind, title = "backward_error", f"{type(node).__name__} raised {type(error).__name__} " \
                "in backward"
        else:
            return []
        graph, node_id = self.node_ids.get(node, (None, None))
        source = node._source
        forward_class = type(node)._forward_cls
        message = str(error)
        if writer is not None:  # the finding points at the line that modified it
            message = _writer_words(writer, node, source) + "\n" + message
            source = writer[0]
        return [Finding(kind, "error", title, message, op=type(node).__name__,
                        function=forward_class.node_name if forward_class is not None else None,
                        module=self._module_of(graph, node_id),
                        source=str(source) if source is not None else None,
                        code=source.code if source is not None else None, graph=graph,
                        node=node_id)]


def _writer_words(writer: tuple, node, saved_at) -> str:
    """Which line changed a saved tensor, which op saved it, and (for an optimizer step) the
    classic cause."""
    source, what = writer
    where = f"{short_path(source.file)}:{source.line}" + (f" (`{source.code}`)" if source.code else "")
    saver = type(node).__name__
    forward = f" (its forward at {short_path(saved_at.file)}:{saved_at.line})" if saved_at else ""
    words = (f"Modified by {what} at {where}, after {saver}{forward} saved it for its backward, "
             f"which needed it unchanged.")
    if what.endswith(".step()"):
        words += (" An optimizer step between two backward calls through the same graph (the "
                  "first with retain_graph=True): call backward for every loss before "
                  "optimizer.step(), or run the forward again after the step (retain_graph "
                  "keeps the graph, not the values it saved).")
    return words
