"""LBFGS: the same iterates as PyTorch's, with and without the strong-Wolfe line search,
with short histories and few iterations; its refusals."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip

CONFIGS = [dict(), dict(line_search_fn="strong_wolfe"), dict(lr=0.5, max_iter=5, history_size=3),
           dict(line_search_fn="strong_wolfe", max_iter=3, history_size=2),
           dict(max_eval=4, tolerance_change=1e-5)]


def _run(lib, options, steps=4):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((20, 5)), rng.standard_normal(20)
    w = lib.zeros(5, dtype=lib.float64, requires_grad=True)
    a, b = lib.tensor(a, dtype=lib.float64), lib.tensor(b, dtype=lib.float64)
    optimizer = lib.optim.LBFGS([w], **options)

    def closure():
        optimizer.zero_grad()
        loss = ((a @ w - b) ** 2).mean() + 0.1 * (w ** 4).sum()
        loss.backward()
        return loss

    losses = [float(optimizer.step(closure).detach()) for _ in range(steps)]
    return losses, w.detach().numpy(), optimizer.state[w]["func_evals"]


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
def test_iterates_match_pytorch(options):
    torch = torch_or_skip()
    mine, theirs = _run(genesis, options), _run(torch, options)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-10, atol=1e-12)
    assert mine[2] == theirs[2]  # the same number of closure evaluations


def test_it_converges_on_a_quadratic():
    w = genesis.tensor([3.0, -2.0], dtype=genesis.float64, requires_grad=True)
    optimizer = genesis.optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = ((w - genesis.tensor([1.0, 1.0], dtype=genesis.float64)) ** 2).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), [1.0, 1.0], atol=1e-8)


def test_refusals():
    w = genesis.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="needs a closure"):
        genesis.optim.LBFGS([w]).step(None)
    with pytest.raises(ValueError, match="strong_wolfe"):
        genesis.optim.LBFGS([w], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="parameter groups"):
        genesis.optim.LBFGS([{"params": [w]}, {"params": [genesis.zeros(1, requires_grad=True)]}])
