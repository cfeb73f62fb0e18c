"""nn's ops in the op registry: registered in their families and checked from the command
line; and nn's Functions are named apart from its Modules. (That every Function with a backward
is reached by some registered op is tests/test_registered_ops.py.)"""
import importlib
import pkgutil
import re

from typer.testing import CliRunner

import genesis
from genesis.ops.registry import all_ops
from genesis_cli.app import app


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
