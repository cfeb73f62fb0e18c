"""Custom Functions in each of PyTorch's styles and with each ctx feature, compared with
torch: setup_context, mark_dirty, mark_non_differentiable, set_materialize_grads,
non-tensor inputs and outputs, outputs that are views of inputs, once_differentiable, the
legacy-call error."""
import contextlib

import pytest

import genesis
from tests.helpers import torch_or_skip


_nothing = contextlib.nullcontext


def _libraries():
    return (torch_or_skip(), genesis)


def _leaf(library, values):
    return library.tensor(values, dtype=library.float64, requires_grad=True)


def test_setup_context_style():
    results = []
    for library in _libraries():
        class Product(library.autograd.Function):
            @staticmethod
            def forward(x, y, scale):
                return x * y * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y, scale = inputs
                ctx.save_for_backward(x, y)
                ctx.scale = scale

            @staticmethod
            def backward(ctx, grad):
                x, y = ctx.saved_tensors
                return grad * y * ctx.scale, grad * x * ctx.scale, None

        x, y = _leaf(library, [1.0, 2.0]), _leaf(library, [3.0, 4.0])
        Product.apply(x, y, 2.0).sum().backward()
        results.append((x.grad.tolist(), y.grad.tolist()))
    assert results[0] == results[1] == ([6.0, 8.0], [2.0, 4.0])


def test_mark_dirty_returns_the_changed_input_in_the_graph():
    results = []
    for library in _libraries():
        class DoubleInPlace(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        leaf = _leaf(library, [1.0, 3.0])
        y = leaf * 1
        out = DoubleInPlace.apply(y)
        assert out is y and out.grad_fn is not None
        (out * out).sum().backward()
        # mul_ counts one change, and marking it dirty another, as PyTorch counts them
        results.append((out.tolist(), leaf.grad.tolist(), y._version))
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            DoubleInPlace.apply(leaf)
    assert results[0] == results[1] and results[0][2] == 2


def test_non_differentiable_outputs_and_non_tensor_values():
    for library in _libraries():
        class ArgmaxAndValue(library.autograd.Function):
            @staticmethod
            def forward(ctx, x, label):
                index = x.argmax()
                ctx.mark_non_differentiable(index)
                ctx.save_for_backward(index)
                ctx.size = x.shape[0]
                return x.max(), index, label.upper(), 7

            @staticmethod
            def backward(ctx, grad, grad_index, grad_label, grad_number):
                assert grad_label is None and grad_number is None
                (index,) = ctx.saved_tensors
                return library.zeros(ctx.size, dtype=library.float64).index_fill(0, index, 1) * grad, None

        x = _leaf(library, [1.0, 5.0, 2.0])
        value, index, label, number = ArgmaxAndValue.apply(x, "tag")
        assert (label, number) == ("TAG", 7) and not index.requires_grad and value.requires_grad
        value.backward()
        assert x.grad.tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    for library in _libraries():
        seen = []

        class Pair(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x.clone(), x.clone()

            @staticmethod
            def backward(ctx, first, second):
                seen.append(second is None)
                return first if second is None else first + second

        x = _leaf(library, [1.0, 2.0])
        Pair.apply(x)[0].sum().backward()
        assert seen == [not materialize] and x.grad.tolist() == [1.0, 1.0]


def test_an_output_that_is_a_view_of_an_input_knows_its_base():
    for library in _libraries():
        class Flat(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view(-1)

            @staticmethod
            def backward(ctx, grad):
                return grad.view(2, 2)

        y = _leaf(library, [[1.0, 2.0], [3.0, 4.0]]) * 1
        out = Flat.apply(y)
        assert out._base is y and out.grad_fn is not None


def test_returning_an_input_unchanged_gives_a_new_tensor_with_the_gradient():
    for library in _libraries():
        class Identity(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        x = _leaf(library, [1.0])
        out = Identity.apply(x)
        assert out is not x
        out.backward()
        assert x.grad.tolist() == [2.0]


def test_once_differentiable_runs_backward_without_a_graph():
    results = []
    for library in _libraries():
        once_differentiable = (genesis.autograd.once_differentiable if library is genesis else
                               library.autograd.function.once_differentiable)

        class Square(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @once_differentiable
            def backward(ctx, grad):
                assert not library.is_grad_enabled()
                (x,) = ctx.saved_tensors
                return 2 * x * grad

        x = _leaf(library, [3.0])
        (gradient,) = library.autograd.grad(Square.apply(x), x, create_graph=True)
        results.append((gradient.tolist(), gradient.requires_grad))
    assert results[0] == results[1] == ([6.0], False)


def test_once_differentiable_refuses_a_second_derivative_through_it():
    from genesis.autograd.function import Function
    from genesis.autograd.custom_function import once_differentiable

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = _leaf(genesis, [3.0])
    out = Square.apply(x)
    weight = genesis.ones(1, dtype=genesis.float64, requires_grad=True)
    (gradient,) = genesis.autograd.grad(out, x, grad_outputs=weight, create_graph=True)
    assert gradient.requires_grad
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked "
                                           "with @once_differentiable"):
        gradient.sum().backward()


def test_calling_a_function_instance_is_the_legacy_error():
    for library in _libraries():
        class Legacy(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        with pytest.raises(RuntimeError, match="Legacy autograd function with non-static "
                                               "forward method is deprecated"):
            with pytest.warns(DeprecationWarning) if library is not genesis else _nothing():
                Legacy()(library.ones(1))


def test_torch_autograd_function_names_are_served():
    from genesis.compat import serve_torch
    with serve_torch():
        from torch.autograd.function import FunctionCtx, InplaceFunction, once_differentiable
    assert once_differentiable is genesis.autograd.once_differentiable
    assert issubclass(InplaceFunction, genesis.autograd.Function) and FunctionCtx is not None


def _in_place_add(library):
    class AddOne(library.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    return AddOne


def test_mark_dirty_rules_as_torch():
    for library in _libraries():
        add_one = _in_place_add(library)
        leaf = library.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            add_one.apply(leaf.view_as(leaf))
        with pytest.raises(RuntimeError, match="output of a function that returns multiple view"):
            add_one.apply(leaf.split_with_sizes([1, 1])[0])
        base = leaf.clone()
        view = base[:1]
        out = add_one.apply(view)  # a view changed in place: its base takes the change
        assert out is view
        (base * library.tensor([3.0, 4.0])).sum().backward()
        assert leaf.grad.tolist() == [3.0, 4.0]

        class Unreturned(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad

        with pytest.raises(RuntimeError, match="marked as dirty during the forward method were "
                                               "not returned"):
            Unreturned.apply(leaf.clone())


def test_views_returned_by_a_custom_function_refuse_recorded_in_place_changes():
    for library in _libraries():
        class ViewOf(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                return grad

        view = ViewOf.apply(library.rand(1, 2))
        with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
            view += library.rand(1, requires_grad=True)
        with library.no_grad():
            made_under_no_grad = ViewOf.apply(library.rand(1, 2))
        with pytest.raises(RuntimeError, match="created in no_grad mode"):
            made_under_no_grad += library.rand(1, requires_grad=True)


def test_vjp_is_another_name_for_backward():
    for library in _libraries():
        class Double(library.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, grad):
                return grad * 2

        x = library.ones(2, requires_grad=True)
        Double.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_setup_context_receives_defaults_of_forward():
    for library in _libraries():
        seen = []

        class Scale(library.autograd.Function):
            @staticmethod
            def forward(x, factor=3.0):
                return x * factor

            @staticmethod
            def setup_context(ctx, inputs, output):
                seen.append(len(inputs))
                ctx.factor = inputs[1]

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.factor, None

        x = library.ones(1, requires_grad=True)
        Scale.apply(x).backward()
        assert seen == [2] and x.grad.tolist() == [3.0]


def test_calling_a_grad_fn_runs_its_backward_with_one_gradient_per_output():
    for library in _libraries():
        x = library.ones(1, requires_grad=True)
        y = x ** 2
        with pytest.raises(TypeError, match="expected .* arguments?, got .* instead"):
            y.grad_fn()
        assert y.grad_fn(library.ones(1)) is not None
