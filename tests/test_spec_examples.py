"""Every code example of the autograd spec (except nn/optim/amp/checkpoint) runs and
prints what the spec says it prints."""
import numpy as np

import genesis
from genesis import Function


def test_tensor_backward_example(capsys):
    x = genesis.tensor([1., 2., 3.], requires_grad=True)
    y = (x ** 2).sum()
    y.backward()
    print(x.grad)
    assert capsys.readouterr().out == "tensor([2., 4., 6.])\n"


def test_detach_example(capsys):
    x = genesis.tensor([1., 2.], requires_grad=True)
    y = x.detach()
    print(y.requires_grad)
    assert capsys.readouterr().out == "False\n"


def test_retain_grad_example(capsys):
    x = genesis.tensor([1., 2.], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y.sum()
    z.backward()
    print(y.grad)
    assert capsys.readouterr().out == "tensor([1., 1.])\n"


def test_zero_grad_example(capsys):
    x = genesis.tensor([1., 2.], requires_grad=True)
    y = x.sum()
    y.backward()
    x.zero_grad()
    print(x.grad)
    assert capsys.readouterr().out == "None\n"


def test_tensor_operations_list():
    x = genesis.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    y = genesis.tensor([[2., 1.], [1., 2.]], requires_grad=True)
    results = [x + y, x - y, x * y, x / y, x ** y, x @ y, -x, x.exp(), x.log(), x.tanh(),
               x.sum(), x.mean(), x.reshape((4,)), x.transpose(0, 1), x.squeeze(),
               x.unsqueeze(0), x.view((4,))]
    sum(r.sum() for r in results).backward()
    assert x.grad.shape == (2, 2) and y.grad.shape == (2, 2)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        # Save input for backward pass
        ctx.save_for_backward(x)
        return genesis.tensor(x.data.exp(), requires_grad=x.requires_grad)

    @staticmethod
    def backward(ctx, grad_output):
        # Retrieve saved tensor
        x, = ctx.saved_tensors
        # Gradient of exp(x) is exp(x)
        return grad_output * x.exp()


def test_custom_function_example():
    exp = Exp.apply
    x = genesis.tensor([1., 2., 3.], requires_grad=True)
    y = exp(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1., 2., 3.]), rtol=1e-6)


def test_no_grad_and_enable_grad_example():
    x = genesis.tensor([1., 2.], requires_grad=True)
    with genesis.no_grad():
        y = x * 2
        with genesis.enable_grad():
            z = (y * x).sum()
            z.backward()
    assert not y.requires_grad and x.grad.tolist() == [2., 4.]


def test_set_grad_enabled_example():
    x = genesis.tensor([1.], requires_grad=True)
    genesis.set_grad_enabled(False)  # Disable globally
    y = x * 2  # No gradients
    genesis.set_grad_enabled(True)   # Enable globally
    z = x * 2  # Gradients computed
    assert not y.requires_grad and z.requires_grad


def test_hook_example(capsys):
    def print_grad(grad):
        print(f"Gradient: {grad}")
        return grad  # Can modify gradient here

    x = genesis.tensor([1., 2., 3.], requires_grad=True)
    x.register_hook(print_grad)
    y = (x ** 2).sum()
    y.backward()  # Will print gradients during backward
    assert capsys.readouterr().out == "Gradient: tensor([2., 4., 6.])\n"


def test_gradient_accumulation_example(capsys):
    x = genesis.tensor([1., 2.], requires_grad=True)
    y1 = x.sum()
    y1.backward()
    print(x.grad)  # tensor([1., 1.])
    y2 = (x * 2).sum()
    y2.backward()
    print(x.grad)  # tensor([3., 3.]) - accumulated!
    x.grad = None
    assert capsys.readouterr().out == "tensor([1., 1.])\ntensor([3., 3.])\n"
    assert x.grad is None


def test_detach_running_mean_example():
    alpha = 0.9
    running_mean = genesis.zeros(3)
    batch_mean = genesis.randn(3, requires_grad=True)
    running_mean = (alpha * running_mean.detach() + (1 - alpha) * batch_mean)
    assert running_mean.grad_fn is not None


def test_inspecting_graph_example(capsys):
    x = genesis.tensor([1., 2.], requires_grad=True)
    y = x * 2 + 3
    print(y.grad_fn)  # <AddBackward>
    print(y.grad_fn.next_functions)  # Connected operations
    assert capsys.readouterr().out == "<AddBackward>\n((<MulBackward>, 0), (None, 0))\n"


def test_internals_usage_example():
    x = genesis.randn(3, 4, requires_grad=True)
    y = genesis.randn(4, 2, requires_grad=True)
    z = x @ y
    loss = z.sum()
    loss.backward()
    assert x.grad.shape == (3, 4) and y.grad.shape == (4, 2)


def test_tutorial_chain_example():
    x = genesis.tensor(2.0, requires_grad=True)
    y = x ** 2
    z = y * 3
    z.backward()
    assert x.grad.item() == 12.0


def test_internals_clip_hook_example():
    def clip_grad(grad):
        grad.data.clamp_(-1.0, 1.0)

    x = genesis.randn(10, requires_grad=True)
    x.register_hook(clip_grad)
    y = (x ** 3).sum()
    y.backward()
    assert float(np.abs(x.grad.numpy()).max()) <= 1.0
