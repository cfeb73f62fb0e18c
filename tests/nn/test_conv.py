"""Convolutions and unfold/fold: modules vs PyTorch, second-order gradients, init, repr,
autocast, and the errors for bad arguments (values and first-order gradients of every
configuration are in the op registry, tests/ops/test_registry.py)."""
import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from genesis import nn
from genesis.autograd import gradcheck, gradgradcheck
from tests.helpers import torch_or_skip


def _f64(rng, *shape, requires_grad=True):
    return genesis.from_numpy(rng.uniform(-1, 1, shape)).requires_grad_(requires_grad)


def _copy_into(torch, reference, module):
    with torch.no_grad():
        for name, value in module.state_dict().items():
            reference.state_dict()[name].copy_(torch.from_numpy(value.numpy()))


@pytest.mark.parametrize("options", [
    dict(stride=2, padding=1), dict(padding="same", dilation=2), dict(groups=2, bias=False),
    dict(padding=(2, 1), padding_mode="reflect"), dict(padding=1, padding_mode="replicate"),
    dict(padding="same", padding_mode="circular"), dict(padding="valid", stride=(1, 2))],
    ids=str)
def test_conv2d_module_matches_pytorch(rng, options):
    torch = torch_or_skip()
    layer = nn.Conv2d(4, 6, (3, 2), dtype=genesis.float64, **options)
    reference = torch.nn.Conv2d(4, 6, (3, 2), dtype=torch.float64, **options)
    _compare_modules(torch, rng, layer, reference, (2, 4, 7, 6))


def _compare_modules(torch, rng, layer, reference, shape):
    """The same weights in both; outputs and every gradient equal to 1e-10."""
    _copy_into(torch, reference, layer)
    data = rng.standard_normal(shape)
    x, tx = genesis.from_numpy(data).requires_grad_(), torch.from_numpy(data).requires_grad_()
    ours, theirs = layer(x), reference(tx)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    weight = rng.standard_normal(ours.shape)
    ours.backward(genesis.from_numpy(weight))
    theirs.backward(torch.from_numpy(weight))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for name, parameter in layer.named_parameters():
        np.testing.assert_allclose(parameter.grad.numpy(),
                                   dict(reference.named_parameters())[name].grad.numpy(),
                                   rtol=1e-10, atol=1e-12)


def test_conv1d_module_matches_pytorch_in_float32(rng):
    torch = torch_or_skip()
    layer = nn.Conv1d(3, 8, 5, stride=2, padding=2, dilation=1, groups=1)
    reference = torch.nn.Conv1d(3, 8, 5, stride=2, padding=2)
    _copy_into(torch, reference, layer)
    data = rng.standard_normal((4, 3, 20)).astype(np.float32)
    np.testing.assert_allclose(layer(genesis.from_numpy(data)).detach().numpy(),
                               reference(torch.from_numpy(data)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("options", [dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
                                     dict(padding="same")], ids=str)
def test_conv2d_second_order_gradients(rng, options):
    x, weight, bias = _f64(rng, 2, 4, 5, 6), _f64(rng, 4, 2 if "groups" in options else 4, 3, 2), \
        _f64(rng, 4)
    assert gradgradcheck(lambda *args: F.conv2d(*args, **options), (x, weight, bias),
                         atol=1e-6, rtol=1e-5)


def test_conv_backward_under_create_graph_equals_the_array_backward(rng):
    x, weight = _f64(rng, 2, 4, 6, 5), _f64(rng, 6, 2, 3, 3)
    out = F.conv2d(x, weight, stride=2, padding=1, groups=2)
    grad = genesis.from_numpy(rng.standard_normal(out.shape))
    plain = genesis.autograd.grad(out, (x, weight), grad, retain_graph=True)
    graphed = genesis.autograd.grad(out, (x, weight), grad, create_graph=True)
    assert all(g.requires_grad for g in graphed)
    for a, b in zip(plain, graphed):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_conv_on_unbatched_input_and_non_contiguous_weight(rng):
    x = _f64(rng, 3, 6, 6)
    weight = genesis.from_numpy(rng.uniform(-1, 1, (3, 3, 3, 5)).transpose(3, 0, 1, 2))
    weight.requires_grad_()
    assert F.conv2d(x, weight, padding=1).shape == (5, 6, 6)
    assert gradcheck(lambda a, w: F.conv2d(a, w, stride=2), (x, weight), atol=1e-6, rtol=1e-5)


def test_conv_graph_is_one_named_node(rng):
    x = _f64(rng, 1, 2, 4, 4)
    out = nn.Conv2d(2, 3, 3, dtype=genesis.float64)(x)
    assert type(out.grad_fn).__name__ == "ConvolutionBackward"
    assert len(out.grad_fn.next_functions) == 5  # input, weight, bias, geometry, groups


def test_default_init_matches_pytorch_bounds():
    layer = nn.Conv2d(16, 8, 3)
    bound = 1 / np.sqrt(16 * 9)
    weight, bias = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert layer.weight.shape == (8, 16, 3, 3) and layer.bias.shape == (8,)
    assert bound * 0.95 < np.abs(weight).max() <= bound
    assert np.abs(bias).max() <= bound
    assert abs(weight.std() - bound / np.sqrt(3)) < 0.1 * bound  # U(-b, b) has std b / sqrt(3)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Conv2d(3, 16, 3),
    lambda nn: nn.Conv2d(4, 4, (3, 2), dilation=2, padding="same", bias=False),
    lambda nn: nn.Conv1d(3, 6, 3, stride=2, padding=1, groups=3, padding_mode="reflect"),
    lambda nn: nn.Conv3d(2, 4, 3, padding="valid"),
    lambda nn: nn.Conv2d(2, 4, 1, stride=(2, 1), padding=(0, 1))])
def test_repr_matches_pytorch(make):
    torch = torch_or_skip()
    assert repr(make(nn)) == repr(make(torch.nn))


def test_conv_runs_in_float16_under_autocast_and_grads_stay_float32(rng):
    layer = nn.Conv2d(2, 3, 3, padding=1)
    x = genesis.randn(1, 2, 5, 5)
    with genesis.autocast():
        out = layer(x)
        loss = out.float().sum()
    assert out.dtype == genesis.float16
    loss.backward()
    assert layer.weight.grad.dtype == genesis.float32 and layer.bias.grad.dtype == genesis.float32
    np.testing.assert_allclose(out.detach().float().numpy(), layer(x).detach().numpy(), atol=2e-2)


@pytest.mark.parametrize("call, message", [
    (lambda: F.conv2d(genesis.ones(1, 3, 5, 5), genesis.ones(4, 2, 3, 3), groups=2),
     r"conv2d: input of shape \(1, 3, 5, 5\) has 3 channels, but weight of shape \(4, 2, 3, 3\) "
     r"with groups=2 expects 4"),
    (lambda: F.conv2d(genesis.ones(1, 4, 5, 5), genesis.ones(3, 2, 3, 3), groups=2),
     r"out_channels = 3 .* must be divisible by groups=2"),
    (lambda: F.conv2d(genesis.ones(1, 1, 2, 2), genesis.ones(1, 1, 3, 3)),
     r"conv2d: input of shape \(1, 1, 2, 2\) padded to \(2, 2\) is smaller than the kernel "
     r"\(3, 3\) of weight of shape \(1, 1, 3, 3\)"),
    (lambda: F.conv1d(genesis.ones(1, 1, 4), genesis.ones(1, 1, 2), dilation=4),
     r"conv1d: .* smaller than the kernel \(2,\) dilated to \(5,\)"),
    (lambda: F.conv2d(genesis.ones(1, 1, 4, 4), genesis.ones(1, 1, 3, 3), padding="full"),
     r"conv2d: padding must be 'valid', 'same', an int or a tuple of 2 ints, got 'full'"),
    (lambda: F.conv2d(genesis.ones(1, 1, 4, 4), genesis.ones(1, 1, 3, 3), padding="same",
                      stride=2), r"padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(genesis.ones(1, 1, 4, 4), genesis.ones(1, 1, 3, 3), stride=0),
     r"conv2d: stride must be greater than zero, got \(0, 0\)"),
    (lambda: F.conv2d(genesis.ones(4, 4), genesis.ones(1, 1, 3, 3)),
     r"conv2d: expected a 3-D \(unbatched\) or 4-D \(batched\) input .* got shape \(4, 4\)"),
    (lambda: F.conv2d(genesis.ones(1, 1, 4, 4), genesis.ones(1, 3, 3)),
     r"conv2d: weight must be 4-D"),
    (lambda: F.conv2d(genesis.ones(1, 1, 4, 4), genesis.ones(2, 1, 3, 3), genesis.ones(3)),
     r"conv2d: bias must have shape \(2,\) to match out_channels, got \(3,\)"),
    (lambda: F.conv2d(genesis.ones(1, 1, 4, 4), genesis.ones(1, 1, 3, 3, dtype=genesis.float64)),
     r"conv2d: dtypes differ \(input float32, weight float64\)"),
    (lambda: F.conv2d(genesis.ones(1, 1, 4, 4, dtype=genesis.int64),
                      genesis.ones(1, 1, 3, 3)), r"conv2d: input must be floating point"),
    (lambda: F.conv2d(genesis.ones(1, 1, 4, 4), genesis.ones(1, 1, 3, 3), stride=(1, 2, 3)),
     r"conv2d: stride must be an int or a tuple of 2 ints, got \(1, 2, 3\)"),
])
def test_functional_errors_name_the_op_and_shapes(call, message):
    with pytest.raises((RuntimeError, ValueError, TypeError), match=message):
        call()


def test_module_errors():
    with pytest.raises(ValueError, match=r"Conv2d: in_channels=3 and out_channels=4 must both be "
                                         r"divisible by groups=2"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="Conv2d: padding must be 'same', 'valid'"):
        nn.Conv2d(3, 4, 3, padding="half")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(RuntimeError, match=r"reflect padding \(4, 4\) must be smaller than the "
                                           r"input size 3"):
        nn.Conv1d(1, 1, 3, padding=4, padding_mode="reflect")(genesis.ones(1, 1, 3))


def test_unfold_fold_roundtrip_counts_overlaps_and_errors():
    x = genesis.ones(1, 2, 4, 4)
    counts = F.fold(F.unfold(x, 3, padding=1), (4, 4), 3, padding=1)
    expected = np.array([[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]])
    np.testing.assert_array_equal(counts.numpy()[0, 1], expected)
    with pytest.raises(RuntimeError, match=r"unfold: expected a 3-D \(unbatched\) or 4-D"):
        F.unfold(genesis.ones(4, 4), 2)
    with pytest.raises(RuntimeError, match=r"unfold: input of shape \(1, 1, 2, 2\) padded to "
                                           r"\(2, 2\) is smaller than the dilated kernel \(3, 3\)"):
        F.unfold(genesis.ones(1, 1, 2, 2), 3)
    with pytest.raises(RuntimeError, match=r"fold: input of shape \(1, 5, 9\) has 5 rows, not a "
                                           r"multiple of prod\(kernel_size\) = 4"):
        F.fold(genesis.ones(1, 5, 9), (4, 4), 2)
    with pytest.raises(RuntimeError, match=r"fold: input of shape \(1, 4, 8\) has 8 blocks, but "
                                           r"output_size=\(4, 4\) .* makes 9"):
        F.fold(genesis.ones(1, 4, 8), (4, 4), 2)


@pytest.mark.parametrize("options", [
    dict(stride=2, padding=1, output_padding=1), dict(groups=2, bias=False, dilation=2),
    dict(stride=(2, 3), padding=(0, 2), output_padding=(1, 2)), dict(stride=3, dilation=2, output_padding=2),
    dict()], ids=str)
def test_conv_transpose2d_module_matches_pytorch(rng, options):
    torch = torch_or_skip()
    layer = nn.ConvTranspose2d(4, 6, (3, 2), dtype=genesis.float64, **options)
    reference = torch.nn.ConvTranspose2d(4, 6, (3, 2), dtype=torch.float64, **options)
    assert repr(layer) == repr(reference) and layer.weight.shape == tuple(reference.weight.shape)
    _compare_modules(torch, rng, layer, reference, (2, 4, 5, 4))


def test_conv_transpose_output_size_and_second_order_gradients(rng):
    up = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, dtype=genesis.float64)
    x = _f64(rng, 1, 2, 4, 4)
    assert up(x).shape == (1, 3, 7, 7) and up(x, output_size=(8, 8)).shape == (1, 3, 8, 8)
    assert up(x[0], output_size=[3, 8, 8]).shape == (3, 8, 8)  # unbatched, sizes with channels
    with pytest.raises(ValueError, match=r"output size of \(9, 9\), but valid sizes range from \(7, 7\) to \(8, 8\)"):
        up(x, output_size=(9, 9))
    weight = _f64(rng, 2, 3, 2, 2)
    assert gradgradcheck(lambda t, w: F.conv_transpose2d(t, w, stride=2, output_padding=1), (x, weight))


def test_conv_transpose_errors_name_the_problem():
    with pytest.raises(ValueError, match='only "zeros" padding mode'):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(RuntimeError, match=r"output_padding \(2,\) must be smaller than the stride"):
        F.conv_transpose1d(genesis.ones(1, 2, 4), genesis.ones(2, 2, 3), stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match="has 3 channels, but weight of shape"):
        F.conv_transpose2d(genesis.ones(1, 3, 4, 4), genesis.ones(2, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"bias must have shape \(4,\)"):
        F.conv_transpose1d(genesis.ones(1, 2, 4), genesis.ones(2, 2, 3), genesis.ones(2), groups=2)
