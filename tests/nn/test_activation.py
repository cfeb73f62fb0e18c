"""Activation modules: values, gradients and printing like PyTorch's."""
import numpy as np
import pytest

import genesis
from genesis import nn
from tests.helpers import torch_or_skip

MODULES = [
    ("ReLU", (), {}), ("ReLU", (), {"inplace": True}), ("ReLU6", (), {}), ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2, True), {}), ("ELU", (), {}), ("ELU", (0.5,), {}), ("SELU", (), {}),
    ("CELU", (), {"alpha": 2.0}), ("GELU", (), {}), ("GELU", ("tanh",), {}), ("SiLU", (), {}),
    ("Mish", (), {}), ("Softplus", (), {"beta": 2.0, "threshold": 1.0}), ("Hardtanh", (-2.0, 3.0), {}),
    ("Hardsigmoid", (), {}), ("Hardswish", (), {}), ("Sigmoid", (), {}), ("Tanh", (), {}),
    ("Softmax", (1,), {}), ("Softmax", (), {}), ("LogSoftmax", (-1,), {}), ("Softmin", (0,), {}),
    ("PReLU", (), {}), ("PReLU", (3, 0.1), {}),
]
IDS = [f"{name}{args}{kwargs}" for name, args, kwargs in MODULES]


@pytest.mark.filterwarnings("ignore:Implicit dimension choice:UserWarning")  # torch's Softmax()
@pytest.mark.parametrize("name, args, kwargs", MODULES, ids=IDS)
def test_matches_pytorch(name, args, kwargs):
    torch = torch_or_skip()
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    theirs.double()  # PReLU's float32 weight meets the float64 input (genesis promotes, torch won't)
    values = np.random.default_rng(0).uniform(-5, 5, (4, 3, 5))
    values[np.abs(values) < 0.05] += 0.1  # keep away from kinks
    x = genesis.from_numpy(values.copy()).requires_grad_()
    reference_x = torch.from_numpy(values.copy()).requires_grad_()
    inplace = kwargs.get("inplace") or (len(args) > 1 and args[1] is True)
    out = ours(x * 1 if inplace else x)
    reference = theirs(reference_x * 1 if inplace else reference_x)
    np.testing.assert_allclose(out.detach().numpy(), reference.detach().numpy(), rtol=1e-7, atol=1e-12)
    weights = np.random.default_rng(1).standard_normal(values.shape)
    out.backward(genesis.from_numpy(weights))
    reference.backward(torch.from_numpy(weights))
    np.testing.assert_allclose(x.grad.numpy(), reference_x.grad.numpy(), rtol=1e-7, atol=1e-12)
    for mine, their in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), rtol=1e-5)


def test_prelu_checks_channels():
    with pytest.raises(RuntimeError, match="3 channels in dimension 1, got shape \\(2, 4\\)"):
        nn.PReLU(3)(genesis.ones(2, 4))


@pytest.mark.parametrize("num_parameters", [1, 2])
def test_prelu_module_at_zero_takes_the_slope_as_pytorch(num_parameters):
    """The module is F.prelu with its weight: at x = 0 the input's gradient is the slope, and the
    weight's gradient there is 0 (an `x >= 0` copy of the rule used to give 1)."""
    torch = torch_or_skip()
    grads = []
    for library in (genesis, torch):
        module = library.nn.PReLU(num_parameters, init=0.25).double()
        x = library.tensor([[0.0, -2.0], [0.0, 3.0]], dtype=library.float64, requires_grad=True)
        module(x).sum().backward()
        grads.append((x.grad.tolist(), module.weight.grad.tolist()))
    assert grads[0] == grads[1]
    assert grads[0][0] == [[0.25, 0.25], [0.25, 1.0]]
