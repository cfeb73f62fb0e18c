"""Sign, exponent and divisor functions (genesis/ops/number_functions.py): values, dtypes,
gradients and errors against PyTorch; in-place forms. The registry tests check first
derivatives against finite differences and PyTorch on each op's samples."""
import math

import numpy as np
import pytest

import genesis
from genesis.autograd import gradgradcheck
from tests.helpers import torch_or_skip


def leaf(values, dtype=genesis.float64):
    return genesis.tensor(values, dtype=dtype, requires_grad=True)


def test_copysign_values_and_gradients():
    torch = torch_or_skip()
    a_values, b_values = [1.0, -2.0, 0.0, 3.0, -0.0], [-1.0, 1.0, -1.0, -0.0, 2.0]
    a, b = leaf(a_values), leaf(b_values)
    out = genesis.copysign(a, b)
    ta = torch.tensor(a_values, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b_values, dtype=torch.float64, requires_grad=True)
    reference = torch.copysign(ta, tb)
    np.testing.assert_array_equal(np.signbit(out.detach().numpy()),
                                  np.signbit(reference.detach().numpy()))
    out.sum().backward()
    reference.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())  # ±1, 0 where a is 0
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())  # zeros
    assert genesis.copysign(genesis.tensor([1, -2]), -1).dtype is genesis.float32
    assert gradgradcheck(genesis.copysign, (leaf([1.0, -2.0]), leaf([-3.0, 0.5])))


def test_heaviside_values_dtypes_and_no_gradient():
    torch = torch_or_skip()
    x, values = [-1.5, 0.0, 2.0, -0.0], [0.25]
    ours = genesis.heaviside(genesis.tensor(x), genesis.tensor(values))
    assert ours.tolist() == torch.heaviside(torch.tensor(x), torch.tensor(values)).tolist()
    assert genesis.heaviside(genesis.tensor([-1, 0, 3]), genesis.tensor([7])).tolist() == [0, 7, 1]
    for module in (torch, genesis):
        with pytest.raises(RuntimeError, match="different dtypes"):
            module.heaviside(module.tensor([1.0]), module.tensor([2]))
    with pytest.raises(RuntimeError, match="derivative for heaviside is not implemented"):
        genesis.heaviside(leaf([1.0, 0.0]), genesis.tensor([0.5], dtype=genesis.float64)).sum() \
            .backward()


def test_gcd_and_lcm_of_integers():
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    a, b = rng.integers(-50, 50, (4, 5)), rng.integers(-50, 50, (5,))
    for name in ("gcd", "lcm"):
        ours = getattr(genesis, name)(genesis.from_numpy(a), genesis.from_numpy(b))
        theirs = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert ours.dtype is genesis.int64
        for module in (torch, genesis):
            with pytest.raises(NotImplementedError):
                getattr(module, name)(module.tensor([1.0]), module.tensor([2.0]))
    target = genesis.tensor([12, 9])
    assert target.gcd_(genesis.tensor([8, 6])) is target and target.tolist() == [4, 3]


def test_ldexp_and_frexp():
    torch = torch_or_skip()
    mantissa, exponent = genesis.frexp(genesis.tensor([8.0, 0.0, -3.5, 1e-310, math.inf],
                                                      dtype=genesis.float64))
    reference = torch.frexp(torch.tensor([8.0, 0.0, -3.5, 1e-310, math.inf], dtype=torch.float64))
    np.testing.assert_array_equal(mantissa.numpy(), reference.mantissa.numpy())
    np.testing.assert_array_equal(exponent.numpy(), reference.exponent.numpy())
    assert exponent.dtype is genesis.int32
    assert genesis.frexp(genesis.tensor([6.0])).mantissa.tolist() == [0.75]
    for module in (torch, genesis):
        with pytest.raises(RuntimeError, match="floating-point"):
            module.frexp(module.tensor([1, 3]))
    x = leaf([6.0, -0.3])
    genesis.frexp(x).mantissa.sum().backward()
    assert x.grad.tolist() == [1 / 8, 2.0]  # 2^-exponent, as PyTorch
    rebuilt = genesis.ldexp(*genesis.frexp(genesis.tensor([6.0, -0.3], dtype=genesis.float64)))
    assert rebuilt.tolist() == [6.0, -0.3]
    assert genesis.ldexp(genesis.tensor([1, 2]), genesis.tensor([3, 4])).dtype is genesis.float32
    a, b = leaf([1.5, -2.0]), leaf([0.5, 3.0])
    assert gradgradcheck(genesis.ldexp, (a, b))


def test_nextafter_steps_one_ulp_and_passes_the_gradient():
    one = genesis.tensor([1.0, 1.0], dtype=genesis.float64)
    steps = genesis.nextafter(one, genesis.tensor([2.0, 0.0], dtype=genesis.float64)) - one
    assert steps.tolist() == [2.0 ** -52, -(2.0 ** -53)]
    assert (genesis.nextafter(genesis.tensor([1.0]), 2.0) - 1).item() == 2.0 ** -23
    a, b = leaf([1.0, -3.0]), leaf([2.0, 5.0])
    genesis.nextafter(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [0.0, 0.0]
    with pytest.raises(NotImplementedError, match="nextafter"):
        genesis.nextafter(genesis.tensor([1]), genesis.tensor([2]))


def test_float_power_computes_in_float64():
    torch = torch_or_skip()
    base, exponent = genesis.tensor([2.0, 3.0]), genesis.tensor([0.5, 2.0])
    out = genesis.float_power(base, exponent)
    assert out.dtype is genesis.float64
    np.testing.assert_allclose(out.numpy(), torch.float_power(torch.tensor([2.0, 3.0]),
                                                              torch.tensor([0.5, 2.0])).numpy())
    assert genesis.float_power(2, genesis.tensor([1, 3])).tolist() == [2.0, 8.0]
    for module in (torch, genesis):
        with pytest.raises(RuntimeError, match="float_power_"):
            module.tensor([2.0]).float_power_(2)
    target = genesis.tensor([2.0, 3.0], dtype=genesis.float64)
    assert target.float_power_(2) is target and target.tolist() == [4.0, 9.0]
    a, b = leaf([1.5, 2.0]), leaf([0.5, -1.0])
    assert gradgradcheck(genesis.float_power, (a, b))


def test_sgn_is_sign_for_real_tensors():
    x = genesis.tensor([-2.0, 0.0, 3.0])
    assert genesis.sgn(x).tolist() == [-1.0, 0.0, 1.0]
    assert genesis.sgn(genesis.tensor([-2, 0, 3])).dtype is genesis.int64
    assert x.sgn_() is x and x.tolist() == [-1.0, 0.0, 1.0]


@pytest.mark.parametrize("name", ["copysign", "nextafter", "ldexp", "heaviside"])
def test_in_place_forms_match_pytorch(name):
    torch = torch_or_skip()
    values, other = [1.5, -2.0, 0.0], [-1.0, 3.0, 0.5]
    ours = genesis.tensor(values, dtype=genesis.float64)
    theirs = torch.tensor(values, dtype=torch.float64)
    assert getattr(ours, f"{name}_")(genesis.tensor(other, dtype=genesis.float64)) is ours
    getattr(theirs, f"{name}_")(torch.tensor(other, dtype=torch.float64))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_in_place_copysign_keeps_the_gradient():
    a = leaf([1.5, -2.0])
    y = a * 1
    y.copysign_(genesis.tensor([-1.0, -1.0], dtype=genesis.float64))
    y.sum().backward()
    assert a.grad.tolist() == [-1.0, 1.0]
