"""F.pad and the padding layers against PyTorch: values, gradients, errors."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.autograd import gradcheck, gradgradcheck
from tests.helpers import torch_or_skip

LAYERS = [("ZeroPad1d", (2,), (2, 3, 4)), ("ZeroPad2d", ((1, 0, 2, 1),), (2, 3, 4)),
          ("ZeroPad3d", (1,), (1, 2, 2, 3)), ("ConstantPad1d", ((0, 2), 1.5), (3, 4)),
          ("ConstantPad2d", (1, -0.5), (1, 2, 3, 3)), ("ConstantPad3d", ((1, 0, 0, 1, 1, 0), 2.0), (2, 2, 2, 2)),
          ("ReflectionPad1d", ((3, 1),), (2, 2, 5)), ("ReflectionPad2d", (2,), (1, 3, 4)),
          ("ReflectionPad3d", (1,), (1, 1, 2, 3, 4)), ("ReplicationPad1d", ((0, 4),), (2, 3)),
          ("ReplicationPad2d", ((1, 2, 0, 3),), (2, 1, 3, 3)), ("ReplicationPad3d", (1,), (2, 2, 2, 2)),
          ("CircularPad1d", ((2, 1),), (1, 2, 3)), ("CircularPad2d", ((1, 1, 2, 0),), (2, 3, 4)),
          ("CircularPad3d", (1,), (1, 1, 2, 2, 2))]


@pytest.mark.parametrize("name, args, shape", LAYERS, ids=[layer[0] for layer in LAYERS])
def test_padding_layers_match_pytorch(name, args, shape):
    torch = torch_or_skip()
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    values = np.random.default_rng(0).standard_normal(shape)
    x = genesis.from_numpy(values.copy()).requires_grad_()
    reference = torch.from_numpy(values.copy()).requires_grad_()
    out, expected = ours(x), theirs(reference)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    seed = np.random.default_rng(1).standard_normal(out.shape)
    out.backward(genesis.from_numpy(seed))
    expected.backward(torch.from_numpy(seed))
    np.testing.assert_allclose(x.grad.numpy(), reference.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_second_derivatives_of_every_mode(mode):
    x = genesis.from_numpy(np.random.default_rng(2).standard_normal((1, 2, 4))).requires_grad_()
    amounts = (2, -1) if mode != "constant" else (-1, 3)
    assert gradcheck(lambda t: F.pad(t, amounts, mode), (x,))
    assert gradgradcheck(lambda t: F.pad(t, amounts, mode) ** 2, (x,))


@pytest.mark.parametrize("call, error, message", [
    (lambda x: F.pad(x, (1,)), RuntimeError, "padding length must be even"),
    (lambda x: F.pad(x, (1, 1) * 4), RuntimeError, r"pad 4 dims, but the input of shape \(1, 2, 3\) has 3"),
    (lambda x: F.pad(x, (1, 1), "mirror"), NotImplementedError, "unrecognised padding mode 'mirror'"),
    (lambda x: F.pad(x, (1, 1), "reflect", 0.0), RuntimeError, "doesn't take a value"),
    (lambda x: F.pad(x, (3, 0), "reflect"), RuntimeError, r"reflect padding \(3, 0\) of dim 2 must be less than its size 3"),
    (lambda x: F.pad(x, (4, 0), "circular"), RuntimeError, "wraps around the 3 element"),
    (lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), "replicate"), NotImplementedError, "needs a 4-D or 5-D input"),
    (lambda x: F.pad(x, (-2, -2)), RuntimeError, "gives a negative size"),
    (lambda x: F.pad(x, "ab"), TypeError, "pad must be a sequence of ints"),
    (lambda x: nn.ReflectionPad2d((1, 2, 3)), ValueError, "padding must be an int or 4 ints"),
])
def test_errors_name_the_problem(call, error, message):
    with pytest.raises(error, match=message):
        call(genesis.zeros(1, 2, 3))


def test_empty_inputs():
    assert F.pad(genesis.zeros(1, 0, 3), (1, 1, 0, 0), "circular").shape == (1, 0, 5)
    assert F.pad(genesis.zeros(1, 0, 3), (1, 1)).shape == (1, 0, 5)
    with pytest.raises(RuntimeError, match="dim 1 is empty"):
        F.pad(genesis.zeros(1, 0, 3), (1, 1, 1, 1), "replicate")
