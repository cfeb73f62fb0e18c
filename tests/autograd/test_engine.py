"""The backward engine: routing, accumulation, retain_graph, create_graph, depth."""
import gc
import sys
import types
import weakref

import numpy as np
import pytest

import genesis
from genesis.autograd import grad


def test_spec_backward_example():
    x = genesis.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x ** 2).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_accumulates_across_backward_calls():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    x.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    (x * 2).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("expression", [
    lambda c, w: c + w, lambda c, w: w + c, lambda c, w: c * w, lambda c, w: w * c,
    lambda c, w: c - w, lambda c, w: w / (c + 3),
])
def test_routing_when_only_some_inputs_require_grad(expression):
    """The original Genesis sent gradients to the wrong input here."""
    c = genesis.tensor([1.0, 2.0, 3.0])
    w = genesis.tensor([0.5, -1.0, 2.0], requires_grad=True)
    expression(c, w).sum().backward()
    torch = pytest.importorskip("torch")
    tc = torch.tensor([1.0, 2.0, 3.0])
    tw = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    expression(tc, tw).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)
    assert c.grad is None


def test_matmul_with_constant_left_operand():
    x = genesis.randn(4, 3)
    w = genesis.randn(3, 2, requires_grad=True)
    (x @ w).sum().backward()
    expected = x.numpy().T @ np.ones((4, 2), np.float32)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)
    assert x.grad is None


def test_broadcast_gradients_are_summed_to_input_shape():
    a = genesis.ones(2, 3, requires_grad=True)
    b = genesis.ones(3, requires_grad=True)
    c = genesis.ones(2, 1, requires_grad=True)
    (a * b * c).sum().backward()
    assert b.grad.tolist() == [2.0, 2.0, 2.0]
    assert c.grad.tolist() == [[3.0], [3.0]]


def test_non_scalar_backward_needs_gradient():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="gradient="):
        (x * 2).backward()
    (x * 2).backward(genesis.tensor([1.0, 0.5]))
    assert x.grad.tolist() == [2.0, 1.0]
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).backward(genesis.ones(3))


def test_backward_on_tensor_without_grad_is_clear():
    with pytest.raises(RuntimeError, match="does not require grad"):
        genesis.tensor([1.0]).sum().backward()


def test_diamond_graph_gradients_sum_once():
    x = genesis.tensor(3.0, requires_grad=True)
    y = x * x
    z = y + y * 2 + x
    z.backward()
    assert x.grad.item() == pytest.approx(3 * 2 * 3 + 1)


def test_second_backward_after_free_is_a_clear_error():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_double_backward_of_cube():
    x = genesis.tensor(2.0, requires_grad=True)
    (dx,) = grad(x ** 3, x, create_graph=True)
    assert dx.item() == pytest.approx(12.0)
    (d2x,) = grad(dx, x, create_graph=True)
    assert d2x.item() == pytest.approx(12.0)
    (d3x,) = grad(d2x, x)
    assert d3x.item() == pytest.approx(6.0)


def test_create_graph_backward_then_backward_of_grad():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    y.backward(create_graph=True)
    g = x.grad
    assert g.grad_fn is not None
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_grad_with_non_leaf_inputs_and_unused():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    unused = genesis.tensor([1.0], requires_grad=True)
    gh, gu = grad(y, (h, unused), allow_unused=True)
    assert gh.tolist() == [6.0, 12.0] and gu is None
    assert x.grad is None
    with pytest.raises(RuntimeError, match="allow_unused"):
        grad((x * 2).sum(), unused)
    with pytest.raises(RuntimeError, match="does not require grad"):
        grad((x * 2).sum(), genesis.tensor([1.0]))


def test_grad_materialize_and_grad_outputs():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    other = genesis.tensor([5.0], requires_grad=True)
    gx, go = grad(x * 2, (x, other), grad_outputs=genesis.tensor([1.0, 10.0]), materialize_grads=True)
    assert gx.tolist() == [2.0, 20.0] and go.tolist() == [0.0]


def test_grad_of_a_dict_of_inputs_is_a_dict_under_the_same_keys():
    model = genesis.nn.Linear(2, 1)
    x = genesis.tensor([[1.0, 2.0]])
    grads = grad(model(x).sum(), dict(model.named_parameters()))
    assert list(grads) == ["weight", "bias"]
    assert grads["weight"].tolist() == [[1.0, 2.0]] and grads["bias"].tolist() == [1.0]
    with pytest.raises(TypeError, match="must be a dict"):
        grad(model(x).sum(), types.MappingProxyType(dict(model.named_parameters())))


def test_grad_accepts_the_deprecated_only_inputs_flag():
    x = genesis.tensor(2.0, requires_grad=True)
    assert grad(x * x, x, only_inputs=True)[0].item() == 4.0
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        assert grad(x * x, x, only_inputs=False)[0].item() == 4.0


def test_backward_inputs_restricts_accumulation():
    a = genesis.tensor(1.0, requires_grad=True)
    b = genesis.tensor(2.0, requires_grad=True)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 2.0 and b.grad is None


def test_multiple_roots():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    genesis.autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]


def test_a_chain_far_deeper_than_any_stack_backpropagates_without_recursion():
    """200,000 ops: recursion would overflow the C stack long before, in the backward or in
    freeing the graph (bench/cost_scaling.py runs a million)."""
    x = genesis.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(200_000):
        y = y + 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]
    limit = sys.getrecursionlimit()
    assert limit < 100_000  # the depth was handled iteratively, not by raising the limit
    del y  # freeing the chain must not overflow the C stack either
    gc.collect()


def test_saved_tensors_are_freed_after_backward():
    x = genesis.randn(100, requires_grad=True)
    hidden = x.exp()
    alive = weakref.ref(hidden._data)
    loss = (hidden * x).sum()
    del hidden
    assert alive() is not None  # the buffer is kept alive by Exp's and Mul's saved tensors
    loss.backward()
    gc.collect()
    assert alive() is None


def test_graph_freed_with_output_and_no_reference_cycles():
    gc.collect()
    gc.disable()
    try:
        x = genesis.randn(10, requires_grad=True)
        y = (x.exp() * x).tanh().sum()
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_leaf_grad_does_not_alias_other_gradients():
    a = genesis.tensor([1.0, 2.0], requires_grad=True)
    b = genesis.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.mul_(10)  # in-place on one leaf's grad must not change the other's
    assert b.grad.tolist() == [1.0, 1.0]
    g = genesis.tensor([1.0, 1.0])
    c = genesis.tensor([0.0, 0.0], requires_grad=True)
    (c + 0).backward(g)
    c.grad.add_(1)
    assert g.tolist() == [1.0, 1.0]


def test_leaf_grad_reuses_an_unshared_gradient_buffer():
    x = genesis.randn(4, 3, requires_grad=True)
    w = genesis.randn(3, 2, requires_grad=True)
    seen = []
    original = genesis.autograd.engine._fresh_copy
    genesis.autograd.engine._fresh_copy = lambda gradient: seen.append(1) or original(gradient)
    try:
        (x @ w).sum().backward()
    finally:
        genesis.autograd.engine._fresh_copy = original
    assert seen == []  # both gradients were fresh arrays nobody else held: no copies


@pytest.mark.parametrize("bias_shape", [(3,), (1, 3), (2, 1, 3)])
def test_broadcast_leaf_grad_is_summed_into_a_fresh_buffer(monkeypatch, bias_shape):
    x = genesis.randn(2, 4, 3)
    bias = genesis.zeros(*bias_shape, requires_grad=True)
    copies = []
    original = genesis.autograd.engine._fresh_copy
    monkeypatch.setattr(genesis.autograd.engine, "_fresh_copy",
                        lambda gradient: copies.append(gradient.shape) or original(gradient))
    (x + bias).sum().backward()
    assert bias.grad.shape == bias_shape
    np.testing.assert_allclose(bias.grad.numpy(), np.full(bias_shape, 8.0 / np.prod(bias_shape) * 3))
    # (1, 3): leading dims summed away and a stretched one kept leave a reshaped view to copy.
    expected = [bias_shape] if bias_shape == (1, 3) else []
    assert copies == expected


def test_grad_dtype_matches_leaf_dtype():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = genesis.tensor([1.0, 2.0], dtype=genesis.float64)
    (x * y).sum().backward()
    assert x.grad.dtype is genesis.float32


def test_engine_restores_grad_mode_after_error():
    class Broken(genesis.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("boom")

    x = genesis.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="boom") as info:
        Broken.apply(x).sum().backward()
    assert any("BrokenBackward" in note for note in info.value.__notes__)
    assert genesis.is_grad_enabled()
