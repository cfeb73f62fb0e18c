"""LayerNorm, RMSNorm, GroupNorm and BatchNorm against PyTorch: values, gradients, running stats."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.autograd import gradcheck, gradgradcheck
from tests.helpers import torch_or_skip


def _copy_parameters(ours, theirs, torch):
    with torch.no_grad():
        for (name, mine), (_, reference) in zip(ours.named_parameters(), theirs.named_parameters()):
            values = np.random.default_rng(len(name)).uniform(0.5, 1.5, mine.shape)
            mine.data = genesis.from_numpy(values)
            reference.copy_(torch.from_numpy(values))


def _run_both(torch, ours, theirs, array):
    x = genesis.from_numpy(array.copy()).requires_grad_()
    reference_x = torch.from_numpy(array.copy()).requires_grad_()
    out, reference = ours(x), theirs(reference_x)
    np.testing.assert_allclose(out.detach().numpy(), reference.detach().numpy(), rtol=1e-9, atol=1e-10)
    weights = np.random.default_rng(2).standard_normal(out.shape)
    out.backward(genesis.from_numpy(weights))
    reference.backward(torch.from_numpy(weights))
    np.testing.assert_allclose(x.grad.numpy(), reference_x.grad.numpy(), rtol=1e-8, atol=1e-10)
    for (name, mine), (_, their) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(mine.grad.numpy(), their.grad.numpy(), rtol=1e-8, atol=1e-10,
                                   err_msg=name)


@pytest.mark.parametrize("name, args, kwargs, shape", [
    ("LayerNorm", (5,), {}, (3, 5)),
    ("LayerNorm", ((4, 5),), {"eps": 1e-3}, (2, 3, 4, 5)),
    ("LayerNorm", (5,), {"elementwise_affine": False}, (3, 5)),
    ("LayerNorm", (5,), {"bias": False}, (3, 5)),
    ("RMSNorm", (5,), {}, (3, 5)),
    ("RMSNorm", ((2, 5),), {"eps": 1e-4}, (3, 2, 5)),
    ("GroupNorm", (2, 6), {}, (3, 6, 4)),
    ("GroupNorm", (3, 6), {"affine": False}, (2, 6)),
    ("GroupNorm", (3, 6), {"bias": False}, (2, 6, 2)),
])
def test_norm_layers_match_pytorch(name, args, kwargs, shape):
    torch = torch_or_skip()
    ours = getattr(nn, name)(*args, **kwargs, dtype=genesis.float64)
    theirs = getattr(torch.nn, name)(*args, **kwargs, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    _copy_parameters(ours, theirs, torch)
    _run_both(torch, ours, theirs, np.random.default_rng(0).standard_normal(shape) * 3 + 1)


@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)),
                                         ("BatchNorm2d", (2, 3, 4, 4)), ("BatchNorm3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_matches_pytorch_in_training_and_eval(name, shape, momentum):
    torch = torch_or_skip()
    ours = getattr(nn, name)(3, momentum=momentum, dtype=genesis.float64)
    theirs = getattr(torch.nn, name)(3, momentum=momentum, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    _copy_parameters(ours, theirs, torch)
    rng = np.random.default_rng(0)
    for _ in range(3):
        for mine in ours.parameters():
            mine.grad = None
        theirs.zero_grad()
        _run_both(torch, ours, theirs, rng.standard_normal(shape) * 2 + 0.5)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-12, err_msg=key)
    ours.eval()
    theirs.eval()
    _run_both(torch, ours, theirs, rng.standard_normal(shape))


def test_batch_norm_without_running_stats_always_uses_the_batch():
    torch = torch_or_skip()
    ours = nn.BatchNorm1d(3, track_running_stats=False, affine=False, dtype=genesis.float64).eval()
    theirs = torch.nn.BatchNorm1d(3, track_running_stats=False, affine=False, dtype=torch.float64).eval()
    _run_both(torch, ours, theirs, np.random.default_rng(0).standard_normal((5, 3)))
    assert list(ours.state_dict()) == []


def test_functional_norms_pass_gradcheck_and_gradgradcheck(rng):
    x = genesis.from_numpy(rng.standard_normal((3, 4))).requires_grad_()
    weight = genesis.from_numpy(rng.standard_normal(4)).requires_grad_()
    bias = genesis.from_numpy(rng.standard_normal(4)).requires_grad_()
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, weight, bias), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(lambda x, w: F.rms_norm(x, (4,), w, 1e-6), (x, weight), atol=1e-6, rtol=1e-5)
    running_mean, running_var = genesis.zeros(4, dtype=genesis.float64), genesis.ones(4, dtype=genesis.float64)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, weight, bias),
                     atol=1e-6, rtol=1e-5)
    assert gradcheck(lambda x: F.batch_norm(x, running_mean, running_var, training=False), (x,),
                     atol=1e-6, rtol=1e-5)


def test_errors_name_shapes():
    with pytest.raises(RuntimeError, match=r"normalized_shape \(3,\) must match the last dimensions"):
        F.layer_norm(genesis.ones(2, 4), (3,))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input"):
        nn.BatchNorm2d(3)(genesis.ones(2, 3, 4))
    with pytest.raises(ValueError, match="got an input with 2 channels"):
        nn.BatchNorm1d(3)(genesis.ones(4, 2))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(genesis.ones(1, 3))
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(4, 6)


def test_batch_norm_state_dict_and_reset():
    norm = nn.BatchNorm2d(2)
    assert list(norm.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    norm(genesis.randn(4, 2, 3, 3))
    assert norm.num_batches_tracked.item() == 1 and norm.running_var.tolist() != [1.0, 1.0]
    norm.reset_running_stats()
    assert norm.num_batches_tracked.item() == 0 and norm.running_var.tolist() == [1.0, 1.0]
    norm.half()
    assert norm.running_mean.dtype == genesis.float16 and norm.num_batches_tracked.dtype == genesis.int64
