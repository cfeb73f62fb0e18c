"""`WatchedOptimizer`: what an `OptimizerWatch` keeps of one optimizer (where it was built,
its steps, and what its steps found), written by the watch as the steps happen and read by
`genesis.debug.optimizer_findings` at the end."""
from __future__ import annotations

from ..autograd.source import SourceLocation
from .parameter_uses import short_path

__all__ = ["WatchedOptimizer"]


class WatchedOptimizer:
    """One optimizer: where it was built, its steps, and what its steps found."""

    def __init__(self, optimizer, made_at: SourceLocation | None):
        self.optimizer = optimizer          # kept alive, so its id stays its own
        self.name = type(optimizer).__name__
        self.made_at = made_at
        self.made_order = None              # `parameter_births.now()` when it was built
        self.steps = 0
        self.steps_with_gradients = 0       # steps at which some parameter it holds had a .grad
        self.last_step_call = None          # backward calls finished at its previous step
        self.last_step_at = None            # the SourceLocation of its previous step() call
        self.last_grads = {}                # id(param) -> weakref of the grad it stepped with
        self.last_versions = {}             # id(param) -> (version, id of the array) of that grad
        self.skipped = 0                    # steps a GradScaler skipped
        self.lr = []                        # per group: StepSeries of its lr
        self.top_lr = []                    # per group: its highest lr at any step
        self.stale = []                     # (step, source, [param names], source of the step
        #                                     before, whose gradients nothing cleared)
        self.repeated = []                  # (step, source): steps with no backward since the last
        self.given = {}                     # id(param) -> (param, grad, its version, step): the gradients
        #                                     backward calls wrote since its previous step
        self.cleared = []                   # (step, source, [param names], [(call or None, its
        #                                     SourceLocation, "None" or "zeros", [param names])]):
        #                                     steps that applied none, and how each was cleared
        self.cleared_by = {}                # id(param) -> (call, SourceLocation, the watch's
        #                                     _state_of its grad after): the clearing call
        #                                     (zero_grad, clipping to 0) that last wrote a
        #                                     gradient of `given`
        self.inside = None                  # at its latest step, the name of the optimizer whose
        #                                     step ran it (a wrapper's: Lookahead, SAM), if one did
        self.stepped_inside = False         # whether an optimizer it wraps stepped in its latest step
        self.versions = None                # (version, array) of each parameter as its latest step began
        self.writes_before = 0              # the watch's count of in-place writes then
        self.wraps = None                   # the WatchedOptimizer its step ran, where it was not
        #                                     built itself (a wrapper taking that one's groups)
        self.before = None                  # {id(param): (param, copy of its array)} of a sampled step
        self.measuring_step = None

    def made_words(self) -> str:
        if self.made_at is None:
            return self.name if self.wraps is None else \
                f"{self.name} (over the param groups of {self.wraps.made_words()})"
        return f"{self.name} (made at {short_path(self.made_at.file)}:{self.made_at.line})"

    def params(self):
        for group in self.optimizer.param_groups:
            yield from group["params"]

