"""Special functions (genesis/ops/special_functions.py and its array modules _gamma,
_error_functions, _bessel): values against PyTorch on dense grids (large, tiny, negative and
near-pole arguments, infinities, nan), known values without PyTorch, second derivatives, in-place
forms, torch.special spellings and errors. The registry tests check first derivatives against
finite differences and PyTorch on each op's samples."""
import math

import numpy as np
import pytest

import genesis
from genesis.autograd import gradcheck, gradgradcheck
from tests.helpers import torch_or_skip

_RNG = np.random.default_rng(7)
_WIDE = np.concatenate([
    np.linspace(-40, 40, 8001), _RNG.uniform(-1e3, 1e3, 500), np.logspace(-300, 300, 400),
    -np.logspace(-300, 3, 400),
    [0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -35.0, 1e-310, 1 + 1e-9, 2 - 1e-9, -2.5, -1e-9, 12.999999,
     13.0, -34.0, -34.5, 1e8, 1e300, math.inf, -math.inf, math.nan]])
_ERF_RANGE = np.concatenate([np.linspace(-30, 30, 6001), np.logspace(-300, 300, 300),
                             -np.logspace(-300, 300, 300), [0.0, -0.0, 0.46875, 4.0, 26.5, -26.5,
                                                            -27.0, math.inf, -math.inf, math.nan]])
_UNIT = np.concatenate([np.linspace(-1, 1, 8001), 1 - np.logspace(-16, -1, 200),
                        -1 + np.logspace(-16, -1, 200), np.logspace(-300, -1, 200),
                        [1.5, -1.5, 0.7, -0.7, math.nan]])
_PROBABILITIES = np.concatenate([np.linspace(0, 1, 8001), np.logspace(-320, -1, 300),
                                 1 - np.logspace(-16, -1, 200), [-0.1, 1.1, math.nan]])


def _assert_close(ours, theirs, rtol=1e-10, atol=0.0):
    """Equal where both are inf or nan, close elsewhere."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    infinite = np.isinf(theirs)
    np.testing.assert_array_equal(ours[infinite], theirs[infinite])
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=rtol, atol=atol)


def _ours(function, *arrays):
    return function(*(genesis.from_numpy(a) for a in arrays)).numpy()


@pytest.mark.parametrize("name, grid, torch_name, atol", [
    ("lgamma", _WIDE, "lgamma", 1e-14),  # absolute near the zeros of lgamma at 1 and 2
    ("digamma", _WIDE, "digamma", 1e-14),  # and of digamma at 1.4616...
    ("erfc", _ERF_RANGE, "erfc", 0.0),
    ("erfcx", _ERF_RANGE, "special.erfcx", 0.0),
    ("log_ndtr", _ERF_RANGE, "special.log_ndtr", 0.0),
    ("i0", _ERF_RANGE, "i0", 0.0),
    ("i0e", _WIDE, "special.i0e", 0.0),
    ("i1", _ERF_RANGE, "special.i1", 0.0),
    ("i1e", _WIDE, "special.i1e", 0.0),
    ("erfinv", _UNIT, "erfinv", 0.0),
    ("ndtri", _PROBABILITIES, "special.ndtri", 0.0),
    ("sinc", _ERF_RANGE, "sinc", 1e-15),
])
def test_values_match_pytorch_on_dense_grids(name, grid, torch_name, atol):
    torch = torch_or_skip()
    function = getattr(genesis.special, name)
    reference = torch
    for part in torch_name.split("."):
        reference = getattr(reference, part)
    _assert_close(_ours(function, grid), reference(torch.from_numpy(grid)).numpy(), atol=atol)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_polygamma_matches_pytorch(n):
    torch = torch_or_skip()
    grid = _WIDE[np.abs(_WIDE) < 1e20]
    ours = genesis.polygamma(n, genesis.from_numpy(grid)).numpy()
    _assert_close(ours, torch.polygamma(n, torch.from_numpy(grid)).numpy())


def test_zeta_and_incomplete_gamma_match_pytorch():
    torch = torch_or_skip()
    x, q = _RNG.uniform(1, 20, 3000), _RNG.uniform(-30, 50, 3000)
    ours = _ours(genesis.special.zeta, x, q)
    _assert_close(ours, torch.special.zeta(torch.from_numpy(x), torch.from_numpy(q)).numpy())
    a = np.concatenate([_RNG.uniform(0, 30, 3000), _RNG.uniform(0, 3, 3000),
                        [0.0, 0.0, 1.0, 2.0, 1e-3, -1.0]])
    x = np.concatenate([_RNG.uniform(0, 40, 3000), _RNG.uniform(0, 3, 3000),
                        [0.0, 1.0, 0.0, math.inf, 1e-5, 1.0]])
    # PyTorch's uniform asymptotic expansion (20 < a < 200, x near a) is good to about 1e-9;
    # ours converges the series or the continued fraction to machine precision there
    for ours_function, theirs in ((genesis.igamma, torch.igamma), (genesis.igammac, torch.igammac)):
        _assert_close(_ours(ours_function, a, x),
                      theirs(torch.from_numpy(a), torch.from_numpy(x)).numpy(), rtol=1e-8,
                      atol=1e-300)
        small = a < 20
        _assert_close(_ours(ours_function, a[small], x[small]),
                      theirs(torch.from_numpy(a[small]), torch.from_numpy(x[small])).numpy(),
                      rtol=1e-10, atol=1e-300)


def test_mvlgamma_matches_pytorch():
    torch = torch_or_skip()
    x = _RNG.uniform(2.0, 50.0, 200)
    for p in (1, 2, 5):
        _assert_close(genesis.mvlgamma(genesis.from_numpy(x), p).numpy(),
                      torch.mvlgamma(torch.from_numpy(x), p).numpy())


def test_known_values_without_pytorch():
    x = genesis.tensor([0.5, 1.0, 2.0, 3.0], dtype=genesis.float64)
    assert genesis.lgamma(x).tolist() == pytest.approx([0.5 * math.log(math.pi), 0.0, 0.0,
                                                        math.log(2.0)], abs=1e-15)
    euler = 0.5772156649015329
    assert genesis.digamma(x[1:2]).item() == pytest.approx(-euler, rel=1e-15)
    assert genesis.polygamma(1, x[1:2]).item() == pytest.approx(math.pi ** 2 / 6, rel=1e-9)
    assert genesis.polygamma(2, x[1:2]).item() == pytest.approx(-2 * 1.2020569031595942, rel=1e-13)
    assert genesis.special.zeta(genesis.tensor([2.0, 4.0], dtype=genesis.float64), 1.0).tolist() \
        == pytest.approx([math.pi ** 2 / 6, math.pi ** 4 / 90], rel=1e-15)
    values = genesis.tensor([-0.999, -0.3, 0.0, 0.6, 0.9999999], dtype=genesis.float64)
    assert genesis.erf(genesis.erfinv(values)).tolist() == pytest.approx(values.tolist(), rel=1e-15)
    assert genesis.erfc(genesis.tensor([10.0], dtype=genesis.float64)).item() == \
        pytest.approx(2.088487583762545e-45, rel=1e-14)
    positive = genesis.tensor([0.1, 1.0, 7.5], dtype=genesis.float64)
    assert genesis.igamma(genesis.ones_like(positive), positive).tolist() == pytest.approx(
        [1 - math.exp(-v) for v in positive.tolist()], rel=1e-14)
    assert genesis.i0(genesis.tensor([0.0, 1.0], dtype=genesis.float64)).tolist() == \
        pytest.approx([1.0, 1.2660658777520082], rel=1e-15)
    probabilities = genesis.tensor([1e-300, 0.025, 0.5, 0.975], dtype=genesis.float64)
    assert genesis.special.ndtr(genesis.special.ndtri(probabilities)).tolist() == pytest.approx(
        probabilities.tolist(), rel=1e-13)


def test_poles_and_edges_follow_pytorch():
    values = genesis.tensor([0.0, -0.0, -1.0, -2.0, math.inf, -math.inf], dtype=genesis.float64)
    assert genesis.lgamma(values).tolist() == [math.inf] * 6
    digamma = genesis.digamma(values).tolist()
    assert digamma[:2] == [-math.inf, math.inf]
    assert all(math.isnan(v) for v in digamma[2:4] + digamma[5:]) and digamma[4] == math.inf
    unit = genesis.tensor([-1.0, 1.0, 1.5], dtype=genesis.float64)
    inverse = genesis.erfinv(unit).tolist()
    assert inverse[:2] == [-math.inf, math.inf] and math.isnan(inverse[2])
    assert genesis.special.ndtri(genesis.tensor([0.0, 1.0])).tolist() == [-math.inf, math.inf]


def test_dtypes_follow_pytorch():
    assert genesis.lgamma(genesis.tensor([1, 2])).dtype is genesis.float32
    assert genesis.i0(genesis.tensor([1.0], dtype=genesis.float16)).dtype is genesis.float16
    assert genesis.special.zeta(genesis.tensor([2]), genesis.tensor([1])).dtype is genesis.float32
    assert genesis.erfinv(genesis.tensor([0.5], dtype=genesis.float64)).dtype is genesis.float64


@pytest.mark.parametrize("name, function, values", [
    ("lgamma", genesis.lgamma, [0.3, 2.5, -1.5, 7.0]),
    ("digamma", genesis.digamma, [0.3, 2.5, -1.5, 7.0]),
    ("polygamma", lambda x: genesis.polygamma(2, x), [0.3, 2.5, -1.5, 7.0]),
    ("mvlgamma", lambda x: genesis.mvlgamma(x, 3), [1.3, 2.5, 4.0]),
    ("erfinv", genesis.erfinv, [-0.9, 0.0, 0.4, 0.99]),
    ("erfc", genesis.erfc, [-2.0, 0.1, 3.0]),
    ("erfcx", genesis.special.erfcx, [-2.0, 0.1, 3.0, 40.0]),
    ("ndtri", genesis.special.ndtri, [0.01, 0.3, 0.9]),
    ("log_ndtr", genesis.special.log_ndtr, [-30.0, -1.5, 0.2, 3.0]),
    ("i0", genesis.i0, [-3.0, 0.5, 35.0]),
    ("i0e", genesis.special.i0e, [-3.0, 0.5, 35.0]),
    ("i1", genesis.special.i1, [-3.0, 0.0, 0.5, 35.0]),
    ("i1e", genesis.special.i1e, [-3.0, 0.5, 35.0]),
    ("sinc", genesis.sinc, [-1.3, 0.25, 2.0]),
])
def test_second_derivatives(name, function, values):
    x = genesis.tensor(values, dtype=genesis.float64, requires_grad=True)
    assert gradcheck(function, (x,), atol=1e-6, rtol=1e-5)
    assert gradgradcheck(function, (x,), atol=1e-5, rtol=1e-4)


def test_gradients_match_pytorch_at_special_points():
    torch = torch_or_skip()
    values = [-2.5, -0.5, 0.0, 1e-3, 0.7, 3.0]
    for name in ("i0", "special.i0e", "special.i1", "special.i1e", "sinc", "lgamma", "digamma"):
        ours = genesis.tensor(values, dtype=genesis.float64, requires_grad=True)
        theirs = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        genesis_function, torch_function = genesis, torch
        for part in name.split("."):
            genesis_function, torch_function = (getattr(genesis_function, part),
                                                getattr(torch_function, part))
        if name in ("lgamma", "digamma"):  # away from the pole at 0
            ours = genesis.tensor([v for v in values if v != 0.0], dtype=genesis.float64,
                                  requires_grad=True)
            theirs = torch.tensor([v for v in values if v != 0.0], dtype=torch.float64,
                                  requires_grad=True)
        genesis_function(ours).sum().backward()
        torch_function(theirs).sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9,
                                   err_msg=name)


def test_only_the_second_argument_of_igamma_and_zeta_has_a_gradient():
    a = genesis.tensor([1.5, 3.0], dtype=genesis.float64, requires_grad=True)
    x = genesis.tensor([0.7, 2.0], dtype=genesis.float64, requires_grad=True)
    for function in (genesis.igamma, genesis.igammac, genesis.special.zeta):
        with pytest.raises(NotImplementedError, match="detach the first argument"):
            function(a + 1, x).sum().backward()
    assert gradgradcheck(lambda q: genesis.igamma(a.detach(), q), (x,))
    assert gradgradcheck(lambda q: genesis.special.zeta(a.detach() + 1, q), (x,))
    lower = genesis.autograd.grad(genesis.igamma(a.detach(), x).sum(), x)[0]
    upper = genesis.autograd.grad(genesis.igammac(a.detach(), x).sum(), x)[0]
    np.testing.assert_allclose(lower.numpy(), -upper.numpy())


def test_errors_match_pytorch():
    torch = torch_or_skip()
    cases = [
        (lambda m: m.polygamma(-1, m.tensor([1.0])), RuntimeError),
        (lambda m: m.mvlgamma(m.tensor([2.0]), 0), RuntimeError),
        (lambda m: m.igamma(m.tensor([1, 2]), m.tensor([1, 2])), NotImplementedError),
        (lambda m: m.igammac(m.tensor([1, 2]), m.tensor([1, 2])), NotImplementedError),
    ]
    for call, error in cases:
        with pytest.raises(error):
            call(torch)
        with pytest.raises(error):
            call(genesis)
    with pytest.raises(TypeError, match="polygamma: n must be an int"):
        genesis.polygamma(1.5, genesis.tensor([1.0]))


@pytest.mark.parametrize("name, args", [
    ("lgamma", ()), ("digamma", ()), ("polygamma", (2,)), ("mvlgamma", (2,)), ("erfinv", ()),
    ("erfc", ()), ("i0", ()), ("sinc", ()), ("igamma", ("other",)), ("igammac", ("other",)),
])
def test_methods_and_in_place_forms_match_pytorch(name, args):
    torch = torch_or_skip()
    values = [0.15, 0.6, 0.9] if name == "erfinv" else [1.3, 2.5, 4.0]
    other = [0.5, 2.0, 7.0]

    def arguments(module):
        return [module.tensor(other, dtype=module.float64) if arg == "other" else arg
                for arg in args]
    ours = getattr(genesis.tensor(values, dtype=genesis.float64), name)(*arguments(genesis))
    theirs = getattr(torch.tensor(values, dtype=torch.float64), name)(*arguments(torch))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10)
    target = genesis.tensor(values, dtype=genesis.float64)
    assert getattr(target, f"{name}_")(*arguments(genesis)) is target
    np.testing.assert_allclose(target.numpy(), theirs.numpy(), rtol=1e-10)


def test_in_place_form_keeps_the_gradient():
    x = genesis.tensor([1.5, 2.5], dtype=genesis.float64, requires_grad=True)
    y = x * 1
    y.lgamma_()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), genesis.digamma(x.detach()).numpy())


def test_torch_special_spellings():
    special = genesis.special
    assert special.psi is special.digamma is genesis.digamma
    assert special.gammaln is genesis.lgamma
    assert special.multigammaln is genesis.mvlgamma
    assert special.gammainc is genesis.igamma and special.gammaincc is genesis.igammac
    for name in ("erfc", "erfinv", "i0", "sinc", "polygamma"):
        assert getattr(special, name) is getattr(genesis, name)
    assert special.ndtr(genesis.tensor([-10.0], dtype=genesis.float64)).item() == \
        pytest.approx(7.619853024160526e-24, rel=1e-14)  # 0.5 (1 + erf) would give 0 here


def test_entr_gradient_at_the_domain_edge_matches_pytorch():
    """-(1 + log x): inf at 0 (the masked composition gave 0), nan below 0."""
    torch = torch_or_skip()
    grads = []
    for library in (genesis, torch):
        x = library.tensor([-0.5, 0.0, 0.25, 1.0], requires_grad=True)
        library.special.entr(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
    assert gradgradcheck(genesis.special.entr, (genesis.tensor([0.3, 2.0], dtype=genesis.float64,
                                                               requires_grad=True),))
