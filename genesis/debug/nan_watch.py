"""Watch every op for NaN/Inf being born, and record it instead of raising.

The same checks as anomaly mode (`genesis.autograd.anomaly.forward_anomaly` and
`backward_anomaly`), but a run is never interrupted: the first birth at each
source line becomes one `Finding`, with a count of how often it happened.

On a GPU the checks do not stop the host once per op: each op's finite and NaN
counts (of its outputs and of its inputs, in one launch: `_census`) are taken on
the device and handed to `readings`, and decided when it fetches (after each
backward call, and at `stop()`), in the order the ops ran, so the findings are
those a CPU run gives. Inputs on the CPU (a number-like 0-d tensor) are checked
at once.
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd import engine, function
from ..autograd.anomaly import (Census, all_finite, backward_anomaly, backward_message,
                                forward_anomaly, forward_message, input_shapes)
from ..autograd.source import SourceLocation
from ..tensor import Tensor
from ._census import CENSUS
from .findings import Finding
from .readings import Readings

__all__ = ["NaNWatch"]


class NaNWatch:
    """Install with `start()`; `findings` lists what was seen (each with its autograd node in
    `nodes`, so the caller can point it at a graph node)."""

    def __init__(self, readings: Readings | None = None):
        self.findings = []
        self.nodes = []           # the autograd node of each finding
        self.readings = readings if readings is not None else Readings()
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
        self.readings.fetch()

    def _forward(self, node, args, outputs) -> None:
        checked = _floating(outputs)
        if not checked:
            return
        device = checked[0][1]._device
        if device.xp is not np:
            self._forward_on_device(node, args, outputs, checked, device)
            return
        if all(all_finite(output) for _, output in checked):
            return
        if node._source is None:  # the call site is looked up only when something is found
            node._source = SourceLocation.capture()
        message = forward_anomaly(node, args, outputs)
        if message is None:  # the inputs were already non-finite: not born here
            return
        self._add("nan_forward", node, message, "born in forward")

    def _backward(self, node, grad_outputs, grad_inputs, flowed_from) -> None:
        checked = _floating(grad_inputs)
        if checked and checked[0][1]._device.xp is not np:
            self._backward_on_device(node, grad_outputs, checked, flowed_from)
            return
        message = backward_anomaly(node, grad_outputs, grad_inputs, flowed_from, born_only=True)
        if message is not None:
            self._add("nan_backward", node, message, "produced by its backward")

    # -- on a GPU: counts taken now, decided when the readings are fetched ------------
    def _forward_on_device(self, node, args, outputs, checked, device) -> None:
        if any(isinstance(arg, float) and not math.isfinite(arg) for arg in _flat(args)):
            return  # a non-finite number went in: nothing is born here
        inputs = _here_if_finite_elsewhere(_floating(_tensor_arguments(args)), device)
        if inputs is None:
            return
        if node._source is None:  # known only later whether it is needed: taken now
            node._source = SourceLocation.capture()
        shapes, count = input_shapes(args), len(outputs)
        self._decide_later(device, node, checked, inputs, "nan_forward", "born in forward",
                           lambda nr, census: forward_message(node, shapes, census, nr, count))

    def _backward_on_device(self, node, grad_outputs, checked, flowed_from) -> None:
        incoming = _here_if_finite_elsewhere(_floating(grad_outputs), checked[0][1]._device)
        if incoming is None:
            return
        self._decide_later(checked[0][1]._device, node, checked, incoming,
                           "nan_backward", "produced by its backward",
                           lambda index, census: backward_message(node, True, index, census,
                                                                  flowed_from))

    def _decide_later(self, device, node, checked: list, inputs: list, kind: str, how: str,
                      message) -> None:
        """Take the counts of `checked` (outputs, or gradients returned) and of `inputs` (or
        gradients received) on the device; once fetched, a finding of `kind` with
        `message(position, census)` for the first non-finite one when all inputs are finite."""
        layout = _layout(checked, inputs)  # sizes only: no array is kept alive until the fetch

        def decide(found: list) -> None:
            censuses, inputs_finite = _decided(layout, found)
            if not inputs_finite:  # non-finite already on the way in: not born here
                return
            for position, counted in censuses:
                if not counted.finite:
                    self._add(kind, node, message(position, counted), how)
                    return
        self.readings.read(device.xp, _counts(device, checked, inputs, self.readings), decide)

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


def _floating(tensors) -> list:
    """(position, tensor) of each floating-point tensor among `tensors`."""
    return [(position, tensor) for position, tensor in enumerate(tensors)
            if isinstance(tensor, Tensor) and tensor._data.dtype.kind == "f"]


def _flat(args):
    for arg in args:
        if isinstance(arg, (list, tuple)):
            yield from _flat(arg)
        else:
            yield arg


def _tensor_arguments(args) -> list:
    return [arg for arg in _flat(args) if isinstance(arg, Tensor)]


def _here_if_finite_elsewhere(tensors: list, device) -> list | None:
    """The tensors on `device`; None when one elsewhere (a CPU number joining a GPU op) is
    non-finite, which is checked now."""
    here = []
    for position, tensor in tensors:
        if tensor._device == device:
            here.append((position, tensor))
        elif not all_finite(tensor):
            return None
    return here


def _counts(device, checked: list, others: list, readings: Readings) -> list:
    """Device figures: the finite and NaN counts of each checked tensor, then of the others."""
    return CENSUS(device, [tensor._data for _, tensor in checked + others],
                  lambda count: readings.zeroed(device.xp, count))


def _layout(checked: list, others: list) -> tuple:
    """What `_decided` needs of the tensors `_counts` took figures of: positions and sizes."""
    return ([(position, tensor._data.size) for position, tensor in checked],
            [tensor._data.size for _, tensor in others])


def _decided(layout: tuple, found: list) -> tuple:
    """([(position, Census) of each checked tensor], whether all the others are finite), from
    the counts `_counts` took."""
    checked, other_sizes = layout
    censuses = []
    for slot, (position, size) in enumerate(checked):
        finite, nan = int(found[2 * slot]), int(found[2 * slot + 1])
        censuses.append((position, Census(size, nan, size - finite - nan)))
    finite_counts = found[2 * len(checked)::2]
    return censuses, all(int(count) == size for count, size in zip(finite_counts, other_sizes))
