"""Custom Functions: ctx, routing by position, errors that name the Function."""
import numpy as np
import pytest

import genesis
from genesis import Function
from genesis.autograd import AccumulateGrad
from tests.helpers import torch_or_skip


class Exp(Function):
    """The spec's custom Function, verbatim."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return genesis.tensor(x.data.exp(), requires_grad=x.requires_grad)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * x.exp()


def test_spec_custom_exp():
    x = genesis.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = Exp.apply(x)
    assert repr(y.grad_fn) == "<ExpBackward>"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0, 3.0]), rtol=1e-6)


def test_function_is_exported_in_both_places():
    assert genesis.Function is genesis.autograd.Function


class ScaleAdd(Function):
    """a * scale + b, with a non-tensor argument in the middle."""

    @staticmethod
    def forward(ctx, a, scale, b):
        ctx.scale = scale
        return a * scale + b

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None, grad


def test_routing_by_position_with_non_tensor_args():
    a = genesis.tensor([1.0, 2.0], requires_grad=True)
    b = genesis.tensor([3.0, 4.0], requires_grad=True)
    out = ScaleAdd.apply(a, 10.0, b)
    assert len(out.grad_fn.next_functions) == 3
    assert out.grad_fn.next_functions[1] == (None, 0)
    out.sum().backward()
    assert a.grad.tolist() == [10.0, 10.0] and b.grad.tolist() == [1.0, 1.0]


def test_routing_when_first_input_does_not_require_grad():
    a = genesis.tensor([1.0, 2.0])
    b = genesis.tensor([3.0, 4.0], requires_grad=True)
    ScaleAdd.apply(a, 2.0, b).sum().backward()
    assert b.grad.tolist() == [1.0, 1.0] and a.grad is None


def test_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen["needs"] = ctx.needs_input_grad
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    Probe.apply(genesis.tensor([1.0]), genesis.tensor([1.0], requires_grad=True))
    assert seen["needs"] == (False, True)


def test_next_functions_and_accumulate_grad():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2 + 3
    assert repr(y.grad_fn) == "<AddBackward>"
    mul_node, index = y.grad_fn.next_functions[0]
    assert repr(mul_node) == "<MulBackward>" and index == 0
    leaf_node, _ = mul_node.next_functions[0]
    assert isinstance(leaf_node, AccumulateGrad) and leaf_node.variable is x
    assert mul_node.next_functions[0][0] is (x * 1).grad_fn.next_functions[0][0]  # one per leaf


def test_saved_tensors_are_inspectable():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    (saved,) = y.grad_fn.saved_tensors
    assert saved.tolist() == y.tolist()
    assert y.grad_fn.saved_tensor_info == (((2,), genesis.float32),)


def test_multiple_outputs_and_materialized_zeros():
    class Split(Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2] * 1, x[2:] * 1

        @staticmethod
        def backward(ctx, grad_first, grad_second):
            assert grad_second is not None  # missing grads arrive as zeros
            return _concat(grad_first, grad_second)

    def _concat(a, b):
        out = genesis.zeros(a.shape[0] + b.shape[0], dtype=a.dtype)
        out[: a.shape[0]] = a
        out[a.shape[0]:] = b
        return out

    x = genesis.tensor([1.0, 2.0, 3.0], requires_grad=True)
    first, second = Split.apply(x)
    assert first.grad_fn is second.grad_fn and second._output_nr == 1
    (first * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 0.0]


def test_mark_non_differentiable():
    class WithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            values = x * 2
            positions = x * 0
            ctx.mark_non_differentiable(positions)
            return values, positions

        @staticmethod
        def backward(ctx, grad_values, grad_positions):
            return grad_values * 2

    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    values, positions = WithIndex.apply(x)
    assert values.requires_grad and not positions.requires_grad


def test_wrong_number_of_gradients_names_the_function():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad

    a = genesis.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="TooFewBackward.*1 gradient.*2 argument"):
        TooFew.apply(a, a).sum().backward()


def test_wrong_shape_gradient_names_the_function():
    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return genesis.ones(5)

    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"WrongShapeBackward returned an invalid gradient at "
                                           r"index 0 - got \[5\] but expected shape compatible "
                                           r"with \[2\]"):
        WrongShape.apply(x).sum().backward()


def test_wrong_dtype_gradient_is_an_error():
    class IntGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return genesis.ones(2, dtype=genesis.int64)

    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="IntGradBackward.*int64"):
        IntGrad.apply(x).sum().backward()


def test_returning_numpy_is_a_clear_error():
    class ReturnsArray(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad.numpy()

    x = genesis.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="ReturnsArrayBackward.*ndarray"):
        ReturnsArray.apply(x).sum().backward()


def _custom_function_errors(lib) -> list:
    """(exception type, message) of each of PyTorch's checks of a custom Function: what
    backward returns for a non-tensor argument and as a number, what save_for_backward takes."""
    def function(forward, backward):
        return type("F", (lib.autograd.Function,), {"forward": staticmethod(forward),
                                                    "backward": staticmethod(backward)})

    def save_twice(ctx, x, n):
        ctx.save_for_backward(x, None)  # None is allowed, only the last call counts
        ctx.save_for_backward(x, n)
        return x * 2

    cases = [
        lambda x: function(lambda ctx, x, n: x * n, lambda ctx, g: (g * 2, g)).apply(x, 2),
        lambda x: function(lambda ctx, x, n: x * n, lambda ctx, g: (3.0, None)).apply(x, 2),
        lambda x: function(lambda ctx, x, c: x * c, lambda ctx, g: (g, 3.0)).apply(
            x, lib.tensor([1.0])),  # a float for a tensor that needs no gradient
        lambda x: function(save_twice, lambda ctx, g: (g * 2, None)).apply(x, 3),
        lambda x: function(save_twice, lambda ctx, g: (g * 2, None)).apply(x, None)]
    found = []
    for case in cases:
        try:
            case(lib.tensor([1.0], requires_grad=True)).sum().backward()
            found.append(None)
        except Exception as error:  # the checks are the subject here
            found.append((type(error), str(error).splitlines()[0]))
    with lib.no_grad():  # saved values are looked at only when the node joins a graph
        function(save_twice, lambda ctx, g: g).apply(lib.tensor([1.0], requires_grad=True), 3)
    return found


def test_custom_function_errors_are_pytorchs():
    found = _custom_function_errors(genesis)
    assert found[0] == (RuntimeError, "function FBackward returned a gradient different than None "
                        "at position 2, but the corresponding forward input was not a Variable")
    assert found[1] == (RuntimeError, "FBackward: backward returned a float for input 0; return "
                        "a genesis Tensor (or None)")
    assert found[2] == (RuntimeError, "FBackward: backward returned a float for input 1; return "
                        "a genesis Tensor (or None)")
    assert found[3][0] is TypeError and found[3][1].startswith(
        "save_for_backward can only save variables, but argument 1 is of type int")
    assert found[4] is None


def test_custom_function_errors_match_pytorch():
    torch = torch_or_skip()
    expected = _custom_function_errors(torch)
    found = _custom_function_errors(genesis)
    assert [entry and entry[0] for entry in found] == [entry and entry[0] for entry in expected]
    for index in (0, 3):  # the others keep genesis's wording (which input, what to return)
        assert found[index][1].startswith(expected[index][1])


def test_broadcast_gradient_from_custom_function_is_summed():
    class AddRow(Function):
        @staticmethod
        def forward(ctx, matrix, row):
            return matrix + row

        @staticmethod
        def backward(ctx, grad):
            return grad, grad  # row's gradient left broadcast: the engine sums it

    m = genesis.ones(3, 2, requires_grad=True)
    r = genesis.ones(2, requires_grad=True)
    AddRow.apply(m, r).sum().backward()
    assert r.grad.tolist() == [3.0, 3.0]


def test_forward_returning_its_input_is_aliased():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = genesis.tensor([1.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and not y.is_leaf


def test_forward_runs_without_recording():
    class Inner(Function):
        @staticmethod
        def forward(ctx, x):
            inner = x * 2
            assert inner.grad_fn is None and not genesis.is_grad_enabled()
            return inner

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = genesis.tensor([1.0], requires_grad=True)
    Inner.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0]


def test_forward_error_of_builtin_names_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"add:.*\(3,\).*\(4,\)"):
        genesis.ones(3) + genesis.ones(4)
    with pytest.raises(RuntimeError, match="matmul.*inner dimensions 3 and 4"):
        genesis.ones(2, 3) @ genesis.ones(4, 2)
