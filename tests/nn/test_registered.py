"""Every Function with a backward in genesis.nn is in the op registry: some registered op's
samples build a graph holding its node, so the registry-driven checks (gradcheck, PyTorch,
the device, `genesis gradcheck --ops`) cover its gradient rule. And nn's Functions are named
apart from its Modules."""
import importlib
import pkgutil
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import genesis
from genesis.ops.registry import all_ops
from genesis_cli.app import app
from tests.helpers import outputs_of

# Functions reachable through no functional op, each with the reason.
NOT_AN_OP = {
    # The identity that Module backward hooks wrap a module's inputs and outputs in; it is
    # reached through Module.register_full_backward_hook, tested in tests/nn/test_hooks.py.
    "HookIdentity",
}


def _nn_modules() -> list:
    return [importlib.import_module(info.name)
            for info in pkgutil.walk_packages(genesis.nn.__path__, "genesis.nn.")]


def _classes_defined_in_nn(base: type) -> dict:
    """name -> class, for the subclasses of `base` that genesis.nn's modules define."""
    return {value.__name__: value for module in _nn_modules() for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, base) and value is not base
            and value.__module__ == module.__name__}


def _functions_with_a_backward() -> dict:
    return {name: cls for name, cls in _classes_defined_in_nn(genesis.autograd.Function).items()
            if "backward" in vars(cls)}


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


@pytest.fixture(scope="module")
def reached() -> set:
    """The Function classes in the graphs of every registered op's samples."""
    reached = set()
    for info in all_ops():
        for sample in info.samples(np.random.default_rng(0)):
            args, kwargs = sample.tensors()
            reached |= _functions_in_graph(outputs_of(info.call(*args, **kwargs)))
    return reached


def test_the_walk_finds_nn_functions():
    functions = _functions_with_a_backward()
    assert {"LinearFunction", "LayerNormFunction", "MseLoss", "HookIdentity"} <= set(functions)
    assert NOT_AN_OP <= set(functions)


def test_every_nn_function_with_a_backward_is_reached_by_a_registered_op(reached):
    missing = sorted(name for name, cls in _functions_with_a_backward().items()
                     if cls not in reached and name not in NOT_AN_OP)
    assert not missing, f"no registered op's samples reach {missing}: add an OpInfo to its " \
                        "module's OPS (or, if no op reaches it, to NOT_AN_OP with the reason)"


def test_allow_listed_functions_are_not_reached_by_any_op(reached):
    assert not NOT_AN_OP & {cls.__name__ for cls in reached}


def test_no_nn_function_is_named_like_a_module():
    modules = set(_classes_defined_in_nn(genesis.nn.Module))
    shared = set(_functions_with_a_backward()) & modules
    assert not shared, "name the Function apart from the Module (LayerNormFunction beside " \
                       "nn.LayerNorm, with node_name = \"LayerNorm\" to keep its nodes' name)"


def test_nn_ops_are_registered_in_their_families():
    families = {info.name: info.family for info in all_ops()}
    assert families["layer_norm"] == "normalization" and families["linear"] == "layers"
    assert families["cross_entropy"] == "class_losses" and families["mse_loss"] == "losses"
    assert families["scaled_dot_product_attention"] == "attention"


def test_gradcheck_command_checks_layer_norm():
    result = CliRunner().invoke(app, ["gradcheck", "--ops", "layer_norm"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert re.search(r"^layer_norm\s+PASS\b", result.output, flags=re.MULTILINE)
    assert "1 op: 1 passed." in result.output
