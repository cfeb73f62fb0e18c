"""PyTorch spellings programs use: sort/argsort/topk/kthvalue details, var_mean/std_mean,
is_tensor/numel, view_as/t/type/stride, legacy constructors, Variable, Size, finfo/iinfo,
inference_mode, compared with PyTorch where it is importable."""
import math

import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip


def test_sort_is_stable_puts_nan_last_and_ties_keep_their_order():
    torch = torch_or_skip()
    data = [3.0, 1.0, float("nan"), 1.0, 2.0, 3.0]
    for descending in (False, True):
        mine = genesis.tensor(data).sort(descending=descending)
        theirs = torch.tensor(data).sort(descending=descending, stable=True)
        assert mine.indices.tolist() == theirs.indices.tolist()
        np.testing.assert_array_equal(mine.values.numpy(), theirs.values.numpy())


def test_sort_values_carry_the_gradient_back():
    x = genesis.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, _ = x.sort()
    (values * genesis.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]


def test_topk_and_kthvalue_edges():
    with pytest.raises(RuntimeError, match="out of range"):
        genesis.zeros(3).topk(4)
    with pytest.raises(RuntimeError, match="counts from 1"):
        genesis.zeros(3).kthvalue(0)
    values, indices = genesis.tensor([[1.0, 5.0, 3.0]]).topk(2, largest=False)
    assert values.tolist() == [[1.0, 3.0]] and indices.tolist() == [[0, 2]]
    assert genesis.tensor(2.0).sort().values.item() == 2.0


def test_var_mean_and_std_mean_match_pytorch():
    torch = torch_or_skip()
    data = np.random.default_rng(0).standard_normal((3, 4))
    for kwargs in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"dim": 1, "correction": 0}):
        for name in ("var_mean", "std_mean"):
            mine = getattr(genesis, name)(genesis.tensor(data, dtype=genesis.float64), **kwargs)
            theirs = getattr(torch, name)(torch.tensor(data), **kwargs)
            for a, b in zip(mine, theirs):
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_info_functions_and_methods():
    torch = torch_or_skip()
    x, y = genesis.zeros(2, 3), torch.zeros(2, 3)
    assert genesis.is_tensor(x) and not genesis.is_tensor(1.0)
    assert genesis.numel(x) == torch.numel(y) and x.nelement() == y.nelement()
    assert x.stride() == y.stride() and x.t().stride() == y.t().stride()
    assert x.view_as(genesis.zeros(3, 2)).shape == (3, 2)
    assert x.t().shape == (3, 2) and genesis.zeros(4).t().shape == (4,)
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        genesis.zeros(1, 2, 3).t()
    assert x.type() == "genesis.FloatTensor" and x.type(genesis.int64).dtype is genesis.int64
    assert x.type("torch.LongTensor").dtype is genesis.int64
    assert not x.is_complex() and genesis.is_floating_point(x)


def test_legacy_constructors_and_variable():
    assert genesis.LongTensor([1, 2]).dtype is genesis.int64
    assert genesis.FloatTensor(2, 3).shape == (2, 3) and genesis.FloatTensor().shape == (0,)
    assert isinstance(genesis.ByteTensor([1]), genesis.ByteTensor)
    assert not isinstance(genesis.zeros(1), genesis.LongTensor)
    x = genesis.zeros(2)
    variable = genesis.autograd.Variable(x, requires_grad=True)
    assert variable is not x and variable.requires_grad and not x.requires_grad
    assert isinstance(x, genesis.autograd.Variable)


def test_size_limits_and_constants_match_pytorch():
    torch = torch_or_skip()
    assert genesis.Size([2, 3]) == torch.Size([2, 3]) == (2, 3)
    assert genesis.Size([2, 3]).numel() == torch.Size([2, 3]).numel()
    names = ("float16", "float32", "float64") + (
        ("bfloat16",) if genesis.bfloat16.numpy_dtype is not None else ())  # needs ml_dtypes
    for name in names:
        mine, theirs = genesis.finfo(getattr(genesis, name)), torch.finfo(getattr(torch, name))
        assert (mine.bits, mine.eps, mine.max, mine.min, mine.tiny) == \
            (theirs.bits, theirs.eps, theirs.max, theirs.min, theirs.tiny)
    for name in ("int8", "int16", "int32", "int64", "uint8"):
        mine, theirs = genesis.iinfo(getattr(genesis, name)), torch.iinfo(getattr(torch, name))
        assert (mine.bits, mine.min, mine.max) == (theirs.bits, theirs.min, theirs.max)
    assert math.isnan(genesis.nan) and genesis.inf == torch.inf and genesis.pi == torch.pi
    assert isinstance(genesis.float32, genesis.dtype)


def test_inference_mode_as_context_and_decorators():
    x = genesis.ones(2, requires_grad=True)

    @genesis.inference_mode
    def bare(t):
        return t * 2

    @genesis.inference_mode()
    def called(t):
        return t * 2

    assert not bare(x).requires_grad and not called(x).requires_grad
    with genesis.inference_mode():
        assert genesis.is_inference_mode_enabled() and not (x * 2).requires_grad
    with genesis.inference_mode(False):
        assert (x * 2).requires_grad and not genesis.is_inference_mode_enabled()
    assert (x * 2).requires_grad


def test_var_mean_is_one_node_with_two_outputs_as_in_pytorch():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        x = lib.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], dtype=lib.float64, requires_grad=True)
        var, mean = lib.var_mean(x, dim=1)
        assert var.grad_fn is mean.grad_fn and var.grad_fn.name() == "VarMeanBackward0"
        seen = []
        var.grad_fn.register_prehook(lambda grads: seen.append(len(grads)))
        (var.sum() + 2 * mean.sum()).backward()
        assert seen == [2]
        expected = 2 * (x.detach() - x.detach().mean(1, keepdim=True)) / 2 + 2 / 3
        assert np.allclose(x.grad.numpy(), expected.numpy())
