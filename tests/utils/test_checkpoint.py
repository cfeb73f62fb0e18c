"""Gradient checkpointing gives the same gradients while keeping fewer tensors alive."""
import numpy as np
import pytest

import genesis
from genesis.utils.checkpoint import checkpoint, checkpoint_sequential


def _block(weight):
    def block(x):
        return (x @ weight).tanh()
    return block


def test_gradients_identical_to_plain_run():
    genesis.manual_seed(0)
    w1 = genesis.randn(6, 6, dtype=genesis.float64, requires_grad=True)
    w2 = genesis.randn(6, 6, dtype=genesis.float64, requires_grad=True)
    x = genesis.randn(4, 6, dtype=genesis.float64, requires_grad=True)

    def run(use_checkpoint):
        for tensor in (w1, w2, x):
            tensor.grad = None
        h = checkpoint(_block(w1), x) if use_checkpoint else _block(w1)(x)
        y = checkpoint(_block(w2), h) if use_checkpoint else _block(w2)(h)
        (y * y).sum().backward()
        return [t.grad.numpy().copy() for t in (w1, w2, x)]

    for plain, checkpointed in zip(run(False), run(True)):
        np.testing.assert_array_equal(plain, checkpointed)


def test_dropout_inside_sees_the_same_mask_on_recompute():
    layer = genesis.nn.Sequential(genesis.nn.Linear(8, 8), genesis.nn.Dropout(0.5))
    x = genesis.randn(5, 8, requires_grad=True)

    genesis.manual_seed(3)
    layer(x).sum().backward()
    plain = [p.grad.numpy().copy() for p in layer.parameters()] + [x.grad.numpy().copy()]
    layer.zero_grad()
    x.grad = None
    genesis.manual_seed(3)
    checkpoint(layer, x).sum().backward()
    checkpointed = [p.grad.numpy().copy() for p in layer.parameters()] + [x.grad.numpy().copy()]
    for a, b in zip(plain, checkpointed):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_no_intermediates_saved_in_forward():
    w = genesis.randn(4, 4, requires_grad=True)
    x = genesis.randn(2, 4, requires_grad=True)
    y = checkpoint(lambda a: ((a @ w).tanh() @ w).exp(), x)
    assert type(y.grad_fn).__name__ == "CheckpointBackward"
    saved = y.grad_fn.saved_tensor_info
    assert saved == (((2, 4), genesis.float32),)  # only the input


def test_non_tensor_arguments_and_multiple_outputs():
    w = genesis.randn(3, requires_grad=True)
    a, b = checkpoint(lambda x, scale: (x * scale, x * w), w, 2.0)
    (a.sum() + b.sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), 2.0 + 2 * w.detach().numpy(), rtol=1e-6)


def test_checkpoint_sequential_matches():
    model = genesis.nn.Sequential(*[genesis.nn.Linear(4, 4) for _ in range(4)])
    x = genesis.randn(3, 4)
    model(x).sum().backward()
    plain = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    checkpoint_sequential(model, 2, x).sum().backward()
    for a, p in zip(plain, model.parameters()):
        np.testing.assert_allclose(a, p.grad.numpy(), rtol=1e-5)


def test_bad_arguments():
    with pytest.raises(TypeError, match="callable"):
        checkpoint(3, genesis.ones(1))
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential([], 0, genesis.ones(1))
