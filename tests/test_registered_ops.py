"""Every Function with a backward in genesis (genesis.ops, genesis.nn, genesis.utils) is in the
op registry: some registered op's samples build a graph holding its node, so the
registry-driven checks (gradcheck, gradgradcheck, PyTorch, the device, `genesis gradcheck
--ops`) run its gradient rule.

A node counts where a sample's forward builds it, or where a create_graph backward of that
sample does: an adjoint Function (pooling's MaxPoolScatter, indexing's IndexScatter) lives
only in the graph of a gradient. A Function whose subclasses inherit its backward (_Extremum,
ExtremumAlongDim) is reached through them: what is checked is a rule, and the rule is the
backward a node runs.
"""
import importlib
import pkgutil

import numpy as np
import pytest

import genesis
from genesis.ops.registry import all_ops
from tests.helpers import outputs_of

PACKAGES = (genesis.ops, genesis.nn, genesis.utils)

# Functions with a backward that no registered op reaches on the CPU, each with the reason.
NOT_REACHED_BY_AN_OP = {
    "HookIdentity": "the identity that Module.register_full_backward_hook wraps a module's "
                    "inputs and outputs in, not an op; tested in tests/nn/test_hooks.py",
    "ToDevice": "a move between two devices, and the registry's samples run on one device at "
                "a time; its gradient is tested in tests/cuda/test_transfers.py",
    "PinMemory": "page-locked host memory needs a CUDA device (PyTorch's rule); tested in "
                 "tests/cuda/test_transfers.py",
    "Checkpoint": "the reentrant checkpoint's node (use_reentrant=True, which has no double "
                  "backward, as in PyTorch); the registry's checkpoint ops are the non-reentrant "
                  "one, whose graph is the forward's own ops; tested in tests/utils",
    "CheckpointOutput": "the reentrant checkpoint's per-output node; tested in tests/utils",
    "_SaveInputs": "keeps a non-reentrant checkpoint's arguments as saved values; nothing uses "
                   "its output, so no graph reaches it; tested in "
                   "tests/autograd/test_checkpoint_recompute.py",
}


def _defined_functions_with_a_backward() -> list:
    """The Functions genesis's modules define with a backward of their own."""
    modules = [importlib.import_module(info.name) for package in PACKAGES
               for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    return [value for module in modules for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, genesis.autograd.Function)
            and value.__module__ == module.__name__ and "backward" in vars(value)]


def _functions_with_a_backward() -> dict:
    return {cls.__name__: cls for cls in _defined_functions_with_a_backward()}


def _owner_of_backward(cls: type) -> type:
    """The class whose `backward` a node of Function `cls` runs (itself, or the base it
    inherits the rule from)."""
    return next(base for base in cls.__mro__ if "backward" in vars(base))


def _functions_in_graph(outputs) -> set:
    """The Function classes of every node reachable from `outputs` (iteratively)."""
    found, seen = set(), set()
    stack = [output.grad_fn for output in outputs if output.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node)._forward_cls is not None:
            found.add(type(node)._forward_cls)
        stack.extend(next_node for next_node, _ in node.next_functions if next_node is not None)
    return found


def _gradient_graph(outputs, leaves) -> list:
    """The input gradients of a create_graph backward, seeded with ones that require grad (so
    the adjoints that use the seed are recorded too)."""
    seeds = [genesis.ones_like(output).requires_grad_() for output in outputs]
    grads = genesis.autograd.grad(outputs, leaves, grad_outputs=seeds, create_graph=True,
                                  allow_unused=True)
    return [grad for grad in grads if grad is not None]


@pytest.fixture(scope="module")
def reached() -> set:
    """The Functions whose backward some node runs in the graphs of the registered ops'
    samples: their forward graphs and, for differentiable ops, their gradients' graphs."""
    classes = set()
    for info in all_ops():
        for sample in info.samples(np.random.default_rng(0)):
            args, kwargs = sample.tensors()
            outputs = outputs_of(info.call(*args, **kwargs))
            classes |= _functions_in_graph(outputs)
            leaves = [arg for arg in args
                      if isinstance(arg, genesis.Tensor) and arg.requires_grad]
            differentiable = [output for output in outputs if output.requires_grad]
            if info.differentiable and leaves and differentiable:
                classes |= _functions_in_graph(_gradient_graph(differentiable, leaves))
    return {_owner_of_backward(cls) for cls in classes}


def test_the_walk_finds_functions_in_every_package():
    functions = set(_functions_with_a_backward())
    assert {"GetItem", "CopySlices", "LinearFunction", "HookIdentity", "Checkpoint"} <= functions
    assert set(NOT_REACHED_BY_AN_OP) <= functions


def test_function_names_are_unique():
    """The allow-list and the failure message name Functions by class name."""
    classes = _defined_functions_with_a_backward()
    assert len(classes) == len({cls.__name__ for cls in classes})


def test_every_function_with_a_backward_is_reached_by_a_registered_op(reached):
    missing = sorted(name for name, cls in _functions_with_a_backward().items()
                     if cls not in reached and name not in NOT_REACHED_BY_AN_OP)
    assert not missing, f"no registered op's samples reach {missing}: add an OpInfo to the OPS " \
                        "of the module that defines the op using it (or, if no op can reach it " \
                        "on the CPU, add it to NOT_REACHED_BY_AN_OP with the reason)"


def test_allow_listed_functions_are_not_reached_by_any_op(reached):
    assert not set(NOT_REACHED_BY_AN_OP) & {cls.__name__ for cls in reached}
