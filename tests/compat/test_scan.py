"""The static scan behind `genesis compat`: which torch names a script uses, and which of
them genesis lacks."""
import pytest

from genesis.compat.scan import ScanError, missing, torch_uses

SCRIPT = '''\
import os
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam, lr_scheduler as schedules
from torch.utils.data import DataLoader


class Net(nn.Module):
    def forward(self, x):
        return F.relu(x).sum(dim=1)


def train(model):
    if torch.cuda.is_available():
        model = model.cuda()
    optimizer = Adam(model.parameters())
    scheduler = schedules.StepLR(optimizer, 1)
    spectrum = torch.fft.rfft(torch.randn(8))
    return os.path.join("a", "b"), torch.randn(3).topk(2)
'''


def names(source):
    return [use.name for use in torch_uses(source, "train.py")]


def test_imports_and_chains_through_their_names_are_found_in_order():
    found = names(SCRIPT)
    assert found == ["torch", "torch.nn", "torch.nn.functional", "torch.optim",
                     "torch.optim.Adam", "torch.optim.lr_scheduler", "torch.utils.data",
                     "torch.utils.data.DataLoader", "torch.nn.Module",
                     "torch.nn.functional.relu", "torch.cuda.is_available",
                     "torch.optim.lr_scheduler.StepLR", "torch.fft.rfft", "torch.randn",
                     "torch.randn"]


def test_names_not_reached_through_torch_are_not_torchs():
    found = names(SCRIPT)
    assert not any("os" in name or "topk" in name or "cuda()" in name for name in found)
    assert names("import numpy as np\nnp.zeros(3)\n") == []
    assert names("torch = None\ntorch.vmap\n") == []  # never imported: not torch


def test_each_chain_counts_once_at_its_full_length():
    assert names("import torch\ntorch.nn.functional.relu(torch.ones(2))\n") == [
        "torch", "torch.nn.functional.relu", "torch.ones"]


def test_lines_are_the_uses_lines():
    uses = torch_uses("import torch\n\n\nx = torch.zeros(2)\n", "a.py")
    assert [(use.file, use.line) for use in uses] == [("a.py", 1), ("a.py", 4)]


@pytest.mark.parametrize("name, lacking", [
    ("torch.nn.Linear", None), ("torch.optim.lr_scheduler.StepLR", None),
    ("torch.backends.cudnn.benchmark", None), ("torch.__version__", None),
    ("torch.nn.Module.zero_grad", None),
    ("torch.fft.rfft", "torch.fft"), ("torch.fx", "torch.fx"), ("torch.distributed.all_reduce", None),
    ("torch.sparse_coo_tensor", "torch.sparse_coo_tensor"), ("torch.onnx.export", "torch.onnx.export"),
    ("torch.nn.Module.no_such_method", "torch.nn.Module.no_such_method"),
])
def test_missing_names_the_first_part_genesis_lacks(name, lacking):
    assert missing(name) == lacking


@pytest.mark.parametrize("name", ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
                                  "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"])
def test_every_name_of_torch_optim_swa_utils_is_served(name):
    assert missing("torch.optim.swa_utils") is None
    assert missing(f"torch.optim.swa_utils.{name}") is None


def test_a_script_that_does_not_parse_is_named_with_its_line():
    with pytest.raises(ScanError, match=r"^broken.py:2: does not parse"):
        torch_uses("import torch\ndef f(:\n", "broken.py")
