"""Second derivatives of the reduction, shape, indexing, in-place-through-a-view, pooling,
padding and linear-algebra ops, and of checkpoint: every gradient is built from differentiable
ops (an adjoint such as MaxPoolScatter or IndexPadAdjoint has a backward of its own), so
gradgradcheck must pass on their samples."""
import numpy as np
import pytest

import genesis
from genesis.ops import (adaptive_pooling, cumulative, einsum, extrema, gather, index, join, linalg,
                         masked, matrix, norm, pad, pooling, reduce, reorder, shape, views)
from genesis.utils import checkpoint
from tests.helpers import outputs_of

FAMILIES = (reduce, extrema, norm, cumulative, shape, join, reorder, matrix, index, gather, masked,
            views, linalg, einsum, pooling, adaptive_pooling, pad, checkpoint)
# norm_zero_rows samples the norm's kink on purpose: its gradient has a jump there.
CASES = [(info, sample) for family in FAMILIES for info in family.OPS
         if info.differentiable and info.name != "norm_zero_rows"
         for sample in info.samples(np.random.default_rng(1))]


@pytest.mark.parametrize("info, sample", CASES,
                         ids=[f"{info.name}-{sample.note}" for info, sample in CASES])
def test_second_derivatives_match_finite_differences(info, sample):
    args, kwargs = sample.tensors()
    if not any(isinstance(a, genesis.Tensor) and a.requires_grad for a in args):
        pytest.skip("no input requires grad")

    def call(*arguments):
        return tuple(o for o in outputs_of(info.call(*arguments, **kwargs)) if o.requires_grad)

    if not call(*args):
        pytest.skip("no differentiable output")
    genesis.autograd.gradgradcheck(call, args, atol=1e-6, rtol=1e-5)
