"""Every op of the registry, every sample, on "cuda": outputs and input gradients live on the
device and equal the CPU's (float64; on a real GPU to 1e-10, the last bits of CUDA's math
library and of atomic sums in scatters may differ)."""
import numpy as np
import pytest

import genesis
from genesis.ops.registry import all_ops
from tests.helpers import outputs_of

CASES = [(info, number, sample) for info in all_ops()
         for number, sample in enumerate(info.samples(np.random.default_rng(2)))]


def _run(info, sample, device):
    args, kwargs = sample.tensors(genesis.float64, device=device)
    outputs = outputs_of(info.call(*args, **kwargs))
    leaves = [a for a in args if isinstance(a, genesis.Tensor) and a.requires_grad]
    grads = []
    if info.differentiable and leaves and outputs[0].requires_grad:
        weights = np.random.default_rng(3).standard_normal(outputs[0].shape)
        outputs[0].backward(genesis.tensor(weights, dtype=genesis.float64, device=device))
        grads = [leaf.grad for leaf in leaves]
    return outputs, grads


@pytest.mark.parametrize("info, number, sample", CASES,
                         ids=[f"{info.name}-{number}-{sample.note}" for info, number, sample in CASES])
def test_op_on_the_device_matches_the_cpu(cuda, info, number, sample):
    cpu_outputs, cpu_grads = _run(info, sample, "cpu")
    outputs, grads = _run(info, sample, cuda)
    assert len(outputs) == len(cpu_outputs) and len(grads) == len(cpu_grads)
    for ours, reference in zip(outputs + grads, cpu_outputs + cpu_grads):
        assert ours.device == genesis.device("cuda"), info.name
        assert ours.dtype == reference.dtype and ours.shape == reference.shape
        np.testing.assert_allclose(ours.detach().cpu().numpy(), reference.detach().numpy(),
                                   rtol=1e-10, atol=1e-12, err_msg=info.name)


@pytest.mark.parametrize("op", [genesis.relu, lambda a: a.clamp(-1.0, 1.0),
                                lambda a: genesis.maximum(a, genesis.zeros_like(a)),
                                genesis.nn.functional.hardtanh],
                         ids=["relu", "clamp", "maximum", "hardtanh"])
def test_masked_gradients_are_exact_on_the_device(cuda, op):
    """A GPU masks gradients with one select, the CPU with bit operations: both give an exact
    0 where masked (even for an inf or nan gradient) and pass nan inputs as PyTorch does."""
    values = np.array([-2.0, -0.0, 0.0, 0.5, 3.0, np.nan, -np.inf, np.inf])
    seed = np.array([np.inf, np.nan, 1.0, -2.0, 5.0, 7.0, np.nan, -np.inf])
    results = []
    for device in ("cpu", cuda):
        a = genesis.tensor(values, device=device, requires_grad=True)
        op(a).backward(genesis.tensor(seed, device=device))
        results.append(a.grad.cpu().numpy())
    np.testing.assert_array_equal(results[0], results[1])
    assert np.signbit(results[0]).tolist() == np.signbit(results[1]).tolist()


@pytest.mark.parametrize("pool", [
    lambda a: genesis.nn.functional.max_pool2d(a, 2, stride=1, padding=1),
    lambda a: genesis.nn.functional.max_pool2d(a, 3, stride=2, padding=1),
    lambda a: genesis.nn.functional.adaptive_max_pool2d(a, (2, 3)),
], ids=["overlapping windows", "padded", "adaptive"])
def test_max_pooling_picks_the_same_cells_on_the_device(cuda, pool):
    """The GPU's scan writes the winner with one select and does not ask whether values are
    finite; ties, NaN, -inf and an inf gradient come out as on the CPU, and so does the
    gradient's own derivative with respect to the incoming gradient (a gather)."""
    values = np.array([[1.0, 1.0, np.nan, -np.inf], [2.0, 2.0, 0.5, -np.inf],
                       [-np.inf, -np.inf, 3.0, 3.0], [0.0, np.nan, 3.0, -1.0]])[None, None]
    probe = np.arange(1.0, 17.0).reshape(values.shape)
    results = []
    for device in ("cpu", cuda):
        a = genesis.tensor(values, device=device, requires_grad=True)
        out = pool(a)
        seed_values = np.linspace(-1.0, 1.0, out.numel()).reshape(out.shape)
        seed_values.reshape(-1)[0] = np.inf
        seed = genesis.tensor(seed_values, device=device, requires_grad=True)
        (grad,) = genesis.autograd.grad(out, a, seed, create_graph=True)
        (gathered,) = genesis.autograd.grad((grad * genesis.tensor(probe, device=device)).sum(), seed)
        results.append([t.detach().cpu().numpy() for t in (out, grad, gathered)])
    for ours, reference in zip(results[1], results[0]):
        np.testing.assert_array_equal(ours, reference)


def test_max_pooling_indices_on_the_device(cuda):
    values = np.array([[1.0, 1.0, np.nan], [2.0, 2.0, -np.inf], [3.0, 3.0, 0.0]])[None, None]
    indices = [genesis.nn.functional.max_pool2d(genesis.tensor(values, device=device), 2,
                                                stride=1, padding=1, return_indices=True)[1]
               for device in ("cpu", cuda)]
    assert indices[1].tolist() == indices[0].tolist()


def test_index_range_errors_read_the_bounds_from_the_device_once(cuda):
    table = genesis.randn(5, 3, device=cuda)
    with pytest.raises(IndexError, match=r"embedding: index 7 is out of range for a table of 5 rows"):
        genesis.nn.functional.embedding(genesis.tensor([0, 7, 2], device=cuda), table)
    with pytest.raises(IndexError, match=r"embedding: index -1 is out of range"):
        genesis.nn.functional.embedding(genesis.tensor([0, -1], device=cuda), table)
    with pytest.raises(IndexError, match=r"gather: index 3 is out of bounds for dim 1 with size 3"):
        table.gather(1, genesis.tensor([[0], [3]], device=cuda))
    assert genesis.nn.functional.embedding(genesis.tensor([4, 0], device=cuda), table).tolist() == \
        table[genesis.tensor([4, 0])].tolist()
