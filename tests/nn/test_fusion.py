"""nn.utils.fusion (BatchNorm folded into the conv or linear layer before it) against
torch.nn.utils.fusion: the fused parameters, outputs, requires_grad and the eval-only
refusal; and torch.nn.utils.stateless.functional_call with its FutureWarning."""
import importlib

import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def twins(torch, make):
    mine, theirs = make(genesis), make(torch)
    mine.load_state_dict({k: genesis.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


@pytest.mark.parametrize("kind", ["conv", "conv_no_bias", "transpose", "linear", "linear_bn_of_one"])
def test_fused_layers_match_pytorch(kind):
    torch = torch_or_skip()
    makers = {
        "conv": (lambda lib: lib.nn.Conv2d(2, 3, 3), lambda lib: lib.nn.BatchNorm2d(3), (1, 2, 5, 5)),
        "conv_no_bias": (lambda lib: lib.nn.Conv1d(2, 3, 3, bias=False), lambda lib: lib.nn.BatchNorm1d(3, affine=False),
                         (2, 2, 6)),
        "transpose": (lambda lib: lib.nn.ConvTranspose2d(2, 3, 2), lambda lib: lib.nn.BatchNorm2d(3), (1, 2, 4, 4)),
        "linear": (lambda lib: lib.nn.Linear(3, 4), lambda lib: lib.nn.BatchNorm1d(4), (5, 3)),
        "linear_bn_of_one": (lambda lib: lib.nn.Linear(3, 4, bias=False), lambda lib: lib.nn.BatchNorm1d(1), (5, 3)),
    }
    make_layer, make_bn, shape = makers[kind]
    rng = np.random.default_rng(0)
    layer, their_layer = twins(torch, make_layer)
    bn, their_bn = twins(torch, make_bn)
    for (name, value) in their_bn.state_dict().items():
        if name in ("running_mean", "running_var", "weight", "bias"):
            fresh = rng.uniform(0.5, 2.0, tuple(value.shape)).astype(np.float32)
            value.copy_(torch.from_numpy(fresh))
            getattr(bn, name).data = genesis.tensor(fresh)
    for module in (layer, their_layer, bn, their_bn):
        module.eval()
    if kind.startswith("linear"):
        fused = genesis.nn.utils.fuse_linear_bn_eval(layer, bn)
        theirs = torch.nn.utils.fuse_linear_bn_eval(their_layer, their_bn)
    else:
        transpose = kind == "transpose"
        fused = genesis.nn.utils.fuse_conv_bn_eval(layer, bn, transpose=transpose)
        theirs = torch.nn.utils.fuse_conv_bn_eval(their_layer, their_bn, transpose=transpose)
    for name in ("weight", "bias"):
        mine_p, their_p = getattr(fused, name), getattr(theirs, name)
        assert isinstance(mine_p, genesis.nn.Parameter) and mine_p.requires_grad == their_p.requires_grad
        np.testing.assert_allclose(mine_p.detach().numpy(), their_p.detach().numpy(), rtol=1e-6, atol=1e-7)
    x = rng.standard_normal(shape).astype(np.float32)
    if kind != "linear_bn_of_one":
        np.testing.assert_allclose(fused(genesis.tensor(x)).detach().numpy(),
                                   bn(layer(genesis.tensor(x))).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert layer.weight is not fused.weight  # a new layer: the originals are untouched


def test_fusion_refuses_training_mode_as_pytorch_does():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2))


def test_stateless_functional_call_warns_as_pytorchs():
    torch = torch_or_skip()
    stateless = importlib.import_module("genesis.compat.torch_nn_utils_stateless")
    for lib, call in ((genesis, stateless.functional_call), (torch, torch.nn.utils.stateless.functional_call)):
        layer = lib.nn.Linear(3, 2)
        with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
            out = call(layer, {"weight": lib.zeros(2, 3), "bias": lib.ones(2)}, (lib.ones(1, 3),))
        assert out.tolist() == [[1.0, 1.0]]
