"""The backward engine's semantics, each checked on genesis and on PyTorch alike: gradients
that never arrive, callbacks queued during backward, backward called inside a backward
(deeply too), hook order and arguments, what a hook may ask of the running pass, batched
gradients and anomaly mode's reports."""
import re
import warnings

import numpy as np
import pytest

import genesis
from genesis.autograd import custom_function
from genesis.autograd.graph_task import current_node
from genesis.compat import torch_C, torch_C_nn
from tests.helpers import torch_or_skip


@pytest.fixture(params=["genesis", "torch"])
def lib(request):
    """The framework under test: genesis, or PyTorch (skipped when it is not installed)."""
    return genesis if request.param == "genesis" else torch_or_skip()


def private_C(lib):
    """`torch._C`, or genesis's stand-in for it."""
    return torch_C if lib is genesis else lib._C


# -- gradients that never arrive -------------------------------------------------------

def pass_through(lib, materialize: bool, seen: list):
    class PassThrough(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            seen.append(None if grad is None else grad.tolist())
            return grad

    return PassThrough


@pytest.mark.parametrize("materialize", [True, False])
def test_a_function_that_gets_no_gradient_is_still_called(lib, materialize):
    seen = []
    x = lib.ones(2, requires_grad=True)
    out = private_C(lib)._functions.UndefinedGrad()(pass_through(lib, materialize, seen).apply(x))
    out.sum().backward()
    assert seen == ([[0.0, 0.0]] if materialize else [None])
    assert (x.grad.tolist() if materialize else x.grad) == ([0.0, 0.0] if materialize else None)


def test_non_differentiable_outputs_can_stay_none(lib):
    seen = []

    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            kept, index = x.clone(), x.clone()
            ctx.mark_non_differentiable(index)
            ctx._materialize_non_diff_grads = False
            return kept, index

        @staticmethod
        def backward(ctx, grad, grad_index):
            seen.append((grad.tolist(), grad_index))
            return grad

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    TwoOutputs.apply(x)[0].sum().backward()
    assert seen == [([1.0, 1.0], None)]


def test_custom_nodes_are_graph_nodes(lib):
    Node = lib.autograd.graph.Node
    assert issubclass(private_C(lib)._functions.DelayedError, Node)
    assert issubclass(private_C(lib)._functions.AccumulateGrad, Node)
    module = custom_function if lib is genesis else lib.autograd.function
    assert issubclass(module.BackwardCFunction, Node)
    assert not isinstance(Node, Node)


# -- callbacks and backward inside backward ----------------------------------------------

def test_callbacks_run_after_the_pass_and_may_queue_more(lib):
    log = []
    engine = lib.autograd.Variable._execution_engine

    class Queues(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            engine.queue_callback(lambda: (log.append("first"),
                                           engine.queue_callback(lambda: log.append("second"))))
            log.append("backward")
            return grad

    Queues.apply(lib.ones(2, requires_grad=True)).sum().backward()
    assert log == ["backward", "first", "second"]
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward"):
        engine.queue_callback(lambda: None)


def test_a_callback_belongs_to_the_pass_that_queued_it(lib):
    log = []
    engine = lib.autograd.Variable._execution_engine

    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            engine.queue_callback(lambda: log.append("inner done"))
            return grad

    class Outer(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            engine.queue_callback(lambda: log.append("outer done"))
            leaf = grad.detach().requires_grad_()
            with lib.enable_grad():
                Inner.apply(leaf).sum().backward()
            log.append("outer backward")
            return grad

    Outer.apply(lib.ones(2, requires_grad=True)).sum().backward()
    assert log == ["inner done", "outer backward", "outer done"]


def test_backward_thousands_deep_inside_backward(lib):
    class Countdown(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, grad):
            if ctx.x.item() >= 0:
                with lib.enable_grad():
                    Countdown.apply(ctx.x).sum().backward()
            return grad

    for depth in (1500.0, 40.0):
        x = lib.tensor(depth, requires_grad=True)
        Countdown.apply(x).sum().backward()
        assert x.grad.item() == 1.0


def test_variable_is_a_detached_alias(lib):
    x = lib.ones(2)
    variable = lib.autograd.Variable(x, requires_grad=True)
    assert variable is not x and variable.requires_grad and not x.requires_grad
    variable.data[0] = 5.0
    assert x[0].item() == 5.0


# -- hooks ---------------------------------------------------------------------------------

def test_hooks_of_a_leaf_run_in_pytorchs_order(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    accumulator = x.view_as(x).grad_fn.next_functions[0][0]
    x.register_hook(lambda grad: grad - 2)
    accumulator.register_prehook(lambda grads: (grads[0] / 5,))

    def post_accumulate_hook(tensor):
        tensor.grad.add_(0.5)

    x.register_post_accumulate_grad_hook(post_accumulate_hook)

    def post_hook(grad_inputs, grad_outputs):
        x.grad = grad_outputs[0] * 10  # grad_outputs[0] is .grad itself

    accumulator.register_hook(post_hook)
    x.sum().backward()
    assert np.allclose(x.grad.tolist(), [3.0, 3.0, 3.0])


def test_backward_with_inputs_runs_the_input_nodes_and_their_hooks(lib):
    log = []
    a = lib.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(lambda grads: (log.append("pre"), (grads[0] * 2,))[1])
    b.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append("post"))
    b.register_hook(lambda grad: (log.append("tensor"), grad * 3)[1])
    (b * 1).sum().backward(inputs=(b,))
    assert log == ["tensor", "pre", "post"]
    assert b.grad.item() == 3.0  # retained before the node's pre-hooks
    assert a.grad is None


def test_grad_runs_only_the_tensor_hooks_of_a_captured_node(lib):
    counts = {"tensor": 0, "pre": 0, "post": 0}
    a = lib.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    b.register_hook(lambda grad: counts.__setitem__("tensor", counts["tensor"] + 1))
    b.grad_fn.register_prehook(lambda grads: counts.__setitem__("pre", counts["pre"] + 1))
    b.grad_fn.register_hook(lambda gi, go: counts.__setitem__("post", counts["post"] + 1))
    lib.autograd.grad(c, (b,), retain_graph=True)
    assert counts == {"tensor": 1, "pre": 0, "post": 0}
    lib.autograd.grad(c, (a, b))
    assert counts == {"tensor": 2, "pre": 1, "post": 1}


def test_tensor_hooks_see_none_for_an_output_without_gradient(lib):
    seen = []
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    first, second, third = x.unbind()
    first.register_hook(lambda grad: seen.append(None if grad is None else grad.item()))
    first.backward()
    second.backward()
    assert seen == [1.0, None]
    assert x.grad.tolist() == [1.0, 1.0, 0.0]


def test_pre_hooks_see_none_for_non_tensor_outputs(lib):
    seen = []

    class Scaled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k, k

        @staticmethod
        def backward(ctx, grad, grad_k):
            return grad * ctx.k, None

    x = lib.ones(2, requires_grad=True)
    out, _ = Scaled.apply(x, 3)

    def prehook(grads):
        seen.append(grads[1])
        return grads[0] * 2, None

    out.grad_fn.register_prehook(prehook)
    out.sum().backward()
    assert seen == [None] and x.grad.tolist() == [6.0, 6.0]


def test_module_backward_hook_not_called_again_by_double_backward(lib):
    calls = []
    loss_fn = lib.nn.MSELoss()
    loss_fn.register_full_backward_hook(lambda module, grad_input, grad_output: calls.append(1))
    x = lib.tensor([0.5], requires_grad=True)
    (grad_x,) = lib.autograd.grad(loss_fn(x, lib.tensor([2.0])), x, create_graph=True)
    assert len(calls) == 1
    (second,) = lib.autograd.grad(grad_x, x)
    assert len(calls) == 1 and second.tolist() == [2.0]


# -- what a hook may ask of the running pass ----------------------------------------------

def test_hooks_ask_which_nodes_will_run(lib):
    C = private_C(lib)
    a = lib.randn(2, requires_grad=True)
    other = lib.randn(2, requires_grad=True)
    b = a * other
    c = b.cos()
    answers = []
    b.register_hook(lambda grad: answers.append((C._will_engine_execute_node(b.grad_fn),
                                                 C._will_engine_execute_node(c.grad_fn))))
    c.sum().backward(inputs=(a,), retain_graph=True)
    b.sum().backward()
    assert answers == [(True, True), (True, False)]
    with pytest.raises(RuntimeError, match="during the backward pass"):
        C._will_engine_execute_node(b.grad_fn)
    with pytest.raises(RuntimeError, match="expects an grad_fn"):
        C._will_engine_execute_node(b)
    leaf = a.clone().grad_fn.next_functions[0][0]
    b.register_hook(lambda grad: C._will_engine_execute_node(leaf))
    with pytest.raises(RuntimeError, match="are currently running autograd.grad()"):
        lib.autograd.grad(b.sum(), (a,))


def test_hooks_ask_whether_the_graph_is_kept(lib):
    kept = []
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda grad: kept.append(private_C(lib)._autograd._get_current_graph_task_keep_graph()))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert kept == [True, False]


def test_execution_order_is_the_order_nodes_are_taken_up(lib):
    predicted, actual = [], []
    a = lib.tensor(1.0, requires_grad=True)
    b = lib.tensor(2.0, requires_grad=True)
    c, d = b.sin(), a.cos()
    out = c * d
    for tensor in (a, b, c, d, out):
        node = tensor.grad_fn or tensor.clone().grad_fn.next_functions[0][0]
        tensor.register_hook(lambda grad, node=node: actual.append(node))
    out.register_hook(lambda grad: predicted.extend(private_C(lib)._current_graph_task_execution_order()))
    with lib.autograd.set_multithreading_enabled(False):
        out.backward()
    assert predicted == actual


def test_multithreading_switch(lib):
    autograd = lib.autograd
    with autograd.set_multithreading_enabled(False):
        assert not autograd.is_multithreading_enabled()
    assert autograd.is_multithreading_enabled()
    autograd.set_multithreading_enabled(False)
    assert not autograd.is_multithreading_enabled()
    autograd.set_multithreading_enabled(True)
    assert autograd.is_multithreading_enabled()


# -- batched gradients -------------------------------------------------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_grad_outputs_give_one_row_each(lib, create_graph):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = x * x
    rows = lib.tensor([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [1.0, 1.0]], [[2.0, 2.0], [2.0, 2.0]]])
    (grad,) = lib.autograd.grad(out, (x,), (rows,), is_grads_batched=True, create_graph=create_graph)
    assert grad.shape == (3, 2, 2)
    assert grad.tolist() == (rows * 2 * x).tolist()
    if create_graph:
        (second,) = lib.autograd.grad(grad.sum(), x)
        assert second.tolist() == (rows.sum(0) * 2).tolist()
    (scalar_rows,) = lib.autograd.grad(x.sum(), (x,), (lib.tensor([1.0, 2.0]),), is_grads_batched=True)
    assert scalar_rows.tolist() == [[[1.0, 1.0], [1.0, 1.0]], [[2.0, 2.0], [2.0, 2.0]]]
    with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the first"):
        lib.autograd.grad(x * 2, (x,), (lib.ones(2, 2),), is_grads_batched=True)
    if lib is genesis:  # the shape after the batch dimension, the one that does not match
        with pytest.raises(RuntimeError, match=re.escape(
                "mismatch was detected: grad_output[0] has a shape of (2,) after its batch "
                "dimension (in all (3, 2)) and output[0] has a shape of (2, 2)")):
            lib.autograd.grad(x * 2, (x,), (lib.ones(3, 2),), is_grads_batched=True)


# -- anomaly mode ------------------------------------------------------------------------------

def test_anomaly_mode_warns_on_and_names_the_failing_node(lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            with lib.autograd.detect_anomaly():
                a = lib.randn(3, requires_grad=True)
                b = a + 1
                c = b * b
                b += 1
                lib.autograd.grad(c.sum(), a)
    messages = [str(warning.message) for warning in caught]
    assert "Anomaly Detection has been enabled" in messages[0]
    assert messages[1].startswith("Error detected in MulBackward")
    assert "c = b * b" in messages[1]


def test_anomaly_mode_names_the_backward_that_made_a_failing_node(lib):
    class Faulty(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad * float("nan")

    class MakesFaulty(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return Faulty.apply(grad * x)

    x = lib.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'FaultyBackward' returned nan values in its 0th output"):
            with lib.autograd.detect_anomaly():
                (grad,) = lib.autograd.grad(MakesFaulty.apply(x).sum(), x, create_graph=True)
                grad.sum().backward()
    messages = [str(warning.message) for warning in caught]
    assert "return Faulty.apply(grad * x)" in messages[1]
    assert "induced" in messages[2] and "MakesFaulty.apply(x)" in messages[2]


def test_warnings_from_backward_reach_the_caller(lib):
    x = lib.zeros((), requires_grad=True)
    warn_in_autograd = (torch_C_nn if lib is genesis else lib._C._nn)._test_warn_in_autograd
    with pytest.warns(UserWarning, match="Warn from backward"):
        warn_in_autograd(x).backward()


def test_the_current_node_and_a_hook_registered_during_its_backward_as_in_pytorch():
    torch = torch_or_skip()
    for lib, current in ((genesis, current_node), (torch, torch._C._current_autograd_node)):
        seen, given = [], []

        def pack(tensor):
            return tensor

        def unpack(tensor):
            node = current()
            seen.append(node.name())

            def hook(grad_inputs, grad_outputs):
                given.append(grad_outputs)
                return tuple(None if g is None else g / 2 for g in grad_inputs)

            node.register_hook(hook)  # registered while the node's backward runs
            return tensor

        a = lib.tensor([0.5, 1.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = a.exp()
        out.sum().backward()
        assert current() is None  # outside backward
        assert seen == ["ExpBackward0"]
        assert given == [()]  # its grad_outputs were consumed before it existed
        assert a.grad.tolist() == pytest.approx((a.detach().exp() / 2).tolist())


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_leafs_first_grad_takes_its_layout_when_dense(lib, create_graph):
    """PyTorch's gradient layout contract: a transposed or permuted leaf gets a .grad with
    its own strides; one with gaps or overlaps (a slice with a step, an expand) a
    row-major one. Hooks see that .grad, and a second backward adds into it."""
    transposed = lib.ones(3, 2).t().requires_grad_()
    (transposed * transposed).sum().backward(create_graph=create_graph)
    assert transposed.grad.stride() == (1, 2) and transposed.grad.tolist() == [[2.0] * 3] * 2
    assert transposed.grad.requires_grad == create_graph
    if not create_graph:
        (transposed * 2).sum().backward()
        assert transposed.grad.stride() == (1, 2) and transposed.grad.tolist() == [[4.0] * 3] * 2
    permuted = lib.arange(24.).reshape(2, 3, 4).permute(2, 0, 1).requires_grad_()
    seen = []
    permuted.register_post_accumulate_grad_hook(lambda tensor: seen.append(tensor.grad.stride()))
    (permuted * 3).sum().backward()
    assert seen == [(1, 12, 4)] and permuted.grad.stride() == (1, 12, 4)
    for leaf in (lib.ones(4, 6)[:, ::2], lib.ones(4, 6).t()[::2], lib.ones(3, 1).expand(3, 2)):
        leaf.requires_grad_()
        (leaf * 2).sum().backward()
        assert leaf.grad.is_contiguous() and set(leaf.grad.flatten().tolist()) == {2.0}


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_zeros_require_grad_under_create_graph(lib, create_graph):
    """materialize_grads: an input no gradient reached gets zeros, which require grad exactly
    under create_graph (a leaf, so a further grad through them gives zeros, not an error)."""
    x, unused = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    gx, gu = lib.autograd.grad((x * x).sum(), (x, unused), materialize_grads=True,
                               create_graph=create_graph)
    assert gu.tolist() == [0.0, 0.0] and gu.requires_grad == create_graph and gu.grad_fn is None
    assert gx.requires_grad == create_graph
    if create_graph:
        (second,) = lib.autograd.grad((gx + gu).sum(), unused, materialize_grads=True)
        assert second.tolist() == [0.0, 0.0]
