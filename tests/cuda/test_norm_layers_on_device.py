"""Layer, RMS, batch and group norm on "cuda" (fused kernels there, in-place array code on the
CPU): outputs, every gradient, running statistics and second derivatives equal the CPU's."""
import numpy as np
import pytest

import genesis
from genesis import nn

LAYERS = {
    "LayerNorm": (lambda: nn.LayerNorm(6), (4, 3, 6)),
    "LayerNorm, two dims": (lambda: nn.LayerNorm((3, 6)), (4, 3, 6)),
    "LayerNorm, no affine": (lambda: nn.LayerNorm(6, elementwise_affine=False), (4, 6)),
    "LayerNorm, no bias": (lambda: nn.LayerNorm(6, bias=False), (4, 6)),
    "LayerNorm, whole input": (lambda: nn.LayerNorm((4, 6)), (4, 6)),
    "RMSNorm": (lambda: nn.RMSNorm(6), (4, 3, 6)),
    "RMSNorm, no affine": (lambda: nn.RMSNorm((3, 6), elementwise_affine=False), (4, 3, 6)),
    "BatchNorm1d": (lambda: nn.BatchNorm1d(5), (8, 5)),
    "BatchNorm2d": (lambda: nn.BatchNorm2d(3), (4, 3, 2, 5)),
    "BatchNorm2d, no affine": (lambda: nn.BatchNorm2d(3, affine=False), (4, 3, 2, 2)),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), (3, 4, 5)),
}


def _run(make, shape, device, create_graph=False):
    genesis.manual_seed(0)
    layer = make().double()
    for param in layer.parameters():  # not ones and zeros, so a mixed-up affine shows
        param.data = genesis.tensor(np.random.default_rng(1).uniform(0.5, 1.5, param.shape),
                                    dtype=genesis.float64)
    layer.to(device)
    x = genesis.tensor(np.random.default_rng(2).standard_normal(shape) * 3 + 1,
                       dtype=genesis.float64, device=device, requires_grad=True)
    seed = genesis.tensor(np.random.default_rng(3).standard_normal(shape), dtype=genesis.float64,
                          device=device)
    out = layer(x)
    leaves = [x, *layer.parameters()]
    grads = genesis.autograd.grad(out, leaves, seed, create_graph=create_graph)
    if create_graph:  # second derivatives: differentiate the gradients' weighted sum
        total = sum((g * g).sum() for g in grads)
        grads = [genesis.zeros_like(leaf) if g is None else g  # a bias has no second derivative
                 for leaf, g in zip(leaves, genesis.autograd.grad(total, leaves, allow_unused=True))]
    buffers = [b for b in layer.buffers() if b.dtype.is_floating_point]
    return [out, *grads, *buffers]


@pytest.mark.parametrize("create_graph", [False, True], ids=["backward", "double backward"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_norm_layer_on_the_device_matches_the_cpu(cuda, name, create_graph):
    make, shape = LAYERS[name]
    expected = _run(make, shape, "cpu", create_graph)
    got = _run(make, shape, cuda, create_graph)
    assert len(got) == len(expected)
    for ours, reference in zip(got, expected):
        assert ours.device == genesis.device("cuda") and ours.shape == reference.shape
        np.testing.assert_allclose(ours.detach().cpu().numpy(), reference.detach().numpy(),
                                   rtol=1e-10, atol=1e-12, err_msg=name)


def test_layer_norm_in_float32_under_autocast_on_the_device(cuda):
    layer = nn.LayerNorm(8).to(cuda)
    x = genesis.randn(4, 8, device=cuda, requires_grad=True)
    with genesis.autocast(cuda, dtype=genesis.float16):
        out = layer(x.half())
    out.float().sum().backward()
    assert out.dtype == genesis.float32 and x.grad.shape == (4, 8)
    reference = (x.detach() - x.detach().mean(-1, keepdim=True)) / (
        x.detach().var(-1, unbiased=False, keepdim=True) + 1e-5).sqrt()
    np.testing.assert_allclose(out.detach().cpu().numpy(), reference.cpu().numpy(), atol=2e-3)
