"""Custom operators (`genesis.library`, served as `torch.library`): values, gradients through
a registered formula, the errors, what a dispatch mode sees, scoped libraries, non-tensor
outputs and in-place arguments; compared with PyTorch where installed."""
import functools

import numpy as np
import pytest

import genesis
import genesis.library
from genesis.utils._python_dispatch import TorchDispatchMode, ops_namespace
from genesis.utils.checkpoint import checkpoint
from genesis.utils.selective_checkpoint import create_selective_checkpoint_contexts
from tests.helpers import torch_or_skip


def _both():
    """(tensor library, its `library` module, its `torch.ops`-like lookup) for genesis and torch."""
    torch = torch_or_skip()
    return ((genesis, genesis.library, ops_namespace),
            (torch, torch.library, lambda name: getattr(torch.ops, name)))


def _modes(lib):
    return TorchDispatchMode if lib is genesis else lib.utils._python_dispatch.TorchDispatchMode


def _define_scaled_sin(lib, library, namespace):
    """namespace::scaled_sin(x, n) -> (sin(x) * n, n), with its gradient formula."""
    @library.custom_op(f"{namespace}::scaled_sin", mutates_args=())
    def scaled_sin(x: lib.Tensor, n: int) -> tuple[lib.Tensor, int]:
        return x.sin() * n, n

    def setup_context(ctx, inputs, output):
        x, n = inputs
        ctx.save_for_backward(x)
        ctx.n = n

    def backward(ctx, grad, grad_n):
        (x,) = ctx.saved_tensors
        return grad * x.cos() * ctx.n, None

    library.register_autograd(f"{namespace}::scaled_sin", backward, setup_context=setup_context)
    return scaled_sin


def test_values_gradients_and_a_passed_through_int_match_torch():
    results = []
    for lib, library, ops in _both():
        with library._scoped_library("gtest_values", "FRAGMENT"):
            _define_scaled_sin(lib, library, "gtest_values")
            x = lib.tensor([0.1, 0.7, -1.2], dtype=lib.float64, requires_grad=True)
            out, n = ops("gtest_values").scaled_sin(x, 3)
            (out * out).sum().backward()
            results.append((out.detach().numpy(), n, x.grad.numpy(), out.grad_fn is not None))
    (g_out, g_n, g_grad, g_graph), (t_out, t_n, t_grad, t_graph) = results
    np.testing.assert_allclose(g_out, t_out)
    np.testing.assert_allclose(g_grad, t_grad)
    assert (g_n, g_graph) == (t_n, t_graph) == (3, True)


def test_without_a_formula_the_output_requires_grad_and_backward_raises():
    for lib, library, ops in _both():
        with library._scoped_library("gtest_noformula", "FRAGMENT"):
            @library.custom_op("gtest_noformula::double", mutates_args=())
            def double(x: lib.Tensor) -> lib.Tensor:
                return x * 2

            x = lib.ones(2, requires_grad=True)
            out = double(x)
            assert out.requires_grad
            with pytest.raises(RuntimeError, match="no autograd formula was registered"):
                out.sum().backward()
            assert not double(x.detach()).requires_grad
            with lib.no_grad():
                assert not double(x).requires_grad


def test_a_dispatch_mode_sees_one_opaque_call_with_keyword_only_arguments_as_kwargs():
    seen = []
    for lib, library, ops in _both():
        with library._scoped_library("gtest_mode", "FRAGMENT"):
            @library.custom_op("gtest_mode::shifted", mutates_args=())
            def shifted(x: lib.Tensor, n: int, *, shift: float = 0.0) -> lib.Tensor:
                return (x * n).exp() + shift

            class Log(_modes(lib)):
                def __init__(self):
                    self.calls = []

                def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                    self.calls.append((str(func), len(args), dict(kwargs or {})))
                    return func(*args, **(kwargs or {}))

            x = lib.zeros(2)
            with Log() as log:
                value = ops("gtest_mode").shifted.default(x, n=2, shift=1.5)
            seen.append((log.calls, value.tolist()))
    assert seen[0] == seen[1]
    assert seen[0][0] == [("gtest_mode.shifted.default", 2, {"shift": 1.5})]


def test_the_op_objects_are_named_as_in_torch():
    for lib, library, ops in _both():
        with library._scoped_library("gtest_names", "FRAGMENT"):
            op = _define_scaled_sin(lib, library, "gtest_names")
            overload = ops("gtest_names").scaled_sin.default
            assert repr(op) == "<CustomOpDef(gtest_names::scaled_sin)>"
            assert (str(overload), overload.name(), overload.__name__) == \
                ("gtest_names.scaled_sin.default", "gtest_names::scaled_sin", "scaled_sin.default")
            assert overload.overloadpacket is ops("gtest_names").scaled_sin


def test_a_scoped_library_removes_the_ops_it_defined():
    for lib, library, ops in _both():
        with library._scoped_library("gtest_scoped", "FRAGMENT") as my_lib:
            my_lib.define("negate(Tensor x) -> Tensor")
            my_lib.impl("negate", lambda x: -x, "CPU")
            assert ops("gtest_scoped").negate(lib.ones(2)).tolist() == [-1.0, -1.0]
        with pytest.raises(AttributeError):
            ops("gtest_scoped").negate


def test_library_errors_match_torch():
    for lib, library, ops in _both():
        with pytest.raises(ValueError, match="Unsupported kind"):
            library.Library("gtest_errors", "OTHER")
        with library._scoped_library("gtest_errors", "DEF") as my_lib:
            with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY"):
                library.Library("gtest_errors", "DEF")
            my_lib.define("plain(Tensor x) -> Tensor")
            with pytest.raises(RuntimeError, match="multiple times"):
                my_lib.define("plain(Tensor x) -> Tensor")
            with pytest.raises(NotImplementedError, match="Could not run 'gtest_errors::plain'"):
                ops("gtest_errors").plain(lib.ones(1))


def test_schema_inference_and_argument_errors_match_torch():
    for lib, library, ops in _both():
        with library._scoped_library("gtest_schema", "FRAGMENT"):
            with pytest.raises(ValueError, match="must have a type annotation"):
                library.custom_op("gtest_schema::untyped", mutates_args=())(lambda x: x)

            def no_return(x: lib.Tensor):
                return x

            with pytest.raises(ValueError, match="No return type annotation"):
                library.custom_op("gtest_schema::no_return", mutates_args=())(no_return)

            def mutate(x: lib.Tensor) -> None:
                x.add_(1)

            with pytest.raises(ValueError, match="in mutates_args were not found"):
                library.custom_op("gtest_schema::bad_mutation", mutates_args=("y",))(mutate)

            @library.custom_op("gtest_schema::repeat", mutates_args=())
            def repeat(x: lib.Tensor, n: int) -> lib.Tensor:
                return x * n

            with pytest.raises(RuntimeError, match="Expected a value of type 'int' for argument 'n'"):
                repeat(lib.ones(1), 2.5)

            @library.custom_op("gtest_schema::same", mutates_args=())
            def same(x: lib.Tensor) -> lib.Tensor:
                return x

            with pytest.raises(RuntimeError, match="must not also be an input"):
                same(lib.ones(1))


def test_mutated_arguments_are_written_and_refuse_a_formula():
    for lib, library, ops in _both():
        with library._scoped_library("gtest_mutates", "FRAGMENT"):
            @library.custom_op("gtest_mutates::add_into", mutates_args=("out",))
            def add_into(out: lib.Tensor, x: lib.Tensor) -> None:
                out.add_(x)

            target = lib.zeros(2)
            version = target._version
            assert add_into(target, lib.ones(2)) is None
            assert target.tolist() == [1.0, 1.0] and target._version > version
            with pytest.raises(RuntimeError, match="non-functional operator"):
                add_into.register_autograd(lambda ctx, grad: (None, grad))


def test_keyword_only_inputs_reach_setup_context_and_lists_come_back_lists():
    results = []
    for lib, library, ops in _both():
        with library._scoped_library("gtest_kwonly", "FRAGMENT"):
            @library.custom_op("gtest_kwonly::scaled", mutates_args=())
            def scaled(x: lib.Tensor, *, scale: float) -> list[lib.Tensor]:
                return [x * scale, x + scale]

            def setup_context(ctx, inputs, keyword_only_inputs, output):
                ctx.scale = keyword_only_inputs["scale"]

            def backward(ctx, grads):
                return grads[0] * ctx.scale + grads[1]

            scaled.register_autograd(backward, setup_context=setup_context)
            x = lib.ones(2, requires_grad=True)
            outs = scaled(x, scale=3.0)
            (outs[0] * 2 + outs[1]).sum().backward()
            results.append((type(outs).__name__, [o.tolist() for o in outs], x.grad.tolist()))
    assert results[0] == results[1] == ("list", [[3.0, 3.0], [4.0, 4.0]], [7.0, 7.0])


def test_register_fake_is_accepted_and_define_impl_work():
    for lib, library, ops in _both():
        with library._scoped_library("gtest_define", "FRAGMENT") as my_lib:
            library.define("gtest_define::cube", "(Tensor x) -> Tensor", lib=my_lib)
            library.impl("gtest_define::cube", "cpu", lambda x: x * x * x, lib=my_lib)
            library.register_fake("gtest_define::cube", lambda x: lib.empty_like(x), lib=my_lib)
            assert ops("gtest_define").cube(lib.tensor([2.0])).tolist() == [8.0]


def test_selective_checkpoint_keeps_a_custom_op_without_running_it_again():
    x0 = np.array([0.3, -0.4, 1.1])
    results = []
    for lib, library, ops in _both():
        with library._scoped_library("gtest_sac", "FRAGMENT"):
            calls = [0]

            @library.custom_op("gtest_sac::sin_pair", mutates_args=())
            def sin_pair(x: lib.Tensor) -> tuple[lib.Tensor, int]:
                calls[0] += 1
                return x.sin(), 5

            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            def backward(ctx, grad, _):
                return grad * ctx.saved_tensors[0].cos()

            library.register_autograd("gtest_sac::sin_pair", backward, setup_context=setup_context)
            package = genesis.utils if lib is genesis else lib.utils
            contexts = functools.partial(
                create_selective_checkpoint_contexts if lib is genesis
                else package.checkpoint.create_selective_checkpoint_contexts,
                [ops("gtest_sac").sin_pair.default])
            run = checkpoint if lib is genesis else package.checkpoint.checkpoint

            def fn(x):
                return (ops("gtest_sac").sin_pair(x)[0] * x.exp()).sin()

            x = lib.tensor(x0, requires_grad=True)
            (grad,) = lib.autograd.grad(run(fn, x, use_reentrant=False, context_fn=contexts).sum(), (x,))
            results.append((calls[0], grad.numpy()))
            (expected,) = lib.autograd.grad(fn(x).sum(), (x,))
            np.testing.assert_allclose(grad.numpy(), expected.numpy())
    assert results[0][0] == results[1][0] == 1
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_served_torch_reaches_the_library_and_the_op_namespace():
    from genesis.compat import serve_torch

    with serve_torch():
        import torch

        with torch.library._scoped_library("gtest_served", "FRAGMENT"):
            @torch.library.custom_op("gtest_served::twice", mutates_args=())
            def twice(x: torch.Tensor) -> torch.Tensor:
                return x * 2

            torch.library.register_autograd("gtest_served::twice", lambda ctx, grad: grad * 2)
            x = torch.ones(2, requires_grad=True)
            torch.ops.gtest_served.twice(x).sum().backward()
            assert x.grad.tolist() == [2.0, 2.0]
            assert torch.ops.gtest_served.twice.default is ops_namespace("gtest_served").twice.default


def test_nested_modes_each_see_the_op_once_and_none_sees_inside_it():
    seen = []
    for lib, library, ops in _both():
        with library._scoped_library("gtest_nested", "FRAGMENT"):
            @library.custom_op("gtest_nested::sin_cos", mutates_args=())
            def sin_cos(x: lib.Tensor) -> lib.Tensor:
                return x.sin().cos()

            calls = []

            class Tagged(_modes(lib)):
                def __init__(self, tag):
                    self.tag = tag

                def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                    calls.append((self.tag, str(func)))
                    return func(*args, **(kwargs or {}))

            x = lib.ones(2)  # (PyTorch's modes see factory calls; genesis's do not)
            with Tagged("outer"), Tagged("inner"):
                value = sin_cos(x) * 2
            seen.append((calls, value.tolist()))
    assert seen[0][0] == seen[1][0] == [("inner", "gtest_nested.sin_cos.default"),
                                        ("outer", "gtest_nested.sin_cos.default"),
                                        ("inner", "aten.mul.Tensor"), ("outer", "aten.mul.Tensor")]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-6)


def test_gradients_through_a_list_argument_are_refused_not_dropped():
    with genesis.library._scoped_library("gtest_lists", "FRAGMENT"):
        @genesis.library.custom_op("gtest_lists::total", mutates_args=())
        def total(xs: list[genesis.Tensor]) -> genesis.Tensor:
            return sum(x.sum() for x in xs)

        assert total([genesis.ones(2), genesis.ones(3)]).item() == 5.0
        with pytest.raises(NotImplementedError, match="list argument"):
            total([genesis.ones(2, requires_grad=True)])
        with genesis.no_grad():
            assert total([genesis.ones(2, requires_grad=True)]).item() == 2.0
