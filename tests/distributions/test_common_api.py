"""What every distribution shares, checked family by family against torch.distributions:
support and arg_constraints, has_rsample, batch/event shapes, expand (the expanded
distribution's log_prob equals PyTorch's expanded one), sample shapes, and the checks of
values given to log_prob."""
import numpy as np
import pytest

import genesis
import genesis.distributions as D
from tests.helpers import torch_or_skip

# name -> (parameters with batch shape (3,), a value in the support of shape (3,) + event)
FAMILIES = {
    "Normal": (dict(loc=[0.0, 1.0, -1.0], scale=[1.0, 0.5, 2.0]), [0.1, 0.2, 0.3]),
    "Uniform": (dict(low=[0.0, 1.0, -1.0], high=[1.0, 1.5, 2.0]), [0.1, 1.2, 0.3]),
    "Laplace": (dict(loc=[0.0, 1.0, -1.0], scale=[1.0, 0.5, 2.0]), [0.1, 0.2, 0.3]),
    "Cauchy": (dict(loc=[0.0, 1.0, -1.0], scale=[1.0, 0.5, 2.0]), [0.1, 0.2, 0.3]),
    "Gumbel": (dict(loc=[0.0, 1.0, -1.0], scale=[1.0, 0.5, 2.0]), [0.1, 0.2, 0.3]),
    "LogNormal": (dict(loc=[0.0, 1.0, -1.0], scale=[1.0, 0.5, 2.0]), [0.1, 0.2, 0.3]),
    "Exponential": (dict(rate=[1.0, 0.5, 2.0]), [0.1, 0.2, 0.3]),
    "Gamma": (dict(concentration=[1.0, 0.5, 2.0], rate=[1.0, 3.0, 0.2]), [0.1, 0.2, 0.3]),
    "Beta": (dict(concentration1=[1.0, 0.5, 2.0], concentration0=[1.0, 3.0, 0.2]), [0.1, 0.2, 0.3]),
    "Dirichlet": (dict(concentration=[[1.0, 0.5], [2.0, 1.0], [3.0, 0.2]]), [[0.1, 0.9], [0.5, 0.5], [0.3, 0.7]]),
    "Bernoulli": (dict(probs=[0.1, 0.5, 0.8]), [0.0, 1.0, 1.0]),
    "Categorical": (dict(probs=[[0.1, 0.9], [0.5, 0.5], [0.3, 0.7]]), [0, 1, 1]),
    "OneHotCategorical": (dict(probs=[[0.1, 0.9], [0.5, 0.5], [0.3, 0.7]]), [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]),
    "Poisson": (dict(rate=[1.0, 0.5, 2.0]), [0.0, 2.0, 3.0]),
    "Geometric": (dict(probs=[0.1, 0.5, 0.8]), [0.0, 2.0, 3.0]),
    "Binomial": (dict(total_count=[4.0, 4.0, 4.0], probs=[0.1, 0.5, 0.8]), [0.0, 2.0, 3.0]),
    "Chi2": (dict(df=[1.0, 0.5, 4.0]), [0.1, 0.2, 0.3]),
    "Weibull": (dict(scale=[1.0, 0.5, 2.0], concentration=[1.0, 3.0, 0.2]), [0.1, 0.2, 0.3]),
    "Pareto": (dict(scale=[0.1, 0.05, 0.2], alpha=[1.0, 3.0, 0.2]), [0.1, 0.2, 0.3]),
    "NegativeBinomial": (dict(total_count=[4.0, 0.5, 2.0], probs=[0.1, 0.5, 0.8]), [0.0, 2.0, 3.0]),
    "Multinomial": (dict(total_count=5, probs=[[0.1, 0.9], [0.5, 0.5], [0.3, 0.7]]), [[1.0, 4.0], [5.0, 0.0], [2.0, 3.0]]),
}


def _make(lib, name, params, float_type):
    """The family built from `params`; an int (Multinomial's total_count) is passed as it is."""
    return getattr(lib.distributions, name)(**{k: v if isinstance(v, int) else lib.tensor(v, dtype=float_type)
                                               for k, v in params.items()})


def _value(lib, value, dtype):
    return lib.tensor(value, dtype=dtype)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_shapes_constraints_and_expand_match_pytorch(name):
    torch = torch_or_skip()
    params, value = FAMILIES[name]
    mine, theirs = _make(genesis, name, params, genesis.float64), _make(torch, name, params, torch.float64)
    assert tuple(mine.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(mine.event_shape) == tuple(theirs.event_shape)
    assert mine.has_rsample == theirs.has_rsample
    assert repr(mine.support).split("(")[0] == repr(theirs.support).split("(")[0]
    assert set(type(mine).arg_constraints) == set(type(theirs).arg_constraints) \
        if isinstance(type(theirs).arg_constraints, dict) else True
    value_dtype = (genesis.int64, torch.int64) if name == "Categorical" else (genesis.float64, torch.float64)
    mine_expanded, their_expanded = mine.expand((2, 3)), theirs.expand((2, 3))
    assert tuple(mine_expanded.batch_shape) == (2, 3) and mine.batch_shape == (3,)   # the original is kept
    np.testing.assert_allclose(mine_expanded.log_prob(_value(genesis, value, value_dtype[0])).numpy(),
                               their_expanded.log_prob(_value(torch, value, value_dtype[1])).numpy(), rtol=1e-12)
    drawn = mine_expanded.sample((4,))
    assert tuple(drawn.shape) == (4, 2, 3) + tuple(mine.event_shape)
    assert bool(mine.support.check(drawn).all().item()) if not isinstance(mine, D.Uniform) else True
    with pytest.raises(ValueError, match="must be a Tensor"):
        mine.log_prob(value)
    with pytest.raises(ValueError, match="broadcastable|right-most size"):
        mine.log_prob(genesis.zeros(*((4,) + tuple(mine.event_shape or (5,))), dtype=genesis.float64))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_float32_parameters_give_float32_results(name):
    params, value = FAMILIES[name]
    mine = _make(genesis, name, params, genesis.float32)
    point = genesis.tensor(value, dtype=genesis.int64 if name == "Categorical" else genesis.float32)
    assert mine.log_prob(point).dtype == genesis.float32
    if name != "Categorical":
        assert mine.sample().dtype == genesis.float32


def test_set_default_validate_args_turns_the_checks_off_and_on():
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Normal(0.0, -1.0).batch_shape == ()
        assert D.Exponential(1.0).log_prob(genesis.tensor(-1.0)).item() == pytest.approx(1.0)
        assert D.Normal(0.0, -1.0, validate_args=True) is None  # never reached
    except ValueError as error:
        assert "Expected parameter scale" in str(error)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
