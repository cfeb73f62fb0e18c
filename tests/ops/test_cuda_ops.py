"""The reduction, shape, indexing and linear-algebra ops on CUDA (CuPy) give the values and
gradients they give on the CPU (NumPy). Skipped where CuPy or a GPU is missing."""
import numpy as np
import pytest

import genesis
from genesis.ops import (cumulative, einsum, extrema, gather, index, join, linalg, masked, matrix,
                         norm, reduce, reorder, shape)
from tests.helpers import outputs_of

FAMILIES = (reduce, extrema, norm, cumulative, shape, join, reorder, matrix, index, gather, masked,
            linalg, einsum)
CASES = [(info, number, sample) for family in FAMILIES for info in family.OPS
         for number, sample in enumerate(info.samples(np.random.default_rng(2)))]


def _cuda_or_skip():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device")


def _run(info, sample, device):
    args, kwargs = sample.tensors(genesis.float64, device=device)
    outputs = outputs_of(info.call(*args, **kwargs))
    values = [o.detach().cpu().numpy() for o in outputs]
    leaves = [a for a in args if isinstance(a, genesis.Tensor) and a.requires_grad]
    grads = []
    if info.differentiable and leaves and outputs[0].requires_grad:
        weights = np.random.default_rng(3).standard_normal(outputs[0].shape)
        outputs[0].backward(genesis.tensor(weights, dtype=genesis.float64, device=device))
        grads = [leaf.grad.cpu().numpy() for leaf in leaves]
    return values, grads


@pytest.mark.parametrize("info, number, sample", CASES,
                         ids=[f"{info.name}-{number}-{sample.note}" for info, number, sample in CASES])
def test_cuda_matches_cpu(info, number, sample):
    _cuda_or_skip()
    cpu_values, cpu_grads = _run(info, sample, "cpu")
    cuda_values, cuda_grads = _run(info, sample, "cuda")
    for ours, reference in zip(cuda_values + cuda_grads, cpu_values + cpu_grads):
        assert ours.shape == reference.shape
        np.testing.assert_allclose(ours, reference, rtol=1e-10, atol=1e-12)
