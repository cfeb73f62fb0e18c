"""swa_utils on "cuda": AveragedModel's default rule there is the multi-tensor in-place one
(PyTorch's CUDA branch), the EMA rules and update_bn run on the device, and each averages to
what the same model averages to on the CPU."""
import numpy as np
import pytest

import genesis
from genesis import nn
from genesis.optim import swa_utils


def _model(device):
    genesis.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2)).to(device)


def _averaged_after_updates(device, **rule) -> dict:
    model = _model(device)
    # (parameters only: with use_buffers=True PyTorch's CUDA rule refuses BatchNorm's integer
    # num_batches_tracked, an integer addcdiv_, and genesis does as PyTorch does)
    averaged = swa_utils.AveragedModel(model, **rule)
    rng = np.random.default_rng(1)
    for _ in range(4):
        with genesis.no_grad():
            for parameter in model.parameters():
                parameter.copy_(genesis.tensor(rng.standard_normal(tuple(parameter.shape)),
                                               dtype=genesis.float32, device=device))
        model(genesis.tensor(rng.standard_normal((8, 3)), dtype=genesis.float32, device=device))
        averaged.update_parameters(model)
    return {name: value.detach().cpu().numpy() for name, value in averaged.state_dict().items()}


@pytest.mark.parametrize("rule", ["swa", "ema", "ema multi-tensor"])
def test_averaged_model_averages_on_the_device_as_on_the_cpu(cuda, rule):
    rules = {"swa": {}, "ema": {"avg_fn": swa_utils.get_ema_avg_fn(0.9)},
             "ema multi-tensor": {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.9)}}[rule]
    on_device, on_cpu = _averaged_after_updates(cuda, **rules), _averaged_after_updates("cpu", **rules)
    assert on_device.keys() == on_cpu.keys()
    for name in on_cpu:
        np.testing.assert_allclose(on_device[name], on_cpu[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert int(on_device["n_averaged"]) == 4


def test_update_bn_moves_the_batches_to_the_device_and_recomputes_the_statistics(cuda):
    model = _model(cuda)
    rng = np.random.default_rng(2)
    batches = [genesis.tensor(rng.standard_normal((8, 3)) * 3 + 1, dtype=genesis.float32)
               for _ in range(3)]  # on the CPU: update_bn moves each to `device`
    swa_utils.update_bn(batches, model, device=cuda)
    norm = model[1]
    assert norm.running_mean.device.type == "cuda"
    # momentum None while it runs: the running figures are the batches' figures averaged
    features = [model[0](batch.to(cuda)).detach().cpu().numpy() for batch in batches]
    np.testing.assert_allclose(norm.running_mean.cpu().numpy(),
                               np.mean([batch.mean(0) for batch in features], 0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(norm.running_var.cpu().numpy(),
                               np.mean([batch.var(0, ddof=1) for batch in features], 0), rtol=1e-4, atol=1e-5)
    assert norm.momentum == 0.1  # put back
