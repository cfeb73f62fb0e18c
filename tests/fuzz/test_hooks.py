"""Hooks that misbehave: every kind of hook returning a gradient of the wrong shape, dtype
or type, the wrong number of gradients, or raising.

The error is PyTorch's type and names the hook (its function name and file:line) and where
it was registered, never the op whose backward was running ("MulBackward: backward
returned ...", "raised by the backward of HookIdentityBackward"), so a user looks at
their hook, and `genesis trace` does not report the op as failing.
"""
from __future__ import annotations

import pytest

import genesis

from .compare import genesis_error, torch

KINDS = ["leaf tensor hook", "tensor hook", "grad_fn pre-hook", "grad_fn hook",
         "module backward hook", "module backward pre-hook", "module forward hook",
         "module forward pre-hook"]
RETURNS_GRADIENTS = KINDS[:6]
RETURNS_TUPLES = KINDS[2:6]
MISTAKES = ["shape", "dtype", "type", "count", "raises"]


def _wrong(mistake: str, gradient):
    if mistake == "shape":
        return gradient.sum()
    if mistake == "dtype":
        return gradient.double()
    return 3


def _make_hook(kind: str, mistake: str):
    """A hook with a name of its own for `kind`, making `mistake`."""
    if mistake == "raises":
        def raising_hook(*args):
            raise ValueError("this hook failed")
        return raising_hook
    if kind in RETURNS_TUPLES:
        def tuple_hook(*args):
            gradients = args[-1] if kind == "module backward pre-hook" else args[1] \
                if kind == "module backward hook" else args[0]
            if mistake == "count":
                return (*gradients, None)
            return (_wrong(mistake, gradients[0]), *gradients[1:])
        return tuple_hook

    def gradient_hook(gradient):
        return _wrong(mistake, gradient)
    return gradient_hook


def _run(library, kind: str, hook) -> None:
    """A small forward and backward with `hook` registered as `kind`."""
    x = library.ones(3, requires_grad=True)
    if kind.startswith("module"):
        layer = library.nn.Linear(3, 3)
        register = {"module backward hook": layer.register_full_backward_hook,
                    "module backward pre-hook": layer.register_full_backward_pre_hook,
                    "module forward hook": layer.register_forward_hook,
                    "module forward pre-hook": layer.register_forward_pre_hook}[kind]
        register(hook)
        layer(x.unsqueeze(0)).sum().backward()
        return
    y = x * 2
    if kind == "leaf tensor hook":
        x.register_hook(hook)
    elif kind == "tensor hook":
        y.register_hook(hook)
    elif kind == "grad_fn pre-hook":
        y.grad_fn.register_prehook(hook)
    else:
        y.grad_fn.register_hook(hook)
    (y * 3).sum().backward()


CASES = [(kind, mistake) for kind in KINDS for mistake in MISTAKES
         if mistake == "raises" or kind in RETURNS_GRADIENTS and (mistake != "count" or kind in RETURNS_TUPLES)]


@pytest.mark.parametrize("kind, mistake", CASES)
def test_a_misbehaving_hook_is_named(kind, mistake):
    hook = _make_hook(kind, mistake)
    where = f"{hook.__code__.co_filename.rpartition('/')[2]}:{hook.__code__.co_firstlineno}"
    culprits = [] if mistake == "raises" else [f"hook '{hook.__qualname__}'", where]
    error = genesis_error(lambda: _run(genesis, kind, hook), culprits=culprits,
                          like=lambda: _run(torch, kind, _make_hook(kind, mistake)))
    explained = "\n".join([str(error), *getattr(error, "__notes__", [])])
    assert f"hook '{hook.__qualname__}'" in explained and where in explained, explained
    assert "backward returned" not in explained and "raised by the backward of" not in explained
    assert getattr(error, "backward_node", None) is None  # genesis trace blames no op for it
    if mistake == "raises":
        assert isinstance(error, ValueError) and str(error) == "this hook failed"


def test_a_gradient_changed_in_dtype_no_longer_slips_into_grad():
    """genesis used to accept a float64 gradient from a hook on a float32 leaf, leaving a
    float64 .grad the optimizer then mixed into float32 weights."""
    x = genesis.ones(3, requires_grad=True)
    x.register_hook(lambda gradient: gradient.double())
    genesis_error(lambda: (x * 2).sum().backward(), culprits=["dtype of the gradient from float32 to float64"])
    assert x.grad is None


@pytest.mark.parametrize("hook", [3, None, "print"])
def test_register_hook_needs_a_callable(hook):
    x = genesis.ones(2, requires_grad=True)
    error = genesis_error(lambda: x.register_hook(hook), culprits=["register_hook", "callable"])
    assert isinstance(error, TypeError)


def test_a_hook_that_is_a_callable_object_or_a_partial_is_named_too():
    import functools

    class Clip:
        def __call__(self, gradient):
            return gradient[:1]

    def scaled(factor, gradient):
        return (gradient * factor).sum()

    for hook, name in [(Clip(), "Clip"), (functools.partial(scaled, 2.0), "scaled")]:
        x = genesis.ones(3, requires_grad=True)
        x.register_hook(hook)
        genesis_error(lambda x=x: (x * 2).sum().backward(), culprits=[name, "test_hooks.py:"])
