"""Findings: what a trace found wrong, each pointing at an op and a source line.

A `Finding` is plain data (JSON-serialisable) so the console report, the
Graphviz picture and the HTML viewer all read the same thing.

>>> finding = Finding("nan_forward", "error", "Div produced NaN from finite inputs",
...                   op="DivBackward", source="train.py:12", graph=0, node=3)
>>> Finding.from_dict(finding.to_dict()) == finding
True
>>> finding.tag
'nan'
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["Finding", "KINDS", "SEVERITY_ORDER", "add_knock_on", "MAX_KNOCK_ON"]

# kind -> (tag drawn on the graph node, what it means)
KINDS = {
    "gradient_mismatch": ("grad_mismatch", "a backward disagrees with finite differences"),
    "nan_forward": ("nan", "a NaN born in a forward op, or an Inf born there that did harm"),
    "nan_backward": ("nan", "NaN/Inf produced by a backward from finite gradients"),
    "nan_step": ("nan", "NaN/Inf written into a parameter by an optimizer step"),
    "backward_error": ("error", "an exception raised inside a backward"),
    "no_gradient": ("no_grad", "a parameter that received no gradient"),
    "zero_gradient": ("no_grad", "a parameter whose gradient is all zeros"),
    "exploding_gradient": ("exploding", "a gradient norm growing by orders of magnitude"),
    "vanishing_gradient": ("vanishing", "a gradient norm shrinking by orders of magnitude"),
    "inplace_modified": ("error", "a saved tensor modified in place before backward"),
    "stale_backward": ("grad_mismatch", "a backward that reads state changed after its forward"),
    "script_error": ("error", "the script raised an exception"),
    "built_in_forward": ("training", "a layer built anew in each forward: its parameters never train"),
    "not_optimized": ("training", "a parameter that gets gradients but no optimizer updates"),
    "not_updated": ("training", "a parameter an optimizer holds that its steps never change"),
    "gradient_accumulation": ("training", "gradients carried across optimizer steps: no zero_grad"),
    "step_without_backward": ("training", "an optimizer step with no backward since the last one"),
    "gradients_cleared": ("training", "an optimizer step after its gradients were cleared"),
    "scheduler_order": ("training", "a learning-rate scheduler stepped before its optimizer"),
    "update_ratio": ("training", "a parameter whose updates are orders of magnitude off the others'"),
    "left_in_eval_mode": ("training", "training steps run in eval mode: a model.eval() not undone"),
    "softmax_into_loss": ("training", "softmax probabilities given to a loss that wants logits or log-probabilities"),
    "dead_activation": ("activation", "a layer whose ReLU-like outputs are zero for every input"),
    "saturated_activation": ("activation", "a layer whose tanh/sigmoid outputs are saturated"),
}
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
MAX_KNOCK_ON = 5  # effects of one finding listed in its message


@dataclass
class Finding:
    """One problem, located: which op (backward node name and Function class), module path,
    source `file:line` and code line of the forward call, and where it sits in the trace
    (`graph` index, `node` id), and the training `step` (backward call, from 0) it was first
    seen in, when it belongs to one. `details` holds kind-specific data (e.g. the worst
    entries of a gradient mismatch, a norm history)."""

    kind: str
    severity: str
    title: str
    message: str = ""
    op: str | None = None
    function: str | None = None
    module: str | None = None
    source: str | None = None
    code: str | None = None
    graph: int | None = None
    node: int | None = None
    details: dict = field(default_factory=dict)
    step: int | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown finding kind {self.kind!r}; expected one of {sorted(KINDS)}")
        if self.severity not in SEVERITY_ORDER:
            raise ValueError(f"unknown severity {self.severity!r}; expected error, warning or info")

    @property
    def tag(self) -> str:
        """The tag drawn on the graph node this finding points at."""
        return KINDS[self.kind][0]

    def sort_key(self) -> tuple:
        """Most severe first; within a severity, root causes (a wrong backward, a NaN born in
        forward) before their consequences."""
        return (SEVERITY_ORDER[self.severity], list(KINDS).index(self.kind), self.source or "",
                self.title)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Finding":
        return cls(**data)


def add_knock_on(finding: Finding, line: str, limit: int = MAX_KNOCK_ON) -> None:
    """Add to `finding`'s message (and to its `details["knock_on"]`) an effect it had that is
    not a finding of its own; at most `limit` of them, each once.

    >>> finding = Finding("dead_activation", "warning", "dead relu units in 3")
    >>> add_knock_on(finding, "0.weight: gradient always zero")
    >>> finding.message, finding.details["knock_on"]
    ('\\nWhat followed from it (not reported separately):\\n  0.weight: gradient always zero', ['0.weight: gradient always zero'])
    """
    effects = finding.details.setdefault("knock_on", [])
    if line in effects or len(effects) >= limit:
        return
    if not effects:
        finding.message += "\nWhat followed from it (not reported separately):"
    effects.append(line)
    finding.message += f"\n  {line}"
