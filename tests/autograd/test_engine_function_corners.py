"""Corners of the engine and of custom Functions, each checked on genesis and on PyTorch
alike: when the running pass may report its execution order, the graph a once-differentiable
backward leaves under create_graph, and writes through a broadcast (expanded) tensor."""
import pytest

import genesis
from genesis.autograd import custom_function
from genesis.compat import torch_C
from tests.helpers import torch_or_skip


@pytest.fixture(params=["genesis", "torch"])
def lib(request):
    """The framework under test: genesis, or PyTorch (skipped when it is not installed)."""
    return genesis if request.param == "genesis" else torch_or_skip()


def private_C(lib):
    """`torch._C`, or genesis's stand-in for it."""
    return torch_C if lib is genesis else lib._C


# -- the execution order of the running pass -----------------------------------------------

def test_execution_order_needs_multithreading_off(lib):
    asked = []

    def ask(grad):
        try:
            order = private_C(lib)._current_graph_task_execution_order()
            asked.append([node.name() for node in order])
        except RuntimeError as error:
            asked.append(str(error))

    x = lib.tensor(1.0, requires_grad=True)
    y = x.clone().sin()
    y.register_hook(ask)
    y.backward()  # multithreading is on by default
    assert "multithreading disabled" in asked[0]
    y = x.clone().sin()
    y.register_hook(ask)
    with lib.autograd.set_multithreading_enabled(False):
        y.backward()
    assert asked[1] == ["SinBackward0", "CloneBackward0", "torch::autograd::AccumulateGrad"]


def test_execution_order_outside_backward_is_refused(lib):
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        private_C(lib)._current_graph_task_execution_order()


# -- once_differentiable under create_graph ------------------------------------------------

def graph_of(node) -> str:
    """The graph below `node` written as nested class names, None for a missing edge."""
    if node is None:
        return "None"
    children = ", ".join(graph_of(child) for child, _ in node.next_functions)
    return f"{type(node).__name__}({children})"


def scaled_sum(lib):
    once_differentiable = custom_function.once_differentiable if lib is genesis else \
        lib.autograd.function.once_differentiable

    class ScaledSum(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, scale, b):
            ctx.scale = scale
            ctx.save_for_backward(a, b)
            return a * b + scale * b

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            assert not lib.is_grad_enabled()
            a, b = ctx.saved_tensors
            return grad * b, None, grad * (a + ctx.scale)

    return ScaledSum


def test_once_differentiable_gradient_comes_out_of_one_error_node(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    seed = lib.ones((), requires_grad=True)
    scaled_sum(lib).apply(a, 2.0, b).sum().backward(seed, create_graph=True)
    assert a.grad.tolist() == [3.0, 4.0] and b.grad.tolist() == [3.0, 4.0]
    for leaf in (a, b):
        assert graph_of(leaf.grad.grad_fn) == \
            "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"
    assert a.grad.grad_fn.name() == "torch::autograd::CopyBackwards"
    assert a.grad.grad_fn.next_functions[1][0].name() == "torch::autograd::Error"
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked "
                                           "with @once_differentiable"):
        a.grad.sum().backward()


def test_once_differentiable_without_a_graph_of_the_gradient(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    scaled_sum(lib).apply(a, 2.0, b).sum().backward(create_graph=True)  # the seed is constant
    assert a.grad.grad_fn is None and b.grad.grad_fn is None
    seed = lib.ones((), requires_grad=True)
    grads = lib.autograd.grad(scaled_sum(lib).apply(a, 2.0, b).sum(), (a, b), seed,
                              create_graph=True)
    assert graph_of(grads[0].grad_fn) == "Error(AccumulateGrad(), None, AccumulateGrad())"
    assert grads[0].grad_fn is grads[1].grad_fn


def test_a_leaf_gets_a_copy_of_its_first_gradient_under_create_graph(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    copy = x.grad.grad_fn
    assert type(copy).__name__ == "CopyBackwards" and copy.next_functions[0][0] is None
    assert copy.next_functions[1][0].name() == "AddBackward0"
    (x * x).sum().backward(create_graph=True)
    assert type(x.grad.grad_fn).__name__.startswith("AddBackward")
    assert type(x.grad.grad_fn.next_functions[0][0]).__name__ == "CopyBackwards"
    assert x.grad.tolist() == [4.0, 8.0]
    (second,) = lib.autograd.grad(x.grad.sum(), x)
    assert second.tolist() == [4.0, 4.0]


def test_a_gradient_made_with_create_graph_is_added_into_in_place_by_a_plain_backward(lib):
    """Outside create_graph the next gradient is added into .grad in place, as PyTorch's
    AccumulateGrad does: a .grad made with create_graph keeps its grad_fn and requires grad."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x ** 2).sum().backward(create_graph=True)
    grad, copy, version = x.grad, x.grad.grad_fn, x.grad._version
    (x ** 3).sum().backward()
    assert x.grad is grad and x.grad.grad_fn is copy and x.grad.requires_grad
    assert x.grad._version == version + 1 and x.grad.tolist() == [5.0, 16.0]
    (second,) = lib.autograd.grad(x.grad.sum(), x)  # through the first backward's graph only
    assert second.tolist() == [2.0, 2.0]
    x.grad = lib.zeros(2, requires_grad=True)  # a .grad leaf that requires grad: the same
    leaf = x.grad
    (x ** 2).sum().backward()
    assert x.grad is leaf and x.grad.is_leaf and leaf.tolist() == [2.0, 4.0]


def test_delayed_error_node_has_one_input_per_tensor(lib):
    x = lib.tensor([1.0], requires_grad=True)
    y = lib.tensor([2.0], requires_grad=True)
    u, v = private_C(lib)._functions.DelayedError("Boom!", 2)(x * 1, y * 1)
    assert type(u.grad_fn).__name__ == "Error" and u.grad_fn is v.grad_fn
    assert len(u.grad_fn.next_functions) == 2
    with pytest.raises(RuntimeError, match="Boom!"):
        (u + v).sum().backward()


# -- writes through a broadcast (expanded) tensor ------------------------------------------

OVERLAP = "more than one element of the written-to tensor refers to a single memory location"


@pytest.mark.parametrize("write, base_after", [
    ("b[0] = 7", [[7.0, 7.0, 7.0]]),
    ("b[0, 1] = 3", [[0.0, 3.0, 0.0]]),
    ("b[0] += 1", [[1.0, 1.0, 1.0]]),
    ("b[0].mul_(2).add_(1)", [[1.0, 1.0, 1.0]]),
    ("b[2].t().sub_(1)", [[-1.0, -1.0, -1.0]]),
    ("b.fill_(4)", [[4.0, 4.0, 4.0]]),
    ("b.t()[1].fill_(2)", [[0.0, 2.0, 0.0]]),
    ("b.fill_(4); b.zero_()", [[0.0, 0.0, 0.0]]),
])
def test_a_part_with_distinct_elements_or_a_fill_is_written_through(lib, write, base_after):
    a = lib.zeros(1, 3)
    b = a.expand(4, 3)
    exec(write)
    assert a.tolist() == base_after
    assert b.tolist() == base_after * 4


@pytest.mark.parametrize("write", ["b.mul_(2)", "b[:, 1] = 2", "b.t()[0].add_(9)",
                                   "b.copy_(lib.ones(4, 3))"])
def test_a_write_where_elements_share_memory_is_refused(lib, write):
    a = lib.zeros(1, 3)
    b = a.expand(4, 3)
    with pytest.raises(RuntimeError, match=OVERLAP):
        exec(write)
    assert a.tolist() == [[0.0, 0.0, 0.0]]


def test_a_custom_backward_may_write_into_its_expanded_gradient(lib):
    class SpreadNan(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, grad):
            spread = grad.clone().expand(3)
            spread[0] = 0
            spread[0] /= 0  # a nan, seen by every element: they are one memory location
            return spread

    x = lib.ones(3, requires_grad=True)
    SpreadNan.apply(x).backward()
    assert all(value != value for value in x.grad.tolist())
    y = SpreadNan.apply(x)
    nan_found = "'SpreadNanBackward' returned nan values in its 0th output"
    with pytest.raises(RuntimeError, match=nan_found):
        with pytest.warns(UserWarning):
            with lib.autograd.detect_anomaly():
                y.backward()


# -- forward-mode AD's tangent layout (torch.ops.aten._new_zeros_with_same_feature_meta) -----

def aten_ops(lib):
    """`torch.ops.aten`, or genesis's."""
    from genesis.utils import _python_dispatch
    return _python_dispatch.aten if lib is genesis else lib.ops.aten


@pytest.mark.parametrize("make", [
    lambda lib: (lib.zeros(5), lib.zeros(2, 3, 4, dtype=lib.float64)),
    lambda lib: (lib.zeros(2, 3, 4).transpose(0, 1), lib.zeros(3, 4).t()),
    lambda lib: (lib.zeros(6)[1:3], lib.zeros(7)[2:5]),
    lambda lib: (lib.zeros(1, 0, 2), lib.zeros(1, 2)),
])
def test_new_zeros_with_same_feature_meta(lib, make):
    import warnings
    source, target = make(lib)
    for batch_dims in range(source.dim() + 1):
        out = aten_ops(lib)._new_zeros_with_same_feature_meta(source, target,
                                                              self_num_batch_dims=batch_dims)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's TypedStorage deprecation
            layout = (tuple(out.shape), out.stride(), out.storage_offset(), len(out.storage()),
                      out.dtype is target.dtype, out.abs().sum().item())
            expected_storage = len(target.storage())
        batch = tuple(source.shape[:batch_dims])
        assert layout[0] == batch + tuple(target.shape)
        assert layout[1][batch_dims:] == target.stride()
        assert layout[2] == target.storage_offset()
        count = 1
        for size in batch:
            count *= size
        assert layout[3:] == (expected_storage * count, True, 0.0)


# -- torch.ops.aten.convolution_backward -----------------------------------------------------

def test_convolution_backward_matches_pytorch():
    torch = torch_or_skip()
    import numpy as np
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 2))
    grad = rng.standard_normal((2, 6, 4, 6))
    geometry = ([6], [2, 1], [1, 1], [1, 2], False, [0, 0], 2)
    for mask in ([True, True, True], [False, True, False], [True, False, False]):
        ours = aten_ops(genesis).convolution_backward(
            *(genesis.tensor(value, dtype=genesis.float64) for value in (grad, x, w)), *geometry,
            mask)
        theirs = torch.ops.aten.convolution_backward(
            torch.tensor(grad), torch.tensor(x), torch.tensor(w), *geometry, mask)
        for mine, expected, wanted in zip(ours, theirs, mask):
            assert (mine is None) == (not wanted)
            if wanted:
                np.testing.assert_allclose(mine.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


def test_convolution_backward_carries_the_tangent_of_the_weight(lib):
    fwAD = lib.autograd.forward_ad
    x, w = lib.ones(1, 1, 4, 4, dtype=lib.float64), lib.ones(3, 1, 2, 2, dtype=lib.float64)
    grad = lib.ones(1, 3, 3, 3, dtype=lib.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(w, 2 * lib.ones_like(w))
        grad_input, grad_weight, grad_bias = aten_ops(lib).convolution_backward(
            grad, x, dual, (0,), (1, 1), (0, 0), (1, 1), False, (0, 0), 1, (True, False, False))
        tangent = fwAD.unpack_dual(grad_input).tangent
    assert grad_weight is None and grad_bias is None
    assert tangent.tolist() == (2 * grad_input).tolist()


# -- behaviours where PyTorch 2.13 differs from older PyTorch tests ----------------------------

def test_nextafter_passes_the_gradient_to_its_first_input(lib):
    a = lib.tensor([0.5, 2.0], requires_grad=True)
    b = lib.tensor([1.0, -1.0], requires_grad=True)
    lib.nextafter(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [0.0, 0.0]


def test_a_ctx_kept_after_backward_with_retain_graph_still_reads_its_saved_tensors(lib):
    kept = []

    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            kept.append(ctx)
            return grad

    x = lib.zeros(1, requires_grad=True)
    loss = Identity.apply(x)
    loss.backward(retain_graph=True)
    del loss
    (saved,) = kept[0].saved_tensors
    assert saved is x
    loss = Identity.apply(x)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        kept[1].saved_tensors
