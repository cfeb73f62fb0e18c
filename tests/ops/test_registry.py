"""Every registered op, on every sample: gradients vs finite differences (float64),
and values and gradients vs PyTorch when it is importable."""
import numpy as np
import pytest

import genesis
from genesis.ops.registry import all_ops
from tests.helpers import outputs_of

CASES = [(info, index, sample) for info in all_ops()
         for index, sample in enumerate(info.samples(np.random.default_rng(0)))]
IDS = [f"{info.name}-{index}-{sample.note}" for info, index, sample in CASES]


@pytest.mark.parametrize("info, index, sample", CASES, ids=IDS)
def test_gradient_matches_finite_differences(info, index, sample):
    """gradcheck (exact mode: the whole Jacobian, reentrancy, undefined grads) in float64 on the
    sample's tensors, which may be non-contiguous; constants are passed through."""
    if not info.differentiable:
        pytest.skip("not differentiable")
    args, kwargs = sample.tensors()

    def call(*arguments):
        return tuple(outputs_of(info.call(*arguments, **kwargs)))

    if not any(isinstance(arg, genesis.Tensor) and arg.requires_grad for arg in args):
        assert not any(output.requires_grad for output in call(*args))
        return
    genesis.autograd.gradcheck(call, args, atol=1e-6, rtol=1e-5)


def _to_torch(torch, value, requires_grad):
    if isinstance(value, genesis.Tensor):
        tensor = torch.tensor(value.detach().numpy().copy())
        return tensor.requires_grad_(requires_grad and value.requires_grad)
    return value


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("info, index, sample", [c for c in CASES if c[0].torch is not None],
                         ids=[i for c, i in zip(CASES, IDS) if c[0].torch is not None])
def test_matches_pytorch(info, index, sample, dtype):
    torch = pytest.importorskip("torch")
    args, kwargs = sample.tensors(getattr(genesis, dtype))
    torch_args = [_to_torch(torch, a, info.differentiable) for a in args]
    ours = outputs_of(info.call(*args, **kwargs))
    theirs = info.torch(torch, *torch_args, **kwargs)
    theirs = [theirs] if isinstance(theirs, torch.Tensor) else list(theirs)
    rtol = 1e-10 if dtype == "float64" else 1e-5
    for mine, reference in zip(ours, theirs):
        assert mine.shape == tuple(reference.shape)
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(),
                                   rtol=rtol, atol=rtol)
    leaves = [a for a in args if isinstance(a, genesis.Tensor) and a.requires_grad]
    if not info.differentiable or not leaves or not ours[0].requires_grad:
        return
    weight = np.random.default_rng(3).standard_normal(ours[0].shape)
    ours[0].backward(genesis.tensor(weight, dtype=ours[0].dtype))
    theirs[0].backward(torch.tensor(weight, dtype=theirs[0].dtype))
    torch_leaves = [t for a, t in zip(args, torch_args)
                    if isinstance(a, genesis.Tensor) and a.requires_grad]
    for mine, reference in zip(leaves, torch_leaves):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=rtol, atol=rtol)
