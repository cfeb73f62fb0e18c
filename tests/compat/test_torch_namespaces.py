"""torch.xpu, torch.cpu, torch.version and torch.hub as genesis serves them, against PyTorch's."""
import importlib.util

import pytest

from genesis.compat import serve_torch, torch_cpu, torch_hub, torch_version, torch_xpu
from tests.helpers import torch_or_skip


def test_xpu_answers_as_a_pytorch_built_without_one():
    torch = torch_or_skip()
    if torch.xpu.is_available():
        pytest.skip("this PyTorch has an XPU")
    for name in ("is_available", "device_count", "is_initialized"):
        assert getattr(torch_xpu, name)() == getattr(torch.xpu, name)(), name
    for name in ("manual_seed", "manual_seed_all"):
        assert getattr(torch_xpu, name)(3) is None and getattr(torch.xpu, name)(3) is None
    assert torch_xpu.empty_cache() is None and torch.xpu.empty_cache() is None
    for name in ("synchronize", "current_device", "get_device_name"):
        with pytest.raises(AssertionError, match="not compiled with XPU"):
            getattr(torch.xpu, name)()
        with pytest.raises(AssertionError, match="not compiled with XPU"):
            getattr(torch_xpu, name)()


def test_cpu_answers_as_pytorchs_and_its_amp_is_cpu_autocast():
    torch = torch_or_skip()
    for name in ("is_available", "device_count", "current_device", "synchronize"):
        assert getattr(torch_cpu, name)() == getattr(torch.cpu, name)(), name
    with serve_torch():
        import torch as served
        from torch.cpu.amp import autocast

        layer = served.nn.Linear(2, 3)
        with autocast():
            assert layer(served.ones(1, 2)).dtype == served.bfloat16
        with served.cpu.amp.autocast(enabled=False):
            assert layer(served.ones(1, 2)).dtype == served.float32
        assert served.cpu.amp.GradScaler(enabled=False).get_scale() == 1.0


def test_version_module_names_pytorchs_fields():
    torch = torch_or_skip()
    assert torch_version.__version__.split("+")[0] == torch.__version__.split("+")[0]
    for name in ("hip", "rocm", "xpu", "debug"):
        assert getattr(torch_version, name) == getattr(torch.version, name), name
    if importlib.util.find_spec("cupy") is None:
        assert torch_version.cuda is None
    with pytest.raises(AttributeError):
        torch_version.no_such_field  # noqa: B018


def test_version_and_xpu_and_hub_are_served_as_torch_modules():
    with serve_torch():
        import torch
        import torch.hub
        from torch.hub import tqdm
        assert torch.version.__version__ == torch.__version__
        assert torch.version.debug is False
        assert torch.xpu.is_available() is False and torch.xpu.device_count() == 0
        assert tqdm is torch_hub.tqdm and torch.hub.get_dir() == torch_hub.get_dir()


@pytest.mark.parametrize("env", [{}, {"TORCH_HOME": "/tmp/th"}, {"XDG_CACHE_HOME": "/tmp/xdg"},
                                 {"TORCH_HOME": "~/th", "XDG_CACHE_HOME": "/tmp/xdg"}])
def test_hub_dir_follows_pytorchs_environment_rule(env, monkeypatch):
    torch = torch_or_skip()
    for name in ("TORCH_HOME", "XDG_CACHE_HOME", "TORCH_HUB"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert torch_hub.get_dir() == torch.hub.get_dir()


def test_hub_set_dir_expands_the_home_folder(monkeypatch):
    torch = torch_or_skip()
    monkeypatch.setattr(torch_hub, "_hub_dir", None)
    before = torch.hub.get_dir()
    try:
        torch_hub.set_dir("~/models")
        torch.hub.set_dir("~/models")
        assert torch_hub.get_dir() == torch.hub.get_dir()
    finally:
        torch.hub.set_dir(before)


@pytest.mark.skipif(importlib.util.find_spec("tqdm") is not None, reason="tqdm is installed")
def test_hub_tqdm_without_tqdm_counts_bytes_as_pytorchs_fallback(capsys):
    torch = torch_or_skip()
    written = []
    for progress_type in (torch_hub.tqdm, torch.hub.tqdm):
        with progress_type(total=200) as progress:
            progress.update(50)
            progress.set_description("ignored")
        with progress_type() as counter:
            counter.update(3)
            counter.write("note")
        closed = progress_type(total=4)
        closed.close()
        closed.update(1)
        with pytest.raises(TypeError):
            iter(progress_type(total=3))
        written.append(capsys.readouterr().err)
    assert written[0] == written[1] == "\r25.0%\n\r3.0 bytesnote\n\n"


def test_multiprocessing_is_served_with_tensor_sharing():
    import multiprocessing

    import genesis
    with serve_torch():
        import torch
        import torch.multiprocessing as mp
        assert mp.Process is multiprocessing.Process and mp.cpu_count() == multiprocessing.cpu_count()
        assert mp.spawn is genesis.multiprocessing.spawn
        model = torch.nn.Linear(2, 1)
        assert model.share_memory() is model and model.weight.is_shared()


def test_the_data_optim_and_variable_submodules_scripts_import_from():
    import genesis
    with serve_torch():
        from torch.autograd.variable import Variable
        from torch.optim.adam import Adam
        from torch.optim.adamw import AdamW
        from torch.optim.sgd import SGD
        from torch.utils.data.dataloader import DataLoader, default_collate
        from torch.utils.data.dataset import Dataset, TensorDataset
        from torch.utils.data.sampler import Sampler, SubsetRandomSampler
    assert (Adam, AdamW, SGD) == (genesis.optim.Adam, genesis.optim.AdamW, genesis.optim.SGD)
    assert Variable is genesis.autograd.Variable and DataLoader is genesis.utils.data.DataLoader
    assert default_collate is genesis.utils.data.default_collate
    assert (Dataset, TensorDataset) == (genesis.utils.data.Dataset, genesis.utils.data.TensorDataset)
    assert (Sampler, SubsetRandomSampler) == (genesis.utils.data.Sampler,
                                              genesis.utils.data.SubsetRandomSampler)


def test_the_scan_counts_a_genesis_module_that_is_no_served_torch_module_as_missing():
    from genesis.compat.scan import missing
    assert missing("torch.utils.data.sampler") is None
    assert missing("torch.nn.modules.utils") == "torch.nn.modules.utils"  # genesis.nn.utils is another thing
