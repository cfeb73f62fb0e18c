"""Hooks on AccumulateGrad nodes and post-accumulate-grad hooks, in PyTorch's order, and the
errors PyTorch raises with the phrases users search for; each compared with torch."""
import pytest

import genesis
from tests.helpers import torch_or_skip


def _libraries():
    return (torch_or_skip(), genesis)


def test_accumulate_grad_hooks_run_in_torch_order():
    orders = []
    for library in _libraries():
        calls = []
        x = library.ones(2, requires_grad=True)
        y = x * 2
        accumulator = y.grad_fn.next_functions[0][0]
        assert type(accumulator).__name__ == "AccumulateGrad" and accumulator.variable is x
        x.register_hook(lambda grad: calls.append("tensor hook"))
        accumulator.register_prehook(lambda grads: calls.append("node pre-hook"))
        accumulator.register_hook(lambda grad_inputs, grad_outputs: calls.append(
            ("node hook", len(grad_inputs), grad_outputs[0].tolist())))
        x.register_post_accumulate_grad_hook(lambda tensor: calls.append(
            ("post accumulate", tensor.grad.tolist())))
        y.sum().backward()
        orders.append(calls)
    assert orders[0] == orders[1]


def test_an_accumulate_grad_pre_hook_can_replace_the_gradient():
    for library in _libraries():
        x = library.ones(2, requires_grad=True)
        y = x * 3
        y.grad_fn.next_functions[0][0].register_prehook(lambda grads: (grads[0] * 10,))
        y.sum().backward()
        assert x.grad.tolist() == [30.0, 30.0]


def test_post_accumulate_grad_hooks_see_the_accumulated_grad_and_can_be_removed():
    for library in _libraries():
        weight = library.ones(2, requires_grad=True)
        seen = []
        handle = weight.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
        (weight * 2).sum().backward()
        (weight * 3).sum().backward()
        handle.remove()
        (weight * 4).sum().backward()
        assert seen == [[2.0, 2.0], [5.0, 5.0]]
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered "
                                               "on non-leaf tensors"):
            (weight * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_autograd_grad_does_not_run_accumulation_hooks():
    for library in _libraries():
        x = library.ones(2, requires_grad=True)
        seen = []
        x.register_post_accumulate_grad_hook(lambda p: seen.append(1))
        library.autograd.grad((x * 2).sum(), x)
        assert seen == [] and x.grad is None


CASES = {
    "backward of a constant": (
        lambda lib: lib.ones(2).sum().backward(),
        "does not require grad and does not have a grad_fn"),
    "backward twice": (
        lambda lib: [(y := (lib.ones(2, requires_grad=True) ** 2).sum()).backward(), y.backward()],
        "backward through the graph a second time"),
    "saved tensor modified": (
        lambda lib: (lambda y: (y.mul_(2), y.sum().backward()))(lib.ones(2, requires_grad=True).exp()),
        "modified by an inplace operation"),
    "input not used": (
        lambda lib: lib.autograd.grad((lib.ones(2, requires_grad=True) * 2).sum(),
                                      lib.ones(1, requires_grad=True)),
        "appears to not have been used in the graph"),
    "implicit gradient of a vector": (
        lambda lib: (lib.ones(2, requires_grad=True) * 2).backward(),
        "grad can be implicitly created only for scalar outputs"),
    "in-place on a leaf": (
        lambda lib: lib.ones(2, requires_grad=True).mul_(2),
        "a leaf Variable that requires grad is being used in an in-place operation"),
    "in-place on a view of a leaf": (
        lambda lib: lib.ones(2, requires_grad=True)[:1].mul_(2),
        "a view of a leaf Variable that requires grad is being used in an in-place operation"),
    "grad_output of the wrong shape": (
        lambda lib: lib.autograd.grad((lib.ones(2, 2, requires_grad=True) * 2),
                                      lib.ones(1, requires_grad=True), grad_outputs=lib.ones(2)),
        "Mismatch in shape"),
    "differentiated tensor without grad": (
        lambda lib: lib.autograd.grad((lib.ones(2, requires_grad=True) * 2).sum(), lib.ones(2)),
        "One of the differentiated Tensors does not require grad"),
    "requires_grad on an integer tensor": (
        lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_(),
        "only .* floating point"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_errors_have_torchs_type_and_phrase(case):
    call, phrase = CASES[case]
    for library in _libraries():
        with pytest.raises(RuntimeError, match=phrase):
            call(library)


def test_reading_grad_of_a_non_leaf_warns_as_torch():
    for library in _libraries():
        y = library.ones(2, requires_grad=True) * 2
        with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
            assert y.grad is None
        y.retain_grad()
        y.sum().backward()
        assert y.grad.tolist() == [1.0, 1.0]  # retained: no warning (pytest turns none on)


def test_more_argument_checks_as_torch():
    for library in _libraries():
        x = library.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="cannot be empty"):
            library.autograd.grad((x * 2).sum(), [])
        with pytest.raises(RuntimeError, match="cannot be empty"):
            library.autograd.backward((x * 2).sum(), inputs=[])
        with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
            library.autograd.grad((x * 2).sum(), x, allow_unused=False, materialize_grads=True)
        scale = library.ones(2, requires_grad=True)
        (first,) = library.autograd.grad((x * scale).sum(), x, create_graph=True)
        (second,) = library.autograd.grad(first.sum(), x, allow_unused=True,
                                          materialize_grads=True)
        assert second.tolist() == [0.0, 0.0]


def test_a_post_accumulate_grad_hook_must_return_none():
    # PyTorch's newer releases raise this; 2.13 ignores the returned value
    leaf = genesis.ones(1, requires_grad=True)
    leaf.register_post_accumulate_grad_hook(lambda p: p)
    with pytest.raises(RuntimeError, match="hooks should return None"):
        (leaf * 2).sum().backward()


def test_grad_assignment_and_numpy_rules_as_torch():
    for library in _libraries():
        x = library.ones(2, requires_grad=True)
        with pytest.raises(TypeError, match="expected to be a Tensor or None"):
            x.grad = 0
        with pytest.raises(RuntimeError):
            x.grad = x
        with pytest.raises(RuntimeError):
            x.grad = library.ones(2, dtype=library.float64)
        with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires "
                                               r"grad"):
            x.numpy()
        with library.no_grad():
            assert x.numpy().tolist() == [1.0, 1.0]


def test_decorating_a_class_with_a_grad_mode_warns_as_torch():
    for library in _libraries():
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
            @library.no_grad()
            class Model:
                pass


def _register_node_hook(lib, kind: str, returned):
    """x * c (c a constant: the node's grad_inputs are (gradient, None)), or a row of
    x.unbind(0) (the other row's grad_output None), with a node hook returning `returned`."""
    x = lib.ones(2, 3, requires_grad=True)
    if kind == "hook":
        out = x[0] * lib.ones(3)
        out.grad_fn.register_hook(lambda grad_inputs, grad_outputs: returned(lib, grad_inputs))
    else:
        out = x.unbind(0)[0]
        out.grad_fn.register_prehook(lambda grad_outputs: returned(lib, grad_outputs))
    out.sum().backward()
    return x.grad


@pytest.mark.parametrize("kind", ["hook", "prehook"])
def test_node_hooks_return_a_tuple_and_leave_none_gradients_none_as_in_torch(kind):
    """A hook of a graph node (grad_fn.register_hook/register_prehook) returns None or a
    tuple: a lone Tensor is a TypeError, a gradient in place of a None one a RuntimeError."""
    for library in _libraries():
        with pytest.raises(TypeError, match="expected tuple, but hook returned 'Tensor'"):
            _register_node_hook(library, kind, lambda lib, grads: grads[0] * 2)
        with pytest.raises(RuntimeError, match="can't replace a None gradient with a non-None value"):
            _register_node_hook(library, kind, lambda lib, grads: (grads[0], lib.ones(3)))
        kept = _register_node_hook(library, kind, lambda lib, grads: (grads[0] * 2, None))
        assert kept[0].tolist() == [2.0] * 3 and kept[1].tolist() == [0.0] * 3
