"""Shared checks of a genesis distribution against the same torch distribution: every value a
method gives, and the gradients of log_prob (and of whatever else is differentiable) with
respect to every parameter, all in float64."""
from __future__ import annotations

import numpy as np

import genesis

PROPERTIES = ("mean", "mode", "variance", "stddev")
METHODS = ("log_prob", "cdf", "icdf")


def as_numpy(value):
    return value.detach().numpy() if hasattr(value, "detach") else np.asarray(value)


def leaves(torch, params: dict):
    """(genesis leaves, torch leaves) for the float parameters; others pass through."""
    mine, theirs = {}, {}
    for name, value in params.items():
        if isinstance(value, (list, float)) or (isinstance(value, np.ndarray) and value.dtype.kind == "f"):
            mine[name] = genesis.tensor(value, dtype=genesis.float64, requires_grad=True)
            theirs[name] = torch.tensor(value, dtype=torch.float64, requires_grad=True)
        else:
            mine[name], theirs[name] = value, value
    return mine, theirs


def probe(torch, value, integer=False):
    if integer:
        return genesis.tensor(value, dtype=genesis.int64), torch.tensor(value, dtype=torch.int64)
    return genesis.tensor(value, dtype=genesis.float64), torch.tensor(value, dtype=torch.float64)


def check_against_torch(torch, name: str, params: dict, value, *, methods=METHODS,
                        properties=PROPERTIES, entropy=True, rtol=1e-10, atol=1e-12,
                        value_for=None):
    """Build `name` in genesis and torch from `params`; compare the properties, entropy and
    the methods at `value` (`value_for[method]` overrides it, icdf takes probabilities), then
    the gradients of the sum of every differentiable result w.r.t. each parameter."""
    value_for = value_for or {}
    mine_params, their_params = leaves(torch, params)
    mine = getattr(genesis.distributions, name)(**mine_params)
    theirs = getattr(torch.distributions, name)(**their_params)
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(mine.event_shape) == tuple(theirs.event_shape)
    mine_total, their_total = 0.0, 0.0
    results = [(p, getattr(mine, p), getattr(theirs, p)) for p in properties]
    if entropy:
        results.append(("entropy", mine.entropy(), theirs.entropy()))
    for method in methods:
        point = value_for.get(method, value)
        g_point, t_point = probe(torch, point)
        results.append((method, getattr(mine, method)(g_point), getattr(theirs, method)(t_point)))
    for label, got, expected in results:
        np.testing.assert_allclose(as_numpy(got), as_numpy(expected), rtol=rtol, atol=atol,
                                   err_msg=f"{name}.{label}")
        if getattr(expected, "requires_grad", False) and np.isfinite(as_numpy(expected)).all():
            mine_total = mine_total + got.sum()
            their_total = their_total + expected.sum()
    if hasattr(their_total, "backward"):
        mine_total.backward()
        their_total.backward()
        for key, leaf in their_params.items():
            if hasattr(leaf, "grad") and leaf.requires_grad:
                np.testing.assert_allclose(mine_params[key].grad.numpy(), leaf.grad.numpy(),
                                           rtol=rtol, atol=atol, err_msg=f"{name}: d/d{key}")
    return mine, theirs


def run_served_and_real(source: str) -> tuple:
    """The `result` a script's `source` leaves, run first with genesis served as torch, then
    with the real torch: (genesis's, torch's)."""
    from genesis.compat import serve_torch

    served = {"__name__": "__main__"}
    with serve_torch():
        exec(compile(source, "served.py", "exec"), served)
    real = {"__name__": "__main__"}
    exec(compile(source, "real.py", "exec"), real)
    return served["result"], real["result"]
