"""genesis/tensor.pyi declares Tensor as it is after `import genesis`, bound methods included:
tools/make_tensor_stub.py renders it again here and the file must be the same."""
import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUB = ROOT / "genesis" / "tensor.pyi"


def _generator():
    spec = importlib.util.spec_from_file_location("make_tensor_stub", ROOT / "tools" / "make_tensor_stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_stub_is_up_to_date():
    rendered = _generator().render_stub()
    assert STUB.read_text() == rendered, \
        "genesis/tensor.pyi is out of date: run python tools/make_tensor_stub.py"


def test_the_stub_declares_bound_methods_and_parses():
    tree = ast.parse(STUB.read_text())
    tensor = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Tensor")
    methods = {node.name for node in tensor.body if isinstance(node, ast.FunctionDef)}
    assert {"__add__", "exp", "sum", "new_zeros", "backward", "T"} <= methods
