"""bfloat16 tensors (what PyTorch's CPU autocast makes of a Linear's output) go through the
ops a model runs after it, forward and backward, with PyTorch's values: NumPy gives
bfloat16 (ml_dtypes) the dtype kind "V", and the ops' floating-point checks refused it
("gelu: needs a floating point tensor, got bfloat16").

Where NumPy has no bfloat16 loop the result comes back in float32 (more precise than
PyTorch's bfloat16 result, rounded from the same float32 computation); the values are
compared within bfloat16's precision."""
import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip

OPS = {
    "gelu": lambda L, t: L.nn.functional.gelu(t),
    "gelu tanh": lambda L, t: L.nn.functional.gelu(t, approximate="tanh"),
    "silu": lambda L, t: L.nn.functional.silu(t),
    "leaky_relu": lambda L, t: L.nn.functional.leaky_relu(t),
    "elu": lambda L, t: L.nn.functional.elu(t),
    "softplus": lambda L, t: L.nn.functional.softplus(t),
    "mish": lambda L, t: L.nn.functional.mish(t),
    "tanh": lambda L, t: t.tanh(),
    "softmax": lambda L, t: t.softmax(-1),
    "layer_norm": lambda L, t: L.nn.functional.layer_norm(t, (8,)),
    "rms by hand": lambda L, t: t * t.pow(2).mean(-1, keepdim=True).add(1e-6).rsqrt(),
    "group_norm": lambda L, t: L.nn.functional.group_norm(t.reshape(4, 8, 1), 2),
    "batch_norm": lambda L, t: L.nn.functional.batch_norm(t, None, None, training=True),
    "mean": lambda L, t: t.mean(),
    "var": lambda L, t: t.var(-1),
    "std": lambda L, t: t.std(),
    "norm": lambda L, t: t.norm(),
    "normalize": lambda L, t: L.nn.functional.normalize(t, dim=-1),
    "cross_entropy": lambda L, t: L.nn.functional.cross_entropy(t, L.tensor([0, 1, 2, 3])),
    "nll_loss": lambda L, t: L.nn.functional.nll_loss(t.log_softmax(-1), L.tensor([0, 1, 2, 3])),
    "max_pool1d": lambda L, t: L.nn.functional.max_pool1d(t.reshape(4, 1, 8), 2),
    "avg_pool1d": lambda L, t: L.nn.functional.avg_pool1d(t.reshape(4, 1, 8), 2),
    "nan_to_num": lambda L, t: L.nan_to_num(t / 0.0),
    "sigmoid": lambda L, t: t.sigmoid(),
    "exp": lambda L, t: t.exp(),
    "log": lambda L, t: t.abs().add(1).log(),
    "sqrt": lambda L, t: t.abs().sqrt(),
    "sin": lambda L, t: t.sin(),
    "erf": lambda L, t: L.erf(t),
    "pow float": lambda L, t: t.abs().pow(1.5),
    "times a float": lambda L, t: t * 0.3,
    "divided by a float": lambda L, t: t / 3.0,
    "clamp": lambda L, t: t.clamp(-1, 1),
    "hardtanh": lambda L, t: L.nn.functional.hardtanh(t),
    "logsumexp": lambda L, t: t.logsumexp(-1),
    "bce with logits": lambda L, t: L.nn.functional.binary_cross_entropy_with_logits(
        t, L.zeros_like(t)),
    "floor": lambda L, t: (t * 3).floor(),
    "round": lambda L, t: (t * 3).round(),
    "frac": lambda L, t: (t * 3).frac(),
    "hypot": lambda L, t: L.hypot(t, t.abs() + 1),
    "atan2": lambda L, t: L.atan2(t, t.abs() + 1),
    "nanmedian": lambda L, t: t.nanmedian(-1).values,
    "attention": lambda L, t: L.nn.functional.scaled_dot_product_attention(
        t.reshape(1, 4, 8), t.reshape(1, 4, 8), t.reshape(1, 4, 8)),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_an_op_on_bfloat16_runs_forward_and_backward_with_pytorchs_values(name):
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    torch = torch_or_skip()
    data = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    mine = genesis.tensor(data).to(genesis.bfloat16).requires_grad_()
    theirs = torch.tensor(data).bfloat16().requires_grad_()
    out, expected = OPS[name](genesis, mine), OPS[name](torch, theirs)
    assert str(out.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
    got, want = out.float(), expected.float()
    finite = np.isfinite(want.detach().numpy())
    np.testing.assert_allclose(got.detach().numpy()[finite], want.detach().numpy()[finite],
                               rtol=0.03, atol=0.03)
    if name == "nan_to_num":
        return  # (a division by zero: no gradient to compare)
    weights = np.random.default_rng(1).standard_normal(tuple(want.shape)).astype(np.float32)
    (got * genesis.tensor(weights)).sum().backward()  # (a norm's plain sum has no gradient)
    (want * torch.tensor(weights)).sum().backward()
    assert mine.grad.dtype is genesis.bfloat16
    np.testing.assert_allclose(mine.grad.float().numpy(), theirs.grad.float().numpy(),
                               rtol=0.05, atol=0.05 * float(theirs.grad.float().abs().max()) + 1e-3)


def test_a_model_cast_to_bfloat16_runs_in_bfloat16_throughout():
    """`model.to(bfloat16)`: each layer's output is bfloat16, so the next Linear's input
    matches its weights (a GELU's float32 output failed with "linear: dtypes differ")."""
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    nn = genesis.nn
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4),
                          nn.Tanh()).to(genesis.bfloat16)
    out = model(genesis.randn(2, 8).to(genesis.bfloat16))
    assert out.dtype is genesis.bfloat16
    out.float().sum().backward()
    assert all(parameter.grad.dtype is genesis.bfloat16 for parameter in model.parameters())


@pytest.mark.parametrize("name, make, dtype", [
    ("a float32 tensor widens", lambda x: x * genesis.ones(3), "float32"),
    ("a float64 tensor widens", lambda x: x + genesis.ones(3, dtype=genesis.float64), "float64"),
    ("a 0-d float32 tensor does not", lambda x: x * genesis.tensor(0.3), "bfloat16"),
    ("a cast keeps what it asks for", lambda x: x.float(), "float32"),
    ("so does a dtype argument", lambda x: x.sum(dtype=genesis.float32), "float32"),
    ("and a softmax in float32", lambda x: x.softmax(-1, dtype=genesis.float32), "float32"),
    ("an integer result stays one", lambda x: x.argmax(), "int64"),
    ("a comparison gives bools", lambda x: x > 0.5, "bool"),
])
def test_bfloat16_results_follow_pytorchs_promotion(name, make, dtype):
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    x = genesis.tensor([0.1, 0.7, 2.5]).to(genesis.bfloat16)
    assert make(x).dtype is getattr(genesis, dtype)


def test_bfloat16_arithmetic_with_a_python_float_rounds_once_as_pytorch_does():
    """The float is not rounded to bfloat16 first: x * 1.0039 is computed in float32 and the
    product rounded (PyTorch's "opmath"), which differs from rounding 1.0039 to 1.0 first."""
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    torch = torch_or_skip()
    values = np.linspace(-300, 300, 601, dtype=np.float32)
    for scalar in (1.0039, 0.3, -7.77, 1e-3):
        mine = genesis.tensor(values).to(genesis.bfloat16) * scalar
        theirs = torch.tensor(values).bfloat16() * scalar
        assert mine.dtype is genesis.bfloat16
        np.testing.assert_array_equal(mine.float().numpy(), theirs.float().numpy())


def test_a_bfloat16_array_makes_a_bfloat16_tensor_and_can_be_a_parameters_data():
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    array = np.array([1.5, 2.0], genesis.bfloat16.numpy_dtype)
    assert genesis.tensor(array).dtype is genesis.bfloat16  # was "can't make a tensor of ..."
    weight = genesis.nn.Parameter(genesis.zeros(2))
    weight.data = genesis.ones(2).to(genesis.bfloat16)  # was "must be floating point"
    assert weight.dtype is genesis.bfloat16 and weight.requires_grad


def test_bfloat16_functions_without_a_gradient_match_pytorch():
    """floor/ceil/trunc/round returned bfloat16 input unchanged (their floating test was the
    dtype kind "f"); frexp, nextafter and bernoulli refused bfloat16 or made float32."""
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    torch = torch_or_skip()
    values = np.array([1.5, -2.7, 0.25, 3.0], np.float32)
    mine, theirs = genesis.tensor(values).to(genesis.bfloat16), torch.tensor(values).bfloat16()
    for name in ("floor", "ceil", "trunc", "round"):
        np.testing.assert_array_equal(getattr(mine, name)().float().numpy(),
                                      getattr(theirs, name)().float().numpy())
    np.testing.assert_array_equal(genesis.nextafter(mine, mine + 1).float().numpy(),
                                  torch.nextafter(theirs, theirs + 1).float().numpy())
    mantissa, exponent = genesis.frexp(mine)
    expected = torch.frexp(theirs)
    np.testing.assert_array_equal(mantissa.float().numpy(), expected.mantissa.float().numpy())
    np.testing.assert_array_equal(exponent.numpy(), expected.exponent.numpy())
    assert genesis.tensor([0.2, 0.7]).to(genesis.bfloat16).bernoulli().dtype is genesis.bfloat16


def test_a_python_number_can_be_written_into_bfloat16():
    """full / fill_ / setitem check that the number fits the dtype; NumPy's finfo does not
    know bfloat16, so each died with "data type bfloat16 not inexact"."""
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    assert genesis.full((2,), float("-inf"), dtype=genesis.bfloat16).tolist() == [-np.inf] * 2
    filled = genesis.zeros(3, dtype=genesis.bfloat16).fill_(2.0)
    filled[0] = 0.5
    assert filled.dtype is genesis.bfloat16 and filled.tolist() == [0.5, 2.0, 2.0]
    with pytest.raises(genesis.dtypes.DTypeOverflowError, match="does not fit genesis.bfloat16"):
        genesis.full((1,), 1e39, dtype=genesis.bfloat16)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["layer_norm", "rms_norm", "group_norm"])
def test_a_2_byte_norm_is_computed_in_float32_and_rounded_once_as_pytorch(dtype, name):
    """PyTorch's CPU norms compute a float16/bfloat16 input in float32 and round the output
    once; computed in the input's dtype, half of a LayerNorm's bfloat16 outputs were 1-2 units
    of the last place off, and a bfloat16 RMSNorm without eps died (NumPy's finfo)."""
    if getattr(genesis, dtype).numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((6, 8, 5)) * 3 + 1).astype(np.float32)
    weight = np.linspace(0.5, 1.5, 8 if name == "group_norm" else 5).astype(np.float32)
    outs = []
    for lib in (genesis, torch):
        F, low = lib.nn.functional, getattr(lib, dtype)
        x, w = lib.tensor(data).to(low), lib.tensor(weight).to(low)
        out = {"layer_norm": lambda: F.layer_norm(x, (5,), w, w + 1),
               "rms_norm": lambda: F.rms_norm(x, (5,), w),
               "group_norm": lambda: F.group_norm(x, 2, w, w + 1)}[name]()
        assert str(out.dtype).split(".")[1] == dtype
        outs.append(out.float().numpy())
    np.testing.assert_array_equal(*outs)
