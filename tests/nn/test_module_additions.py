"""nn.Buffer, SyncBatchNorm (+ convert_sync_batchnorm), the deprecated Container and
NLLLoss2d, and the RNNBase/RNNCellBase base classes, against PyTorch."""
import warnings

import numpy as np
import pytest

import genesis
from genesis import nn
from tests.helpers import torch_or_skip


def test_buffer_attribute_registers_a_buffer_as_pytorch():
    torch = torch_or_skip()
    for library, tensor in ((nn, genesis.ones), (torch.nn, torch.ones)):
        model = library.Module()
        model.kept = library.Buffer(tensor(2))
        model.scratch = library.Buffer(tensor(3), persistent=False)
        assert [name for name, _ in model.named_buffers()] == ["kept", "scratch"]
        assert list(model.state_dict()) == ["kept"] and list(model.parameters()) == []
        model.kept = tensor(4)  # a plain tensor replaces a registered buffer
        assert tuple(model.kept.shape) == (4,) and list(model.state_dict()) == ["kept"]
        model.other = 5
        with pytest.raises(KeyError):
            model.other = library.Buffer(tensor(1))


def test_buffer_shares_storage_and_keeps_requires_grad():
    data = genesis.zeros(3, requires_grad=True)
    buffer = nn.Buffer(data)
    assert buffer.requires_grad and buffer._data is data._data
    assert nn.Buffer().shape == (0,)
    with pytest.raises(TypeError):
        nn.Buffer([1.0, 2.0])


def test_sync_batch_norm_is_batch_norm_on_one_process():
    torch = torch_or_skip()
    data = np.random.default_rng(0).standard_normal((4, 3, 2, 2, 2, 2))
    mine = nn.SyncBatchNorm(3, dtype=genesis.float64)
    theirs = torch.nn.SyncBatchNorm(3, dtype=torch.float64)
    x = genesis.tensor(data, dtype=genesis.float64, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    for _ in range(2):  # training batches, then evaluation with the running statistics
        np.testing.assert_allclose(mine(x).detach().numpy(), theirs(tx).detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(mine.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-12)
    mine(x).sum().backward()
    theirs(tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    mine.eval()
    theirs.eval()
    np.testing.assert_allclose(mine(x).detach().numpy(), theirs(tx).detach().numpy(), atol=1e-12)
    assert repr(mine) == repr(theirs)
    with pytest.raises(ValueError):
        mine(genesis.ones(3))


def test_convert_sync_batchnorm_keeps_parameters_buffers_and_mode():
    model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm1d(5)))
    model[2].eval()
    weight, running_mean = model[1].weight, model[1].running_mean
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert converted is model and type(model[1]) is nn.SyncBatchNorm
    assert model[1].weight is weight and model[1].running_mean is running_mean
    assert type(model[2][0]) is nn.SyncBatchNorm and not model[2][0].training
    assert type(nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(3))) is nn.SyncBatchNorm


def test_deprecated_container_and_nll_loss_2d_warn_and_work():
    torch = torch_or_skip()
    with pytest.warns(FutureWarning):
        container = nn.Container(head=nn.Linear(2, 2))
    assert [name for name, _ in container.named_children()] == ["head"]
    probabilities = np.random.default_rng(1).dirichlet(np.ones(3), size=(2, 4, 5))
    log_probs = np.log(probabilities).transpose(0, 3, 1, 2)
    target = np.random.default_rng(2).integers(0, 3, size=(2, 4, 5))
    with pytest.warns(FutureWarning):
        mine = nn.NLLLoss2d(size_average=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.NLLLoss2d(size_average=False)
    assert mine.reduction == theirs.reduction == "sum"
    loss = mine(genesis.tensor(log_probs, dtype=genesis.float64), genesis.tensor(target))
    np.testing.assert_allclose(loss.item(), theirs(torch.tensor(log_probs), torch.tensor(target)).item())


def test_recurrent_layers_share_the_pytorch_base_classes():
    assert all(isinstance(layer, nn.RNNBase) for layer in (nn.RNN(2, 3), nn.LSTM(2, 3), nn.GRU(2, 3)))
    assert all(isinstance(cell, nn.RNNCellBase)
               for cell in (nn.RNNCell(2, 3), nn.LSTMCell(2, 3), nn.GRUCell(2, 3)))
