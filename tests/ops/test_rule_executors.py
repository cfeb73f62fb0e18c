"""A backward runs its gradient rule on the arrays in a plain backward and on the Tensors
under create_graph (genesis/ops/gradient_rules.py, and the ops that still choose between two
paths themselves): both must give the same gradient, for every registered op and sample."""
import numpy as np
import pytest

import genesis
from genesis.ops.registry import all_ops
from tests.helpers import outputs_of

CASES = [(info, index, sample) for info in all_ops() if info.differentiable
         for index, sample in enumerate(info.samples(np.random.default_rng(0)))]
IDS = [f"{info.name}-{index}-{sample.note}" for info, index, sample in CASES]


def _gradients(info, sample, create_graph: bool) -> list:
    args, kwargs = sample.tensors()
    leaves = [arg for arg in args if isinstance(arg, genesis.Tensor) and arg.requires_grad]
    outputs = [output for output in outputs_of(info.call(*args, **kwargs))
               if output.requires_grad]
    if not leaves or not outputs:
        return []
    weights = [genesis.tensor(np.random.default_rng(7).standard_normal(output.shape),
                              dtype=output.dtype) for output in outputs]
    grads = genesis.autograd.grad(outputs, leaves, weights, create_graph=create_graph,
                                  allow_unused=True)
    return [None if grad is None else grad.detach().numpy() for grad in grads]


@pytest.mark.parametrize("info, index, sample", CASES, ids=IDS)
def test_plain_and_create_graph_backward_agree(info, index, sample):
    plain = _gradients(info, sample, create_graph=False)
    recorded = _gradients(info, sample, create_graph=True)
    assert len(plain) == len(recorded)
    for mine, other in zip(plain, recorded):
        assert (mine is None) == (other is None)
        if mine is not None:
            np.testing.assert_allclose(mine, other, rtol=1e-12, atol=1e-12)
