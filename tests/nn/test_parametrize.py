"""Parametrizations (genesis.nn.utils.parametrize), weight and spectral normalization in both
forms, against PyTorch: names, state dicts, values, gradients, training, errors."""
import copy
import warnings

import numpy as np
import pytest

import genesis
from genesis import nn
from genesis.autograd import gradcheck
from genesis.nn.utils import parametrizations, parametrize
from genesis.nn.utils import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm
from tests.helpers import torch_or_skip


def _same_weights(ours, theirs):
    ours.load_state_dict({key: genesis.from_numpy(value.detach().numpy().copy())
                          for key, value in theirs.state_dict().items()})


def _layers(torch, make, dtype=True):
    torch.manual_seed(0)
    theirs = make(torch.nn).double()
    ours = make(nn).double()
    return ours, theirs


def _compare_step(torch, ours, theirs, shape, rtol=1e-10):
    """One forward and backward of both on the same input: outputs, input and parameter
    gradients agree, parameters named alike."""
    x = np.random.default_rng(1).standard_normal(shape)
    mine, reference = genesis.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
    out, their_out = ours(mine), theirs(reference)
    np.testing.assert_allclose(out.detach().numpy(), their_out.detach().numpy(), rtol=rtol, atol=1e-12)
    weights = np.random.default_rng(2).standard_normal(tuple(out.shape))
    (out * genesis.from_numpy(weights)).sum().backward()
    (their_out * torch.from_numpy(weights)).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=rtol, atol=1e-12)
    named = dict(ours.named_parameters())
    their_named = dict(theirs.named_parameters())
    assert list(named) == list(their_named)
    for name, parameter in their_named.items():
        np.testing.assert_allclose(named[name].grad.numpy(), parameter.grad.numpy(), rtol=rtol,
                                   atol=1e-12)


class Symmetric:
    @staticmethod
    def make(library):
        class Symmetric(library.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()
        return Symmetric()


class Scaled:
    @staticmethod
    def make(library):
        class Scaled(library.Module):
            def forward(self, X):
                return X * 2

            def right_inverse(self, X):
                return X / 2
        return Scaled()


def test_registered_parametrization_matches_pytorch():
    torch = torch_or_skip()
    ours, theirs = _layers(torch, lambda library: library.Linear(4, 4))
    parametrize.register_parametrization(ours, "weight", Symmetric.make(nn))
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", Symmetric.make(torch.nn))
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _same_weights(ours, theirs)
    _compare_step(torch, ours, theirs, (3, 4))
    assert parametrize.is_parametrized(ours) and parametrize.is_parametrized(ours, "weight")
    assert not parametrize.is_parametrized(ours, "bias")
    assert parametrize.type_before_parametrizations(ours) is nn.Linear


def test_assignment_goes_through_right_inverse_and_chains_apply_in_order():
    torch = torch_or_skip()
    ours, theirs = _layers(torch, lambda library: library.Linear(3, 3))
    for module, library, utility in ((ours, nn, parametrize),
                                     (theirs, torch.nn, torch.nn.utils.parametrize)):
        utility.register_parametrization(module, "weight", Symmetric.make(library))
        utility.register_parametrization(module, "weight", Scaled.make(library))
    _same_weights(ours, theirs)
    value = np.arange(9.0).reshape(3, 3)
    ours.weight = genesis.from_numpy(value.copy())
    theirs.weight = torch.from_numpy(value.copy())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    np.testing.assert_allclose(ours.parametrizations.weight.original.detach().numpy(),
                               theirs.parametrizations.weight.original.detach().numpy())
    _compare_step(torch, ours, theirs, (2, 3))


@pytest.mark.parametrize("leave", [True, False])
def test_removal_restores_a_parameter_and_the_class(leave):
    layer = nn.Linear(3, 3)
    original = layer.weight
    parametrize.register_parametrization(layer, "weight", Scaled.make(nn))
    optimizer = genesis.optim.SGD(layer.parameters(), lr=0.1)  # holds the original
    expected = (layer.weight if leave else layer.parametrizations.weight.original).detach().numpy()
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=leave)
    assert type(layer) is nn.Linear and not hasattr(layer, "parametrizations")
    assert layer.weight is original and isinstance(layer.weight, nn.Parameter)
    np.testing.assert_allclose(layer.weight.detach().numpy(), expected)
    layer(genesis.ones(1, 3)).sum().backward()
    optimizer.step()  # the optimizer still trains the module's weight


def test_training_moves_the_original_and_cached_reads_once():
    layer = parametrize.register_parametrization(nn.Linear(3, 2), "weight", Scaled.make(nn))
    optimizer = genesis.optim.Adam(layer.parameters(), lr=0.1)
    before = layer.parametrizations.weight.original.detach().numpy().copy()
    layer(genesis.ones(4, 3)).sum().backward()
    optimizer.step()
    assert not np.allclose(before, layer.parametrizations.weight.original.detach().numpy())
    with parametrize.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight
    duplicate = copy.deepcopy(layer)
    assert type(duplicate).__name__ == "ParametrizedLinear"
    np.testing.assert_array_equal(duplicate.weight.detach().numpy(), layer.weight.detach().numpy())


def test_parametrization_errors_match_pytorch():
    torch = torch_or_skip()

    def changes_shape(library):
        class Flat(library.Module):
            def forward(self, X):
                return X.flatten()
        return Flat()

    for module, library, utility in ((nn.Linear(2, 2), nn, parametrize),
                                     (torch.nn.Linear(2, 2), torch.nn, torch.nn.utils.parametrize)):
        with pytest.raises(ValueError, match="may not change the shape"):
            utility.register_parametrization(module, "weight", changes_shape(library))
        with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
            utility.register_parametrization(module, "missing", Scaled.make(library))
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            utility.remove_parametrizations(module, "weight")


@pytest.mark.parametrize("make, dim, shape", [
    (lambda library: library.Linear(4, 3), 0, (2, 4)),
    (lambda library: library.Linear(4, 3), None, (2, 4)),
    (lambda library: library.Conv1d(2, 3, 3), 1, (2, 2, 5)),
])
def test_weight_norm_parametrization_matches_pytorch(make, dim, shape):
    torch = torch_or_skip()
    ours, theirs = _layers(torch, make)
    parametrizations.weight_norm(ours, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(theirs, dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _same_weights(ours, theirs)
    _compare_step(torch, ours, theirs, shape)


def test_weight_norm_loads_a_state_dict_of_the_older_form():
    torch = torch_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2).double())
    ours = parametrizations.weight_norm(nn.Linear(3, 2).double())
    ours.load_state_dict({key: genesis.from_numpy(value.detach().numpy().copy())
                          for key, value in old.state_dict().items()})
    np.testing.assert_allclose(ours.weight.detach().numpy(), old.weight.detach().numpy())


@pytest.mark.parametrize("make, shape", [(lambda library: library.Linear(5, 3), (2, 5)),
                                         (lambda library: library.ConvTranspose2d(2, 3, 2), (1, 2, 3, 3))])
def test_spectral_norm_parametrization_matches_pytorch_in_training_and_eval(make, shape):
    torch = torch_or_skip()
    ours, theirs = _layers(torch, make)
    parametrizations.spectral_norm(ours, n_power_iterations=2)
    torch.nn.utils.parametrizations.spectral_norm(theirs, n_power_iterations=2)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _same_weights(ours, theirs)  # the power-iteration vectors too
    for _ in range(3):  # each training read refines u and v
        _compare_step(torch, ours, theirs, shape)
    ours.eval(), theirs.eval()
    _compare_step(torch, ours, theirs, shape)
    for name, buffer in theirs.named_buffers():
        np.testing.assert_allclose(dict(ours.named_buffers())[name].numpy(), buffer.numpy(),
                                   rtol=1e-10)


def test_older_weight_norm_matches_pytorch_and_is_removed():
    torch = torch_or_skip()
    ours, theirs = _layers(torch, lambda library: library.Linear(4, 3))
    with pytest.warns(FutureWarning, match="deprecated in favor of"):
        weight_norm(ours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight_g", "weight_v"]
    _same_weights(ours, theirs)
    _compare_step(torch, ours, theirs, (2, 4))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        weight_norm(ours)
    remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        remove_weight_norm(ours)


def test_older_spectral_norm_matches_pytorch_over_training_steps():
    torch = torch_or_skip()
    ours, theirs = _layers(torch, lambda library: library.Linear(5, 4))
    spectral_norm(ours)
    torch.nn.utils.spectral_norm(theirs)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    _same_weights(ours, theirs)
    for _ in range(3):
        _compare_step(torch, ours, theirs, (2, 5))
    ours.eval(), theirs.eval()
    _compare_step(torch, ours, theirs, (2, 5))
    remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        remove_spectral_norm(ours)


def test_normalized_weights_have_finite_difference_gradients():
    layer = parametrizations.weight_norm(nn.Linear(3, 2, dtype=genesis.float64))
    g = layer.parametrizations.weight.original0
    v = layer.parametrizations.weight.original1
    x = genesis.randn(4, 3, dtype=genesis.float64)
    assert gradcheck(lambda g, v: genesis.nn.functional.linear(
        x, layer.parametrizations.weight[0](g, v), layer.bias), (g, v))
    critic = parametrizations.spectral_norm(nn.Linear(3, 2, dtype=genesis.float64)).eval()
    weight = critic.parametrizations.weight.original
    assert gradcheck(lambda w: critic.parametrizations.weight[0](w), (weight,))
