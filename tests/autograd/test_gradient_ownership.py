"""The engine's ownership of gradient buffers (engine module docstring).

The engine adds into a gradient in place, and hands it to a leaf as `.grad` without a
copy, only when it owns it: it made the array, or an Op returned it as a new array
(`Function.fresh_gradients`). The first test checks that promise for every registered op
and sample; the others check that what a hook, a checker, the caller or a user's Function
holds is never written into, and that owned buffers are not copied.
"""
import numpy as np
import pytest

import genesis
from genesis.autograd import engine
from genesis.autograd.function import AccumulateGrad
from genesis.autograd.grad_mode import grad_state
from genesis.ops.registry import all_ops
from tests.helpers import outputs_of

CASES = [(info, index, sample) for info in all_ops() if info.differentiable
         for index, sample in enumerate(info.samples(np.random.default_rng(0)))]
IDS = [f"{info.name}-{index}-{sample.note}" for info, index, sample in CASES]


def _arrays_in(value, found: list, depth: int = 0) -> None:
    """Every array reachable from `value` through Tensors, containers and attributes."""
    if depth > 4:
        return
    if isinstance(value, genesis.Tensor):
        found.append(value._data)
    elif isinstance(value, np.ndarray):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _arrays_in(item, found, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _arrays_in(item, found, depth + 1)


def _nodes(outputs) -> list:
    seen, stack = [], [output.grad_fn for output in outputs if output.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or node in seen or node.__class__ is AccumulateGrad:
            continue
        seen.append(node)
        stack.extend(child for child, _ in node.next_functions)
    return seen


@pytest.mark.parametrize("info, index, sample", CASES, ids=IDS)
def test_an_op_returns_new_arrays_or_passes_a_gradient_through(info, index, sample):
    args, kwargs = sample.tensors()
    outputs = [output for output in outputs_of(info.call(*args, **kwargs)) if output.requires_grad]
    rng = np.random.default_rng(3)
    for node in _nodes(outputs):
        if not node._forward_cls.fresh_gradients:
            continue
        grads = [genesis.from_numpy(rng.standard_normal(shape).astype(dtype)).to(device)
                 for shape, dtype, device in node._output_meta]  # each output's own dtype
        previous, grad_state.enabled = grad_state.enabled, False
        try:
            returned = node._forward_cls.backward(node, *grads)
        finally:
            grad_state.enabled = previous
        returned = returned if isinstance(returned, tuple) else (returned,)
        held = []
        _arrays_in([args, kwargs, outputs, node._saved, list(vars(node).values())], held)
        incoming = [grad._data for grad in grads]
        new = [gradient._data for gradient in returned if isinstance(gradient, genesis.Tensor)
               and not any(gradient._data is array for array in incoming)
               and gradient._data.base is None]
        for position, array in enumerate(new):
            others = held + incoming + [other for at, other in enumerate(new) if at != position]
            shared = [other.shape for other in others
                      if np.may_share_memory(array, other)]
            assert not shared, (f"{type(node).__name__} returned a gradient of shape {array.shape} "
                                f"whose memory is also held elsewhere ({shared}): it must return a "
                                "new array, or pass a gradient it received through unchanged")


def _count_copies(monkeypatch) -> list:
    copies = []
    original = engine._fresh_copy
    monkeypatch.setattr(engine, "_fresh_copy", lambda gradient: copies.append(1) or original(gradient))
    return copies


def test_a_gradient_kept_by_a_hook_is_never_added_into():
    kept = []
    w = genesis.tensor([1.0, 2.0], requires_grad=True)
    h = w * 3
    h.register_hook(lambda grad: kept.append(grad))
    (h * h + h).sum().backward(retain_graph=True)  # two gradients reach h: the hook sees their sum
    before = kept[0].numpy().copy()
    w.grad.add_(100.0)
    (h * 2).sum().backward()
    np.testing.assert_array_equal(kept[0].numpy(), before)


def test_a_leaf_hook_that_keeps_the_gradient_gets_a_copy_in_grad():
    kept = []
    w = genesis.tensor([1.0, 2.0], requires_grad=True)
    w.register_hook(lambda grad: kept.append(grad))
    (w * 3).sum().backward()
    w.grad.mul_(0)
    np.testing.assert_array_equal(kept[0].numpy(), [3.0, 3.0])


def test_a_users_function_keeps_what_it_returns(monkeypatch):
    class Keeps(genesis.Function):
        stored = None

        @staticmethod
        def forward(ctx, x):
            return x._data * 2

        @staticmethod
        def backward(ctx, grad):
            Keeps.stored = grad * 2
            return Keeps.stored

    x = genesis.tensor([1.0, 1.0], requires_grad=True)
    (Keeps.apply(x) + Keeps.apply(x)).sum().backward()  # summed out of place, then owned
    x.grad.mul_(0)
    np.testing.assert_array_equal(Keeps.stored.numpy(), [2.0, 2.0])
    y = genesis.tensor([1.0, 1.0], requires_grad=True)
    copies = _count_copies(monkeypatch)
    Keeps.apply(y).sum().backward()
    assert copies == [1]  # the Function's own tensor is not handed over as .grad
    y.grad.mul_(0)
    np.testing.assert_array_equal(Keeps.stored.numpy(), [2.0, 2.0])


def test_the_callers_gradient_is_never_written_into():
    seed = genesis.tensor([1.0, 1.0])
    a = genesis.tensor([1.0, 2.0], requires_grad=True)
    (a + 0).backward(seed)  # passed through twice to the leaf
    a.grad.add_(5)
    assert seed.tolist() == [1.0, 1.0]
    (dx,) = genesis.autograd.grad((a * 2).sum(), a)
    dx_before = dx.numpy().copy()
    (a * 2).sum().backward()
    np.testing.assert_array_equal(dx.numpy(), dx_before)


def test_a_checker_sees_gradients_that_stay_as_they_were():
    seen = []
    checker = lambda node, grads, grad_inputs, flowed: seen.extend(
        (g, g.numpy().copy()) for g in grad_inputs if g is not None)
    engine.node_checkers.add(checker)
    try:
        x = genesis.tensor([1.0, 2.0], requires_grad=True)
        (x * x + x * 3).sum().backward()
        x.grad.mul_(0)
    finally:
        engine.node_checkers.discard(checker)
    for gradient, value in seen:
        np.testing.assert_array_equal(gradient.numpy(), value)


def test_owned_gradients_are_summed_in_place_and_handed_over(monkeypatch):
    copies = _count_copies(monkeypatch)
    x = genesis.randn(64, 32, requires_grad=True)
    w = genesis.randn(32, 16, requires_grad=True)
    hidden = x @ w
    (hidden * 2 + hidden.exp()).sum().backward()  # two fresh gradients meet at hidden
    assert copies == []
    np.testing.assert_allclose(w.grad.numpy(), x.detach().numpy().T @ (2 + np.exp(hidden.detach().numpy())),
                               rtol=1e-4)


def test_a_checker_that_only_reads_leaves_the_buffers_owned(monkeypatch):
    copies = _count_copies(monkeypatch)
    with genesis.autograd.detect_anomaly():  # its NaN/Inf count reads during the call
        x = genesis.randn(8, 4, requires_grad=True)
        (x.exp() * 2).sum().backward()
    assert copies == []


def test_the_graph_recorder_keeps_copies_so_the_engine_still_owns(monkeypatch):
    from genesis.debug.record import record

    copies = _count_copies(monkeypatch)
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with record() as recording:
        (x * 3 + x.exp()).sum().backward()  # two gradients meet at x: added in place
    assert copies == []
    expected = 3 + np.exp([1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
    recorded = recording.graphs[0].find("x").outputs[0].grad["norm"]
    assert recorded == pytest.approx(float(np.linalg.norm(expected)), rel=1e-6)
