"""`RunHistory`: the run's story as trace.json keeps it (`meta["history"]`), for the pictures
of report.html, and the per-step record `genesis trace` streams (metrics.jsonl, TensorBoard,
the live line).

It gathers what the session's watches measured: the loss of every step, each parameter's
gradient norm per step and update ratio |Δw|/|w| at the measured steps, the spread of each
parameter's gradient and weight values at sparser sampled steps (`distribution_step`),
the optimizers' learning rates, and the activation statistics. Every series is bounded
(`genesis.debug.step_series`), however long the run. A distribution is estimated from at
most `MAX_VALUES` evenly spaced values of a tensor.

>>> import numpy as np
>>> history = RunHistory()
>>> history.add_loss(0, 2.5); history.add_loss(1, 2.0)
>>> history.sample_distributions(0, {"w": (np.ones(4), np.arange(4.0), np)})
>>> data = history.to_dict(parameters={}, optimizers={}, activations={})
>>> data["loss"]["values"], data["parameters"]["w"]["weight"][0]["percentiles"][4]
([2.5, 2.0], 1.5)
"""
from __future__ import annotations

import numpy as np

from .json_values import number
from .sampling import FIRST, sampled
from .step_series import DistributionSeries, StepSeries

__all__ = ["RunHistory", "history_from_records", "distribution_step", "MAX_VALUES", "VERSION"]

VERSION = 1
MAX_VALUES = 16_384  # values a distribution is estimated from, at most (its percentiles to
# within about 1% of rank; a sample of a big tensor costs about 0.4 ms, not 1.4 ms at 65,536)


def distribution_step(step: int) -> bool:
    """Whether value distributions are sampled at `step`: the first few steps, then one
    sampled step in ten (a percentile costs a sort, so these are sparser)."""
    return step < FIRST or (sampled(step) and step % 100 == 0)


class RunHistory:
    """The loss series and the sampled distributions; the rest is read from the watches
    when `to_dict` is called."""

    def __init__(self):
        self.loss = StepSeries()
        self.grads = {}     # parameter name -> DistributionSeries
        self.weights = {}

    def add_loss(self, step: int, value: float | None) -> None:
        """The scalar the backward call of `step` started from."""
        self.loss.add(step, value)

    def rename(self, old: str, new: str) -> None:
        """The samples taken under parameter name `old` are now `new`'s (a better name found
        once the run is over)."""
        for series in (self.grads, self.weights):
            if old in series:
                series[new] = series.pop(old)

    def sample_distributions(self, step: int, tensors: dict) -> None:
        """`tensors`: {parameter name: (gradient array or None, weight array, their array
        namespace)}; each array is sampled down to `MAX_VALUES` values and summarised by
        percentiles. The samples of GPU arrays cross to the host together, in one transfer."""
        pieces = [(series, name, _spaced(array), xp) for name, (grad, weight, xp) in tensors.items()
                  for series, array in ((self.grads, grad), (self.weights, weight))
                  if array is not None]
        on_host = _to_host([(array, xp) for _, _, array, xp in pieces])
        for (series, name, _, _), values in zip(pieces, on_host):
            series.setdefault(name, DistributionSeries()).add(step, values)

    def to_dict(self, parameters: dict, optimizers: dict, activations: dict,
                steps_seen: int = 0) -> dict:
        """meta["history"]: `parameters` maps each parameter name to its gradient-norm and
        update-ratio series ({"grad_norm": ..., "update_ratio": ...}); `optimizers` is
        `OptimizerWatch.to_dict()`; `activations` the activation watch's section."""
        params = {}
        for name in list(parameters) + [name for name in self.weights if name not in parameters]:
            entry = dict(parameters.get(name, {}))
            entry["grad"] = self.grads[name].to_dict() if name in self.grads else []
            entry["weight"] = self.weights[name].to_dict() if name in self.weights else []
            params[name] = entry
        return {"version": VERSION, "steps_seen": steps_seen, "loss": self.loss.to_dict(),
                "parameters": params, "activations": activations,
                "optimizers": optimizers.get("optimizers", []),
                "events": optimizers.get("events", [])}


def history_from_records(records) -> dict:
    """meta["history"] rebuilt from the per-step records a session sent its step listeners
    (`TraceSession.step_listeners`: the lines of metrics.jsonl), for a run whose process died
    before it could write its own (SIGKILL): the loss, each parameter's gradient norm and
    update ratio, each optimizer group's learning rate. What the records do not hold is left
    out: the value distributions, the activations, the optimizers' parameter groups and events.

    >>> data = history_from_records([{"step": 0, "loss": 2.0, "grad_norm": {"w": "NaN"},
    ...                               "lr": {"SGD[0]": 0.1}}])
    >>> data["loss"]["values"], data["parameters"]["w"]["grad_norm"]["values"]
    ([2.0], [nan])
    >>> data["optimizers"][0]["name"], data["optimizers"][0]["groups"][0]["lr"]["values"]
    ('SGD', [0.1])
    """
    history = RunHistory()
    norms, ratios, rates = {}, {}, {}
    steps_seen = 0
    for record in records:
        step = record["step"]
        history.add_loss(step, number(record.get("loss")))
        for figures, series in ((record.get("grad_norm"), norms), (record.get("update_ratio"), ratios),
                                (record.get("lr"), rates)):
            for name, value in (figures or {}).items():
                series.setdefault(name, StepSeries()).add(step, number(value))
        steps_seen = step + 1
    parameters = {name: {"grad_norm": series.to_dict(),
                         "update_ratio": ratios[name].to_dict() if name in ratios else None}
                  for name, series in norms.items()}
    optimizers = {}
    for group, series in rates.items():  # "Adam[0]": Adam's group 0
        name, _, index = group.rpartition("[")
        optimizers.setdefault(name, {})[int(index.rstrip("]"))] = series.to_dict()
    watched = [{"name": name, "made_at": None, "steps": None,
                "groups": [{"params": [], "lr": groups.get(index)} for index in range(max(groups) + 1)]}
               for name, groups in optimizers.items()]
    return history.to_dict(parameters, {"optimizers": watched, "events": []}, {},
                           steps_seen=steps_seen)


def _spaced(array):
    """At most MAX_VALUES evenly spaced values of `array` (a view, where it lives)."""
    flat = array.reshape(-1)
    if flat.size > MAX_VALUES:
        flat = flat[::-(-flat.size // MAX_VALUES)]
    return flat


def _to_host(arrays: list) -> list:
    """[(array, its namespace)] as NumPy arrays: those of each device namespace joined and
    brought over in one transfer."""
    result = [array if xp is np else None for array, xp in arrays]
    for xp in {id(xp): xp for _, xp in arrays if xp is not np}.values():
        indices = [index for index, (_, other) in enumerate(arrays) if other is xp]
        joined = xp.concatenate([arrays[index][0].astype(xp.float64) for index in indices])
        host, start = joined.get(), 0  # a CuPy array crosses to the host
        for index in indices:
            size = arrays[index][0].size
            result[index], start = host[start:start + size], start + size
    return result
