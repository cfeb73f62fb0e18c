"""Watch every op for NaN/Inf being born, and record it instead of raising.

The same checks as anomaly mode (`genesis.autograd.anomaly.forward_anomaly` and
`backward_anomaly`), but a run is never interrupted: the first birth at each
source line becomes one `Finding`, with a count of how often it happened.
"""
from __future__ import annotations

from ..autograd import engine, function
from ..autograd.anomaly import backward_anomaly, forward_anomaly
from ..autograd.source import SourceLocation
from .findings import Finding

__all__ = ["NaNWatch"]


class NaNWatch:
    """Install with `start()`; `findings` lists what was seen (each with its autograd node in
    `nodes`, so the caller can point it at a graph node)."""

    def __init__(self):
        self.findings = []
        self.nodes = []           # the autograd node of each finding
        self._by_site = {}
        self.step = 0

    def start(self) -> None:
        function.observers.append(self._forward)
        engine.node_checkers.append(self._backward)

    def stop(self) -> None:
        if self._forward in function.observers:
            function.observers.remove(self._forward)
        if self._backward in engine.node_checkers:
            engine.node_checkers.remove(self._backward)

    def _forward(self, node, args, outputs) -> None:
        if not _any_non_finite(outputs):
            return
        if node._source is None:  # the call site is looked up only when something is found
            node._source = SourceLocation.capture()
        message = forward_anomaly(node, args, outputs)
        if message is None:  # the inputs were already non-finite: not born here
            return
        self._add("nan_forward", node, message, "born in forward")

    def _backward(self, node, grad_outputs, grad_inputs, flowed_from) -> None:
        message = backward_anomaly(node, grad_outputs, grad_inputs, flowed_from, born_only=True)
        if message is not None:
            self._add("nan_backward", node, message, "produced by its backward")

    def _add(self, kind: str, node, message: str, how: str) -> None:
        source = node._source
        site = (kind, type(node).__name__, str(source) if source is not None else None)
        existing = self._by_site.get(site)
        if existing is not None:
            existing.details["count"] += 1
            return
        name = type(node).__name__
        what = "NaN/Inf" if "NaN and Inf" in message else ("NaN" if "NaN" in message else "Inf")
        forward_class = type(node)._forward_cls
        finding = Finding(
            kind, "error", f"{what} {how}: {name}", message, op=name,
            function=forward_class.__name__ if forward_class is not None else None,
            source=str(source) if source is not None else None,
            code=source.code if source is not None else None,
            details={"count": 1, "first_step": self.step})
        self._by_site[site] = finding
        self.findings.append(finding)
        self.nodes.append(node)


def _any_non_finite(outputs) -> bool:
    for output in outputs:
        if output is None:
            continue
        data = output._data
        if data.dtype.kind == "f" and not bool(output._device.xp.isfinite(data).all()):
            return True
    return False
