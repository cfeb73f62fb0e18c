"""`serve_torch()`: `import torch` and its modules served by genesis for one run, and the
clear errors for what genesis lacks."""
import sys

import pytest

import genesis
from genesis.compat import (UnsupportedTorchAPI, UnsupportedTorchImport, UnsupportedTorchModule,
                            is_served, serve_torch)


def test_torch_and_its_modules_are_genesis_while_served():
    with serve_torch():
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.optim.lr_scheduler import StepLR
        from torch.optim.swa_utils import AveragedModel
        from torch.utils.checkpoint import checkpoint

        assert is_served(torch) and is_served(nn)
        assert nn.Linear is genesis.nn.Linear and F.cross_entropy is genesis.nn.functional.cross_entropy
        assert StepLR is genesis.optim.lr_scheduler.StepLR
        assert AveragedModel is genesis.optim.swa_utils.AveragedModel
        assert torch.optim.swa_utils.SWALR is genesis.optim.swa_utils.SWALR
        assert checkpoint is genesis.utils.checkpoint.checkpoint
        assert torch.Tensor is genesis.Tensor and torch.float32 is genesis.float32
        assert torch.nn is nn and torch.nn.functional is F  # the same stand-ins by attribute
        x = torch.randn(3, 4, requires_grad=True)
        (x * 2).sum().backward()
        assert isinstance(x.grad, torch.Tensor) and x.grad.tolist()[0] == [2.0] * 4


def test_the_real_torch_comes_back_afterwards():
    real = pytest.importorskip("torch", reason="PyTorch is not installed")
    with serve_torch():
        import torch as served
        assert served is not real
    import torch
    assert torch is real and sys.modules["torch"] is real


def test_version_parses_and_says_genesis():
    with serve_torch():
        import torch
        version = torch.__version__
    assert version.startswith("2.") and "+genesis" in version
    major, minor = (int(part) for part in version.split("+")[0].split(".")[:2])
    assert (major, minor) >= (2, 0)


def test_a_missing_name_is_one_clear_line_that_names_it_and_where(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\n\nmodel = torch.sparse_coo_tensor(None)\n")
    with serve_torch(), pytest.raises(UnsupportedTorchAPI) as info:
        exec(compile(script.read_text(), str(script), "exec"), {"__name__": "__main__"})
    message = str(info.value)
    assert message.startswith("torch.sparse_coo_tensor is not supported by genesis yet (used at ")
    assert f"{script.name}:3)" in message and "\n" not in message
    assert info.value.torch_name == "torch.sparse_coo_tensor"


def test_feature_tests_see_a_torch_without_the_feature():
    with serve_torch():
        import torch
        assert not hasattr(torch, "sparse_coo_tensor")
        assert getattr(torch.backends, "mps", None) is not None
        assert not torch.backends.mps.is_available()
        with pytest.raises(ImportError):
            import torch.fx  # noqa: F401
        try:
            import torch.fx  # noqa: F401,F811
            fx = True
        except ImportError:
            fx = False
        assert not fx


def test_a_missing_module_names_itself_and_the_import_line():
    with serve_torch(), pytest.raises(UnsupportedTorchModule) as info:
        import torch.fft  # noqa: F401
    assert str(info.value).startswith("torch.fft is not supported by genesis yet (used at ")
    assert "test_stand_in.py:" in str(info.value)
    assert isinstance(info.value, ModuleNotFoundError)


def test_a_missing_name_taken_by_from_import_names_itself_and_stays_an_import_error(tmp_path):
    """`from torch import sparse_coo_tensor`: Python turned the stand-in's error into its
    own 'cannot import name', which named neither genesis nor the line; an `except
    ImportError` fallback still runs."""
    script = tmp_path / "train.py"
    script.write_text("import torch\ntry:\n    from torch import sparse_coo_tensor\n"
                      "except ImportError:\n    fallback = True\n"
                      "from torch.nn import Linear\nfrom torch import sparse_coo_tensor\n")
    namespace = {"__name__": "__main__"}
    with serve_torch(), pytest.raises(UnsupportedTorchImport) as info:
        exec(compile(script.read_text(), str(script), "exec"), namespace)
    assert namespace["fallback"] and namespace["Linear"] is genesis.nn.Linear
    assert str(info.value).startswith("torch.sparse_coo_tensor is not supported by genesis yet "
                                      f"(used at {script}:7)")
    assert isinstance(info.value, ImportError) and info.value.torch_name == "torch.sparse_coo_tensor"


def test_modules_that_import_fine_but_offer_nothing_yet_fail_at_use():
    with serve_torch():
        import torch.onnx
        with pytest.raises(UnsupportedTorchAPI, match=r"^torch\.onnx\.export is not supported"):
            torch.onnx.export(None, None, "model.onnx")


def test_cudnn_switches_are_accepted():
    with serve_torch():
        import torch.backends.cudnn as cudnn
        cudnn.benchmark = True
        cudnn.deterministic = True
        assert cudnn.benchmark and not cudnn.is_available()


def test_dunder_probes_are_plain_attribute_errors():
    with serve_torch():
        import copy

        import torch
        with pytest.raises(AttributeError) as info:
            torch.__wrapped__  # noqa: B018
        assert not isinstance(info.value, UnsupportedTorchAPI)
        assert copy.copy(torch.nn.Linear(2, 3)).weight.shape == (3, 2)


def test_dir_lists_genesis_names_and_submodules():
    with serve_torch():
        import torch
        names = dir(torch)
    assert {"randn", "nn", "optim", "backends", "cuda"} <= set(names)


def test_star_imports_take_the_names_genesis_exports():
    """`from torch.utils.data import *` brought in nothing (a NameError at `Dataset`)."""
    with serve_torch():
        namespace = {}
        exec("from torch.utils.data import *\nfrom torch.nn import *\nfrom torch import *",
             namespace)
    assert namespace["Dataset"] is genesis.utils.data.Dataset
    assert namespace["DataLoader"] is genesis.utils.data.DataLoader
    assert namespace["Linear"] is genesis.nn.Linear
    assert namespace["tensor"] is genesis.compat.torch_tensor.tensor  # PyTorch's dtypes for NumPy data


def test_one_device_parallel_and_accelerator():
    with serve_torch():
        import torch
        model = torch.nn.DataParallel(torch.nn.Linear(2, 3))
        assert isinstance(model.module, torch.nn.Linear)
        assert sorted(model.state_dict()) == ["module.bias", "module.weight"]
        assert model(torch.ones(4, 2)).shape == (4, 3)
        assert torch.nn.parallel.DataParallel is torch.nn.DataParallel
        if not torch.cuda.is_available():
            assert torch.accelerator.current_accelerator() is None
            assert not torch.accelerator.is_available() and torch.accelerator.device_count() == 0
        assert torch.nn.parallel.DistributedDataParallel is genesis.nn.parallel.DistributedDataParallel
        with pytest.raises(UnsupportedTorchAPI, match="torch.nn.parallel.replicate"):
            torch.nn.parallel.replicate  # noqa: B018
        assert torch.testing.assert_close(torch.ones(1), torch.ones(1)) is None


def test_every_served_module_imports_and_names_its_torch_counterparts():
    from genesis.compat.torch_modules import MODULES
    with serve_torch():
        import importlib
        for name in MODULES:
            assert is_served(importlib.import_module(name)), name
        from torch.nn.modules.batchnorm import _BatchNorm
        from torch.nn.modules.loss import _Loss, _WeightedLoss

        class FocalLoss(_WeightedLoss):  # how programs write their own losses
            def __init__(self, weight=None, gamma=2.0):
                super().__init__(weight, reduction="mean")
                self.gamma = gamma

        assert FocalLoss(genesis.ones(3)).weight.shape == (3,) and issubclass(FocalLoss, _Loss)
        assert issubclass(genesis.nn.BatchNorm2d, _BatchNorm)


def test_compile_and_jit_leave_eager_code_as_it_is():
    with serve_torch():
        import torch
        model = torch.nn.Linear(2, 1)
        assert torch.compile(model) is model and torch.jit.script(model) is model

        @torch.compile(mode="reduce-overhead")
        def double(x):
            return x * 2

        @torch.jit.ignore
        def helper(x):
            return x

        assert double(torch.tensor(3.0)).item() == 6.0 and helper(1) == 1
        assert torch.jit.trace(model, torch.ones(1, 2)) is model and not torch.jit.is_scripting()
        forward = model.forward
        assert model.compile(backend="eager") is None and model.forward == forward


def test_dtypes_print_as_torchs_while_genesis_serves_torch():
    """A script that logs or compares `str(x.dtype)` sees "torch.float32", as under PyTorch."""
    with serve_torch():
        import torch

        x = torch.ones(2, dtype=torch.float64)
        assert str(x.dtype) == "torch.float64" and repr(torch.float32) == "torch.float32"
        assert "dtype=torch.float64" in repr(x)
    assert repr(genesis.float32) == "genesis.float32"  # put back afterwards


def test_sizes_print_as_torchs_while_genesis_serves_torch():
    """`print(x.shape)` shows "torch.Size([2, 3])", as under PyTorch."""
    with serve_torch():
        import torch

        x = torch.ones(2, 3)
        assert isinstance(x.shape, torch.Size) and str(x.shape) == "torch.Size([2, 3])"
        assert repr(x.size()[1:]) == "torch.Size([3])"
    assert repr(genesis.ones(2, 3).shape) == "genesis.Size([2, 3])"  # put back afterwards


NUMPY_DATA = {  # what torch.tensor is given -> PyTorch's dtype for it (2.13)
    "float64 array": (lambda np: np.array([1.0, 2.0]), "float64"),
    "float64 0-d array": (lambda np: np.array(1.5), "float64"),
    "float64 scalar": (lambda np: np.float64(1.0), "float64"),
    "float16 array": (lambda np: np.ones(2, dtype=np.float16), "float16"),
    "int16 array": (lambda np: np.array([1, 2], dtype=np.int16), "int16"),
    "bool array": (lambda np: np.array([True]), "bool"),
    "float64 scalar in a list of floats": (lambda np: [np.float64(1.0), 2.0], "float64"),
    "nested": (lambda np: [[np.float64(1.0)], [2.0]], "float64"),
    "float32 and float64 scalars": (lambda np: [np.float32(1.0), np.float64(2.0)], "float64"),
    "int64 scalar and a float": (lambda np: [np.int64(1), 2.5], "float32"),
    "float16 scalar and a float": (lambda np: [np.float16(1.0), 2.5], "float32"),
    "uint8 and int8 scalars": (lambda np: [np.uint8(1), np.int8(1)], "int16"),
    "no NumPy value": (lambda np: [1.0, 2.0], "float32"),
}


@pytest.mark.parametrize("case", NUMPY_DATA)
def test_torch_tensor_keeps_numpy_dtypes_as_pytorch_does(case):
    """`torch.tensor(numpy data)` is PyTorch's dtype under genesis (genesis.tensor itself gives
    a float64 array the default float32, as the Genesis specification asks)."""
    import numpy as np
    make, expected = NUMPY_DATA[case]
    real = sys.modules.get("torch")
    if real is not None and not is_served(real):
        assert str(real.tensor(make(np)).dtype) == f"torch.{expected}"
    with serve_torch():
        import torch
        made = torch.tensor(make(np), requires_grad=expected.startswith("float"))
        assert made.dtype is getattr(genesis, expected)
    assert genesis.tensor(np.array([1.0])).dtype is genesis.float32


def _report_torch(answers):
    import torch
    answers.put((is_served(torch), torch.zeros(2).tolist()))


def test_processes_spawned_while_serving_are_served_torch_too():
    import multiprocessing
    context = multiprocessing.get_context("spawn")
    answers = context.SimpleQueue()
    with serve_torch():
        child = context.Process(target=_report_torch, args=(answers,))
        child.start()
        child.join(120)
    assert child.exitcode == 0 and answers.get() == (True, [0.0, 0.0])
    assert not any("genesis-served-torch" in entry for entry in sys.path)  # put back


def test_serving_torch_works_where_the_temp_folder_cannot_be_written(monkeypatch):
    """A read-only or full temp folder only leaves spawned children without the stand-in:
    the script's own `import torch` is served as ever."""
    from genesis.compat import stand_in

    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(stand_in, "_child_folder", [])
    monkeypatch.setattr(stand_in.tempfile, "mkdtemp", refuse)
    paths_before = list(sys.path)
    with serve_torch():
        import torch
        assert is_served(torch) and torch.ones(2).tolist() == [1.0, 1.0]
    assert sys.path == paths_before
