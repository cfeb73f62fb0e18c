"""genesis.nn.utils.prune against torch.nn.utils.prune: the masks each method chooses (and
their combination when a parameter is pruned twice), the parameters, buffers and
state_dict keys, gradients that reach only the kept entries, `remove`, `is_pruned`, and
the errors PyTorch raises."""
import importlib

import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip as _torch_or_skip


def torch_or_skip():
    torch = _torch_or_skip()
    importlib.import_module("torch.nn.utils.prune")  # not imported by torch.nn.utils itself
    return torch


def twins(torch, make):
    """A genesis and a torch module of the same kind with the same weights."""
    mine, theirs = make(genesis), make(torch)
    mine.load_state_dict({k: genesis.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


def same(mine, theirs):
    np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())


@pytest.mark.parametrize("steps", [
    [("l1_unstructured", dict(amount=0.3))],
    [("l1_unstructured", dict(amount=5))],
    [("ln_structured", dict(amount=0.5, n=2, dim=0))],
    [("ln_structured", dict(amount=1, n=1, dim=1)), ("l1_unstructured", dict(amount=0.25))],
    [("l1_unstructured", dict(amount=0.2)), ("ln_structured", dict(amount=0.34, n=float("inf"), dim=0)),
     ("l1_unstructured", dict(amount=3))],
    [("identity", {})],
])
def test_masks_parameters_and_gradients_match_pytorch(steps):
    torch = torch_or_skip()
    mine, theirs = twins(torch, lambda lib: lib.nn.Conv2d(3, 4, 3))
    for name, kwargs in steps:
        getattr(genesis.nn.utils.prune, name)(mine, "weight", **kwargs)
        getattr(torch.nn.utils.prune, name)(theirs, "weight", **kwargs)
        same(mine.weight_mask, theirs.weight_mask)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert genesis.nn.utils.prune.is_pruned(mine) and torch.nn.utils.prune.is_pruned(theirs)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    mine(genesis.tensor(x)).square().sum().backward()
    theirs(torch.tensor(x)).square().sum().backward()
    np.testing.assert_allclose(mine.weight_orig.grad.numpy(), theirs.weight_orig.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert not mine.weight_orig.grad.numpy()[mine.weight_mask.numpy() == 0].any()
    orig = mine.weight_orig
    genesis.nn.utils.prune.remove(mine, "weight")
    torch.nn.utils.prune.remove(theirs, "weight")
    assert mine.weight is orig and isinstance(mine.weight, genesis.nn.Parameter)
    same(mine.weight, theirs.weight)
    assert list(mine.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    assert not genesis.nn.utils.prune.is_pruned(mine)


def test_global_unstructured_and_custom_masks_match_pytorch():
    torch = torch_or_skip()
    mine, theirs = twins(torch, lambda lib: lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.ReLU(), lib.nn.Linear(6, 2)))
    genesis.nn.utils.prune.custom_from_mask(mine[2], "bias", mask=genesis.tensor([1.0, 0.0]))
    torch.nn.utils.prune.custom_from_mask(theirs[2], "bias", mask=torch.tensor([1.0, 0.0]))
    genesis.nn.utils.prune.global_unstructured(
        [(mine[0], "weight"), (mine[2], "weight"), (mine[2], "bias")],
        pruning_method=genesis.nn.utils.prune.L1Unstructured, amount=0.4)
    torch.nn.utils.prune.global_unstructured(
        [(theirs[0], "weight"), (theirs[2], "weight"), (theirs[2], "bias")],
        pruning_method=torch.nn.utils.prune.L1Unstructured, amount=0.4)
    for index, name in ((0, "weight"), (2, "weight"), (2, "bias")):
        same(getattr(mine[index], name + "_mask"), getattr(theirs[index], name + "_mask"))
        same(getattr(mine[index], name), getattr(theirs[index], name))
    hook = mine[2]._prune_hooks["bias"][0]
    assert isinstance(hook, genesis.nn.utils.prune.PruningContainer) and len(hook) == 2


def test_refuses_what_pytorch_refuses():
    torch = torch_or_skip()
    orders = []
    for lib in (genesis, torch):
        prune = lib.nn.utils.prune
        with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
            prune.remove(lib.nn.Linear(2, 2), "weight")
        with pytest.raises(ValueError, match="should either be a float in the range"):
            prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=1.5)
        with pytest.raises(TypeError, match="Invalid type for amount"):
            prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount="half")
        with pytest.raises(ValueError, match="should be smaller than the number of parameters"):
            prune.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=5)
        with pytest.raises(ValueError, match="Structured pruning can only be applied"):
            prune.ln_structured(lib.nn.Linear(2, 2), "bias", amount=0.5, n=2, dim=0)
        layer = lib.nn.Linear(2, 2)
        with pytest.raises(ValueError):
            prune.l1_unstructured(layer, "weight", amount=5)
        orders.append([n for n, _ in layer.named_parameters()])  # restored, re-registered last
    assert orders[0] == orders[1] == ["bias", "weight"]
