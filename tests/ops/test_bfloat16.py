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
    assert out.dtype in (genesis.bfloat16, genesis.float32), out.dtype
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
