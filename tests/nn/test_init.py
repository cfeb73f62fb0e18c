"""genesis.nn.init: gains, fans, bounds and statistics like torch.nn.init."""
import math

import numpy as np
import pytest

import genesis
from genesis.nn import init
from tests.helpers import torch_or_skip


@pytest.mark.parametrize("nonlinearity, param", [
    ("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
    ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu", None)])
def test_calculate_gain_matches_pytorch(nonlinearity, param):
    torch = torch_or_skip()
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity, param)


def test_calculate_gain_rejects_unknown_inputs():
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape", [(5, 3), (4, 2, 3), (6, 3, 2, 2)])
def test_fans_match_pytorch(shape):
    torch = torch_or_skip()
    assert init._calculate_fan_in_and_fan_out(genesis.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fans_need_two_dimensions():
    with pytest.raises(ValueError, match=r"fewer than 2 dimensions \(got shape \(4,\)\)"):
        init.xavier_uniform_(genesis.empty(4))


def _bound_and_std(array):
    return float(np.abs(array).max()), float(array.std())


@pytest.mark.parametrize("call, bound", [
    (lambda w: init.kaiming_uniform_(w), math.sqrt(6 / 200)),
    (lambda w: init.kaiming_uniform_(w, a=math.sqrt(5)), 1 / math.sqrt(200)),
    (lambda w: init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"), math.sqrt(6 / 300)),
    (lambda w: init.xavier_uniform_(w, gain=2.0), 2.0 * math.sqrt(6 / 500)),
    (lambda w: init.uniform_(w, -0.3, 0.3), 0.3),
])
def test_uniform_initialisers_fill_the_fan_based_range(call, bound):
    weight = genesis.empty(300, 200)
    assert call(weight) is weight
    largest, std = _bound_and_std(weight.numpy())
    assert bound * 0.99 < largest <= bound
    assert std == pytest.approx(bound / math.sqrt(3), rel=0.02)


@pytest.mark.parametrize("call, std", [
    (lambda w: init.kaiming_normal_(w, nonlinearity="relu"), math.sqrt(2 / 200)),
    (lambda w: init.kaiming_normal_(w, mode="fan_out"), math.sqrt(2 / 300)),  # a=0: gain sqrt(2)
    (lambda w: init.xavier_normal_(w), math.sqrt(2 / 500)),
    (lambda w: init.normal_(w, 1.0, 0.5), 0.5),
])
def test_normal_initialisers_have_the_fan_based_std(call, std):
    weight = genesis.empty(300, 200, dtype=genesis.float64)
    call(weight)
    assert weight.numpy().std() == pytest.approx(std, rel=0.02)


def test_trunc_normal_stays_in_bounds():
    weight = genesis.empty(100, 100)
    init.trunc_normal_(weight, mean=0.5, std=1.0, a=0.0, b=1.0)
    values = weight.numpy()
    assert values.min() >= 0.0 and values.max() <= 1.0
    assert values.mean() == pytest.approx(0.5, abs=0.02)  # symmetric around the mean
    with pytest.raises(ValueError, match="a < b"):
        init.trunc_normal_(weight, a=1.0, b=0.0)
    with pytest.raises(ValueError, match="holds almost none"):
        init.trunc_normal_(weight, a=50.0, b=60.0)


def test_constant_eye_and_orthogonal():
    weight = genesis.empty(3, 4)
    assert init.constant_(weight, 0.25).tolist() == [[0.25] * 4] * 3
    assert init.zeros_(weight).numpy().sum() == 0 and init.ones_(weight).numpy().sum() == 12
    np.testing.assert_array_equal(init.eye_(weight).numpy(), np.eye(3, 4))
    wide = init.orthogonal_(genesis.empty(3, 5, dtype=genesis.float64), gain=2.0).numpy()
    np.testing.assert_allclose(wide @ wide.T, 4 * np.eye(3), atol=1e-12)
    tall = init.orthogonal_(genesis.empty(6, 2, 2, dtype=genesis.float64)).numpy().reshape(6, 4)
    np.testing.assert_allclose(tall.T @ tall, np.eye(4), atol=1e-12)
    with pytest.raises(ValueError, match="2-D"):
        init.eye_(genesis.empty(2, 2, 2))


def test_initialisers_work_on_parameters_outside_the_graph_and_bump_versions():
    param = genesis.nn.Parameter(genesis.empty(4, 4))
    version = param._version
    init.kaiming_uniform_(param)
    assert param.grad_fn is None and param.requires_grad and param._version == version + 1


def test_half_precision_and_reproducibility():
    genesis.manual_seed(3)
    first = init.normal_(genesis.empty(5, dtype=genesis.float16)).tolist()
    genesis.manual_seed(3)
    second = init.normal_(genesis.empty(5, dtype=genesis.float16)).tolist()
    assert first == second


def test_empty_tensors_are_left_alone():
    assert init.kaiming_uniform_(genesis.empty(0, 3)).shape == (0, 3)


@pytest.mark.parametrize("shape, groups", [((4, 2, 3, 3), 1), ((4, 2, 3), 2), ((6, 3, 3, 3, 3), 2),
                                           ((2, 4, 5, 5), 1)])
def test_dirac_matches_pytorch(shape, groups):
    torch = torch_or_skip()
    mine = genesis.nn.init.dirac_(genesis.empty(*shape), groups)
    np.testing.assert_array_equal(mine.numpy(), torch.nn.init.dirac_(torch.empty(*shape), groups).numpy())


def test_sparse_zeroes_a_share_of_each_column_and_refuses_other_shapes():
    weight = genesis.nn.init.sparse_(genesis.empty(20, 4), sparsity=0.25, std=0.5)
    assert [int((weight[:, c] == 0).sum()) for c in range(4)] == [5, 5, 5, 5]
    with pytest.raises(ValueError, match="2-D"):
        genesis.nn.init.sparse_(genesis.empty(2, 2, 2), 0.5)
    with pytest.raises(ValueError, match="3, 4 or 5-D"):
        genesis.nn.init.dirac_(genesis.empty(2, 2))


_DEPRECATED_INITS = [("uniform", (4, 3), (-0.5, 0.5)), ("normal", (4, 3), (0.0, 2.0)),
                     ("constant", (4, 3), (0.25,)), ("eye", (3, 5), ()),
                     ("dirac", (4, 2, 3, 3), ()), ("xavier_uniform", (4, 3), (2.0,)),
                     ("xavier_normal", (4, 3), ()), ("kaiming_uniform", (4, 3), (0.1,)),
                     ("kaiming_normal", (4, 3), ()), ("orthogonal", (4, 3), (1.5,)),
                     ("sparse", (6, 3), (0.5,))]


@pytest.mark.parametrize("old_name, shape, args", _DEPRECATED_INITS)
def test_deprecated_names_warn_as_pytorch_and_fill_as_the_underscore_forms(old_name, shape, args):
    torch = torch_or_skip()
    with pytest.warns(FutureWarning) as ours_warned:
        genesis.manual_seed(5)
        old = getattr(init, old_name)(genesis.empty(*shape), *args)
    with pytest.warns(FutureWarning) as theirs_warned:
        getattr(torch.nn.init, old_name)(torch.empty(*shape), *args)
    assert str(ours_warned[0].message) == str(theirs_warned[0].message)
    assert ours_warned[0].filename == __file__  # stacklevel points at the caller, as PyTorch's
    genesis.manual_seed(5)
    new = getattr(init, old_name + "_")(genesis.empty(*shape), *args)
    np.testing.assert_array_equal(old.numpy(), new.numpy())
    assert getattr(init, old_name).__name__ == old_name
