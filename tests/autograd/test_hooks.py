"""Tensor hooks, retain_grad, node hooks and pre-hooks."""
import pytest

import genesis


def test_leaf_hook_fires_and_can_replace_grad():
    x = genesis.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    x.register_hook(lambda g: g * 2)
    (x ** 2).sum().backward()
    assert seen == [[2.0, 4.0, 6.0]]
    assert x.grad.tolist() == [4.0, 8.0, 12.0]


def test_non_leaf_hook_changes_what_flows_on():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: g * 0 + 1)
    (y * y).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_hook_handle_remove():
    x = genesis.tensor([1.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    handle.remove()  # twice is harmless
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]


def test_hook_on_tensor_without_grad_is_refused():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        genesis.tensor([1.0]).register_hook(print)


def test_hook_returning_wrong_shape_is_clear():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: genesis.ones(3))
    with pytest.raises(RuntimeError, match=r"hook '.*<lambda>' \(.*test_hooks.py:\d+\), a hook on a "
                                           r"leaf tensor of shape \(2,\), changed the shape of the "
                                           r"gradient from \(2,\) to \(3,\)"):
        (x * 2).sum().backward()


def test_retain_grad_on_non_leaf_sees_hooked_gradient():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert y.grad.tolist() == [10.0, 10.0]
    assert y.retains_grad and x.grad.tolist() == [20.0, 20.0]


def test_retain_grad_accumulates_and_is_noop_on_leaf():
    x = genesis.tensor([1.0], requires_grad=True)
    x.retain_grad()
    y = x * 2
    y.retain_grad()
    z = y * 3
    z.backward(retain_graph=True)
    z.backward()
    assert y.grad.tolist() == [6.0]
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        genesis.tensor([1.0]).retain_grad()


def test_node_hooks_and_prehooks():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    calls = []
    y.grad_fn.register_prehook(lambda grad_outputs: calls.append("pre"))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: calls.append("post") or
                            (grad_inputs[0] * 0, None))
    y.sum().backward()
    assert calls == ["pre", "post"]
    assert x.grad.tolist() == [0.0, 0.0]


def test_prehook_can_replace_grad_outputs():
    x = genesis.tensor([1.0], requires_grad=True)
    y = x * 3
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))
    y.sum().backward()
    assert x.grad.tolist() == [6.0]


def test_spec_hook_example_prints(capsys):
    def print_grad(grad):
        print(f"Gradient: {grad}")
        return grad

    x = genesis.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.register_hook(print_grad)
    (x ** 2).sum().backward()
    assert capsys.readouterr().out == "Gradient: tensor([2., 4., 6.])\n"
